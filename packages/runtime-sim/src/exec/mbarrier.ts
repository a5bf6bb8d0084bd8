import { bufferName, type Note } from "@tirx-ts/core";
import type { Clocks } from "./clocks.js";
import {
  accessRecord,
  setAccess,
  type BarsPort,
  type SharedAccess,
  type SimContext,
} from "./context.js";
import { warpList, type MbarrierFacts, type MbarrierWaitFacts } from "./deadlock-facts.js";
import { checkBounds } from "./hazards.js";
import type { BarBuffer, Placed } from "./memory.js";
import { THREAD_BITS, THREAD_MASK } from "./packed.js";
import type { SharedShadow } from "./shared-shadow.js";

/** A wait loop that could not proceed in the current scheduling round (for TX6006). */
interface Blocked {
  readonly site: number;
  /** Its first still-waiting lane, whose mbarrier and parity `slot` and `parity` are. */
  readonly thread: number;
  readonly slot: number;
  readonly parity: number;
  /** The still-waiting lanes: `lanes[0..n)` (the loop's own array, read only at the report). */
  readonly lanes: ArrayLike<number>;
  readonly n: number;
}

/** The state of one mbarrier object of the running CTA. */
interface Bar {
  readonly addr: number;
  bb: BarBuffer;
  count: number;
  pending: number;
  /** May go negative: complete_tx before expect_tx is legal. */
  tx: number;
  /** Completed phases since CTA start (absolute). */
  phase: number;
  /** `phase` at the last init (parity is counted from there). */
  base: number;
  initSite: number;
  /** Thread of the last init and its clock then (for the fence.mbarrier_init rule, TX6016). */
  initThread: number;
  initClock: number;
  /** Site of the last expect_tx on it (-1 when none), for TX6022 notes. */
  txSite: number;
  /** What the threads arriving on it had observed (max per slot), cumulative. */
  readonly acc: number[];
  /** `acc` as of its last completed phase: what observing that completion teaches. */
  readonly rel: number[];
}

/**
 * The mbarriers of the CTA that is running (PTX ISA: "mbarrier"), and the scheduling state of
 * its wait loops.
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
 * What each thread observed is tracked per slot like a vector clock: a successful try_wait
 * observes the completed phase, a cta_sync shares every thread's observations, and an arrival
 * carries the arriving thread's observations to whoever observes that phase's completion. The
 * bulk copy engine (BulkUnit) guards landed bytes with these observations.
 */
export class Mbarriers implements BarsPort {
  readonly threads: number;
  /** Bumped by every change that can let a wait proceed (mbarrier state, copy issue or landing, a wait loop left). */
  progress = 0;
  /** Set when the CTA was abandoned as deadlocked (TX6006): no exit reports (TX6017) then. */
  deadlocked = false;
  /** Set by a wait loop with a body (it does work while waiting, so it is never "stuck"). */
  busy = false;
  /** Wait loops blocked in the current round. */
  readonly blocked: Blocked[] = [];
  /** Barrier slot and parity of the last try_wait that returned false. */
  lastSlot = -1;
  lastParity = 0;

  readonly #slotOf = new Map<number, number>();
  readonly #bars: Bar[] = [];
  /** Per slot, per thread: completed phases this thread has observed (absolute). */
  #obs: Int32Array;

  readonly #clocks: Clocks;
  readonly #shadow: SharedShadow;

  /** The scratch record of the bounds checks of mbarrier operands, made at first use. */
  #boundsAccess: SharedAccess | undefined;

  #bounds(m: SimContext, placed: Placed): SharedAccess {
    return (this.#boundsAccess ??= accessRecord(m, placed, 8, 0, "uses"));
  }

  constructor(threads: number, clocks: Clocks, shadow: SharedShadow) {
    this.threads = threads;
    this.#clocks = clocks;
    this.#shadow = shadow;
    this.#obs = new Int32Array(threads * 4);
  }

  /** Forget everything (CTA start). */
  reset(): void {
    // Map.prototype.clear allocates a new table even for an empty map.
    if (this.#slotOf.size > 0) this.#slotOf.clear();
    this.#bars.length = 0;
    this.blocked.length = 0;
    this.busy = false;
    this.deadlocked = false;
    this.lastSlot = -1;
  }

  /** The slot of the mbarrier at `addr`, after bounds, init and visibility checks; -1 if unusable. */
  use(m: SimContext, t: number, addr: number, bb: BarBuffer, site: number, verb: string): number {
    if (!inBar(this.#bounds(m, bb.placed), t, addr, bb, site, verb)) return -1;
    const slot = this.#slotOf.get(addr);
    if (slot === undefined) {
      const p = bb.placed;
      const notes = p.span
        ? [
            {
              message: `${bufferName(p)} is allocated here; mbarriers need mbarrier.init`,
              span: p.span,
            },
          ]
        : [];
      uninitialisedUse(
        m,
        t,
        addr,
        site,
        `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} mbarrier ${labelOf(m, bb, addr)}, which no mbarrier.init of ${m.ctas > 1 ? "its" : "this"} CTA has initialised`,
        notes,
      );
      return -1;
    }
    const hit = this.#shadow.unorderedWrite(addr, t);
    if (hit !== undefined && !this.#initReleased(m, slot, hit.other, hit.clock, t)) {
      const w = hit.other;
      m.hazard(
        "TX6003",
        `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} mbarrier ${labelOf(m, bb, addr)}, which thread ${m.thread(w & THREAD_MASK)} initialised with no ${m.ctas > 1 ? "cta_sync (barrier.cluster between CTAs)" : "cta_sync"} in between`,
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

  /**
   * Whether the last write of the mbarrier in `slot` (writer `w` at clock `c`) is its mbarrier.init and reached
   * thread `t` through fence.mbarrier_init.release.cluster and a cluster barrier (ClusterUnit).
   */
  #initReleased(m: SimContext, slot: number, w: number, c: number, t: number): boolean {
    const b = this.#bars[slot]!;
    const u = w & THREAD_MASK;
    return u === b.initThread && c === b.initClock && m.clusterUnit.initAcquired(u, b.initClock, t);
  }

  /**
   * TX6016 unless the mbarrier in `slot` was made visible to the async proxy: its initialising
   * thread ran fence.mbarrier_init after the init (PTX ISA, mbarrier.init / fence.mbarrier_init).
   */
  checkInitFence(m: SimContext, slot: number, t: number, site: number, use: string): void {
    const b = this.#bars[slot]!;
    if (this.#clocks.initFence[b.initThread]! >= b.initClock) return;
    m.hazard(
      "TX6016",
      `thread ${m.thread(t)} of CTA ${m.cta()} ${use} mbarrier ${labelOf(m, b.bb, b.addr)}, but thread ${m.thread(b.initThread)} initialised it with no fence.mbarrier_init (T.ptx.fence.mbarrier_init) after the init, so the async proxy may not see the initialised object`,
      site,
      [
        {
          message: `thread ${m.thread(b.initThread)} initialises it here`,
          span: m.sites[b.initSite],
        },
      ],
    );
  }

  /** TX6017 for each mbarrier whose current phase still expects transaction bytes (CTA exit). */
  reportIncomplete(m: SimContext): void {
    if (this.deadlocked) return;
    for (const b of this.#bars) {
      if (b.tx === 0) continue;
      const what =
        b.tx > 0
          ? `${b.tx} transaction bytes announced with expect_tx never arrived`
          : `${-b.tx} bytes completed beyond those announced with expect_tx`;
      m.hazard(
        "TX6017",
        `CTA ${m.cta()} exits while mbarrier ${labelOf(m, b.bb, b.addr)} has an incomplete phase: ${what}`,
        b.initSite,
      );
    }
  }

  /** The thread and site of the last init of the mbarrier at `addr`, if it was initialised. */
  initOf(addr: number): { thread: number; site: number } | undefined {
    const slot = this.#slotOf.get(addr);
    if (slot === undefined) return undefined;
    const b = this.#bars[slot]!;
    return { thread: b.initThread, site: b.initSite };
  }

  /** `"bars"[i]`, for messages. */
  label(m: SimContext, slot: number): string {
    const b = this.#bars[slot]!;
    return labelOf(m, b.bb, b.addr);
  }

  /** Completed phases (absolute) of the mbarrier in `slot`. */
  phase(slot: number): number {
    return this.#bars[slot]!.phase;
  }

  /** Completed phases (absolute) of the mbarrier in `slot` that thread `t` has observed. */
  observed(slot: number, t: number): number {
    return this.#obs[slot * this.threads + t]!;
  }

  /** `mbarrier.init(bar, count)` by thread `t`. */
  init(m: SimContext, t: number, addr: number, count: number, bb: BarBuffer, site: number): void {
    if (!inBar(this.#bounds(m, bb.placed), t, addr, bb, site, "initialises")) return;
    let slot = this.#slotOf.get(addr);
    if (slot === undefined) {
      slot = this.#bars.length;
      this.#slotOf.set(addr, slot);
      this.#bars.push({
        addr,
        bb,
        count: 0,
        pending: 0,
        tx: 0,
        phase: 0,
        base: 0,
        initSite: site,
        initThread: t,
        initClock: 0,
        txSite: -1,
        acc: [],
        rel: [],
      });
      const need = (slot + 1) * this.threads;
      if (this.#obs.length < need) {
        const o = new Int32Array(need * 2);
        o.set(this.#obs);
        this.#obs = o;
      }
      this.#obs.fill(0, slot * this.threads, need);
    }
    const b = this.#bars[slot]!;
    b.bb = bb;
    b.count = count;
    b.pending = count;
    b.tx = 0;
    b.base = b.phase;
    b.initSite = site;
    b.initThread = t;
    b.initClock = this.#clocks.clock[t]!;
    // A use before this init that nothing orders before it (a thread that ran ahead of the init):
    // TX6013 with both lines (PTX ISA, mbarrier.init: the object must be initialised before use).
    if (m.opts.track) {
      const hit = this.#shadow.onWrite(t, site, addr, 8, false, m.isAtomicSite, false);
      if (hit?.read) {
        const u = m.thread(hit.other & THREAD_MASK);
        m.hazard(
          "TX6013",
          `thread ${m.thread(t)} of CTA ${m.cta()} initialises mbarrier ${labelOf(m, bb, addr)}, which thread ${u} used before with nothing ordering this init before that use (a cta_sync after the init, before any use)`,
          site,
          [{ message: `thread ${u} uses it here`, span: m.sites[hit.other >> THREAD_BITS] }],
        );
      }
    }
    // The init writes the object: later uses by other threads need a cta_sync after it (the
    // recorded write ends any bulk guard on its bytes).
    this.#shadow.recordWrite(t, site, addr, 8);
    m.sdv.setBigUint64(addr, BigInt(count >>> 0), true);
    this.progress++;
    m.opts.tracer?.mbarrierInit(labelOf(m, bb, addr), t >> 5, count);
  }

  /** `mbarrier.arrive` (txBytes 0) or `mbarrier.arrive.expect_tx(bar, txBytes)` by thread `t`. */
  arrive(
    m: SimContext,
    t: number,
    addr: number,
    txBytes: number,
    bb: BarBuffer,
    site: number,
  ): void {
    const slot = this.use(m, t, addr, bb, site, "arrives on");
    if (slot < 0) return;
    // The arrival carries what this thread observed to whoever observes the phase's completion
    // (a consumer's arrive on an "empty" barrier tells the producer the consumer saw "full").
    const b = this.#bars[slot]!;
    const acc = b.acc;
    const n = this.threads;
    for (let s = 0; s < this.#bars.length; s++) {
      const o = this.#obs[s * n + t]!;
      if (o > (acc[s] ?? 0)) acc[s] = o;
    }
    this.#clocks.onArrive(slot, t);
    b.tx += txBytes;
    if (txBytes !== 0) b.txSite = site;
    b.pending--;
    this.progress++;
    if (b.pending <= 0 && b.tx < 0) this.#overTx(m, b, t, site);
    this.#maybeComplete(m, b, slot, t);
  }

  /**
   * The standalone `mbarrier.expect_tx(bar, bytes)` by thread `t` (PTX ISA, mbarrier.expect_tx):
   * the current phase's tx-count grows by `bytes`; no arrival, nothing released.
   */
  expectTx(
    m: SimContext,
    t: number,
    addr: number,
    bytes: number,
    bb: BarBuffer,
    site: number,
  ): void {
    const slot = this.use(m, t, addr, bb, site, "expects transaction bytes on");
    if (slot < 0) return;
    const b = this.#bars[slot]!;
    b.tx += bytes;
    if (bytes !== 0) b.txSite = site;
    this.progress++;
    this.#maybeComplete(m, b, slot, t);
  }

  /**
   * The standalone `mbarrier.complete_tx(bar, bytes)` by thread `t` (PTX ISA,
   * mbarrier.complete_tx): `bytes` complete on the current phase as a bulk copy's would
   * (completeTx: TX6022 beyond what expect_tx announced); `.relaxed`, so it releases nothing.
   */
  completeTxBy(
    m: SimContext,
    t: number,
    addr: number,
    bytes: number,
    bb: BarBuffer,
    site: number,
  ): void {
    const slot = this.use(m, t, addr, bb, site, "completes transaction bytes on");
    if (slot < 0) return;
    this.completeTx(m, slot, bytes, t, site);
  }

  /**
   * complete_tx(bytes) on the mbarrier in `slot`: a bulk copy issued by thread `t` at `site`
   * landed. TX6022 when every arrival of the phase is in and the bytes completed exceed those
   * announced with expect_tx (the runtime form of the verifier's TX4008): the phase can never
   * complete with tx-count 0.
   */
  completeTx(m: SimContext, slot: number, bytes: number, t: number, site: number): void {
    const b = this.#bars[slot]!;
    b.tx -= bytes;
    this.progress++;
    if (b.pending <= 0 && b.tx < 0) this.#overTx(m, b, t, site);
    this.#maybeComplete(m, b, slot, t);
  }

  #overTx(m: SimContext, b: Bar, t: number, site: number): void {
    const notes: Note[] = [];
    if (b.txSite >= 0) {
      notes.push({ message: "the bytes are announced here (expect_tx)", span: m.sites[b.txSite] });
    }
    m.hazard(
      "TX6022",
      `mbarrier ${labelOf(m, b.bb, b.addr)} in CTA ${m.cta()}: bulk copies completed ${-b.tx} bytes more than expect_tx announced for phase ${b.phase - b.base} (thread ${m.thread(t)}); the phase cannot complete (PTX ISA, mbarrier: tx-count)`,
      site,
      notes,
    );
  }

  #maybeComplete(m: SimContext, b: Bar, slot: number, t: number): void {
    if (b.pending <= 0 && b.tx === 0) {
      m.opts.tracer?.mbarrierPhase(labelOf(m, b.bb, b.addr), b.phase - b.base, t >> 5);
      b.phase++;
      this.#clocks.onPhaseComplete(slot);
      b.pending = b.count;
      const { acc, rel } = b;
      for (let s = 0; s < acc.length; s++) if ((acc[s] ?? 0) > (rel[s] ?? 0)) rel[s] = acc[s]!;
    }
  }

  /** `mbarrier.try_wait.parity(bar, parity)` by thread `t`: 1 when that phase completed. */
  tryWait(
    m: SimContext,
    t: number,
    addr: number,
    parity: number,
    bb: BarBuffer,
    site: number,
  ): number {
    const slot = this.use(m, t, addr, bb, site, "waits on");
    if (slot < 0) return 1;
    const b = this.#bars[slot]!;
    const phase = b.phase;
    if (((phase - b.base) & 1) !== (parity & 1)) {
      const n = this.threads;
      const obs = this.#obs;
      if (obs[slot * n + t]! < phase) obs[slot * n + t] = phase;
      const rel = b.rel;
      for (let s = 0; s < rel.length; s++) {
        const r = rel[s] ?? 0;
        if (obs[s * n + t]! < r) obs[s * n + t] = r;
      }
      this.#clocks.onWaitSuccess(slot, t);
      m.opts.tracer?.tryWait(labelOf(m, bb, addr), t >> 5, true);
      return 1;
    }
    m.opts.tracer?.tryWait(labelOf(m, bb, addr), t >> 5, false);
    this.lastSlot = slot;
    this.lastParity = parity & 1;
    return 0;
  }

  /**
   * cta_sync of threads [lo, hi) (one CTA; default all): each of them now knows what any of them
   * observed.
   */
  barSync(lo = 0, hi = this.threads): void {
    const n = this.threads;
    const obs = this.#obs;
    for (let s = 0; s < this.#bars.length; s++) {
      let most = 0;
      for (let t = lo; t < hi; t++) if (obs[s * n + t]! > most) most = obs[s * n + t]!;
      obs.fill(most, s * n + lo, s * n + hi);
    }
  }

  /**
   * TX6006: every thread is blocked and nothing is in flight. The report names the cause: the
   * message gives the first waiter's phase (arrivals received of the count, transaction bytes
   * outstanding, or a completed phase it never observed); a note per wait statement and mbarrier
   * names the waiting warps, the parity they pass against the barrier's current phase and the
   * verdict (MbarrierWaitFacts); a note at each mbarrier's init gives its state (MbarrierFacts),
   * and one at the last expect_tx that left bytes outstanding.
   */
  reportDeadlock(m: SimContext): void {
    const b = this.blocked[0];
    if (!b) return;
    this.deadlocked = true;
    const notes: Note[] = [];
    const groups = new Map<string, { x: Blocked; lanes: number[] }>();
    for (const x of this.blocked) {
      if (x.slot < 0) continue;
      const key = `${x.site}/${x.slot}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { x, lanes: [] }));
      // Lanes of the first lane's CTA: in a cluster, the others test their own CTA's mbarrier.
      const rank = m.rank[x.thread]!;
      for (let i = 0; i < x.n; i++) {
        const t = x.lanes[i]!;
        if (m.rank[t] === rank) g.lanes.push(t);
      }
    }
    const described = new Set<number>();
    let head = "";
    for (const { x, lanes } of groups.values()) {
      const w = this.#waitFacts(m, x, lanes);
      if (x === b) head = this.#cause(w, x.slot);
      notes.push({ message: this.#waitMessage(m, w, x.slot), span: m.sites[x.site], facts: w });
      if (described.has(x.slot)) continue;
      described.add(x.slot);
      const xb = this.#bars[x.slot]!;
      const f = this.#barFacts(m, x.slot);
      notes.push({
        message: `mbarrier ${f.barrier} is initialised here with count ${xb.count}; its phase ${f.phase} has ${stateOf(f)}`,
        span: m.sites[xb.initSite],
        facts: f,
      });
      if (f.txBytes > 0 && xb.txSite >= 0) {
        notes.push({
          message: `the last expect_tx on mbarrier ${f.barrier} is here: ${f.txBytes} of the bytes it announced for phase ${f.phase} never arrived (expect_tx more bytes than the copies bring?)`,
          span: m.sites[xb.txSite],
        });
      }
    }
    const bar = b.slot >= 0 ? `mbarrier ${this.label(m, b.slot)}` : "an mbarrier";
    m.hazard(
      "TX6006",
      `thread ${m.thread(b.thread)} of CTA ${m.cta()} waits forever on ${bar} (phase parity ${b.parity})${head}; every thread of the CTA is blocked and no bulk copy is in flight to complete the phase.`,
      b.site,
      notes,
    );
  }

  /** The state of the mbarrier in `slot` as facts (see MbarrierFacts). */
  #barFacts(m: SimContext, slot: number): MbarrierFacts {
    const b = this.#bars[slot]!;
    const phase = b.phase - b.base;
    return {
      kind: "mbarrier",
      barrier: labelOf(m, b.bb, b.addr),
      cta: m.ctaOfRank(m.rankAt(b.addr)),
      count: b.count,
      arrived: b.count - b.pending,
      pending: b.pending,
      txBytes: b.tx,
      phase,
      parity: phase & 1,
    };
  }

  /** The facts of the blocked wait `x`, whose still-waiting lanes of its CTA are `lanes`. */
  #waitFacts(m: SimContext, x: Blocked, lanes: readonly number[]): MbarrierWaitFacts {
    const b = this.#bars[x.slot]!;
    const current = b.phase - b.base;
    const warps = new Set<number>();
    let observed = current;
    for (const t of lanes) {
      warps.add((t % m.ctaThreads) >> 5);
      observed = Math.min(observed, Math.max(0, this.observed(x.slot, t) - b.base));
    }
    return {
      kind: "mbarrier-wait",
      barrier: labelOf(m, b.bb, b.addr),
      cta: m.ctaOf(x.thread),
      warps: [...warps].sort((p, q) => p - q),
      threads: lanes.length,
      parity: x.parity,
      waitsFor: current,
      observed,
      verdict: observed < current ? "parity" : "future",
    };
  }

  /** The note of a blocked wait (MbarrierWaitFacts `w`) on the mbarrier in `slot`. */
  #waitMessage(m: SimContext, w: MbarrierWaitFacts, slot: number): string {
    const who = `${warpList(w.warps)} of CTA ${w.cta} (${w.threads} ${w.threads === 1 ? "thread" : "threads"})`;
    const waits = `${who} ${w.threads === 1 ? "waits" : "wait"} here on mbarrier ${w.barrier} with parity ${w.parity}, for phase ${w.waitsFor} (the barrier's current phase, parity ${w.waitsFor & 1})`;
    if (w.verdict === "parity") return `${waits}; ${this.#parityBug(w)}`;
    return `${waits}, a future phase: ${stateOf(this.#barFacts(m, slot))}`;
  }

  /** Why a wait of verdict "parity" is a parity bug, for messages. */
  #parityBug(w: MbarrierWaitFacts): string {
    const done = w.waitsFor - 1;
    return `phase ${done} (parity ${done & 1}) already completed and the waiting threads never observed it (they observed ${w.observed} of the ${w.waitsFor} completed phases): a parity bug (a wait for phase ${done} passes parity ${done & 1})`;
  }

  /** The cause of the report's first wait (`w` on the mbarrier in `slot`), for its message. */
  #cause(w: MbarrierWaitFacts, slot: number): string {
    if (w.verdict === "parity") return `; ${this.#parityBug(w)}`;
    const b = this.#bars[slot]!;
    const tx =
      b.tx > 0
        ? `; ${b.tx} transaction bytes announced with expect_tx are outstanding`
        : b.tx < 0
          ? `; ${-b.tx} bytes completed beyond those announced with expect_tx`
          : "";
    return ` for phase ${w.waitsFor}, which has received ${b.count - b.pending} of its ${b.count} arrivals${tx}`;
  }
}

/** The state of an mbarrier's current phase (MbarrierFacts), for messages. */
function stateOf(f: MbarrierFacts): string {
  const parts = [`${f.pending} of ${f.count} arrivals still pending (${f.arrived} received)`];
  if (f.txBytes > 0) parts.push(`tx-count ${f.txBytes} bytes still expected`);
  else if (f.txBytes < 0)
    parts.push(`${-f.txBytes} bytes completed beyond those announced with expect_tx`);
  else parts.push("tx-count 0");
  return parts.join(", ");
}

/** `"bars"[i]` (in a cluster of several CTAs: `"bars"[i] of CTA (x, y, z)`), for messages. */
/**
 * TX6004 (`message`) for thread `t`'s use of the mbarrier at `addr`, which no init reached. The
 * use reads the object: an init later in the phase with nothing ordering it before the use is
 * the other half of the race (TX6013 at that init, naming this use: Mbarriers.init), and the
 * report is held for it (Machine.hazard). PTX ISA, mbarrier.init: the object must be initialised
 * before any other mbarrier operation.
 */
export function uninitialisedUse(
  m: SimContext,
  t: number,
  addr: number,
  site: number,
  message: string,
  notes: readonly Note[],
): void {
  if (m.opts.track && m.speculative === 0) m.shadow.onRead(t, site, addr, 8);
  m.hazard("TX6004", message, site, notes, true);
}

function labelOf(m: SimContext, bb: BarBuffer, addr: number): string {
  const at = `${bufferName(bb.placed)}[${(m.ctaLocal(addr) - bb.placed.base) / 8}]`;
  return m.ctas > 1 ? `${at} of CTA ${m.ctaOfRank(m.rankAt(addr))}` : at;
}

/**
 * True when the 8 bytes at `addr` lie in the mbarrier buffer `bb`; otherwise TX6005 (for thread
 * `t`'s use `verb` at `site`, checked through the scratch record `acc`).
 */
function inBar(
  acc: SharedAccess,
  t: number,
  addr: number,
  bb: BarBuffer,
  site: number,
  verb: string,
): boolean {
  const rel = acc.m.ctaLocal(addr) - bb.placed.base;
  return checkBounds(setAccess(acc, bb.placed, rel, 8, t, site, verb), "shared");
}
