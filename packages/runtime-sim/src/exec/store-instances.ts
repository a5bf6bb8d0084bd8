import { THREAD_BITS, THREAD_MASK } from "./packed.js";

/** Instances are numbered across the process (0: outside one), so a stale mark never matches. */
let nextInstance = 1;

/**
 * Stores of one instruction: the lanes of one warp that store to the same bytes in one dynamic
 * instance of one store instruction do not race with each other (docs/conformance-memory-model.md,
 * "Stores of one instruction"). Sources: the CUDA C++ Programming Guide, "SIMT Architecture" ("If
 * a non-atomic instruction executed by a warp writes to the same location in global or shared
 * memory for more than one of the threads of the warp, the number of serialized writes that
 * occur to that location varies depending on the compute capability of the device, and which
 * thread performs the final write is undefined"), and the PTX ISA, "Memory Consistency Model":
 * the location ends up holding one of the values written. Stores of two instructions, of two
 * instances of one (two loop iterations, lanes that diverged and run it in separate passes), or
 * of two warps stay races (TX6014) unless something orders them.
 *
 * One instance is one execution of a Store statement (or of a warp-level matrix store) for the
 * lanes it runs (`begin` / `end` around it, compile/stmt.ts and compile/fragment.ts): its lanes
 * run in ascending order and each stores once. The shadows that record writes (SharedShadow,
 * TensorShadow) note every plain write they record here (`note` per element, `noteRun` per run
 * of elements taken as a range), and ask `same` before they call an unordered earlier write a
 * race. So every way a statement runs (closures, generated functions, deferred runs of
 * accesses, block copies) gives the same decision: they differ only in how they record writes,
 * and every one records through those shadows. Reads are never exempt.
 *
 * Cost: nothing outside an instance; in one, three typed-array writes per element store recorded
 * and five per run; `same` runs only on an unordered write of the same site.
 */
export class StoreInstances {
  /** The instance in progress, 0 outside one. */
  #current = 0;
  /** Per thread: the instance of its last noted store, and that store's bytes [lo, hi). */
  readonly #inst: Float64Array;
  readonly #lo: Float64Array;
  readonly #hi: Float64Array;
  /** Runs of the current instance: first thread, count, first byte, element bytes, step. */
  #runs = 0;
  #rT = new Float64Array(8);
  #rN = new Float64Array(8);
  #rA = new Float64Array(8);
  #rEb = new Float64Array(8);
  #rStep = new Float64Array(8);

  /**
   * @param threads simulated threads (a CTA's, times the CTAs of a cluster).
   * @param ctaThreads threads of one CTA (a warp is 32 consecutive threads of one CTA).
   */
  constructor(
    threads: number,
    private readonly ctaThreads: number,
  ) {
    this.#inst = new Float64Array(threads);
    this.#lo = new Float64Array(threads);
    this.#hi = new Float64Array(threads);
  }

  /** True inside an instance. */
  get active(): boolean {
    return this.#current !== 0;
  }

  /** Start one instance (call `end` when its execution returns or throws). */
  begin(): void {
    this.#current = nextInstance++;
    this.#runs = 0;
  }

  /** End the instance begun last. */
  end(): void {
    this.#current = 0;
  }

  /** Thread `t`'s store of bytes [a, a + n) was recorded (a shadow's write record). */
  note(t: number, a: number, n: number): void {
    const cur = this.#current;
    if (cur === 0) return;
    this.#inst[t] = cur;
    this.#lo[t] = a;
    this.#hi[t] = a + n;
  }

  /**
   * A run of stores was recorded as a range: `count` elements of `eb` bytes, `step` bytes apart
   * from `a`, element i by thread `t0 + i`.
   */
  noteRun(t0: number, count: number, a: number, eb: number, step: number): void {
    if (this.#current === 0) return;
    const k = this.#runs;
    if (k === this.#rT.length) this.#grow();
    this.#rT[k] = t0;
    this.#rN[k] = count;
    this.#rA[k] = a;
    this.#rEb[k] = eb;
    this.#rStep[k] = step;
    this.#runs = k + 1;
  }

  #grow(): void {
    const grow = (x: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const y = new Float64Array(x.length * 2);
      y.set(x);
      return y;
    };
    this.#rT = grow(this.#rT);
    this.#rN = grow(this.#rN);
    this.#rA = grow(this.#rA);
    this.#rEb = grow(this.#rEb);
    this.#rStep = grow(this.#rStep);
  }

  /**
   * True when the earlier write `w` (packed `site << THREAD_BITS | thread`) of byte `b` at clock
   * `c`, which is not ordered before thread `t`'s store at `site`, is a store of another lane of
   * `t`'s warp in the current instance: the same site, the same CTA and warp, the writer's clock
   * unchanged since (`clock`, the threads' clocks), and the writer's store of this instance
   * covering `b`. The caller does not report it (see the class comment).
   */
  same(w: number, c: number, t: number, site: number, b: number, clock: Int32Array): boolean {
    const cur = this.#current;
    if (cur === 0 || w >> THREAD_BITS !== site) return false;
    const u = w & THREAD_MASK;
    if (clock[u] !== c || !this.#sameWarp(u, t)) return false;
    if (this.#inst[u] === cur && b >= this.#lo[u]! && b < this.#hi[u]!) return true;
    for (let k = 0; k < this.#runs; k++) {
      const i = u - this.#rT[k]!;
      if (i < 0 || i >= this.#rN[k]!) continue;
      const lo = this.#rA[k]! + i * this.#rStep[k]!;
      return b >= lo && b < lo + this.#rEb[k]!;
    }
    return false;
  }

  /** True when threads `u` and `t` are lanes of one warp of one CTA. */
  #sameWarp(u: number, t: number): boolean {
    const per = this.ctaThreads;
    const cu = Math.floor(u / per);
    const ct = Math.floor(t / per);
    return cu === ct && (u - cu * per) >> 5 === (t - ct * per) >> 5;
  }
}
