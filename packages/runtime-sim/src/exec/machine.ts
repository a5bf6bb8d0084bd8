import { WgmmaUnit } from "./wgmma.js";
import { SignalWaits } from "./signals.js";
import {
  TirxError,
  type DiagnosticCode,
  type DType,
  type LaunchConfig,
  type Note,
  type Span,
} from "@tirx-ts/core";
import type { SimTensor } from "../tensor.js";
import type { AsyncUnit } from "./async-copy.js";
import { BulkUnit } from "./bulk.js";
import { Mbarriers } from "./mbarrier.js";
import { NamedBarriers } from "./named-barriers.js";
import { POISON_BYTE } from "../tensor.js";
import { Clocks } from "./clocks.js";
import { SharedShadow } from "./shared-shadow.js";
import { giveShadowPools, takeShadowPool, TensorShadow, type ShadowPool } from "./global-shadow.js";
import type { SimContext } from "./context.js";
import type { GlobalMem } from "./memory.js";
import { ClusterUnit } from "./cluster.js";
import { AccessBatch } from "./access-batch.js";
import { NO_LAUNCH, type LaunchOptions } from "./launch-options.js";
import { MemoryOrder } from "./memory-order.js";
import { StoreInstances } from "./store-instances.js";
import { StrongSites } from "./strong-sites.js";
import { LocalWritten } from "./local-written.js";

/**
 * Loop iterations a held report waits for its write (Machine.heldIteration): far more than a
 * pipeline's prologue, far fewer than a spin on uninitialised bytes would run.
 */
export const HELD_LOOP_ITERATIONS = 1 << 16;

/** The race reports (two accesses, both lines): TX6003, TX6013, TX6014 (see Machine.hazard). */
const RACES: ReadonlySet<string> = new Set(["TX6003", "TX6013", "TX6014"]);

/** Barrier epochs are unique across launches, so bookkeeping kept in tensors never goes stale. */
let nextEpoch = 1;

/** The sentinel `cta()` returns in a cluster of several CTAs (see Machine.hazard). */
const CLUSTER_CTA = "\u0000cluster";

/**
 * The state of the simulated SM while it runs one kernel: the threads of the current CTA (all
 * executed in lockstep, statement by statement), their registers, the CTA's shared memory and
 * each thread's local memory. The hazard state has its owners: the threads' happens-before
 * clocks (`clocks`), the shadow of shared memory (`shadow`) and of each tensor
 * (`globals[i].shadow`), and the units (cp.async, bulk copies, mbarriers, barriers, wgmma); the
 * launch's options are one frozen object (`opts`). One Machine is made per compiled kernel and
 * reused by every CTA and every launch; the checks and units see it as a SimContext
 * (exec/context.ts).
 *
 * A cluster launch of C > 1 CTAs runs the C CTAs of a cluster together, as one group of
 * C × (threads per CTA) simulated threads: thread `t` is thread `t % ctaThreads` of the CTA of
 * rank `t / ctaThreads` (ranks x-fastest, PTX ISA %cluster_ctarank), so its warps interleave with
 * the other CTAs' warps under the same schedules as the warps of one CTA. Each CTA has its own
 * window of `sharedStride` bytes in `shared` (and in every per-byte shadow array): a shared
 * address as the program sees it is CTA-local, and an access adds the thread's window `win[t]`.
 * A CTA barrier synchronises the threads of one CTA only; `barrier.cluster` all of them.
 */
export class Machine implements SimContext {
  /** Simulated threads: the threads of one CTA, times the CTAs of a cluster. */
  readonly threads: number;
  /** Threads of one CTA (the launch's block). */
  readonly ctaThreads: number;
  /** CTAs per cluster (product of `cluster`). */
  readonly ctas: number;
  readonly block: readonly [number, number, number];
  /** CTAs per cluster (the launch's cluster dims; 1, 1, 1 without a cluster launch). */
  readonly cluster: readonly [number, number, number];
  /**
   * PEs of a multi-PE launch (runSim's `pes`; 1 otherwise). With P > 1 the CTAs of one index on
   * the P simulated GPUs run together as one group, as a cluster's CTAs do (`ctas` is P, `rank`
   * the PE, `%ctaid` the same on every PE): thread `t` runs on PE `t / ctaThreads`, so cross-PE
   * interleavings are explored as warps' are (NVSHMEM device API, nvshmem_my_pe).
   */
  readonly pes: number;
  /** The signal waits of a multi-PE launch (exec/signals.ts): deadlock reports name the signal. */
  readonly signals: SignalWaits = new SignalWaits();
  readonly tidx: Int32Array;
  readonly tidy: Int32Array;
  readonly tidz: Int32Array;
  /** Per thread: its CTA's rank in the cluster (0 without a cluster of several CTAs). */
  readonly rank: Int32Array;
  /** Per thread: its CTA's position in the cluster (%cluster_ctaid). */
  readonly rx: Int32Array;
  readonly ry: Int32Array;
  readonly rz: Int32Array;
  /** Per thread: the first byte of its CTA's shared window (`rank * sharedStride`). */
  readonly win: Int32Array;
  /** Bytes of one CTA's shared window. */
  readonly sharedStride: number;
  /** Every thread of a CTA, as the lane list the outermost statement runs with. */
  readonly allLanes: Int32Array;
  /** %ctaid of the cluster's first CTA (of the CTA, without a cluster of several). */
  cx = 0;
  cy = 0;
  cz = 0;
  /** Registers of number-valued variables: slot * threads + thread. */
  readonly num: Float64Array;
  /** Registers of int64/uint64 variables: slot * threads + thread. */
  readonly big: bigint[];
  readonly shared: Uint8Array;
  readonly sdv: DataView;
  /** Happens-before clocks of the threads (exec/clocks.ts). */
  readonly clocks: Clocks;
  /** Release and acquire patterns of the PTX memory model (exec/memory-order.ts). */
  readonly order: MemoryOrder;
  /**
   * The shadow of shared memory (every CTA window): per-byte race records, bulk-copy guards and
   * pending cp.async counts (exec/shared-shadow.ts).
   */
  readonly shadow: SharedShadow;
  /**
   * Stores of one instruction by lanes of one warp (exec/store-instances.ts): the shadows note
   * plain writes there and do not call those lanes' stores to the same bytes a race.
   */
  readonly stores: StoreInstances;
  /** Deferred hazard checks of batched statements (exec/access-batch.ts). */
  readonly batch: AccessBatch = new AccessBatch(this);
  readonly localStride: number;
  readonly local: Uint8Array;
  readonly ldv: DataView;
  /**
   * Which bytes of `local` their thread wrote in the running CTA (exec/local-written.ts): a read
   * of a register element no instruction wrote is TX6028.
   */
  readonly localWritten: LocalWritten;
  /** Tensors of the current launch, by parameter index (refilled in place by each launch). */
  readonly globals: GlobalMem[] = [];
  /** The tensor shadow arrays this launch took (given back when it ends). */
  readonly #pools: ShadowPool[] = [];
  #opts: LaunchOptions = NO_LAUNCH;
  /**
   * The options of the current launch (mode, tracking, seed, jitAfter, range checks, grid, trace
   * and access log): one frozen object per launch, given to beginLaunch; NO_LAUNCH between
   * launches.
   */
  get opts(): LaunchOptions {
    return this.#opts;
  }
  /** True in CTA (0, 0, 0). */
  firstCta(): boolean {
    return this.cx === 0 && this.cy === 0 && this.cz === 0;
  }
  /** State of the schedule's PRNG (xorshift32), seeded by every launch with `opts.seed`. */
  rng = 0;
  /** True when the kernel has bulk copies (shared memory starts as one uniform shadow range). */
  hasBulk = false;
  /** Current barrier epoch: advanced at every CTA start and every bar.sync. */
  epoch = 0;
  /** Source spans of the statements and loads that can report, by site index. */
  readonly sites: (Span | undefined)[] = [];
  /**
   * Strong sites (atomics, strong loads and stores, bulk reductions) with their scopes and sizes:
   * two strong accesses race unless they are morally strong (exec/strong-sites.ts).
   */
  readonly strong: StrongSites;
  /** True for the site of a strong access (atomic, strong load or store, bulk reduction). */
  readonly isAtomicSite = (site: number): boolean => this.strong.isStrong(site);
  /** Sites of shared → global bulk and TMA stores: their global writes are async-proxy writes. */
  readonly asyncWriteSites = new Set<number>();
  reports: TirxError[] = [];
  readonly #seen = new Set<string>();

  /** The site of the kernel's end (the function), for exit reports. */
  exitSite = -1;
  /** barrier.cluster, remote accesses between the CTAs of a cluster. */
  readonly clusterUnit: ClusterUnit;
  /** The cp.async unit of the CTA's threads. */
  readonly async: AsyncUnit;
  /** mbarriers of the CTA, and the scheduling state of its wait loops. */
  readonly bars: Mbarriers;
  /** The CTA's barrier resources as barrier instances (kernels with named barriers). */
  readonly named: NamedBarriers;
  /** Bulk copies of the CTA. */
  readonly bulk: BulkUnit;
  /** wgmma groups of the CTA's warps (pending accumulators and shared operands). */
  readonly wgmma: WgmmaUnit;
  /**
   * > 0 while evaluating the arm of an IfThenElse that is not selected: its loads execute (PTX
   * selp) so out-of-bounds reports (TX6005) stand, other hazards of the discarded value do not.
   */
  speculative = 0;

  constructor(
    launch: LaunchConfig,
    slots: { num: number; big: number },
    sharedBytes: number,
    localStride: number,
    makeAsync: (threads: number) => AsyncUnit,
    pes = 1,
  ) {
    const [bx, by, bz] = launch.block;
    this.block = launch.block;
    const per = bx * by * bz;
    // P PEs group like a cluster of P CTAs along x, whose %ctaid does not move (rx stays 0).
    const cl = pes > 1 ? ([pes, 1, 1] as const) : (launch.cluster ?? [1, 1, 1]);
    this.cluster = pes > 1 ? [1, 1, 1] : cl;
    this.pes = pes;
    const ctas = cl[0] * cl[1] * cl[2];
    this.ctas = ctas;
    this.ctaThreads = per;
    const n = per * ctas;
    this.threads = n;
    // Windows are 1024-byte aligned (the period of a 128B swizzle), so each CTA's swizzled tiles
    // and banks sit as in the first one.
    const stride = ctas > 1 ? Math.ceil(sharedBytes / 1024) * 1024 : sharedBytes;
    this.sharedStride = stride;
    const total = stride * ctas;
    this.tidx = new Int32Array(n);
    this.tidy = new Int32Array(n);
    this.tidz = new Int32Array(n);
    this.rank = new Int32Array(n);
    this.rx = new Int32Array(n);
    this.ry = new Int32Array(n);
    this.rz = new Int32Array(n);
    this.win = new Int32Array(n);
    this.allLanes = new Int32Array(n);
    for (let t = 0; t < n; t++) {
      const l = t % per;
      const r = Math.floor(t / per);
      this.tidx[t] = l % bx;
      this.tidy[t] = Math.floor(l / bx) % by;
      this.tidz[t] = Math.floor(l / (bx * by));
      this.rank[t] = r;
      this.rx[t] = pes > 1 ? 0 : r % cl[0];
      this.ry[t] = Math.floor(r / cl[0]) % cl[1];
      this.rz[t] = Math.floor(r / (cl[0] * cl[1]));
      this.win[t] = r * stride;
      this.allLanes[t] = t;
    }
    this.num = new Float64Array(Math.max(slots.num, 1) * n);
    this.big = new Array<bigint>(slots.big * n).fill(0n);
    this.shared = new Uint8Array(total);
    this.sdv = new DataView(this.shared.buffer);
    this.clocks = new Clocks(n);
    this.order = new MemoryOrder(this.clocks);
    this.stores = new StoreInstances(n, per);
    this.strong = new StrongSites(this.clocks, this.rank, pes);
    this.shadow = new SharedShadow(this.clocks, total, this.stores, this.strong);
    this.localStride = localStride;
    this.local = new Uint8Array(localStride * n);
    this.ldv = new DataView(this.local.buffer);
    this.localWritten = new LocalWritten(localStride * n);
    this.async = makeAsync(n);
    this.bars = new Mbarriers(n, this.clocks, this.shadow);
    this.bulk = new BulkUnit(n, this.bars);
    this.named = new NamedBarriers(ctas);
    this.clusterUnit = new ClusterUnit(this);
    this.wgmma = new WgmmaUnit(total);
  }

  /** Register a source site; returns its index (< 2^21, packed into writer entries). */
  site(span: Span | undefined): number {
    this.sites.push(span);
    return this.sites.length - 1;
  }

  /** Parameters the kernel may write (compile/written.ts); reads of their tensors are recorded. */
  written: ReadonlySet<number> = new Set();

  /** Prepare a launch: tensors by parameter, its options, a fresh epoch range, the seeded PRNG. */
  beginLaunch(
    tensors: readonly (SimTensor | undefined)[],
    names: readonly { name: string; span?: Span }[],
    opts: LaunchOptions,
  ): void {
    this.globals.length = 0;
    // One shadow per distinct tensor: a tensor passed twice shares its shadow state, which
    // records reads when the kernel may write it through any of its parameters.
    const written = new Set<Uint8Array>();
    tensors.forEach((t, i) => {
      if (t && this.written.has(i)) written.add(t.storage);
    });
    const shadows = new Map<Uint8Array, TensorShadow>();
    tensors.forEach((t, i) => {
      if (!t) return;
      const bytes = t.storage;
      const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let shadow = shadows.get(bytes);
      if (!shadow) {
        const pool = takeShadowPool(bytes.length);
        this.#pools.push(pool);
        shadow = new TensorShadow(
          pool,
          this.clocks,
          bytes.length,
          written.has(bytes),
          this.stores,
          this.strong,
        );
        shadows.set(bytes, shadow);
      }
      this.globals[i] = {
        index: i,
        name: names[i]!.name,
        span: names[i]!.span,
        bytes,
        dv,
        shadow,
      };
    });
    this.#opts = opts;
    this.rng = opts.seed;
    this.reports = [];
    this.#seen.clear();
    this.#held = undefined;
    this.epoch = nextEpoch;
    this.clocks.beginLaunch();
    this.order.beginLaunch();
  }

  /** The launch ended (or stopped): epochs and clocks move on, the launch's options are let go. */
  endLaunch(): void {
    nextEpoch = this.epoch + 1;
    this.clocks.endCta();
    this.#opts = NO_LAUNCH;
    giveShadowPools(this.#pools);
  }

  /**
   * Start CTA (x, y, z), or the cluster whose first CTA it is: shared memory poisoned and never
   * written, local memory zero and never written (a read of it is TX6028). The units' per-byte
   * and per-thread state is reset only where the last CTA used it (see SharedShadow.beginCta,
   * AsyncUnit.reset).
   */
  beginCta(x: number, y: number, z: number): void {
    this.cx = x;
    this.cy = y;
    this.cz = z;
    this.shared.fill(POISON_BYTE);
    // Only bulk copies set guards; BulkUnit.active says whether the last CTA issued any (read
    // before bulk.reset clears it).
    this.clocks.beginCta(this.#cta0());
    this.order.beginCta();
    this.shadow.beginCta(this.bulk.active, this.hasBulk);
    this.local.fill(0);
    this.localWritten.reset();
    this.async.reset(this);
    this.bars.reset();
    this.named.reset(this);
    this.bulk.reset();
    this.clusterUnit.reset();
    this.wgmma.reset();
    this.epoch++;
    const opts = this.#opts;
    opts.tracer?.beginCta(x + opts.grid[0] * (y + opts.grid[1] * z));
  }

  /**
   * `(x, y, z)` of thread `t` of the current CTA, for messages; in a cluster of several CTAs
   * `(x, y, z) of CTA (cx, cy, cz)`, its own CTA.
   */
  thread(t: number): string {
    const id = this.threadId(t);
    if (this.pes > 1) return `${id} of CTA ${this.ctaOf(t)} on PE ${this.rank[t]!}`;
    return this.ctas > 1 ? `${id} of CTA ${this.ctaOf(t)}` : id;
  }

  /** `(x, y, z)`, %tid of thread `t`. */
  threadId(t: number): string {
    return `(${this.tidx[t]}, ${this.tidy[t]}, ${this.tidz[t]})`;
  }

  /** The CTA-local shared address of absolute shared byte `a` (its offset in its window). */
  ctaLocal(a: number): number {
    return this.ctas > 1 ? a % this.sharedStride : a;
  }

  /** The rank of the CTA whose shared window holds absolute byte `a`. */
  rankAt(a: number): number {
    return this.ctas > 1 ? Math.floor(a / this.sharedStride) : 0;
  }

  /** %ctaid of thread `t`'s CTA, for messages. */
  ctaOf(t: number): string {
    return `(${this.cx + this.rx[t]!}, ${this.cy + this.ry[t]!}, ${this.cz + this.rz[t]!})`;
  }

  /** %ctaid of the CTA of rank `r` in the running cluster, for messages. */
  ctaOfRank(r: number): string {
    const c = this.ctaOf(r * this.ctaThreads);
    return this.pes > 1 ? `${c} on PE ${r}` : c;
  }

  /**
   * The running CTA, for messages. In a cluster of several CTAs a sentinel: `thread(t)` names
   * the CTA there, and `hazard` drops "of CTA <sentinel>" and names the cluster for a bare one.
   */
  cta(): string {
    return this.ctas > 1 ? CLUSTER_CTA : `(${this.cx}, ${this.cy}, ${this.cz})`;
  }

  /** A message with the cluster sentinel of `cta()` resolved. */
  #resolve(text: string): string {
    if (this.ctas === 1 || !text.includes(CLUSTER_CTA)) return text;
    if (this.pes > 1) {
      return text
        .replaceAll(` of CTA ${CLUSTER_CTA}`, "")
        .replaceAll(` in CTA ${CLUSTER_CTA}`, "")
        .replaceAll(`CTA ${CLUSTER_CTA}`, `CTA ${this.#cta0()} of PEs 0..${this.pes - 1}`);
    }
    const last = this.ctaOfRank(this.ctas - 1);
    return text
      .replaceAll(` of CTA ${CLUSTER_CTA}`, "")
      .replaceAll(` in CTA ${CLUSTER_CTA}`, "")
      .replaceAll(`CTA ${CLUSTER_CTA}`, `the cluster of CTAs ${this.#cta0()}..${last}`);
  }

  /**
   * One loop iteration (T.while_, wait loops, T.range): while a report is held, the reader's value
   * is uninitialised bytes (0xff) that may steer a loop a long way (a while condition that never
   * changes, a trip count near 2^31); the run goes on only to find the write the read races
   * with, so after HELD_LOOP_ITERATIONS iterations the held report is thrown as it is (as it was
   * before reports were held: PTX ISA, "Memory Consistency Model", a read of a location no write
   * reaches has no defined value, so nothing after it is meaningful). Also counts the iteration
   * (loopIterations).
   */
  heldIteration(): void {
    this.loopIterations++;
    if (this.#held !== undefined && ++this.#heldIters > HELD_LOOP_ITERATIONS) this.flushHeld();
  }

  /**
   * Loop iterations run since runSim last took the count (heldIteration: one per iteration of a
   * T.while_, wait loop or T.range that a group of lanes runs together); runSim adds it to
   * simCounters.loopIterations at the end of each launch and zeroes it.
   */
  loopIterations = 0;

  /** Loop iterations since the report was held (heldIteration). */
  #heldIters = 0;

  /** Throw a held-back report (hazard's `hold`), if any: at the end of a CTA. */
  flushHeld(): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    throw held;
  }

  #cta0(): string {
    return `(${this.cx}, ${this.cy}, ${this.cz})`;
  }

  /**
   * A read of never-written shared bytes held back in "throw" mode (hazard's `hold`): the write
   * that comes later in the same phase is the other half of the race, and its report (TX6013,
   * write after an unordered read) names both lines. Thrown as it is at the next report other
   * than a race, or at the end of the CTA (flushHeld).
   */
  #held: TirxError | undefined;

  /**
   * Report a hazard at `site`: throws in "throw" mode; in "collect" mode keeps the first report
   * of each (code, site, note site) and continues. `hold` (a read of bytes nothing has written,
   * TX6004): in "throw" mode the report waits for the write that races with the read, so that
   * whichever warp ran first the report names both lines; later reads of that kind wait with it,
   * and a race reported meanwhile (both lines) is thrown instead.
   */
  hazard(
    code: DiagnosticCode,
    message: string,
    site: number,
    notes: readonly Note[] = [],
    hold = false,
  ): void {
    if (this.speculative > 0 && code !== "TX6005") return;
    // Accesses a batched statement made before this report are checked first (their reports
    // come first, as without batching).
    if (this.batch.active.length > 0) this.batch.flush();
    const span = this.sites[site];
    const { mode, seed } = this.#opts;
    if (mode === "throw" && this.#held !== undefined) {
      if (hold) return;
      // A race between two accesses names both lines: the write after the held read (its note is
      // at the read), or another race the run reached first. Anything else (an out-of-bounds
      // index read from the unwritten bytes, say) comes after the held read's report.
      if (!RACES.has(code)) this.flushHeld();
      this.#held = undefined;
    }
    if (mode !== "throw") {
      // The first report of each (code, site, note site) is kept: a repeat (every racy byte of
      // a loop, say) is dropped before its error and message are built.
      const ns = notes[0]?.span;
      const key = `${code}@${site}@${ns ? `${ns.file}:${ns.line}:${ns.col}` : ""}`;
      if (this.#seen.has(key)) return;
      this.#seen.add(key);
    }
    message = this.#resolve(message);
    const all = [
      ...notes.map((n) => ({ ...n, message: this.#resolve(n.message) })),
      {
        message: `schedule seed ${seed}${seed === 0 ? " (lockstep)" : ""}; replay it with TIRX_SIM_SEED=${seed} or the simSeed option`,
      },
    ];
    const err = new TirxError(code, message, span, all);
    if (mode === "throw") {
      if (hold) {
        this.#held = err;
        this.#heldIters = 0;
        return;
      }
      throw err;
    }
    this.reports.push(err);
  }
}
