import type { DiagnosticCode, Note, Span } from "@tirx-ts/core";
import type { Clocks } from "./clocks.js";
import type { LaunchOptions } from "./launch-options.js";
import type { MemoryOrder } from "./memory-order.js";
import type { BarBuffer, GlobalMem, Placed } from "./memory.js";
import type { Guards } from "./shared-bytes.js";
import type { SharedShadow } from "./shared-shadow.js";
import type { StrongSites } from "./strong-sites.js";

/**
 * The contract between the Machine (exec/machine.ts) and what runs inside it: the checks
 * (exec/hazards.ts), the access runs and the units (cp.async, bulk copies, mbarriers, named and
 * cluster barriers, wgmma). They see the Machine as a SimContext, and each other through the
 * small port interfaces here, so no unit's module imports another's it is imported by (or the
 * Machine's): the Machine builds the units and implements this interface with them.
 */

/** Messages and reports of the running CTA (or cluster). */
export interface Reporter {
  /**
   * Report a hazard at `site` (see Machine.hazard): throws in "throw" mode; in "collect" mode
   * keeps the first report of each (code, site, note site). `hold`: a read of never-written bytes
   * that waits for the write racing with it.
   */
  hazard(
    code: DiagnosticCode,
    message: string,
    site: number,
    notes?: readonly Note[],
    hold?: boolean,
  ): void;
  /** `(x, y, z)` of thread `t` (with its CTA in a cluster of several), for messages. */
  thread(t: number): string;
  /** `(x, y, z)`, %tid of thread `t`. */
  threadId(t: number): string;
  /** The running CTA, for messages (a sentinel in a cluster of several CTAs, see Machine.cta). */
  cta(): string;
  /** %ctaid of thread `t`'s CTA, for messages. */
  ctaOf(t: number): string;
  /** %ctaid of the CTA of rank `r` in the running cluster, for messages. */
  ctaOfRank(r: number): string;
  /** The CTA-local shared address of absolute shared byte `a`. */
  ctaLocal(a: number): number;
  /** The rank of the CTA whose shared window holds absolute byte `a`. */
  rankAt(a: number): number;
  /** Source spans of the sites, by site index. */
  readonly sites: readonly (Span | undefined)[];
}

/**
 * An in-flight cp.async, for reports: the issuing thread, its site (an index into the
 * machine's sites), whether its group was committed, and `later`, the number of groups that
 * thread committed after the one holding the copy (0 when uncommitted). `cp.async.wait_group(n)`
 * in that thread completes the copy exactly when n <= later (PTX ISA, cp.async.wait_group: it
 * waits until at most n of the most recent groups are pending).
 */
export interface InFlightCopy {
  readonly thread: number;
  readonly site: number;
  readonly committed: boolean;
  readonly later: number;
}

/** What the checks ask of the cp.async unit (AsyncUnit). */
export interface AsyncPort {
  /** Copies in flight in the CTA. */
  readonly live: number;
  /** An in-flight copy writing shared byte `b`, for notes. */
  findByDst(b: number): InFlightCopy | undefined;
  /** An in-flight copy reading byte `b` of tensor `tens`, for notes. */
  findBySrc(tens: number, b: number): InFlightCopy | undefined;
  /** Call `f(tens, src, len)` for every copy in flight. */
  forEachRead(f: (tens: number, src: number, len: number) => void): void;
}

/** What the checks and the other units ask of the bulk-copy unit (BulkUnit). */
export interface BulkPort extends Guards {
  /** True once the running CTA issued a bulk copy (until then no shared byte is guarded). */
  readonly active: boolean;
  /** Shared → global copies issued and not yet written. */
  readonly s2gLive: number;
  /** Global → shared copies in flight. */
  readonly inflight: number;
  /** TX6007 for the access `acc` (`verb`, by default its own) of shared byte `b` under guard `g`. */
  reportGuard(acc: SharedAccess, b: number, g: number, verb?: string): void;
  /**
   * The first shared byte of [a, a + n) a pending copy has not read yet (a shared → global copy,
   * or a shared::cta → shared::cluster copy in flight), or -1.
   */
  firstUnread(a: number, n: number): number;
  /** The pending copy still reading shared byte `b`, what it is and how to wait for it. */
  sourceReader(b: number): { thread: number; site: number; what: string; fix: string } | undefined;
  /** The first byte of [a, a + n) of `gm`'s tensor a pending shared → global copy writes, or -1. */
  firstBulkWrite(m: SimContext, gm: GlobalMem, a: number, n: number, atomic?: boolean): number;
  /** A pending shared → global copy reading shared byte `b` (`tens` < 0) or writing byte `b` of tensor `tens`. */
  findS2g(b: number, tens?: number): { thread: number; site: number } | undefined;
  /** An in-flight global → shared copy reading byte `b` of tensor `tens`, for notes. */
  findBySrc(tens: number, b: number): { thread: number; site: number } | undefined;
  /** Call `f(tens, src, len)` for every global → shared copy in flight. */
  forEachRead(f: (tens: number, src: number, len: number) => void): void;
  /** Whether a thread in [lo, hi) observed the mbarrier phase copy `id` landed in, and its label. */
  landingObserved(
    m: SimContext,
    id: number,
    lo: number,
    hi: number,
  ): { seen?: boolean; bar: string };
}

/** What the checks and the barriers ask of the wgmma unit (WgmmaUnit). */
export interface WgmmaPort {
  /** Shared bytes that issued, not yet retired wgmmas read (0: the write check is skipped). */
  readonly tracked: number;
  /** TX6024 for the shared write `acc` of bytes a wgmma still reads. */
  checkWrite(acc: SharedAccess): void;
  readonly reads: { onBarrier(): void };
  readonly aligned: { settle(m: SimContext, where: string): void };
}

/** What the cluster and named barriers ask of the mbarrier unit (Mbarriers). */
export interface BarsPort {
  /** Bumped by every change that can let a wait proceed. */
  progress: number;
  /** Set when the CTA was abandoned as deadlocked (TX6006; ClusterUnit sets it for a cluster barrier). */
  deadlocked: boolean;
  /** A barrier every thread of [lo, hi) reached: observations are shared. */
  barSync(lo?: number, hi?: number): void;
  /** The thread and site of the last init of the mbarrier at `addr`, if any. */
  initOf(addr: number): { thread: number; site: number } | undefined;
  /** `mbarrier.arrive` (with `txBytes` expected) by thread `t` on the mbarrier at `addr`. */
  arrive(
    m: SimContext,
    t: number,
    addr: number,
    txBytes: number,
    bb: BarBuffer,
    site: number,
  ): void;
}

/** What the mbarriers ask of the cluster unit (ClusterUnit). */
export interface ClusterPort {
  /** Thread `t` acquired thread `u`'s fence.mbarrier_init at clock `c` through a cluster barrier. */
  initAcquired(u: number, c: number, t: number): boolean;
}

/** The Machine as its checks and units see it (see exec/machine.ts for each member). */
export interface SimContext extends Reporter {
  readonly opts: LaunchOptions;
  /** Simulated threads (a CTA's, times the CTAs of a cluster). */
  readonly threads: number;
  readonly ctaThreads: number;
  readonly ctas: number;
  /** PEs of a multi-PE launch (1 otherwise; then `rank` is the thread's PE). */
  readonly pes: number;
  /** Per thread: its CTA's rank in the cluster. */
  readonly rank: Int32Array;
  readonly sharedStride: number;
  readonly localStride: number;
  readonly shared: Uint8Array;
  readonly sdv: DataView;
  readonly globals: readonly GlobalMem[];
  /** The site of the kernel's end. */
  readonly exitSite: number;
  /** Current barrier epoch. */
  epoch: number;
  /** > 0 while evaluating the arm of an IfThenElse that is not selected. */
  readonly speculative: number;
  readonly isAtomicSite: (site: number) => boolean;
  /** Strong sites' scopes and sizes (exec/strong-sites.ts). */
  readonly strong: StrongSites;
  readonly asyncWriteSites: Set<number>;
  readonly clocks: Clocks;
  /** Release and acquire patterns (exec/memory-order.ts). */
  readonly order: MemoryOrder;
  readonly shadow: SharedShadow;
  readonly async: AsyncPort;
  readonly bulk: BulkPort;
  readonly wgmma: WgmmaPort;
  readonly bars: BarsPort;
  readonly clusterUnit: ClusterPort;
}

/**
 * One access a check decides: thread `thread`'s access of `n` bytes at `addr` of `buf` (a shared
 * buffer's absolute byte, or a byte offset in a tensor) at `site`, in words `verb` ("reads",
 * "writes", "issues a cp.async to", ...); `atomic` for an atomic's write. Checks take one record
 * instead of positional parameters. A compiled access site or a unit keeps one record and sets
 * `addr` and `thread` (and `buf` for tensors, which change per launch) before each check, so the
 * hot paths allocate nothing; a check never keeps the record.
 */
export interface Access<B> {
  readonly m: SimContext;
  buf: B;
  addr: number;
  n: number;
  thread: number;
  site: number;
  verb: string;
  atomic: boolean;
}

/** An access of shared memory (`addr` absolute: the CTA's window included). */
export type SharedAccess = Access<Placed>;
/** An access of a tensor (`addr` a byte offset in it). */
export type GlobalAccess = Access<GlobalMem>;

/**
 * A record for the accesses of one site (all records have this one shape). `buf` may be
 * undefined for a record made before its buffer exists (a tensor, at compile time): the first
 * check through it sets it.
 */
export function accessRecord<B>(
  m: SimContext,
  buf: B | undefined,
  n: number,
  site: number,
  verb: string,
  atomic = false,
): Access<B> {
  return { m, buf: buf as B, addr: 0, n, thread: 0, site, verb, atomic };
}

/**
 * Point `acc` at thread `thread`'s access of `n` bytes at `addr` of `buf` at `site`, in words
 * `verb` (by default its own), and return it: for units that check accesses of varying sites
 * through one scratch record.
 */
export function setAccess<B>(
  acc: Access<B>,
  buf: B,
  addr: number,
  n: number,
  thread: number,
  site: number,
  verb: string = acc.verb,
): Access<B> {
  acc.buf = buf;
  acc.addr = addr;
  acc.n = n;
  acc.thread = thread;
  acc.site = site;
  acc.verb = verb;
  return acc;
}
