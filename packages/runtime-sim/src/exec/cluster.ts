import { bufferName, type Note } from "@tirx-ts/core";
import type { ClusterPort, SimContext } from "./context.js";
import type { BarBuffer } from "./memory.js";
import { uninitialisedUse } from "./mbarrier.js";
import type { Layout } from "../compile/layout.js";

/**
 * The cluster side of a launch with several CTAs per cluster (PTX ISA, "barrier.cluster",
 * "mapa", mbarrier.arrive on a `.shared::cluster` address): the cluster barrier, and the remote
 * accesses to a CTA's shared memory that must happen before that CTA exits.
 *
 * barrier.cluster: every thread of every CTA of the cluster arrives (`arrive`), then waits
 * (`wait`) until all have arrived in that phase. An arrival releases what the thread knows and
 * did (`.relaxed`: nothing), a wait that passes acquires every release of the completed phase, so
 * a cluster barrier orders memory across the CTAs like cta_sync within one (happens-before in
 * Clocks' K matrix), and shares the threads' mbarrier observations like cta_sync. A wait
 * whose phase never completes is TX6006.
 *
 * fence.mbarrier_init.release.cluster is a release fence for the thread's earlier mbarrier.init
 * operations only (PTX ISA, membar/fence). Followed by a relaxed arrive and a wait of the same
 * phase, it orders those inits before the waiter's later mbarrier operations (CUTLASS's
 * fence_barrier_init + cluster_arrive_relaxed + cluster_wait start-up) and orders nothing else:
 * the inits travel in their own matrix (`KI`), which only the mbarrier init-visibility check
 * (TX6003 in Mbarriers.use) reads.
 *
 * Exit (PTX ISA, "Distributed shared memory": a CTA must not exit while another CTA of its
 * cluster may still access its shared memory): per (accessing thread, target CTA) the latest
 * remote mbarrier arrive and the latest multicast TMA or shared::cta → shared::cluster copy
 * into the target are kept, and per issuing thread its latest shared::cta → shared::cluster copy
 * into another CTA (which reads the issuer's CTA's memory). At the cluster's end, TX6025 for an
 * arrive not ordered before the end of any thread of its target CTA, for a copy that landed in
 * an mbarrier phase no thread of the target CTA observed, and for a shared::cta →
 * shared::cluster copy whose landing no thread of the issuing CTA learned of (one still in
 * flight is TX6017). The usual fix: barrier.cluster arrive + wait before exit.
 */
export class ClusterUnit implements ClusterPort {
  readonly #m: SimContext;
  /** Per thread: the phase number its last arrival completes (`phase` passed it: done). */
  readonly #target: Int32Array;
  /** Completed phases since the cluster started. */
  phase = 0;
  /** Arrivals in the current phase. */
  #count = 0;
  /** Per thread u: the highest clock of u released by arrivals of the current phase. */
  readonly #acc: Int32Array;
  /** `#acc` frozen at the last phase completion: what a passing wait acquires. */
  readonly #rel: Int32Array;
  /** Per thread u: the clock of u's last fence.mbarrier_init released by arrivals (see above). */
  readonly #accInit: Int32Array;
  /** `#accInit` frozen at the last phase completion. */
  readonly #relInit: Int32Array;
  /**
   * threads × threads: KI[t * threads + u] = highest fence.mbarrier_init clock of u that t
   * acquired through the cluster barrier (u's mbarrier.init at or below it happen before t's
   * point); null until a fenced init is released.
   */
  #KI: Int32Array | null = null;
  /** A wait that could not pass in this scheduling round (site, thread), or site -1. */
  blockedSite = -1;
  blockedThread = 0;
  /** Site of the last arrival, for the deadlock note. */
  #arriveSite = -1;
  /**
   * Remote accesses, key `target * threads + u`: the latest remote mbarrier arrive (clock of the
   * arrive), and the latest multicast copy (bulk copy id) of thread u into CTA `target`.
   */
  readonly #remote = new Map<number, { clock: number; site: number; what: string }>();
  readonly #copies = new Map<number, { id: number; site: number; what: string }>();
  /**
   * Shared::cta → shared::cluster copies into another CTA, key `source * threads + u`: the
   * latest copy (bulk copy id) thread u of CTA `source` issued, which reads that CTA's memory.
   */
  readonly #sources = new Map<number, { id: number; site: number; what: string }>();

  constructor(m: SimContext) {
    this.#m = m;
    const n = m.ctas > 1 ? m.threads : 0;
    this.#target = new Int32Array(n);
    this.#acc = new Int32Array(n);
    this.#rel = new Int32Array(n);
    this.#accInit = new Int32Array(n);
    this.#relInit = new Int32Array(n);
  }

  /** A new cluster: no arrivals, no remote accesses. */
  reset(): void {
    if (this.#m.ctas === 1) return;
    this.#target.fill(0);
    this.#acc.fill(0);
    this.#rel.fill(0);
    this.#accInit.fill(0);
    this.#relInit.fill(0);
    this.#KI?.fill(0);
    this.phase = 0;
    this.#count = 0;
    this.blockedSite = -1;
    this.#arriveSite = -1;
    this.#remote.clear();
    this.#copies.clear();
    this.#sources.clear();
  }

  /** `barrier.cluster.arrive` (release unless `relaxed`) by thread `t` at `site`. */
  arrive(t: number, relaxed: boolean, site: number): void {
    const m = this.#m;
    const clocks = m.clocks;
    if (!relaxed) clocks.release(this.#acc, t);
    const f = clocks.initFence[t]!;
    if (f > this.#accInit[t]!) this.#accInit[t] = f;
    this.#target[t] = this.phase + 1;
    this.#arriveSite = site;
    m.bars.progress++;
    if (++this.#count === m.threads) {
      this.phase++;
      this.#count = 0;
      this.#rel.set(this.#acc);
      this.#relInit.set(this.#accInit);
      // Like cta_sync: what any thread observed of mbarrier phases (the bulk-copy guards) is
      // known to all (observations between a thread's arrive and the last arrival included).
      m.bars.barSync();
    }
  }

  /**
   * `barrier.cluster.wait` by thread `t`: true when the phase of its last arrival completed (it
   * then acquires the phase's releases); false while it must wait.
   */
  tryPass(t: number): boolean {
    if (this.#target[t]! > this.phase) return false;
    const m = this.#m;
    const T = m.threads;
    m.clocks.acquire(this.#rel, t);
    const row = t * T;
    const relInit = this.#relInit;
    let KI = this.#KI;
    for (let u = 0; u < T; u++) {
      if (relInit[u]! === 0) continue;
      KI ??= this.#KI = new Int32Array(T * T);
      if (relInit[u]! > KI[row + u]!) KI[row + u] = relInit[u]!;
    }
    return true;
  }

  /**
   * Whether thread `u`'s mbarrier.init at clock `c` happens before thread `t`'s current point
   * through a fence.mbarrier_init of `u` after it and a cluster barrier phase (relaxed arrive
   * included) that `t` waited for.
   */
  initAcquired(u: number, c: number, t: number): boolean {
    const KI = this.#KI;
    return KI !== null && KI[t * this.#m.threads + u]! >= c;
  }

  /** TX6006 when a wait of the cluster barrier blocked in the last round; true if it reported. */
  reportDeadlock(m: SimContext): boolean {
    if (this.blockedSite < 0) return false;
    const t = this.blockedThread;
    const notes: Note[] =
      this.#arriveSite >= 0
        ? [
            {
              message: "threads arrive on the cluster barrier here",
              span: m.sites[this.#arriveSite],
            },
          ]
        : [];
    m.hazard(
      "TX6006",
      `thread ${m.thread(t)} of CTA ${m.cta()} waits forever at barrier.cluster.wait: ${this.#count} of the ${m.threads} threads of the cluster's ${m.ctas} CTAs arrived in its phase, and every thread is blocked`,
      this.blockedSite,
      notes,
    );
    m.bars.deadlocked = true;
    return true;
  }

  /**
   * Thread `t` arrives on an mbarrier of the CTA of rank `target` (another CTA of its cluster)
   * at `site` (`what`, for the exit report): the arrive must happen before that CTA exits.
   */
  recordRemote(t: number, target: number, site: number, what: string): void {
    const m = this.#m;
    this.#remote.set(target * m.threads + t, { clock: m.clocks.clock[t]!, site, what });
  }

  /**
   * Thread `t`'s multicast copy `id` (BulkUnit) writes shared memory of the CTA of rank `target`
   * (another CTA of its cluster): a thread of that CTA must observe its landing before the CTA
   * exits (the mbarrier phase it completes in).
   */
  recordRemoteCopy(t: number, target: number, id: number, site: number, what: string): void {
    if (id < 0) return;
    this.#copies.set(target * this.#m.threads + t, { id, site, what });
  }

  /**
   * Thread `t`'s shared::cta → shared::cluster copy `id` (BulkUnit) into another CTA reads its
   * own CTA's shared memory until it lands: a thread of its CTA must learn of the landing (observe
   * the destination mbarrier's phase, through a remote arrive or barrier.cluster) before the CTA
   * exits.
   */
  recordSourceCopy(t: number, id: number, site: number, what: string): void {
    if (id < 0) return;
    this.#sources.set(this.#m.rank[t]! * this.#m.threads + t, { id, site, what });
  }

  /**
   * `mbarrier.arrive` by thread `t` on the mbarrier at CTA-local shared address `local` of the
   * CTA of rank `rank` (-1: its own CTA), as `mbarrier.arrive.shared::cluster` performs it on a
   * mapa address. `bb` is the mbarrier's buffer when the operand names it, else the shared
   * buffer holding `local` is found in `layout`. TX6005 for a rank outside the cluster or an
   * address in no shared buffer; then the checks of any arrive (TX6004 on a barrier its CTA has
   * not initialised, TX6003 when its init is not ordered before the arrive: a barrier.cluster
   * between them orders it).
   */
  remoteArrive(
    layout: Layout,
    t: number,
    rank: number,
    local: number,
    bb: BarBuffer | undefined,
    site: number,
  ): void {
    const m = this.#m;
    const own = m.rank[t]!;
    const r = rank < 0 ? own : rank;
    if (r >= m.ctas) {
      m.hazard(
        "TX6005",
        `thread ${m.thread(t)} of CTA ${m.cta()} arrives on an mbarrier of the CTA of rank ${r}, but its cluster has ${m.ctas} CTA${m.ctas > 1 ? "s" : ""} (PTX ISA, mapa: the rank must name a CTA of the cluster)`,
        site,
      );
      return;
    }
    if (!bb) {
      for (const p of layout.shared.values()) {
        if (local >= p.base && local + 8 <= p.base + p.size) {
          bb = { name: p.name, placed: p };
          break;
        }
      }
    }
    if (!bb) {
      m.hazard(
        "TX6005",
        `thread ${m.thread(t)} of CTA ${m.cta()} arrives on the shared::cluster address of byte ${local} of the CTA of rank ${r}, which lies in no shared buffer`,
        site,
      );
      return;
    }
    if (r !== own) {
      const i = (local - bb.placed.base) / 8;
      const at = r * m.sharedStride + local;
      const mine = m.bars.initOf(own * m.sharedStride + local);
      if (!m.bars.initOf(at) && mine && local % 8 === 0 && local >= bb.placed.base) {
        // Not initialised in the target CTA, though the arriving thread's CTA ran its init.
        uninitialisedUse(
          m,
          t,
          at,
          site,
          `thread ${m.thread(t)} of CTA ${m.cta()} arrives on mbarrier ${bufferName(bb.placed)}[${i}] of CTA ${m.ctaOfRank(r)}, which no mbarrier.init of that CTA has initialised`,
          [
            {
              message: `thread ${m.thread(mine.thread)} initialises its own CTA's ${bufferName(bb.placed)}[${i}] here; no thread of CTA ${m.ctaOfRank(r)} ran it before the arrive`,
              span: m.sites[mine.site],
            },
          ],
        );
        return;
      }
      this.recordRemote(t, r, site, `arrives on mbarrier ${bufferName(bb.placed)}[${i}]`);
    }
    m.bars.arrive(m, t, r * m.sharedStride + local, 0, bb, site);
  }

  /**
   * The cluster ends: TX6025 for each CTA that exits while a remote access to its shared memory
   * by another CTA's thread is not ordered before the end of any of its threads.
   */
  reportExit(m: SimContext): void {
    if (m.ctas === 1 || m.bars.deadlocked) return;
    const T = m.threads;
    const per = m.ctaThreads;
    const exitNote = (target: number): Note => ({
      message: `thread ${m.thread(target * per)} exits (with every thread of its CTA) at the end of the kernel here`,
      span: m.sites[m.exitSite],
    });
    for (const [key, r] of this.#copies) {
      const target = Math.floor(key / T);
      const u = key % T;
      const { seen, bar } = m.bulk.landingObserved(m, r.id, target * per, (target + 1) * per);
      if (seen !== false) continue; // observed, or still in flight (TX6017 at exit)
      m.hazard(
        "TX6025",
        `CTA ${m.ctaOfRank(target)} exits while thread ${m.thread(u)} ${r.what} of CTA ${m.ctaOfRank(target)} may still write it: no thread of CTA ${m.ctaOfRank(target)} observed the completion of mbarrier ${bar}'s phase the copy completes in (PTX ISA, distributed shared memory: a CTA's shared memory must not be accessed after it exits)`,
        r.site,
        [exitNote(target)],
      );
    }
    for (const [key, r] of this.#sources) {
      const source = Math.floor(key / T);
      const u = key % T;
      const { seen, bar } = m.bulk.landingObserved(m, r.id, source * per, (source + 1) * per);
      if (seen !== false) continue; // known to the CTA, or still in flight (TX6017 at exit)
      m.hazard(
        "TX6025",
        `CTA ${m.ctaOfRank(source)} exits while thread ${m.thread(u)} ${r.what}, which reads CTA ${m.ctaOfRank(source)}'s shared memory until it lands: no thread of CTA ${m.ctaOfRank(source)} learned of the completion of mbarrier ${bar}'s phase the copy completes in (a remote mbarrier arrive from the destination CTA after its wait, or barrier.cluster arrive + wait before exit; PTX ISA, distributed shared memory)`,
        r.site,
        [exitNote(source)],
      );
    }
    for (const [key, r] of this.#remote) {
      const target = Math.floor(key / T);
      const u = key % T;
      let ordered = false;
      for (let t = target * per; t < (target + 1) * per && !ordered; t++) {
        ordered = m.clocks.ordered(u, r.clock, t);
      }
      if (ordered) continue;
      m.hazard(
        "TX6025",
        `CTA ${m.ctaOfRank(target)} exits while thread ${m.thread(u)} may still access its shared memory: the thread ${r.what} of CTA ${m.ctaOfRank(target)} with nothing ordering it before that CTA's exit; end the kernel with T.ptx.barrier.cluster.arrive() and T.ptx.barrier.cluster.wait() in every CTA (PTX ISA, distributed shared memory)`,
        r.site,
        [exitNote(target)],
      );
    }
  }
}
