/**
 * Happens-before clocks of one simulated CTA (a cluster's CTAs run as one group of threads) and
 * of the launch around it: what every thread knows of every other thread's progress, so that the
 * shadows of shared memory (exec/shared-shadow.ts) and of tensors (exec/global-shadow.ts) can ask
 * whether an earlier access is ordered before a thread's current point.
 *
 * Model (a FastTrack-style epoch scheme, sized for the simulator's hot path):
 * - every thread `t` has a clock `clock[t]`; an access is stamped `(t, clock[t])`. A thread's
 *   clock advances at each of its release events (cta_sync, named barrier, __syncwarp,
 *   mbarrier arrive, proxy fences), so a stamp names a segment of that thread's program order;
 * - access `(u, c)` happens before thread `t`'s current point when: `u === t` (program order, same
 *   CTA); or `c <= floor[u]` (a cta_sync after the access: PTX ISA, bar.sync "memory ordering");
 *   or `u` and `t` are lanes of one warp and `c <= wfloor[u]` (a __syncwarp that every lane
 *   of the warp executed after the access); or `K[t][u] >= c` (what `t` acquired from `u` through
 *   named barriers, partial-warp __syncwarp, mbarrier phases and cluster barriers: an arrival
 *   releases the arriver's knowledge, the phase completion freezes it, a successful wait
 *   acquires it — PTX ISA, mbarrier "memory ordering"). K is a threads × threads matrix allocated
 *   the first time a fine-grained synchronization runs;
 * - clocks never go back: each CTA starts at `ctaBase`, above every clock of earlier CTAs, so a
 *   stamp below `ctaBase` and at or above `launchBase` comes from another CTA of the same launch,
 *   with which there is no happens-before at all (only atomics among themselves do not race);
 *   a stamp below `launchBase` comes from an earlier launch (ordered). Stamp 0 means "ordered
 *   before everything" (bytes written by the async proxy, whose visibility the bulk-copy guard
 *   checks instead).
 *
 * Proxy fences (fence.proxy.async) and fence.mbarrier_init are kept per thread here too, with
 * what each fence's thread knew then, for the async-proxy rules (TX6015, TX6016).
 *
 * Other CTAs (and clusters) of the launch: a stamp of another one is unordered unless the thread
 * acquired it through the PTX memory model's release and acquire patterns (exec/memory-order.ts):
 * a release publishes the releaser's view (`viewOf`: per group of the launch, per thread of it,
 * the highest clock known), an acquire joins it into what the thread knows of earlier groups
 * (`ext`, per thread; `extAll`, what a cta_sync made every thread know). Barriers spread it:
 * cta_sync, named barriers, mbarrier phases and warp collectives carry each participant's `ext`
 * to the others as they carry clocks (barrier.cluster does not: a false report, never a missed
 * race). Views are immutable once made (joins copy), so records share them.
 *
 * Known limits: clocks are int32 and grow by one per release event per thread, so a process
 * must stay below 2^31 of them.
 *
 * Costs: typed arrays only; cta_sync is O(threads); named barriers and partial-warp collectives
 * O(participants × threads); mbarrier arrive and successful try_wait O(threads) once K exists.
 */
import { THREAD_MASK } from "./packed.js";

/** Clocks start above 0 (0 marks "ordered before everything") and never repeat in a process. */
let nextClock = 1;

/**
 * What a thread knows of the groups (CTAs, or clusters) of the launch: group index → per thread
 * of that group, the highest clock of its ordered before. Immutable once made: joins copy.
 */
export type GroupView = ReadonlyMap<number, Int32Array>;

/** The join of `a` and `b` (a or b itself when one holds all of the other). */
export function joinViews(
  a: GroupView | undefined,
  b: GroupView | undefined,
): GroupView | undefined {
  if (a === undefined || a.size === 0) return b;
  if (b === undefined || b.size === 0 || a === b) return a;
  let out: Map<number, Int32Array> | undefined;
  for (const [g, y] of b) {
    const x = a.get(g);
    let z = y;
    if (x !== undefined && x !== y) {
      let xHolds = true;
      let yHolds = true;
      for (let i = 0; i < x.length; i++) {
        if (x[i]! < y[i]!) xHolds = false;
        else if (x[i]! > y[i]!) yHolds = false;
      }
      if (xHolds) continue;
      if (!yHolds) {
        z = new Int32Array(x.length);
        for (let i = 0; i < x.length; i++) z[i] = x[i]! > y[i]! ? x[i]! : y[i]!;
      }
    } else if (x === y) continue;
    out ??= new Map(a);
    out.set(g, z);
  }
  return out ?? a;
}

/** The happens-before clocks of one Machine's threads (see the file comment). */
export class Clocks {
  readonly threads: number;
  /** Per thread: current clock. */
  readonly clock: Int32Array;
  /**
   * True when every thread's clock is the same (at a CTA's start, and after a cta_sync that found
   * them equal); every other change of a clock here sets it false.
   */
  clockUniform = true;
  /** Per thread: its clock at its last cta_sync (accesses at or below are ordered for all). */
  readonly floor: Int32Array;
  /**
   * At most every thread's `floor`: an access of this CTA at a clock up to it happens before
   * every thread's current point (a cta_sync came after it).
   */
  floorMin = 0;
  /** Per thread: its clock at its last collective executed by the whole warp. */
  readonly wfloor: Int32Array;
  /** Per thread: its clock at its last proxy fence covering shared memory. */
  readonly proxyFence: Int32Array;
  /** Per thread: its clock at its last proxy fence covering global memory. */
  readonly globalFence: Int32Array;
  /** Per thread: its clock at its last fence.mbarrier_init. */
  readonly initFence: Int32Array;
  /** threads × threads: K[t * threads + u] = highest clock of u that t acquired (see matrix). */
  #K: Int32Array | null = null;
  /** Per mbarrier slot: knowledge released by arrivals (acc) and frozen at phase completion (rel). */
  readonly #acc: Int32Array[] = [];
  readonly #rel: Int32Array[] = [];
  readonly #join: Int32Array;
  /** First clock of the current CTA and of the current launch. */
  ctaBase = 0;
  launchBase = 0;
  /** ctaBase of each CTA run in this launch, and its label, for messages. */
  readonly #ctaStarts: number[] = [];
  readonly #ctaLabels: string[] = [];

  constructor(threads: number) {
    this.threads = threads;
    this.clock = new Int32Array(threads);
    this.floor = new Int32Array(threads);
    this.wfloor = new Int32Array(threads);
    this.proxyFence = new Int32Array(threads);
    this.globalFence = new Int32Array(threads);
    this.initFence = new Int32Array(threads);
    this.#join = new Int32Array(threads);
  }

  /** The knowledge matrix K (null until the first fine-grained synchronization made it). */
  get K(): Int32Array | null {
    return this.#K;
  }

  /** K, made (all 0) at first use. */
  matrix(): Int32Array {
    return (this.#K ??= new Int32Array(this.threads * this.threads));
  }

  /** A launch starts: clocks from here on are this launch's. */
  beginLaunch(): void {
    this.launchBase = nextClock;
    this.#ctaStarts.length = 0;
    this.#ctaLabels.length = 0;
  }

  /**
   * A new CTA (labelled `label` for messages): clocks above every earlier one, no thread has
   * synchronized or fenced yet. O(threads).
   */
  beginCta(label: string): void {
    this.endCta();
    const base = nextClock;
    this.ctaBase = base;
    this.clock.fill(base + 1);
    this.clockUniform = true;
    this.floor.fill(0);
    this.floorMin = 0;
    this.wfloor.fill(0);
    this.proxyFence.fill(0);
    this.globalFence.fill(0);
    this.#fenceKnew.length = 0;
    this.#globalKnew.length = 0;
    this.initFence.fill(0);
    this.#ext.length = 0;
    this.#extAll = undefined;
    this.hasExt = false;
    this.focus = undefined;
    this.#namedExt.clear();
    this.#ctaStarts.push(base);
    this.#ctaLabels.push(label);
    this.resetBars();
  }

  /** The CTA (or launch) ended: later CTAs get clocks above every clock it used. */
  endCta(): void {
    let most = this.ctaBase + 1;
    const c = this.clock;
    for (let t = 0; t < c.length; t++) if (c[t]! > most) most = c[t]!;
    if (most + 1 > nextClock) nextClock = most + 1;
  }

  /** The label of the CTA an access with clock `c` ran in (for messages). */
  ctaOf(c: number): string | undefined {
    const s = this.#ctaStarts;
    for (let i = s.length - 1; i >= 0; i--) if (c >= s[i]!) return this.#ctaLabels[i];
    return undefined;
  }

  /** True when `c` was stamped by another CTA of the current launch. */
  otherCta(c: number): boolean {
    return c < this.ctaBase && c >= this.launchBase;
  }

  /** Does access `(u, c)` happen before thread `t`'s current point? */
  ordered(u: number, c: number, t: number): boolean {
    if (c < this.ctaBase) {
      return (
        c < this.launchBase ||
        (this.hasExt && this.#extKnows(u, c, t)) ||
        (this.focus !== undefined && this.#focusKnows(u, c))
      );
    }
    if (u === t) return true;
    if (c <= this.floor[u]!) return true;
    if (u >> 5 === t >> 5 && c <= this.wfloor[u]!) return true;
    const K = this.#K;
    if (K !== null && K[t * this.threads + u]! >= c) return true;
    return this.focus !== undefined && this.#focusKnows(u, c);
  }

  /**
   * While the race checks of one access run: the strong writes of its location that the
   * accessing thread observed (flat `[group, thread, clock, ...]`, exec/memory-order.ts), each
   * ordered before the access by observation order alone; undefined otherwise.
   */
  focus: readonly number[] | undefined = undefined;

  /** Is access `(u, c)` one of the observed writes in `focus` (or an earlier write of u there)? */
  #focusKnows(u: number, c: number): boolean {
    const f = this.focus!;
    const g = c < this.ctaBase ? this.groupOf(c) : this.group;
    for (let i = 0; i < f.length; i += 3) {
      if (f[i] === g && f[i + 1] === u && f[i + 2]! >= c) return true;
    }
    return false;
  }

  /** Packed record `rec` (-1: none) at clock `c` is of another thread and not ordered before `t`. */
  unordered(rec: number, c: number, t: number): boolean {
    return rec >= 0 && (rec & THREAD_MASK) !== t && !this.ordered(rec & THREAD_MASK, c, t);
  }

  /** Threads t0, t0 + 1, ..., t0 + count - 1 share one clock. */
  oneClock(t0: number, count: number): boolean {
    if (this.clockUniform) return true;
    const clock = this.clock;
    const now = clock[t0]!;
    for (let t = t0 + 1, e = t0 + count; t < e; t++) if (clock[t] !== now) return false;
    return true;
  }

  /**
   * A run of `count` elements of 2^sh bytes from byte `a`, element i accessed by thread t0 + i,
   * is ordered after the records over its bytes: packed `rec` (-1: none) at clock `c`, the same
   * for every byte when k < 0, else byte b's thread is rec's plus `(b - o) >> k` (a run's record,
   * 2^k bytes per thread). `ordered` decides: a record of the element's own thread in this CTA is
   * program order, another CTA's of this launch never ordered.
   */
  runOrdered(
    t0: number,
    count: number,
    a: number,
    sh: number,
    rec: number,
    k: number,
    o: number,
    c: number,
  ): boolean {
    if (rec < 0) return true;
    // Another launch's or CTA's record (ordered or not for every thread alike, unless threads
    // acquired other CTAs' writes), or one a cta_sync ordered before every thread.
    if (c < this.ctaBase) {
      if (c < this.launchBase) return true;
      if (!this.hasExt && this.focus === undefined) return false;
    } else if (c <= this.floorMin) return true;
    const base = rec & THREAD_MASK;
    if (k < 0) {
      for (let i = 0; i < count; i++) if (!this.ordered(base, c, t0 + i)) return false;
      return true;
    }
    const last = (1 << sh) - 1;
    for (let i = 0; i < count; i++) {
      const t = t0 + i;
      const b = a + (i << sh);
      for (let u = base + ((b - o) >> k), e = base + ((b + last - o) >> k); u <= e; u++) {
        if (!this.ordered(u, c, t)) return false;
      }
    }
    return true;
  }

  // ---------------------------------------------------------------- synchronization

  /**
   * cta_sync: everything every thread did so far happens before everything after (the shadow
   * prunes its overflow records at the same point: SharedShadow.onBarrier).
   */
  onBarrier(): void {
    if (this.hasExt) {
      for (const v of this.#ext) this.#extAll = joinViews(this.#extAll, v);
      this.#ext.length = 0;
    }
    const c = this.clock;
    let least = c[0]!;
    let most = least;
    for (let t = 0; t < c.length; t++) {
      if (c[t]! < least) least = c[t]!;
      if (c[t]! > most) most = c[t]!;
      this.floor[t] = c[t]!;
      c[t]!++;
    }
    this.floorMin = least;
    this.clockUniform = least === most;
  }

  /** Thread `t`'s clock moves on (a release event of `t` alone). */
  tick(t: number): void {
    this.clock[t]!++;
    this.clockUniform = false;
  }

  /**
   * Thread `t` releases what it knows and did into `acc` (per thread, the highest clock known):
   * `acc` takes the maximum of itself and t's row of K, and t's current clock; t's clock moves on.
   */
  release(acc: Int32Array, t: number): void {
    const T = this.threads;
    const K = this.matrix();
    const row = t * T;
    for (let u = 0; u < T; u++) if (K[row + u]! > acc[u]!) acc[u] = K[row + u]!;
    if (this.clock[t]! > acc[t]!) acc[t] = this.clock[t]!;
    this.tick(t);
  }

  /** Thread `t` acquires `rel` (per thread, the highest clock released): its row of K takes the maximum. */
  acquire(rel: Int32Array, t: number): void {
    const K = this.matrix();
    const T = this.threads;
    const row = t * T;
    for (let u = 0; u < T; u++) if (rel[u]! > K[row + u]!) K[row + u] = rel[u]!;
  }

  /**
   * The threads `lanes[0..n)` (plus `offset`) synchronize with each other only (a named barrier,
   * or a warp collective of some lanes): each acquires what any of them knew and did.
   */
  onGroupSync(lanes: ArrayLike<number>, n: number, offset = 0): void {
    if (this.hasExt) this.#shareExt(lanes, n, offset);
    const K = this.matrix();
    const T = this.threads;
    const j = this.#join;
    j.fill(0);
    for (let i = 0; i < n; i++) {
      const p = lanes[i]! + offset;
      const row = p * T;
      for (let u = 0; u < T; u++) if (K[row + u]! > j[u]!) j[u] = K[row + u]!;
    }
    for (let i = 0; i < n; i++) {
      const p = lanes[i]! + offset;
      if (this.clock[p]! > j[p]!) j[p] = this.clock[p]!;
    }
    for (let i = 0; i < n; i++) {
      const p = lanes[i]! + offset;
      K.set(j, p * T);
      this.tick(p);
    }
  }

  /**
   * A warp collective executed by lanes `lanes` (lane numbers) of warp `warp`, `present` lanes in
   * the warp: lanes that execute a collective together are ordered by it.
   */
  onWarpSync(warp: number, lanes: readonly number[], present: number): void {
    const base = warp << 5;
    if (lanes.length === present && this.#K === null) {
      if (this.hasExt) this.#shareExt(lanes, lanes.length, base);
      for (let i = 0; i < lanes.length; i++) {
        const p = base + lanes[i]!;
        this.wfloor[p] = this.clock[p]!;
        this.tick(p);
      }
      return;
    }
    this.onGroupSync(lanes, lanes.length, base);
  }

  /**
   * Named barrier knowledge released by `bar.arrive` into the current instance of a barrier, by
   * barrier key (exec/named-barriers.ts).
   */
  readonly #named = new Map<number, Int32Array>();

  /**
   * `bar.arrive` by `t` at barrier `key`: releases what `t` knows and did into the barrier's
   * current instance (PTX ISA, bar/barrier "memory ordering"); returns `t`'s clock at the arrival.
   */
  onNamedArrive(key: number, t: number): number {
    let acc = this.#named.get(key);
    if (!acc) this.#named.set(key, (acc = new Int32Array(this.threads)));
    const c = this.clock[t]!;
    if (this.hasExt) this.#namedExt.set(key, joinViews(this.#namedExt.get(key), this.#ext[t]));
    this.release(acc, t);
    return c;
  }

  /**
   * The current instance of barrier `key` completes: each of `syncers` (the threads that wait in
   * bar.sync, blocked since they arrived) acquires what every arriver released or knew.
   */
  onNamedComplete(key: number, syncers: readonly number[]): void {
    if (this.hasExt) {
      let v = this.#namedExt.get(key);
      this.#namedExt.delete(key);
      for (const p of syncers) v = joinViews(v, this.#ext[p]);
      for (const p of syncers) this.#ext[p] = v;
    }
    const K = this.matrix();
    const T = this.threads;
    const j = this.#join;
    const acc = this.#named.get(key);
    if (acc) {
      j.set(acc);
      acc.fill(0);
    } else j.fill(0);
    for (const p of syncers) {
      const row = p * T;
      for (let u = 0; u < T; u++) if (K[row + u]! > j[u]!) j[u] = K[row + u]!;
    }
    for (const p of syncers) if (this.clock[p]! > j[p]!) j[p] = this.clock[p]!;
    for (const p of syncers) {
      K.set(j, p * T);
      this.tick(p);
    }
  }

  /** Forget named barrier releases (CTA start). */
  resetNamed(): void {
    for (const a of this.#named.values()) a.fill(0);
  }

  /** `mbarrier.arrive` by `t` on the mbarrier in `slot`: releases what `t` knows and did. */
  onArrive(slot: number, t: number): void {
    if (this.hasExt) this.#accExt[slot] = joinViews(this.#accExt[slot], this.#ext[t]);
    this.release((this.#acc[slot] ??= new Int32Array(this.threads)), t);
  }

  /** The current phase of the mbarrier in `slot` completed: its releases become acquirable. */
  onPhaseComplete(slot: number): void {
    if (this.hasExt) this.#relExt[slot] = this.#accExt[slot];
    const acc = this.#acc[slot];
    if (!acc) return;
    const rel = (this.#rel[slot] ??= new Int32Array(this.threads));
    rel.set(acc);
  }

  /** A successful try_wait by `t` on the mbarrier in `slot`. */
  onWaitSuccess(slot: number, t: number): void {
    if (this.hasExt) this.#ext[t] = joinViews(this.#ext[t], this.#relExt[slot]);
    const rel = this.#rel[slot];
    if (rel) this.acquire(rel, t);
  }

  /** Forget mbarrier knowledge (CTA start; stale clocks would be harmless, this keeps it tidy). */
  resetBars(): void {
    this.#accExt.length = 0;
    this.#relExt.length = 0;
    for (const a of this.#acc) a?.fill(0);
    for (const r of this.#rel) r?.fill(0);
  }

  // ---------------------------------------------------------------- other CTAs of the launch

  /** True once a thread of this group acquired a view of another group (see the file comment). */
  hasExt = false;
  /** Per thread: what it acquired of other groups (GroupView), beyond `#extAll`. */
  readonly #ext: (GroupView | undefined)[] = [];
  /** What every thread of this group knows of other groups (joined at each cta_sync). */
  #extAll: GroupView | undefined;
  /** Per named barrier key, per mbarrier slot: the ext views released into it. */
  readonly #namedExt = new Map<number, GroupView | undefined>();
  readonly #accExt: (GroupView | undefined)[] = [];
  readonly #relExt: (GroupView | undefined)[] = [];

  /** The index of the running group in this launch (0 for the first CTA or cluster). */
  get group(): number {
    return this.#ctaStarts.length - 1;
  }

  /** The group of the launch whose clocks hold `c` (a clock of this launch), or -1. */
  groupOf(c: number): number {
    const s = this.#ctaStarts;
    let lo = 0;
    let hi = s.length - 1;
    if (hi < 0 || c < s[0]!) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= c) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Does thread `t` know access `(u, c)` of an earlier group of the launch? */
  #extKnows(u: number, c: number, t: number): boolean {
    const g = this.groupOf(c);
    const all = this.#extAll?.get(g);
    if (all !== undefined && all[u]! >= c) return true;
    const own = this.#ext[t]?.get(g);
    return own !== undefined && own[u]! >= c;
  }

  /** The participants `lanes[0..n)` (+ `offset`) of a synchronization share what they know of other groups. */
  #shareExt(lanes: ArrayLike<number>, n: number, offset: number): void {
    let v: GroupView | undefined;
    for (let i = 0; i < n; i++) v = joinViews(v, this.#ext[lanes[i]! + offset]);
    if (v === undefined) return;
    for (let i = 0; i < n; i++) this.#ext[lanes[i]! + offset] = v;
  }

  /**
   * What thread `t` knows at its current point: per thread u of this group, the highest clock of
   * u ordered before it (the cta_sync floor, u's warp floor when u is in t's warp, t's row of K),
   * and t's own clock for t. A fresh array, O(threads).
   */
  #knownBy(t: number): Int32Array {
    const T = this.threads;
    const knew = new Int32Array(T);
    const K = this.#K;
    const row = t * T;
    const warp = t >> 5;
    for (let u = 0; u < T; u++) {
      let c = this.floor[u]!;
      if (u >> 5 === warp && this.wfloor[u]! > c) c = this.wfloor[u]!;
      if (K !== null && K[row + u]! > c) c = K[row + u]!;
      knew[u] = c;
    }
    knew[t] = this.clock[t]!;
    return knew;
  }

  /**
   * What thread `t` knows and did, as a view of the launch's groups (a release publishes it): for
   * this group, per thread the highest clock ordered before t's current point (cta_sync floors,
   * warp floors, K) and t's own clock; for earlier groups, what t acquired of them. t's clock
   * moves on, so its later accesses are not covered. O(threads).
   */
  releaseView(t: number): GroupView {
    const knew = this.#knownBy(t);
    this.tick(t);
    const ext = joinViews(this.#extAll, this.#ext[t]);
    const out = new Map(ext ?? []);
    out.set(this.group, knew);
    return out;
  }

  /**
   * Thread `t` acquires `view` (a release it synchronized with): this group's part joins t's row
   * of K, other groups' parts what t knows of them.
   */
  acquireView(view: GroupView, t: number): void {
    const g = this.group;
    for (const [j, arr] of view) {
      if (j === g) {
        const K = this.matrix();
        const T = this.threads;
        const row = t * T;
        for (let u = 0; u < T; u++) if (arr[u]! > K[row + u]!) K[row + u] = arr[u]!;
      } else if (j < g) {
        this.#ext[t] = joinViews(this.#ext[t], new Map([[j, arr]]));
        this.hasExt = true;
      }
    }
  }

  // ---------------------------------------------------------------- proxy fences

  /**
   * Per thread: at its last proxy fence covering shared (#fenceKnew) or global (#globalKnew)
   * memory, the highest clock of each thread ordered before it (what `ordered(u, c, t)` held
   * then), or undefined before its first such fence in this CTA.
   */
  readonly #fenceKnew: (Int32Array | undefined)[] = [];
  readonly #globalKnew: (Int32Array | undefined)[] = [];

  /**
   * A proxy fence by `t` (fence.proxy.async of the state spaces `spaces`): every generic-proxy
   * write of those spaces ordered before it (its own, and other threads' it synchronized with)
   * is ordered for the async proxy after it (PTX ISA, fence.proxy.async).
   */
  onProxyFence(t: number, spaces: "shared::cta" | "global" | "all" = "shared::cta"): void {
    const knew = this.#knownBy(t);
    if (spaces !== "global") {
      this.#fenceKnew[t] = knew;
      this.proxyFence[t] = this.clock[t]!;
    }
    if (spaces !== "shared::cta") {
      this.#globalKnew[t] = knew;
      this.globalFence[t] = this.clock[t]!;
    }
    this.tick(t);
  }

  /**
   * Is the generic-proxy write of shared memory (packed `w`, clock `c`) ordered for the async
   * proxy before thread `t`'s current point? It is when a fence.proxy.async lies on a causality
   * path from the write to `t` (PTX ISA, Memory Consistency Model: proxy-preserved base
   * causality order, "a proxy fence along the base causality path from X to Y"): its writer's
   * fence after it, `t`'s own fence after `t` synchronized with the writer (write, cta_sync, then
   * the issuing thread fences), or a third thread's such fence ordered before `t`.
   */
  sharedFenced(w: number, c: number, t: number): boolean {
    return this.#fencedFor(w, c, t, this.proxyFence, this.#fenceKnew);
  }

  /**
   * Is the generic-proxy write of global memory (packed `w`, clock `c`) ordered for the async
   * proxy before thread `t`'s current point? As for shared memory (sharedFenced), through
   * fences that cover global memory (fence.proxy.async.global or fence.proxy.async).
   */
  globalFenced(w: number, c: number, t: number): boolean {
    return this.#fencedFor(w, c, t, this.globalFence, this.#globalKnew);
  }

  #fencedFor(
    w: number,
    c: number,
    t: number,
    fence: Int32Array,
    all: readonly (Int32Array | undefined)[],
  ): boolean {
    const u = w & THREAD_MASK;
    if (c <= fence[u]!) return true;
    const own = all[t];
    if (own !== undefined && c <= own[u]!) return true;
    for (let f = 0; f < all.length; f++) {
      const knew = all[f];
      if (f === t || knew === undefined || c > knew[u]!) continue;
      if (this.ordered(f, fence[f]!, t)) return true;
    }
    return false;
  }

  /** fence.mbarrier_init by `t`: its earlier mbarrier.init are visible to the async proxy. */
  onInitFence(t: number): void {
    this.initFence[t] = this.clock[t]!;
    this.tick(t);
  }
}
