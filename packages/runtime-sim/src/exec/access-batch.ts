import { invariant } from "@tirx-ts/core";
import { beforeGlobalWrite, type Machine, type Placed } from "./machine.js";
import { checkGlobalRead, checkGlobalWrite, checkSharedRead, checkSharedWrite } from "./hazards.js";
import { globalReadRun, globalWriteRun, sharedReadRun, sharedWriteRun } from "./access-runs.js";

/** What an access site does (AccessQueue.kind). */
export const AccessKind = { SharedRead: 0, SharedWrite: 1, GlobalRead: 2, GlobalWrite: 3 } as const;
export type AccessKind = (typeof AccessKind)[keyof typeof AccessKind];

/**
 * The element accesses of one site (a load or store of a batched statement) that one execution
 * of the statement deferred: thread, address (absolute shared byte, or byte offset in the
 * tensor) and the order of the access among all deferred ones.
 */
export class AccessQueue {
  n = 0;
  ts = new Int32Array(64);
  as = new Float64Array(64);
  seq = new Int32Array(64);
  /** Runs so far: element `starts[k]` begins run k (a thread or element not after the last). */
  starts = new Int32Array(64);
  runs = 0;
  readonly #eb: number;

  /**
   * @param sh log2 of the element's bytes (elements are 1, 2, 4 or 8 bytes).
   * @param placed the shared buffer (shared kinds).
   * @param param the tensor parameter index (global kinds), else -1.
   */
  constructor(
    readonly batch: AccessBatch,
    readonly kind: AccessKind,
    readonly site: number,
    readonly sh: number,
    readonly placed: Placed | undefined,
    readonly param: number,
  ) {
    this.#eb = 1 << sh;
  }

  /** Defer thread `t`'s access at address `a`. */
  push(t: number, a: number): void {
    const n = this.n;
    if (n === 0) this.batch.active.push(this);
    if (n === this.ts.length) this.#grow();
    if (n === 0 || t !== this.ts[n - 1]! + 1 || a !== this.as[n - 1]! + this.#eb) {
      this.starts[this.runs++] = n;
    }
    this.ts[n] = t;
    this.as[n] = a;
    this.seq[n] = this.batch.seq++;
    this.n = n + 1;
  }

  #grow(): void {
    const ts = new Int32Array(this.ts.length * 2);
    const as = new Float64Array(this.as.length * 2);
    const seq = new Int32Array(this.seq.length * 2);
    const starts = new Int32Array(this.starts.length * 2);
    ts.set(this.ts);
    as.set(this.as);
    seq.set(this.seq);
    starts.set(this.starts);
    this.ts = ts;
    this.as = as;
    this.seq = seq;
    this.starts = starts;
  }
}

/**
 * Deferred hazard checks of element accesses (the Machine's `batch`). A batched statement (a
 * Store or Let whose loads and store touch distinct buffers, compile/batched.ts) runs its lanes
 * with `deferring` set: bounds are checked and data moves at once, but each load's and store's
 * hazard check is queued at its site. At the end of the statement (and before any report, see
 * Machine.hazard) `flush` checks the queued accesses: each site's accesses split into runs
 * (consecutive threads at consecutive elements), and runs, in the order of their first access,
 * are decided and recorded as ranges (exec/access-runs.ts). The first run that cannot be taken
 * so, and every access not yet checked, is checked element by element in the order the lanes
 * made them. Runs taken as ranges report nothing and touch memory no other site of the
 * statement touches, so the reports, their order and the shadow state are those of checking
 * every access when it is made.
 */
export class AccessBatch {
  /** Set while a batched statement runs its lanes: loads and stores of its sites queue. */
  deferring = false;
  /** False: nothing is deferred, every access is checked as it is made (SimOptions.rangeChecks). */
  enabled = true;
  /** Queues with accesses, in the order of their first access. */
  readonly active: AccessQueue[] = [];
  /** The order of the next access. */
  seq = 0;
  #flushing = false;
  // Runs of the flush: queue, first element, count, order of the first access.
  #rq: AccessQueue[] = [];
  #rf: number[] = [];
  #rc: number[] = [];
  #rs: number[] = [];
  #order: number[] = [];

  constructor(readonly m: Machine) {}

  /** A queue for one access site of a batched statement. */
  queue(
    kind: AccessKind,
    site: number,
    bytes: number,
    placed: Placed | undefined,
    param: number,
  ): AccessQueue {
    const sh = Math.log2(bytes);
    invariant(Number.isInteger(sh), `element of ${bytes} bytes in a batched access`);
    return new AccessQueue(this, kind, site, sh, placed, param);
  }

  /** Check every deferred access (see the class comment); a report throws as it would have. */
  flush(): void {
    if (this.#flushing || this.active.length === 0) return;
    this.#flushing = true;
    try {
      if (this.#aliased()) this.#replay(0);
      else this.#runs();
    } finally {
      for (const q of this.active) q.n = q.runs = 0;
      this.active.length = 0;
      this.seq = 0;
      this.#rq.length = this.#rf.length = this.#rc.length = this.#rs.length = 0;
      this.#flushing = false;
    }
  }

  /** Two global sites on one tensor (a tensor passed as two parameters): check element by element. */
  #aliased(): boolean {
    const act = this.active;
    const g = this.m.globals;
    for (let i = 0; i < act.length; i++) {
      if (act[i]!.param < 0) continue;
      for (let j = i + 1; j < act.length; j++) {
        if (act[j]!.param >= 0 && g[act[i]!.param]!.meta === g[act[j]!.param]!.meta) return true;
      }
    }
    return false;
  }

  #runs(): void {
    const rq = this.#rq;
    const rf = this.#rf;
    const rc = this.#rc;
    const rs = this.#rs;
    for (const q of this.active) {
      const { starts, runs, n } = q;
      for (let k = 0; k < runs; k++) {
        const from = starts[k]!;
        rq.push(q);
        rf.push(from);
        rc.push((k + 1 < runs ? starts[k + 1]! : n) - from);
        rs.push(q.seq[from]!);
      }
    }
    const order = this.#order;
    order.length = rs.length;
    for (let i = 0; i < rs.length; i++) order[i] = i;
    if (this.active.length > 1) order.sort((x, y) => rs[x]! - rs[y]!);
    for (let k = 0; k < order.length; k++) {
      const r = order[k]!;
      if (!this.#take(rq[r]!, rf[r]!, rc[r]!)) {
        this.#replay(k, order);
        return;
      }
    }
  }

  /** Decide and record one run as a range (false: nothing done). */
  #take(q: AccessQueue, from: number, count: number): boolean {
    const m = this.m;
    const a = q.as[from]!;
    switch (q.kind) {
      case AccessKind.SharedRead:
        return sharedReadRun(m, q.site, q.ts, from, count, a, q.sh);
      case AccessKind.SharedWrite:
        return sharedWriteRun(m, q.site, q.ts, from, count, a, q.sh);
      case AccessKind.GlobalRead:
        return globalReadRun(m.globals[q.param]!);
      case AccessKind.GlobalWrite:
        return globalWriteRun(m, m.globals[q.param]!, q.site, q.ts, from, count, a, q.sh);
    }
  }

  /**
   * Check, element by element in the order they were made, the accesses of the runs from
   * position `k` of `order` on (all accesses when `order` is not given).
   */
  #replay(k: number, order?: number[]): void {
    const qs: AccessQueue[] = [];
    const is: number[] = [];
    const seqs: number[] = [];
    const add = (q: AccessQueue, from: number, count: number): void => {
      for (let i = from; i < from + count; i++) {
        qs.push(q);
        is.push(i);
        seqs.push(q.seq[i]!);
      }
    };
    if (order === undefined) for (const q of this.active) add(q, 0, q.n);
    else
      for (let j = k; j < order.length; j++)
        add(this.#rq[order[j]!]!, this.#rf[order[j]!]!, this.#rc[order[j]!]!);
    const idx = seqs.map((_, i) => i).sort((x, y) => seqs[x]! - seqs[y]!);
    for (const j of idx) this.#element(qs[j]!, is[j]!);
  }

  /** The element check the access's closure makes when nothing is deferred. */
  #element(q: AccessQueue, i: number): void {
    const m = this.m;
    const t = q.ts[i]!;
    const a = q.as[i]!;
    const eb = 1 << q.sh;
    switch (q.kind) {
      case AccessKind.SharedRead:
        return checkSharedRead(m, q.placed!, a, eb, t, q.site);
      case AccessKind.SharedWrite:
        return checkSharedWrite(m, q.placed!, a, eb, t, q.site);
      case AccessKind.GlobalRead: {
        const gm = m.globals[q.param]!;
        if (gm.meta.writer || gm.meta.recordReads) checkGlobalRead(m, gm, a, eb, t, q.site);
        return;
      }
      case AccessKind.GlobalWrite: {
        const gm = m.globals[q.param]!;
        beforeGlobalWrite(m, gm);
        checkGlobalWrite(m, gm, a, eb, t, q.site);
        return;
      }
    }
  }
}
