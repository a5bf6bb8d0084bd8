import type { Note } from "@tirx-ts/core";
import { THREAD_BITS, THREAD_MASK, type GlobalMem, type Machine, type Placed } from "./machine.js";
import { checkGlobalRead, checkSharedRead, reportOob } from "./hazards.js";

/** An mbarrier operand as compiled: its buffer (for messages and bounds). */
export interface BarBuffer {
  readonly name: string;
  readonly placed: Placed;
}

/** A wait loop that could not proceed in the current scheduling round (for TX6006). */
interface Blocked {
  readonly site: number;
  readonly thread: number;
  readonly slot: number;
  readonly parity: number;
}

/**
 * mbarriers and Hopper bulk copies (PTX ISA: "mbarrier", "cp.async.bulk",
 * "cp.async.bulk.commit_group", "cp.async.bulk.wait_group") of the CTA that is running.
 *
 * mbarrier objects are 8-byte elements of a shared uint64 buffer; their state is kept here, keyed
 * by shared byte address: arrival count (init), pending arrivals, tx-count (it may go negative:
 * complete_tx before expect_tx is legal) and the number of completed phases since the CTA started
 * (phases are numbered absolutely, so a re-init never makes old observations look new; the
 * current parity is counted from the last init). A phase completes when pending arrivals reach 0
 * and tx-count is 0; pending then resets to the count. `try_wait.parity(P)` is true iff the
 * current phase's parity differs from P. `mbarrier.init` writes the object's 8 bytes (so a use by
 * another thread with no cta_sync after it is TX6003, and a use before any init is TX6004).
 * Ordinary loads and stores of an mbarrier's bytes are not checked (PTX leaves the object's
 * contents opaque; the simulator keeps the state on the side and ignores them).
 *
 * Timing model (deterministic): a global → shared bulk copy is "in flight" from its issue until
 * every thread of the CTA is blocked (every runnable group of threads is in an mbarrier wait loop
 * whose try_wait failed, and no mbarrier changed in that scheduling round). Then every copy in
 * flight lands, oldest first: its bytes are written to shared memory and complete_tx(chunk) is
 * performed on its mbarrier. So a copy is in flight as long as possible (early reads are
 * caught), and a wait that a copy can satisfy always gets it. If nothing is in flight either, the
 * CTA is deadlocked: TX6006 at the wait loop, and the CTA is abandoned.
 *
 * Landed bytes stay guarded: a thread may access them only once it observed the completion of
 * the mbarrier phase the copy completed in: by a try_wait that returned true, by a cta_sync after
 * a thread that did, or transitively through another mbarrier (what a thread observed travels
 * with its arrivals to the threads that observe that phase's completion, like a vector clock:
 * a producer that waited on the "empty" barrier the consumers arrived on after they waited on
 * "full" may refill the stage); otherwise TX6007. An ordinary write by an observing thread
 * ends the guard (the usual cta_sync rules apply from then on).
 *
 * Shared → global bulk copies are tracked per issuing thread in bulk async-groups (like
 * cp.async groups): `commit_group` closes the thread's uncommitted copies into a group;
 * `wait_group.read n` has all but the n most recent groups read their source (the bytes are
 * taken at that moment; before that, a write to them is TX6007); `wait_group n` also writes their
 * destination (before that, a read or write of those global bytes is TX6007). Copies still
 * pending at CTA end are completed then. `pred` false issues nothing.
 */
export class BulkUnit {
  readonly threads: number;
  /** Bumped by every change that can let a wait proceed (mbarrier state, copy issue or landing, a wait loop left). */
  progress = 0;
  /** Set by a wait loop with a body (it does work while waiting, so it is never "stuck"). */
  busy = false;
  /** Wait loops blocked in the current round. */
  readonly blocked: Blocked[] = [];
  /** Barrier slot and parity of the last try_wait that returned false. */
  lastSlot = -1;
  lastParity = 0;

  // mbarriers, by slot.
  readonly #slotOf = new Map<number, number>();
  readonly #addr: number[] = [];
  readonly #buf: BarBuffer[] = [];
  readonly #count: number[] = [];
  readonly #pending: number[] = [];
  readonly #tx: number[] = [];
  /** Completed phases since CTA start (absolute). */
  readonly #phase: number[] = [];
  /** `#phase` at the last init (parity is counted from there). */
  readonly #base: number[] = [];
  readonly #initSite: number[] = [];
  /** Per slot, per thread: completed phases this thread has observed (absolute). */
  #obs: Int32Array;
  /** Per slot: what the threads arriving on it had observed (max per slot), cumulative. */
  readonly #acc: number[][] = [];
  /** Per slot: `#acc` as of its last completed phase: what observing that completion teaches. */
  readonly #rel: number[][] = [];

  // Global → shared copies (one record per chunk), landed or in flight.
  readonly #gDst: number[] = [];
  readonly #gBuf: Placed[] = [];
  readonly #gTens: number[] = [];
  readonly #gSrc: number[] = [];
  readonly #gLen: number[] = [];
  readonly #gSlot: number[] = [];
  readonly #gSite: number[] = [];
  readonly #gThread: number[] = [];
  /** Phase (absolute) the copy's complete_tx counted into; -1 while in flight. */
  readonly #gPhase: number[] = [];
  /** Ids of copies in flight, in issue order. */
  #inflight: number[] = [];

  // Shared → global copies, per thread.
  readonly #s2g: S2gCopy[][];
  /** Per thread: for each committed group not yet fully waited for, how many `#s2g` entries end it. */
  readonly #ends: number[][];
  /** Per thread: how many of its `#s2g` entries (oldest first) have read their source. */
  readonly #read: Int32Array;

  constructor(threads: number) {
    this.threads = threads;
    this.#obs = new Int32Array(threads * 4);
    this.#s2g = Array.from({ length: threads }, () => []);
    this.#ends = Array.from({ length: threads }, () => []);
    this.#read = new Int32Array(threads);
  }

  /** Forget everything (CTA start). */
  reset(): void {
    this.#slotOf.clear();
    for (const a of [
      this.#addr,
      this.#buf,
      this.#count,
      this.#pending,
      this.#tx,
      this.#phase,
      this.#base,
      this.#initSite,
      this.#acc,
      this.#rel,
    ])
      a.length = 0;
    for (const a of [
      this.#gDst,
      this.#gBuf,
      this.#gTens,
      this.#gSrc,
      this.#gLen,
      this.#gSlot,
      this.#gSite,
      this.#gThread,
      this.#gPhase,
    ])
      a.length = 0;
    this.#inflight = [];
    for (let t = 0; t < this.threads; t++) {
      this.#s2g[t]!.length = 0;
      this.#ends[t]!.length = 0;
    }
    this.#read.fill(0);
    this.blocked.length = 0;
    this.busy = false;
    this.lastSlot = -1;
  }

  // ---------------------------------------------------------------- mbarriers

  /** The slot of the mbarrier at `addr`, after bounds, init and visibility checks; -1 if unusable. */
  #use(m: Machine, t: number, addr: number, bb: BarBuffer, site: number, verb: string): number {
    const p = bb.placed;
    if (!(addr >= p.base && addr + 8 <= p.base + p.size)) {
      reportOob(m, "shared", p.name, p.span, addr - p.base, 8, p.size, t, site, verb);
      return -1;
    }
    const slot = this.#slotOf.get(addr);
    if (slot === undefined) {
      const notes = p.span
        ? [{ message: `"${p.name}" is allocated here; mbarriers need mbarrier.init`, span: p.span }]
        : [];
      m.hazard(
        "TX6004",
        `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} mbarrier ${this.#label(bb, addr)}, which no mbarrier.init of this CTA has initialised`,
        site,
        notes,
      );
      return -1;
    }
    const w = m.shWriter[addr]!;
    if (m.shEpoch[addr] === m.epoch && (w & THREAD_MASK) !== t) {
      m.hazard(
        "TX6003",
        `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} mbarrier ${this.#label(bb, addr)}, which thread ${m.thread(w & THREAD_MASK)} initialised with no cta_sync in between`,
        site,
        [
          {
            message: `thread ${m.thread(w & THREAD_MASK)} initialises it here`,
            span: m.sites[w >> THREAD_BITS],
          },
        ],
      );
    }
    return slot;
  }

  #label(bb: BarBuffer, addr: number): string {
    return `"${bb.name}"[${(addr - bb.placed.base) / 8}]`;
  }

  /** `mbarrier.init(bar, count)` by thread `t`. */
  init(m: Machine, t: number, addr: number, count: number, bb: BarBuffer, site: number): void {
    const p = bb.placed;
    if (!(addr >= p.base && addr + 8 <= p.base + p.size)) {
      reportOob(m, "shared", p.name, p.span, addr - p.base, 8, p.size, t, site, "initialises");
      return;
    }
    let slot = this.#slotOf.get(addr);
    if (slot === undefined) {
      slot = this.#addr.length;
      this.#slotOf.set(addr, slot);
      this.#addr.push(addr);
      this.#phase.push(0);
      this.#buf.push(bb);
      this.#count.push(0);
      this.#pending.push(0);
      this.#tx.push(0);
      this.#base.push(0);
      this.#initSite.push(site);
      this.#acc.push([]);
      this.#rel.push([]);
      const need = (slot + 1) * this.threads;
      if (this.#obs.length < need) {
        const o = new Int32Array(need * 2);
        o.set(this.#obs);
        this.#obs = o;
      }
      this.#obs.fill(0, slot * this.threads, need);
    }
    this.#buf[slot] = bb;
    this.#count[slot] = count;
    this.#pending[slot] = count;
    this.#tx[slot] = 0;
    this.#base[slot] = this.#phase[slot]!;
    this.#initSite[slot] = site;
    // The init writes the object: later uses by other threads need a cta_sync after it.
    const w = (site << THREAD_BITS) | t;
    for (let i = 0; i < 8; i++) {
      m.shWriter[addr + i] = w;
      m.shEpoch[addr + i] = m.epoch;
      m.shBulk[addr + i] = 0;
    }
    m.sdv.setBigUint64(addr, BigInt(count >>> 0), true);
    this.progress++;
  }

  /** `mbarrier.arrive` (txBytes 0) or `mbarrier.arrive.expect_tx(bar, txBytes)` by thread `t`. */
  arrive(m: Machine, t: number, addr: number, txBytes: number, bb: BarBuffer, site: number): void {
    const slot = this.#use(m, t, addr, bb, site, "arrives on");
    if (slot < 0) return;
    // The arrival carries what this thread observed to whoever observes the phase's completion
    // (a consumer's arrive on an "empty" barrier tells the producer the consumer saw "full").
    const acc = this.#acc[slot]!;
    const n = this.threads;
    for (let s = 0; s < this.#addr.length; s++) {
      const o = this.#obs[s * n + t]!;
      if (o > (acc[s] ?? 0)) acc[s] = o;
    }
    this.#tx[slot]! += txBytes;
    this.#pending[slot]!--;
    this.progress++;
    this.#maybeComplete(slot);
  }

  #completeTx(slot: number, bytes: number): void {
    this.#tx[slot]! -= bytes;
    this.progress++;
    this.#maybeComplete(slot);
  }

  #maybeComplete(slot: number): void {
    if (this.#pending[slot]! <= 0 && this.#tx[slot] === 0) {
      this.#phase[slot]!++;
      this.#pending[slot] = this.#count[slot]!;
      const acc = this.#acc[slot]!;
      const rel = this.#rel[slot]!;
      for (let s = 0; s < acc.length; s++) if ((acc[s] ?? 0) > (rel[s] ?? 0)) rel[s] = acc[s]!;
    }
  }

  /** `mbarrier.try_wait.parity(bar, parity)` by thread `t`: 1 when that phase completed. */
  tryWait(
    m: Machine,
    t: number,
    addr: number,
    parity: number,
    bb: BarBuffer,
    site: number,
  ): number {
    const slot = this.#use(m, t, addr, bb, site, "waits on");
    if (slot < 0) return 1;
    const phase = this.#phase[slot]!;
    if (((phase - this.#base[slot]!) & 1) !== (parity & 1)) {
      const n = this.threads;
      const obs = this.#obs;
      if (obs[slot * n + t]! < phase) obs[slot * n + t] = phase;
      const rel = this.#rel[slot]!;
      for (let s = 0; s < rel.length; s++) {
        const r = rel[s] ?? 0;
        if (obs[s * n + t]! < r) obs[s * n + t] = r;
      }
      return 1;
    }
    this.lastSlot = slot;
    this.lastParity = parity & 1;
    return 0;
  }

  /** cta_sync: every thread now knows what any thread observed. */
  barSync(): void {
    const n = this.threads;
    const obs = this.#obs;
    for (let s = 0; s < this.#addr.length; s++) {
      let most = 0;
      for (let t = 0; t < n; t++) if (obs[s * n + t]! > most) most = obs[s * n + t]!;
      obs.fill(most, s * n, (s + 1) * n);
    }
  }

  // ---------------------------------------------------------------- global → shared

  /**
   * Thread `t` issues a global → shared bulk copy of `len` bytes from byte `src` of tensor `tens`
   * to shared byte `dst` (absolute), completing on the mbarrier at `bar`. Bounds were checked.
   */
  issueG2s(
    m: Machine,
    t: number,
    dst: number,
    buf: Placed,
    tens: number,
    src: number,
    len: number,
    bar: number,
    bb: BarBuffer,
    site: number,
  ): void {
    const slot = this.#use(m, t, bar, bb, site, "completes a bulk copy on");
    if (slot < 0) return;
    const gm = m.globals[tens]!;
    checkGlobalRead(m, gm, src, len, t, site);
    checkAsyncWrite(m, buf, dst, len, t, site, "issues a bulk copy to");
    const id = this.#gDst.length;
    this.#gDst.push(dst);
    this.#gBuf.push(buf);
    this.#gTens.push(tens);
    this.#gSrc.push(src);
    this.#gLen.push(len);
    this.#gSlot.push(slot);
    this.#gSite.push(site);
    this.#gThread.push(t);
    this.#gPhase.push(-1);
    this.#inflight.push(id);
    m.shBulk.fill(id + 1, dst, dst + len);
    const pr = (gm.meta.pendingReads ??= new Int32Array(gm.bytes.length));
    for (let i = 0; i < len; i++) pr[src + i]!++;
    this.progress++;
  }

  /** Every thread is blocked: land every copy in flight, oldest first. False when none was. */
  landAll(m: Machine): boolean {
    const ids = this.#inflight;
    if (ids.length === 0) return false;
    this.#inflight = [];
    for (const id of ids) {
      const dst = this.#gDst[id]!;
      const src = this.#gSrc[id]!;
      const len = this.#gLen[id]!;
      const gm = m.globals[this.#gTens[id]!]!;
      m.shared.set(gm.bytes.subarray(src, src + len), dst);
      const pr = gm.meta.pendingReads!;
      for (let i = 0; i < len; i++) pr[src + i]!--;
      // Bytes written by the async proxy: visibility is the mbarrier's business (epoch -1 never
      // matches, so the cta_sync rule does not apply while the guard stands).
      m.shWriter.fill((this.#gSite[id]! << THREAD_BITS) | this.#gThread[id]!, dst, dst + len);
      m.shEpoch.fill(-1, dst, dst + len);
      const slot = this.#gSlot[id]!;
      this.#gPhase[id] = this.#phase[slot]!;
      this.#completeTx(slot, len);
    }
    return true;
  }

  /** The guard of copy `g - 1` (`g` from shBulk) stops thread `t` from accessing its bytes. */
  guardFails(g: number, t: number): boolean {
    const id = g - 1;
    const ph = this.#gPhase[id]!;
    return ph < 0 || this.#obs[this.#gSlot[id]! * this.threads + t]! <= ph;
  }

  /** TX6007 for thread `t` accessing shared byte `b` under guard `g`. */
  reportGuard(
    m: Machine,
    buf: Placed,
    b: number,
    g: number,
    t: number,
    site: number,
    verb: string,
  ): void {
    const id = g - 1;
    const bb = this.#buf[this.#gSlot[id]!]!;
    const bar = this.#label(bb, this.#addr[this.#gSlot[id]!]!);
    const why =
      this.#gPhase[id]! < 0
        ? `while it is still in flight (its mbarrier ${bar} phase has not completed)`
        : `before this thread observed the completion of its mbarrier ${bar} phase`;
    m.hazard(
      "TX6007",
      `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared "${buf.name}" byte ${b - buf.base}, the destination of a bulk copy, ${why}; wait with T.ptx.mbarrier.try_wait (or cta_sync after a thread that waited) first`,
      site,
      [
        {
          message: `the bulk copy (thread ${m.thread(this.#gThread[id]!)}) is issued here`,
          span: m.sites[this.#gSite[id]!],
        },
      ],
    );
  }

  /** An in-flight bulk copy reading byte `b` of tensor `tens`, for notes. */
  findBySrc(tens: number, b: number): { thread: number; site: number } | undefined {
    for (const id of this.#inflight) {
      const s = this.#gSrc[id]!;
      if (this.#gTens[id] === tens && b >= s && b < s + this.#gLen[id]!)
        return { thread: this.#gThread[id]!, site: this.#gSite[id]! };
    }
    return undefined;
  }

  // ---------------------------------------------------------------- shared → global

  /** Thread `t` issues a shared → global bulk copy of `len` bytes. Bounds were checked. */
  issueS2g(
    m: Machine,
    t: number,
    src: number,
    buf: Placed,
    tens: number,
    dst: number,
    len: number,
    site: number,
  ): void {
    // The copy reads its source as thread t would (races, uninitialised bytes, pending copies).
    checkSharedRead(m, buf, src, len, t, site);
    const gm = m.globals[tens]!;
    const meta = gm.meta;
    const pr = meta.pendingReads;
    if (pr) {
      for (let i = 0; i < len; i++) {
        if (pr[dst + i] !== 0) {
          globalPendingRead(m, gm, dst + i, t, site, "issues a bulk copy that writes");
          break;
        }
      }
    }
    checkGlobalBulkWrite(m, gm, dst, len, t, site, "issues a bulk copy that writes");
    if (!meta.writer) {
      meta.writer = new Int32Array(gm.bytes.length).fill(-1);
      meta.epoch = new Int32Array(gm.bytes.length);
    }
    const bw = (meta.bulkWrites ??= new Int32Array(gm.bytes.length));
    for (let i = 0; i < len; i++) bw[dst + i]!++;
    const s2g = m.shS2g;
    for (let i = 0; i < len; i++) s2g[src + i]!++;
    this.#s2g[t]!.push({ src, tens, dst, len, site, data: undefined });
    this.progress++;
  }

  /** `cp.async.bulk.commit_group` by thread `t`. */
  commit(t: number): void {
    this.#ends[t]!.push(this.#s2g[t]!.length);
  }

  /**
   * `cp.async.bulk.wait_group n` (`readOnly` false) or `.read n` (true) by thread `t`: all but
   * its n most recent bulk groups read their source; with `readOnly` false they also complete.
   */
  wait(m: Machine, t: number, n: number, readOnly: boolean): void {
    const ends = this.#ends[t]!;
    const g = ends.length;
    if (g <= n) return;
    const k = ends[g - n - 1]!;
    const list = this.#s2g[t]!;
    for (let i = this.#read[t]!; i < k; i++) this.#readSource(m, list[i]!);
    if (this.#read[t]! < k) this.#read[t] = k;
    if (readOnly) return;
    for (let i = 0; i < k; i++) this.#writeDest(m, t, list[i]!);
    list.splice(0, k);
    ends.splice(0, g - n);
    for (let i = 0; i < ends.length; i++) ends[i]! -= k;
    this.#read[t]! -= k;
    this.progress++;
  }

  #readSource(m: Machine, c: S2gCopy): void {
    c.data = m.shared.slice(c.src, c.src + c.len);
    const s2g = m.shS2g;
    for (let i = 0; i < c.len; i++) s2g[c.src + i]!--;
  }

  #writeDest(m: Machine, t: number, c: S2gCopy): void {
    const gm = m.globals[c.tens]!;
    gm.bytes.set(c.data!, c.dst);
    const meta = gm.meta;
    const bw = meta.bulkWrites!;
    const w = (c.site << THREAD_BITS) | t;
    meta.writer!.fill(w, c.dst, c.dst + c.len);
    meta.epoch!.fill(m.epoch, c.dst, c.dst + c.len);
    for (let i = 0; i < c.len; i++) bw[c.dst + i]!--;
  }

  /** A pending shared → global copy reading shared byte `b` (`global` false) or writing byte `b` of tensor `tens`. */
  findS2g(b: number, tens = -1): { thread: number; site: number } | undefined {
    for (let t = 0; t < this.threads; t++) {
      const list = this.#s2g[t]!;
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!;
        const hit =
          tens < 0
            ? c.data === undefined && b >= c.src && b < c.src + c.len
            : c.tens === tens && b >= c.dst && b < c.dst + c.len;
        if (hit) return { thread: t, site: c.site };
      }
    }
    return undefined;
  }

  // ---------------------------------------------------------------- CTA end

  /** CTA end: pending shared → global copies complete; copies to shared are dropped. */
  finishCta(m: Machine): void {
    for (let t = 0; t < this.threads; t++) {
      const list = this.#s2g[t]!;
      for (let i = this.#read[t]!; i < list.length; i++) this.#readSource(m, list[i]!);
      for (const c of list) this.#writeDest(m, t, c);
      list.length = 0;
      this.#ends[t]!.length = 0;
      this.#read[t] = 0;
    }
    this.#dropInflight(m);
  }

  /** A launch stopped (a hazard thrown, or a deadlock): undo every pending count on tensors. */
  dropAll(m: Machine): void {
    for (let t = 0; t < this.threads; t++) {
      for (const c of this.#s2g[t]!) {
        const bw = m.globals[c.tens]?.meta.bulkWrites;
        if (bw) for (let i = 0; i < c.len; i++) bw[c.dst + i]!--;
      }
      this.#s2g[t]!.length = 0;
      this.#ends[t]!.length = 0;
      this.#read[t] = 0;
    }
    this.#dropInflight(m);
  }

  #dropInflight(m: Machine): void {
    for (const id of this.#inflight) {
      const pr = m.globals[this.#gTens[id]!]?.meta.pendingReads;
      const s = this.#gSrc[id]!;
      if (pr) for (let i = 0; i < this.#gLen[id]!; i++) pr[s + i]!--;
    }
    this.#inflight = [];
  }

  // ---------------------------------------------------------------- deadlock

  /** TX6006: every thread is blocked and nothing is in flight. */
  reportDeadlock(m: Machine): void {
    const b = this.blocked[0];
    if (!b) return;
    const notes: Note[] = [];
    const state = (slot: number): string => {
      const pend = this.#pending[slot]!;
      const tx = this.#tx[slot]!;
      const parts = [`${pend} of ${this.#count[slot]} arrivals still pending`];
      if (tx > 0) parts.push(`tx-count ${tx} bytes still expected`);
      else if (tx < 0) parts.push(`${-tx} bytes completed beyond those announced with expect_tx`);
      else parts.push("tx-count 0");
      return `phase ${this.#phase[slot]! - this.#base[slot]!} has ${parts.join(", ")}`;
    };
    const seen = new Set<string>();
    for (const x of this.blocked) {
      const key = `${x.site}/${x.slot}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (x.slot < 0) continue;
      const bar = this.#label(this.#buf[x.slot]!, this.#addr[x.slot]!);
      if (x !== b) {
        notes.push({
          message: `thread ${m.thread(x.thread)} is also blocked here, waiting on mbarrier ${bar} (parity ${x.parity})`,
          span: m.sites[x.site],
        });
      }
      notes.push({
        message: `mbarrier ${bar} is initialised here with count ${this.#count[x.slot]}; its ${state(x.slot)}`,
        span: m.sites[this.#initSite[x.slot]!],
      });
    }
    const bar =
      b.slot >= 0
        ? `mbarrier ${this.#label(this.#buf[b.slot]!, this.#addr[b.slot]!)}`
        : "an mbarrier";
    m.hazard(
      "TX6006",
      `thread ${m.thread(b.thread)} of CTA ${m.cta()} waits forever on ${bar} (phase parity ${b.parity}): every thread of the CTA is blocked and no bulk copy is in flight to complete the phase`,
      b.site,
      notes,
    );
  }
}

interface S2gCopy {
  readonly src: number;
  readonly tens: number;
  readonly dst: number;
  readonly len: number;
  readonly site: number;
  /** The source bytes, once read (wait_group.read). */
  data: Uint8Array | undefined;
}

/**
 * An asynchronous write of shared bytes [a, a + n) by thread `t` (cp.async or bulk copy issue):
 * TX6007 when a pending shared → global bulk copy has not read them yet, or when they are the
 * destination of a global → shared bulk copy in flight or not yet observed by `t`.
 */
export function checkAsyncWrite(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
  verb: string,
): void {
  const s2g = m.shS2g;
  const bk = m.shBulk;
  for (let i = 0; i < n; i++) {
    const b = a + i;
    if (s2g[b] !== 0) {
      reportS2gSource(m, buf, b, t, site, verb);
      return;
    }
    if (bk[b] !== 0 && m.bulk.guardFails(bk[b]!, t)) {
      m.bulk.reportGuard(m, buf, b, bk[b]!, t, site, verb);
      return;
    }
  }
}

/** TX6007: shared byte `b` is the source of a shared → global bulk copy that has not read it. */
export function reportS2gSource(
  m: Machine,
  buf: Placed,
  b: number,
  t: number,
  site: number,
  verb: string,
): void {
  const other = m.bulk.findS2g(b);
  m.hazard(
    "TX6007",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared "${buf.name}" byte ${b - buf.base}, which a pending shared → global bulk copy has not read yet; wait with T.ptx.cp.async_.bulk.wait_group_read first`,
    site,
    other
      ? [
          {
            message: `the bulk copy (thread ${m.thread(other.thread)}) reading it is issued here`,
            span: m.sites[other.site],
          },
        ]
      : [],
  );
}

/** TX6007: an access of global bytes [a, a + n) that a pending shared → global bulk copy writes. */
export function checkGlobalBulkWrite(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
  verb: string,
): void {
  const bw = gm.meta.bulkWrites;
  if (!bw) return;
  for (let i = 0; i < n; i++) {
    if (bw[a + i] !== 0) {
      const other = m.bulk.findS2g(a + i, gm.index);
      m.hazard(
        "TX6007",
        `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} global "${gm.name}" byte ${a + i}, which a pending shared → global bulk copy writes; wait with T.ptx.cp.async_.bulk.wait_group first`,
        site,
        other
          ? [
              {
                message: `the bulk copy (thread ${m.thread(other.thread)}) writing it is issued here`,
                span: m.sites[other.site],
              },
            ]
          : [],
      );
      return;
    }
  }
}

/** TX6002: global byte `b` is read by a pending async copy (cp.async or bulk). */
export function globalPendingRead(
  m: Machine,
  gm: GlobalMem,
  b: number,
  t: number,
  site: number,
  verb: string,
): void {
  const other = m.async.findBySrc(gm.index, b) ?? m.bulk.findBySrc(gm.index, b);
  const notes = other
    ? [
        {
          message: `the async copy (thread ${m.thread(other.thread)}) reading it is issued here`,
          span: m.sites[other.site],
        },
      ]
    : [];
  m.hazard(
    "TX6002",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} global "${gm.name}" byte ${b} while a pending async copy reads it`,
    site,
    notes,
  );
}
