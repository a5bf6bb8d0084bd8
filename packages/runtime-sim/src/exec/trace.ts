/**
 * One event of a Chrome / Perfetto trace ("Trace Event Format": `traceEvents` entries).
 * `ph` "X" is a complete event (`dur`), "i" an instant; `ts`/`dur` are logical: statements the
 * CTA has executed (every statement of a block counts once per lane group that runs it, however
 * many lanes execute it). `pid` is the CTA's linear index, `tid` the warp.
 */
export interface TraceEvent {
  readonly name: string;
  readonly cat: string;
  readonly ph: "X" | "i";
  readonly ts: number;
  readonly dur?: number;
  readonly pid: number;
  readonly tid: number;
  readonly s?: "t";
  readonly args?: Readonly<Record<string, string | number>>;
}

/**
 * Records what a simulated launch does, per warp, on a logical clock (`clock`, advanced by every
 * statement the simulator runs while tracing): cp.async groups from their first issue to the
 * wait_group that completes them, each wait_group, barrier phases between cta_syncs (and the CTA's
 * start and end), mbarrier phases from init (or the previous completion) to their completion,
 * and each mbarrier try_wait that passes or fails. Only warps with a lane executing the statement
 * get an event. A launch's events come back in `events` (CTAs in launch order).
 */
export class Tracer {
  clock = 0;
  readonly events: TraceEvent[] = [];
  #pid = 0;
  /** Per warp: clock of the first cp.async issued since its last commit, -1 when none. */
  #open = new Map<number, number>();
  /** Per warp: start clocks of its committed, not yet completed groups (oldest first). */
  #groups = new Map<number, number[]>();
  /** Per warp: clock where its current barrier phase began, and the phase's number. */
  #phaseStart = new Map<number, number>();
  #phase = 0;
  /** Per mbarrier label: clock where its current phase began. */
  #barStart = new Map<string, number>();
  readonly #warps: number;

  constructor(threads: number) {
    this.#warps = Math.ceil(threads / 32);
  }

  /** The warps that own lanes[0..n), ascending. */
  static warpsOf(lanes: Int32Array, n: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const w = lanes[i]! >> 5;
      if (!out.includes(w)) out.push(w);
    }
    return out.sort((a, b) => a - b);
  }

  beginCta(pid: number): void {
    this.#pid = pid;
    this.clock = 0;
    this.#open.clear();
    this.#groups.clear();
    this.#barStart.clear();
    this.#phase = 0;
    for (let w = 0; w < this.#warps; w++) this.#phaseStart.set(w, 0);
  }

  endCta(): void {
    this.#closePhase([...this.#phaseStart.keys()], "CTA exit");
  }

  #x(name: string, cat: string, tid: number, start: number, args?: TraceEvent["args"]): void {
    this.events.push({
      name,
      cat,
      ph: "X",
      ts: start,
      dur: Math.max(this.clock - start, 1),
      pid: this.#pid,
      tid,
      ...(args ? { args } : {}),
    });
  }

  #i(name: string, cat: string, tid: number, args?: TraceEvent["args"]): void {
    this.events.push({
      name,
      cat,
      ph: "i",
      ts: this.clock,
      pid: this.#pid,
      tid,
      s: "t",
      ...(args ? { args } : {}),
    });
  }

  cpAsyncIssue(warps: readonly number[]): void {
    for (const w of warps) if (!this.#open.has(w)) this.#open.set(w, this.clock);
  }

  cpAsyncCommit(warps: readonly number[]): void {
    for (const w of warps) {
      const start = this.#open.get(w) ?? this.clock;
      this.#open.delete(w);
      let g = this.#groups.get(w);
      if (!g) this.#groups.set(w, (g = []));
      g.push(start);
    }
  }

  cpAsyncWait(warps: readonly number[], keep: number): void {
    for (const w of warps) {
      const g = this.#groups.get(w) ?? [];
      while (g.length > keep) this.#x("cp.async group", "cp.async", w, g.shift()!);
      this.#x(`cp.async.wait_group ${keep}`, "wait", w, this.clock);
    }
  }

  barrier(warps: readonly number[], name: string): void {
    for (const w of warps) this.#i(name, "barrier", w);
    this.#closePhase(warps, name);
  }

  #closePhase(warps: readonly number[], end: string): void {
    for (const w of warps) {
      const start = this.#phaseStart.get(w) ?? 0;
      this.#x(`barrier phase ${this.#phase}`, "barrier", w, start, { ends: end });
      this.#phaseStart.set(w, this.clock);
    }
    this.#phase++;
  }

  mbarrierInit(label: string, warp: number, count: number): void {
    this.#barStart.set(label, this.clock);
    this.#i(`mbarrier.init ${label}`, "mbarrier", warp, { count });
  }

  mbarrierPhase(label: string, phase: number, warp: number): void {
    this.#x(`mbarrier ${label} phase ${phase}`, "mbarrier", warp, this.#barStart.get(label) ?? 0);
    this.#barStart.set(label, this.clock);
  }

  #lastTry = "";

  tryWait(label: string, warp: number, passed: boolean): void {
    // One event per warp and statement (each lane tests the barrier).
    const key = `${this.clock}/${warp}/${label}/${passed}`;
    if (key === this.#lastTry) return;
    this.#lastTry = key;
    this.#i(`try_wait ${label}: ${passed ? "passed" : "not yet"}`, "wait", warp);
  }

  bulkIssue(warps: readonly number[], what: string): void {
    for (const w of warps) this.#i(what, "bulk", w);
  }
}
