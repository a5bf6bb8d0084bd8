import type { Clocks, GroupView } from "./clocks.js";
import { joinViews } from "./clocks.js";

/**
 * The PTX memory model's release and acquire patterns on the simulated device (PTX ISA, "Memory
 * Consistency Model": "Morally strong operations", "Release and Acquire Patterns", "Causality
 * Order", "Observation order"), beside the barriers of exec/clocks.ts.
 *
 * Rules implemented:
 * - A release pattern on location M is a release operation (st.release, atom.release/acq_rel,
 *   red.release) or a fence.acq_rel / fence.sc followed in program order by a strong write
 *   (st.relaxed, any atom/red: relaxed at gpu scope when written without qualifiers). An acquire
 *   pattern is an acquire operation (ld.acquire, atom.acquire/acq_rel) or a strong read (ld.relaxed,
 *   atom) followed in program order by a fence.acq_rel / fence.sc. The release pattern
 *   synchronizes with the acquire pattern when the acquire's read observes the release's write:
 *   reads the value it wrote, or a value written by a chain of strong read-modify-writes after
 *   it (observation order through atomics; C++'s release sequence). Then everything ordered
 *   before the release's first operation happens before everything after the acquire's last.
 * - Each link must be morally strong: both operations strong, and each one's scope includes the
 *   other's thread (cta: the same CTA; cluster: the same cluster; gpu, sys: any thread of the
 *   device; the simulator has one device, so sys is gpu). The first operation of the release
 *   pattern and the last of the acquire pattern must be morally strong too.
 * - A weak (plain) write of M ends the chain; so does a strong store (it heads its own).
 * - Observation order alone orders the observed writes (PTX ISA, "Causality order": X precedes Y
 *   when X precedes Z in observation order and Z precedes Y in base causality order): a strong
 *   read that observes M's chain of strong writes orders those writes (not what their threads did
 *   before them) before the reader's later accesses, without any fence. So the last CTA of a
 *   last-block-done reduction may reset the counter the other CTAs' atomics wrote. The
 *   simulator keeps what each thread observed per location and consults it in the race checks
 *   of that thread's accesses of that location (Clocks.focus); a barrier does not pass it on to
 *   other threads (a false report, never a missed race).
 *
 * State: per location (a tensor's element start byte, or an absolute shared byte), the release
 * records whose chain reaches the location's current value: the released view (Clocks.GroupView),
 * who performed the pattern's first operation and who performed the chain's last write. Per
 * thread: the records its strong relaxed reads observed (acquired at its next fence), and its
 * last fence's view (released by its later strong writes).
 *
 * Not modelled: the Fence-SC order (fence.sc is treated as fence.acq_rel, so a store-buffering
 * litmus that needs fence.sc is not told apart from one with fence.acq_rel); a strong load is not
 * recorded as a reader, so a later unordered plain write of its bytes is not reported (TX6013).
 * CTAs and clusters run one after another, so a spin on a flag a later CTA sets never ends
 * (TX6006 at the loop limit).
 */

/** Who performed an operation: its scope (0 cta .. 3 sys), its group (CTA or cluster) of the launch and its CTA's rank in the group. */
export interface Who {
  readonly scope: number;
  readonly group: number;
  readonly cta: number;
}

/** A release whose chain of writes reaches a location's current value. */
interface ReleaseRecord {
  readonly view: GroupView;
  readonly first: Who;
  readonly last: Who;
}

/**
 * The strong writes whose chain reaches a location's current value (a strong store, then the
 * read-modify-writes morally strong with it in turn), flat `[group, thread, clock, ...]` (one
 * entry per thread, its latest), and who wrote last.
 */
interface Chain {
  readonly stamps: number[];
  last: Who;
}

/** Does `a`'s scope include `b`'s thread? */
function covers(a: Who, b: Who): boolean {
  if (a.scope >= 2) return true;
  if (a.group !== b.group) return false;
  return a.scope === 1 || a.cta === b.cta;
}

/** Are `a` and `b` morally strong (both strong, each one's scope including the other's thread)? */
export function morallyStrong(a: Who, b: Who): boolean {
  return covers(a, b) && covers(b, a);
}

const EARLIER: Who = { scope: 2, group: -1, cta: -1 };

/**
 * A record's `who` once its group has ended: an operation of scope gpu or wider covers every
 * thread, so its group no longer matters (EARLIER); a narrower one can reach no thread run later
 * (undefined).
 */
function settle(w: Who, group: number): Who | undefined {
  if (w.group === group || w.group < 0) return w;
  return w.scope >= 2 ? EARLIER : undefined;
}

/** The release and acquire state of one launch (see the file comment). */
export class MemoryOrder {
  readonly #clocks: Clocks;
  /** Per tensor shadow (any object standing for a tensor), per element byte: its records. */
  readonly #global = new Map<object, Map<number, ReleaseRecord[]>>();
  /** Per absolute shared byte: its records (the running group's shared memory). */
  readonly #shared = new Map<number, ReleaseRecord[]>();
  /** Per tensor (undefined: shared memory), per element byte: its chain of strong writes. */
  readonly #chains = new Map<object | undefined, Map<number, Chain>>();
  /** Per thread, per location: the chain of strong writes it observed there (observedFor). */
  readonly #observed: (Map<object | undefined, Map<number, number[]>> | undefined)[] = [];
  /** Per thread: records its strong relaxed reads observed since its last fence. */
  readonly #pending: (ReleaseRecord[] | undefined)[] = [];
  /** Per thread: its last fence's view and who performed it. */
  readonly #fence: ({ view: GroupView; who: Who } | undefined)[] = [];
  /** True when the kernel has a fence or an ordered op (set while it compiles): only then is anything tracked. */
  enabled = false;
  /** Locations with records exist (a plain write must end their chains). */
  live = false;

  constructor(clocks: Clocks) {
    this.#clocks = clocks;
  }

  /** A launch starts: no records. */
  beginLaunch(): void {
    this.#global.clear();
    this.#shared.clear();
    this.#chains.clear();
    this.live = false;
    this.#pending.length = 0;
    this.#fence.length = 0;
    this.#observed.length = 0;
  }

  /** A CTA (or cluster) starts: shared memory is new, and no thread fenced or read yet. */
  beginCta(): void {
    this.#shared.clear();
    this.#chains.delete(undefined);
    this.#pending.length = 0;
    this.#fence.length = 0;
    this.#observed.length = 0;
  }

  /** The records of a location (`tensor` undefined: shared byte `addr`), settled for the running group. */
  #records(tensor: object | undefined, addr: number): ReleaseRecord[] | undefined {
    const map = tensor === undefined ? this.#shared : this.#global.get(tensor);
    const list = map?.get(addr);
    if (list === undefined) return undefined;
    const g = this.#clocks.group;
    let changed = false;
    const out: ReleaseRecord[] = [];
    for (const r of list) {
      const first = settle(r.first, g);
      const last = settle(r.last, g);
      if (first === undefined || last === undefined) {
        changed = true;
        continue;
      }
      if (first !== r.first || last !== r.last) changed = true;
      out.push(first === r.first && last === r.last ? r : { view: r.view, first, last });
    }
    if (!changed) return list;
    const merged = merge(out);
    map!.set(addr, merged);
    return merged;
  }

  #set(tensor: object | undefined, addr: number, list: ReleaseRecord[]): void {
    let map = tensor === undefined ? this.#shared : this.#global.get(tensor);
    if (map === undefined) this.#global.set(tensor!, (map = new Map()));
    if (list.length === 0) map.delete(addr);
    else {
      map.set(addr, list);
      this.live = true;
    }
  }

  /**
   * A strong read of a location by thread `t` (`me`: its scope and place): with `acquire` (an
   * acquire operation) it synchronizes with each record whose last write and first operation are
   * morally strong with it; a relaxed read keeps the records for the thread's next fence.
   */
  read(tensor: object | undefined, addr: number, t: number, me: Who, acquire: boolean): void {
    const chain = this.#chains.get(tensor)?.get(addr);
    if (chain !== undefined && morallyStrong(settle(chain.last, this.#clocks.group) ?? me, me)) {
      this.#observe(tensor, addr, chain.stamps, t);
    }
    const list = this.#records(tensor, addr);
    if (list === undefined) return;
    for (const r of list) {
      if (!morallyStrong(r.last, me)) continue;
      if (acquire) {
        if (morallyStrong(r.first, me)) this.#clocks.acquireView(r.view, t);
      } else {
        const pending = (this.#pending[t] ??= []);
        pending.push(r);
        // Relaxed reads with no fence after them (a loop of atomics) keep one record per first
        // operation, their views joined: only the first operation matters at the fence.
        if (pending.length > 32) this.#pending[t] = mergeByFirst(pending);
      }
    }
  }

  /**
   * A strong write of a location by thread `t` (`me`): a read-modify-write (`rmw`) continues the
   * chains morally strong with it, a store ends them all; with `release` (a release operation) it
   * heads a new record of t's view, else a fence of t before it does (the fence's view).
   */
  write(
    tensor: object | undefined,
    addr: number,
    t: number,
    me: Who,
    release: boolean,
    rmw: boolean,
  ): void {
    this.#chain(tensor, addr, t, me, rmw);
    const old = rmw ? this.#records(tensor, addr) : undefined;
    const list: ReleaseRecord[] = [];
    if (old !== undefined) {
      for (const r of old) {
        if (morallyStrong(r.last, me)) list.push({ view: r.view, first: r.first, last: me });
      }
    }
    if (release) {
      list.push({ view: this.#clocks.releaseView(t), first: me, last: me });
    } else {
      const f = this.#fence[t];
      if (f !== undefined) list.push({ view: f.view, first: f.who, last: me });
    }
    this.#set(tensor, addr, merge(list));
  }

  /** A weak (plain) write of a location: it ends every chain there. */
  plainWrite(tensor: object | undefined, addr: number, n: number): void {
    const map = tensor === undefined ? this.#shared : this.#global.get(tensor);
    const chains = this.#chains.get(tensor);
    for (let b = addr - 7; b < addr + n; b++) {
      map?.delete(b);
      chains?.delete(b);
    }
  }

  /**
   * Thread `t`'s strong write (`me`) joins the location's chain of strong writes: a
   * read-modify-write morally strong with the chain's last write continues it, anything else
   * starts a new one.
   */
  #chain(tensor: object | undefined, addr: number, t: number, me: Who, rmw: boolean): void {
    let map = this.#chains.get(tensor);
    if (map === undefined) this.#chains.set(tensor, (map = new Map()));
    const g = this.#clocks.group;
    const c = this.#clocks.clock[t]!;
    const old = map.get(addr);
    const last = old === undefined ? undefined : settle(old.last, g);
    if (!rmw || old === undefined || last === undefined || !morallyStrong(last, me)) {
      map.set(addr, { stamps: [g, t, c], last: me });
      this.live = true;
      return;
    }
    const st = old.stamps;
    let i = 0;
    while (i < st.length && !(st[i] === g && st[i + 1] === t)) i += 3;
    if (i < st.length) st[i + 2] = c;
    else st.push(g, t, c);
    old.last = me;
  }

  /**
   * Thread `t` observed the strong writes `stamps` (`[group, thread, clock, ...]`) of the location
   * (`tensor`, `addr`): those writes, and no access their threads made before them, are ordered
   * before t's later accesses of that location (see focus).
   */
  #observe(tensor: object | undefined, addr: number, stamps: readonly number[], t: number): void {
    let byLoc = this.#observed[t];
    if (byLoc === undefined) this.#observed[t] = byLoc = new Map();
    let m = byLoc.get(tensor);
    if (m === undefined) byLoc.set(tensor, (m = new Map()));
    m.set(addr, stamps.slice());
  }

  /**
   * The strong writes of location (`tensor`, `addr`) thread `t` observed (flat `[group, thread,
   * clock, ...]`), or undefined: Clocks.focus while the race checks of t's access there run.
   */
  observedFor(tensor: object | undefined, addr: number, t: number): readonly number[] | undefined {
    return this.#observed[t]?.get(tensor)?.get(addr);
  }

  /**
   * A fence by thread `t` (`me`: fence.acq_rel or fence.sc at its scope): it completes the acquire
   * patterns of the thread's earlier strong relaxed reads (records whose first operation is
   * morally strong with the fence), then takes the thread's view for its later strong writes.
   */
  fence(t: number, me: Who): void {
    const pending = this.#pending[t];
    if (pending !== undefined) {
      for (const r of pending) if (morallyStrong(r.first, me)) this.#clocks.acquireView(r.view, t);
      this.#pending[t] = undefined;
    }
    this.#fence[t] = { view: this.#clocks.releaseView(t), who: me };
  }
}

/** Records with the same first and last operation, merged (their views joined). */
function merge(list: ReleaseRecord[]): ReleaseRecord[] {
  if (list.length < 2) return list;
  const out: ReleaseRecord[] = [];
  for (const r of list) {
    const i = out.findIndex((o) => same(o.first, r.first) && same(o.last, r.last));
    if (i < 0) out.push(r);
    else out[i] = { view: joinViews(out[i]!.view, r.view)!, first: r.first, last: r.last };
  }
  return out;
}

/** Records with the same first operation, merged (views joined; `last` of the first kept). */
function mergeByFirst(list: ReleaseRecord[]): ReleaseRecord[] {
  const out: ReleaseRecord[] = [];
  for (const r of list) {
    const i = out.findIndex((o) => same(o.first, r.first));
    if (i < 0) out.push(r);
    else out[i] = { view: joinViews(out[i]!.view, r.view)!, first: r.first, last: out[i]!.last };
  }
  return out;
}

function same(a: Who, b: Who): boolean {
  return a.scope === b.scope && a.group === b.group && a.cta === b.cta;
}
