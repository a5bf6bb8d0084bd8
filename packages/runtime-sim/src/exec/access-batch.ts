import { invariant } from "@tirx-ts/core";
import { beforeGlobalWrite, type Machine, type Placed } from "./machine.js";
import { checkGlobalRead, checkGlobalWrite, checkSharedRead, checkSharedWrite } from "./hazards.js";
import {
  globalReadRun,
  globalWriteRun,
  sharedReadRun,
  sharedWriteRun,
  type Run,
} from "./access-runs.js";

/** What an access site does (AccessQueue.kind): a shared or global load or store. */
export const AccessKind = { SharedRead: 0, SharedWrite: 1, GlobalRead: 2, GlobalWrite: 3 } as const;
export type AccessKind = (typeof AccessKind)[keyof typeof AccessKind];

/**
 * The element accesses of one site (a load or store of a batched statement) that one execution
 * of the statement deferred: thread, address (absolute shared byte, or byte offset in the
 * tensor) and the order of the access among all deferred ones.
 */
export class AccessQueue {
  /** Accesses queued. */
  n = 0;
  /** Per access: its thread. */
  ts = new Int32Array(64);
  /** Per access: its address (absolute shared byte, or byte offset in the tensor). */
  as = new Float64Array(64);
  /** Per access: its order among the statement's deferred accesses (AccessBatch.seq). */
  seq = new Int32Array(64);
  /** Runs so far: element `starts[k]` begins run k (a thread or element not after the last). */
  starts = new Int32Array(64);
  runs = 0;
  /** During a flush: the next run to take. */
  next = 0;
  /** During a flush's replay: the next access to check one by one. */
  at = 0;
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

  /**
   * Check every deferred access (see the class comment); a report throws as it would have.
   * Returns true when every run was taken as a range, false when accesses were checked one by
   * one (a caller may then defer less often; the outcome is the same either way).
   */
  flush(): boolean {
    if (this.#flushing || this.active.length === 0) return true;
    this.#flushing = true;
    try {
      for (const q of this.active) q.next = q.at = 0;
      if (this.#aliased()) {
        this.#replay();
        return false;
      }
      return this.#runs();
    } finally {
      for (const q of this.active) q.n = q.runs = 0;
      this.active.length = 0;
      this.seq = 0;
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

  /**
   * Take the runs of every queue in the order of their first access (a merge of the queues,
   * each in order already); at the first run not taken, replay what is left. Taking a run
   * before accesses of other sites that came earlier is sound only because the sites of a
   * batched statement touch disjoint bytes (compile/batched.ts; a tensor passed twice is
   * replayed whole, #aliased) and a taken run reports nothing.
   */
  #runs(): boolean {
    const act = this.active;
    for (;;) {
      const q = earliest(act, (c) => (c.next < c.runs ? c.seq[c.starts[c.next]!]! : -1));
      if (q === undefined) return true;
      const from = q.starts[q.next]!;
      const end = q.next + 1 < q.runs ? q.starts[q.next + 1]! : q.n;
      if (!this.#take(q, from, end - from)) {
        for (const c of act) c.at = c.next < c.runs ? c.starts[c.next]! : c.n;
        this.#replay();
        return false;
      }
      q.next++;
    }
  }

  /** Decide and record one run as a range (false: nothing done). */
  #take(q: AccessQueue, from: number, count: number): boolean {
    const m = this.m;
    const r: Run = { site: q.site, ts: q.ts, from, count, a: q.as[from]!, sh: q.sh };
    switch (q.kind) {
      case AccessKind.SharedRead:
        return sharedReadRun(m, r);
      case AccessKind.SharedWrite:
        return sharedWriteRun(m, r);
      case AccessKind.GlobalRead:
        return globalReadRun(m.globals[q.param]!);
      case AccessKind.GlobalWrite:
        return globalWriteRun(m, m.globals[q.param]!, r);
    }
  }

  /** Check, element by element in the order they were made, every queue's accesses from `at` on. */
  #replay(): void {
    const act = this.active;
    for (;;) {
      const q = earliest(act, (c) => (c.at < c.n ? c.seq[c.at]! : -1));
      if (q === undefined) return;
      this.#element(q, q.at++);
    }
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

/** The queue whose next access (`next(q)`, its order; -1: none left) came first, if any. */
function earliest(
  queues: readonly AccessQueue[],
  next: (q: AccessQueue) => number,
): AccessQueue | undefined {
  let best: AccessQueue | undefined;
  let first = 0;
  for (let i = 0; i < queues.length; i++) {
    const s = next(queues[i]!);
    if (s >= 0 && (best === undefined || s < first)) {
      best = queues[i];
      first = s;
    }
  }
  return best;
}
