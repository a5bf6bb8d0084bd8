import type { GlobalAccess, SharedAccess } from "./context.js";
import { THREAD_BITS, THREAD_MASK, type RaceHit } from "./packed.js";
import { globalAt, sharedAt } from "./reports.js";

/** Executions of Store statements are numbered across the process (0: outside one). */
let nextExecution = 1;

/**
 * Stores by lanes of one warp in one instruction (one execution of a Store statement for the
 * lanes it runs, which stay in lockstep and in ascending order: compile/schedule.ts). The policy
 * (docs/conformance-memory-model.md, "Stores of one instruction"):
 * - when several lanes of one warp store to the same bytes in one dynamic instance of a store
 *   instruction, one lane's value lands (CUDA C++ Programming Guide, "SIMT Architecture": "If a
 *   non-atomic instruction executed by a warp writes to the same location in global or shared
 *   memory for more than one of the threads of the warp, ... which thread performs the final
 *   write is undefined"). That is no write-after-write race (TX6014) among those lanes; the
 *   simulator keeps the value of the highest active lane (the last in its lane order);
 * - when their values differ, the result depends on which lane the hardware picks: TX6028 (a
 *   nondeterministic result, reported since a simulated run would otherwise agree with the GPU
 *   only by chance). Equal values (bit for bit) report nothing;
 * - stores of two instructions, two dynamic instances of one (two loop iterations, two divergent
 *   passes), or two warps stay TX6014 unless something orders them.
 *
 * Cost: per checked store one mark and one address per thread (set by exec/hazards.ts) and one
 * value (set by compile/access.ts); the comparison runs only on a race hit.
 */
export class StoreInstances {
  /** The Store statement execution in progress (unique in the process), 0 outside one. */
  current = 0;
  /** Per thread: `current` at its latest checked store. */
  readonly mark: Float64Array;
  /** Per thread: the address of that store (absolute shared byte, or byte in the tensor). */
  readonly addr: Float64Array;
  /** Per thread: the value of its latest Store statement store, as the codec stores it. */
  readonly val: (number | bigint)[];

  /**
   * @param threads simulated threads (a CTA's, times the CTAs of a cluster).
   * @param ctaThreads threads of one CTA (warps are 32 consecutive threads of one CTA).
   */
  constructor(
    threads: number,
    private readonly ctaThreads: number,
  ) {
    this.mark = new Float64Array(threads);
    this.addr = new Float64Array(threads);
    this.val = new Array<number | bigint>(threads).fill(0);
  }

  /** Start one execution of a Store statement (call `end` when it returns). */
  begin(): void {
    this.current = nextExecution++;
  }

  /** End the execution begun last. */
  end(): void {
    this.current = 0;
  }

  /** Note thread `t`'s checked store at `addr` (exec/hazards.ts, after its race check). */
  note(t: number, addr: number): void {
    this.mark[t] = this.current;
    this.addr[t] = addr;
  }

  /** True when threads `u` and `t` are lanes of one warp of one CTA. */
  sameWarp(u: number, t: number): boolean {
    const per = this.ctaThreads;
    const cu = Math.floor(u / per);
    const ct = Math.floor(t / per);
    return cu === ct && (u - cu * per) >> 5 === (t - ct * per) >> 5;
  }
}

/**
 * True when the write-after-write hit `hit` of the store `acc` is the store of another lane of
 * the same warp in the same dynamic instance of the same store instruction (StoreInstances): no
 * race. Reports TX6028 when the two lanes' values differ. False for everything else (a read, an
 * atomic, another site, another warp, CTA or instance).
 */
export function sameInstruction(
  acc: SharedAccess | GlobalAccess,
  hit: RaceHit,
  shared: boolean,
): boolean {
  const m = acc.m;
  const s = m.stores;
  const e = s.current;
  if (e === 0 || acc.atomic) return false;
  const u = hit.other & THREAD_MASK;
  const t = acc.thread;
  if (hit.other >> THREAD_BITS !== acc.site || s.mark[u] !== e || s.addr[u] !== acc.addr) {
    return false;
  }
  // Same CTA, no release event of u since (one instance has none).
  if (hit.clock !== m.clocks.clock[u] || !s.sameWarp(u, t)) return false;
  if (!Object.is(s.val[u], s.val[t])) reportDifferingLanes(acc, u, shared);
  return true;
}

/** TX6028: lanes `u` and `acc.thread` of one warp store different values to the same bytes. */
function reportDifferingLanes(acc: SharedAccess | GlobalAccess, u: number, shared: boolean): void {
  const m = acc.m;
  const t = acc.thread;
  const at = shared
    ? sharedAt(m, (acc as SharedAccess).buf, acc.addr, acc.n)
    : globalAt(acc as GlobalAccess);
  const lane = (x: number): number => (x - Math.floor(x / m.ctaThreads) * m.ctaThreads) & 31;
  m.hazard(
    "TX6028",
    `threads ${m.thread(u)} and ${m.thread(t)} of CTA ${m.cta()} (lanes ${lane(u)} and ${lane(t)} of one warp) store different values (${String(m.stores.val[u])} and ${String(m.stores.val[t])}) to ${at} in one instruction: one lane's value lands and which one is undefined (CUDA C++ Programming Guide, "SIMT Architecture"; the simulator keeps the highest active lane's); store one value from every lane, or let one lane store (e.g. under lane == 0)`,
    acc.site,
  );
}
