import { invariant } from "@tirx-ts/core";
import { accessRecord, type GlobalAccess, type SharedAccess, type SimContext } from "./context.js";
import { checkGlobalRead, checkGlobalWrite, checkSharedRead, checkSharedWrite } from "./hazards.js";
import type { Placed } from "./memory.js";
import { beforeGlobalWrite } from "./pending-reads.js";
import {
  globalReadRun,
  globalWriteRun,
  globalWriteStrided,
  sharedReadRun,
  sharedReadStrided,
  sharedWriteRun,
  sharedWriteStrided,
  type Run,
} from "./access-runs.js";

/** What an access site does (AccessQueue.kind): a shared or global load or store. */
export const AccessKind = { SharedRead: 0, SharedWrite: 1, GlobalRead: 2, GlobalWrite: 3 } as const;
export type AccessKind = (typeof AccessKind)[keyof typeof AccessKind];

/**
 * The element accesses of one site (a load or store of a batched statement) that one execution
 * of the statement deferred, kept as runs: run k is `rN[k]` accesses by threads `rT[k]`,
 * `rT[k] + 1`, ... at addresses `rA[k]`, `rA[k] + rStep[k]`, ... (absolute shared bytes, or byte
 * offsets in the tensor; rStep is the element's bytes for consecutive elements, more for a
 * strided run such as a column); its i-th access came `rSeq[k] + i·rStride[k]`-th among all the
 * statement's deferred accesses (AccessBatch.seq).
 */
export class AccessQueue {
  /** Runs queued. */
  runs = 0;
  /** Per run: its first thread. */
  rT = new Int32Array(16);
  /** Per run: its first address. */
  rA = new Float64Array(16);
  /** Per run: its accesses. */
  rN = new Int32Array(16);
  /** Per run: the order of its first access. */
  rSeq = new Int32Array(16);
  /** Per run: the step of the order from one access to the next. */
  rStride = new Int32Array(16);
  /** Per run: the bytes from one access's address to the next (at least the element's bytes). */
  rStep = new Float64Array(16);
  /** During a flush: the next run to take. */
  next = 0;
  /** During a flush's replay: the next access to check one by one (run `at`, its access `ai`). */
  at = 0;
  ai = 0;
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

  /** Defer thread `t`'s access at address `a` (the next in the statement's order). */
  push(t: number, a: number): void {
    const seq = this.batch.seq++;
    const k = this.runs - 1;
    if (k >= 0) {
      const c = this.rN[k]!;
      if (t === this.rT[k]! + c) {
        if (c === 1 && a - this.rA[k]! >= this.#eb) {
          this.rStride[k] = seq - this.rSeq[k]!;
          this.rStep[k] = a - this.rA[k]!;
          this.rN[k] = 2;
          return;
        }
        if (
          a === this.rA[k]! + c * this.rStep[k]! &&
          seq === this.rSeq[k]! + c * this.rStride[k]!
        ) {
          this.rN[k] = c + 1;
          return;
        }
      }
    }
    this.pushRun(t, a, 1, seq, 1, this.#eb);
  }

  /**
   * Defer `count` accesses made in order `seq`, `seq + stride`, ...: threads t, t + 1, ... at
   * addresses a, a + step, ... (`step` at least the element's bytes; the caller advances the
   * batch's `seq` past them).
   */
  pushRun(t: number, a: number, count: number, seq: number, stride: number, step: number): void {
    const k = this.runs;
    if (k === 0) this.batch.active.push(this);
    if (k === this.rT.length) this.#grow();
    this.rT[k] = t;
    this.rA[k] = a;
    this.rN[k] = count;
    this.rSeq[k] = seq;
    this.rStride[k] = stride;
    this.rStep[k] = step;
    this.runs = k + 1;
  }

  #grow(): void {
    const n = this.rT.length * 2;
    const i32 = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    const f64 = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.rA = f64(this.rA);
    this.rStep = f64(this.rStep);
    this.rT = i32(this.rT);
    this.rN = i32(this.rN);
    this.rSeq = i32(this.rSeq);
    this.rStride = i32(this.rStride);
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
  /** Queues with accesses, in the order of their first access. */
  readonly active: AccessQueue[] = [];
  /** The order of the next access. */
  seq = 0;
  #flushing = false;

  /** Scratch records of the element checks of a replay (#element), made at first use. */
  #shared: SharedAccess | undefined;
  #global: GlobalAccess | undefined;

  constructor(readonly m: SimContext) {}

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
      for (const q of this.active) q.next = q.at = q.ai = 0;
      if (this.#aliased()) {
        this.#replay();
        return false;
      }
      return this.#runs();
    } finally {
      for (const q of this.active) q.runs = 0;
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
        if (act[j]!.param >= 0 && g[act[i]!.param]!.shadow === g[act[j]!.param]!.shadow) {
          return true;
        }
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
      const q = earliestRun(act);
      if (q === undefined) return true;
      if (!this.#take(q, q.next)) {
        for (const c of act) c.at = c.next;
        this.#replay();
        return false;
      }
      q.next++;
    }
  }

  readonly #run: { -readonly [K in keyof Run]: Run[K] } = { site: 0, t0: 0, count: 0, a: 0, sh: 0 };

  /** Decide and record run k of `q` as a range (false: nothing done). */
  #take(q: AccessQueue, k: number): boolean {
    const m = this.m;
    // One scratch Run for every take (the run functions keep nothing of it).
    const r = this.#run;
    r.site = q.site;
    r.t0 = q.rT[k]!;
    r.count = q.rN[k]!;
    r.a = q.rA[k]!;
    r.sh = q.sh;
    const step = q.rStep[k]!;
    if (step !== 1 << q.sh && r.count > 1) {
      switch (q.kind) {
        case AccessKind.SharedRead:
          return sharedReadStrided(m, r, step);
        case AccessKind.GlobalRead:
          return globalReadRun(m.globals[q.param]!);
        case AccessKind.SharedWrite:
          return sharedWriteStrided(m, r, step);
        case AccessKind.GlobalWrite:
          return globalWriteStrided(m, m.globals[q.param]!, r, step);
      }
    }
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
      const q = earliestAccess(act);
      if (q === undefined) return;
      this.#element(q, q.rT[q.at]! + q.ai, q.rA[q.at]! + q.ai * q.rStep[q.at]!);
      if (++q.ai === q.rN[q.at]!) {
        q.at++;
        q.ai = 0;
      }
    }
  }

  /** The element check of thread `t`'s access at `a` that its closure makes when nothing is deferred. */
  #element(q: AccessQueue, t: number, a: number): void {
    const m = this.m;
    const eb = 1 << q.sh;
    switch (q.kind) {
      case AccessKind.SharedRead:
      case AccessKind.SharedWrite: {
        const placed = q.placed!;
        const acc = (this.#shared ??= accessRecord(m, placed, eb, q.site, "reads"));
        acc.buf = placed;
        acc.addr = a;
        acc.n = eb;
        acc.thread = t;
        acc.site = q.site;
        if (q.kind === AccessKind.SharedRead) {
          acc.verb = "reads";
          return checkSharedRead(acc);
        }
        acc.verb = "writes";
        return checkSharedWrite(acc);
      }
      case AccessKind.GlobalRead:
      case AccessKind.GlobalWrite: {
        const gm = m.globals[q.param]!;
        const acc = (this.#global ??= accessRecord(m, gm, eb, q.site, "reads"));
        acc.buf = gm;
        acc.addr = a;
        acc.n = eb;
        acc.thread = t;
        acc.site = q.site;
        if (q.kind === AccessKind.GlobalRead) {
          acc.verb = "reads";
          if (gm.shadow.watched) checkGlobalRead(acc);
          return;
        }
        acc.verb = "writes";
        beforeGlobalWrite(m, gm);
        checkGlobalWrite(acc);
        return;
      }
    }
  }
}

/** The queue whose next run to take (`next`) came first, if any. */
function earliestRun(queues: readonly AccessQueue[]): AccessQueue | undefined {
  let best: AccessQueue | undefined;
  let first = 0;
  for (let i = 0; i < queues.length; i++) {
    const c = queues[i]!;
    if (c.next >= c.runs) continue;
    const s = c.rSeq[c.next]!;
    if (best === undefined || s < first) {
      best = c;
      first = s;
    }
  }
  return best;
}

/** The queue whose next access to check one by one (`at`, `ai`) came first, if any. */
function earliestAccess(queues: readonly AccessQueue[]): AccessQueue | undefined {
  let best: AccessQueue | undefined;
  let first = 0;
  for (let i = 0; i < queues.length; i++) {
    const c = queues[i]!;
    if (c.at >= c.runs) continue;
    const s = c.rSeq[c.at]! + c.ai * c.rStride[c.at]!;
    if (best === undefined || s < first) {
      best = c;
      first = s;
    }
  }
  return best;
}
