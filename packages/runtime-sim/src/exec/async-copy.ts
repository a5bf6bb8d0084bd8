import type { Machine, Placed } from "./machine.js";
import { checkAsyncWrite, checkGlobalRead, issuedNotes } from "./hazards.js";

/**
 * cp.async groups per thread, as the PTX ISA defines them ("cp.async", "cp.async.commit_group",
 * "cp.async.wait_group"): every thread owns an uncommitted set of issued copies; commit_group
 * turns it into a group (possibly empty); wait_group N completes all but the N most recent groups
 * of that thread. A copy's bytes land in shared memory only when its group completes; until then
 * the target bytes count as pending (reads and writes of them are TX6001), and so do the source
 * bytes it reads (a global write to them is TX6002).
 */
export class AsyncUnit {
  #cap = 64;
  // Copies in flight, struct of arrays; ids are recycled through `#free`.
  #dst: Int32Array = new Int32Array(this.#cap);
  #tens: Int32Array = new Int32Array(this.#cap);
  #src: Int32Array = new Int32Array(this.#cap);
  #len: Int32Array = new Int32Array(this.#cap);
  #chunk: Int32Array = new Int32Array(this.#cap);
  #site: Int32Array = new Int32Array(this.#cap);
  #top = 0;
  readonly #free: number[] = [];
  /** Per thread: ids of its issued, uncompleted copies in issue order. */
  readonly #pending: number[][];
  /** Per thread: for each committed, uncompleted group, how many `#pending` entries end it. */
  readonly #ends: number[][];
  /** Per thread: id of its current uncommitted batch (unique within a launch). */
  readonly #batch: Int32Array;
  #nextBatch = 1;

  constructor(threads: number) {
    this.#pending = Array.from({ length: threads }, () => []);
    this.#ends = Array.from({ length: threads }, () => []);
    this.#batch = new Int32Array(threads);
  }

  /** Forget every copy (CTA start). */
  reset(): void {
    for (let t = 0; t < this.#batch.length; t++) {
      this.#pending[t]!.length = 0;
      this.#ends[t]!.length = 0;
      this.#batch[t] = this.#nextBatch++;
    }
    this.#top = 0;
    this.#free.length = 0;
  }

  #alloc(): number {
    const id = this.#free.pop();
    if (id !== undefined) return id;
    if (this.#top === this.#cap) {
      this.#cap *= 2;
      const grow = (a: Int32Array): Int32Array => {
        const b = new Int32Array(this.#cap);
        b.set(a);
        return b;
      };
      this.#dst = grow(this.#dst);
      this.#tens = grow(this.#tens);
      this.#src = grow(this.#src);
      this.#len = grow(this.#len);
      this.#chunk = grow(this.#chunk);
      this.#site = grow(this.#site);
    }
    return this.#top++;
  }

  /**
   * Thread `t` issues a copy of `len` bytes from byte `src` of tensor `tens` to shared byte `dst`
   * (absolute), zero-filling up to `chunk` bytes. Bounds were checked by the caller.
   */
  issue(
    m: Machine,
    t: number,
    dst: number,
    buf: Placed,
    tens: number,
    src: number,
    len: number,
    chunk: number,
    site: number,
  ): void {
    const gm = m.globals[tens]!;
    if (len > 0) checkGlobalRead(m, gm, src, len, t, site);
    checkAsyncWrite(m, buf, dst, chunk, t, site, "issues a cp.async to");
    const pend = m.shPending;
    const batch = this.#batch[t]!;
    for (let i = 0; i < chunk; i++) {
      const b = dst + i;
      if (pend[b] !== 0) {
        const notes = issuedNotes(m, this.findByDst(b), "the other cp.async");
        if (m.shBatch[b] === batch) {
          m.hazard(
            "TX6008",
            `thread ${m.thread(t)} of CTA ${m.cta()} issues two cp.async in one commit group that both write shared "${buf.name}" byte ${b - buf.base}; their order is undefined`,
            site,
            notes,
          );
        } else {
          m.hazard(
            "TX6001",
            `thread ${m.thread(t)} of CTA ${m.cta()} issues a cp.async to shared "${buf.name}" byte ${b - buf.base}, which an earlier cp.async still targets (not yet waited for)`,
            site,
            notes,
          );
        }
        break;
      }
    }
    for (let i = 0; i < chunk; i++) {
      pend[dst + i]!++;
      m.shBatch[dst + i] = batch;
    }
    if (len > 0) {
      const meta = gm.meta;
      const pr = (meta.pendingReads ??= new Int32Array(gm.bytes.length));
      for (let i = 0; i < len; i++) pr[src + i]!++;
    }
    const id = this.#alloc();
    this.#dst[id] = dst;
    this.#tens[id] = tens;
    this.#src[id] = src;
    this.#len[id] = len;
    this.#chunk[id] = chunk;
    this.#site[id] = site;
    this.#pending[t]!.push(id);
  }

  /** `cp.async.commit_group` by thread `t`: its uncommitted copies (maybe none) become a group. */
  commit(t: number): void {
    this.#ends[t]!.push(this.#pending[t]!.length);
    this.#batch[t] = this.#nextBatch++;
  }

  /** `cp.async.wait_group n` by thread `t`: complete all but its `n` most recent groups. */
  wait(m: Machine, t: number, n: number): void {
    const ends = this.#ends[t]!;
    const g = ends.length;
    if (g <= n) return;
    const k = ends[g - n - 1]!;
    const pending = this.#pending[t]!;
    for (let i = 0; i < k; i++) this.#complete(m, t, pending[i]!);
    pending.splice(0, k);
    ends.splice(0, g - n);
    for (let i = 0; i < ends.length; i++) ends[i]! -= k;
  }

  #complete(m: Machine, t: number, id: number): void {
    const dst = this.#dst[id]!;
    const len = this.#len[id]!;
    const chunk = this.#chunk[id]!;
    const gm = m.globals[this.#tens[id]!]!;
    const src = this.#src[id]!;
    const sh = m.shared;
    const g = gm.bytes;
    for (let i = 0; i < len; i++) sh[dst + i] = g[src + i]!;
    for (let i = len; i < chunk; i++) sh[dst + i] = 0;
    // The write becomes thread t's own write as of its wait (cp.async is a generic-proxy write).
    m.races.recordWrite(t, this.#site[id]!, dst, chunk);
    for (let i = 0; i < chunk; i++) {
      m.shPending[dst + i]!--;
      m.shBulk[dst + i] = 0;
    }
    if (len > 0) {
      const pr = gm.meta.pendingReads!;
      for (let i = 0; i < len; i++) pr[src + i]!--;
    }
    this.#free.push(id);
  }

  /** TX6017 for each thread that has cp.async copies not waited for (CTA exit). */
  reportPending(m: Machine): void {
    if (m.bars.deadlocked) return;
    for (let t = 0; t < this.#pending.length; t++) {
      const list = this.#pending[t]!;
      if (list.length === 0) continue;
      m.hazard(
        "TX6017",
        `thread ${m.thread(t)} of CTA ${m.cta()} exits with ${list.length} cp.async copies not waited for (cp.async.wait_group / wait_all)`,
        this.#site[list[0]!]!,
      );
    }
  }

  /** Drop every copy still in flight (CTA end, or a hazard thrown mid-launch). */
  dropAll(m: Machine): void {
    for (let t = 0; t < this.#pending.length; t++) {
      for (const id of this.#pending[t]!) {
        const len = this.#len[id]!;
        const pr = m.globals[this.#tens[id]!]?.meta.pendingReads;
        if (pr) for (let i = 0; i < len; i++) pr[this.#src[id]! + i]!--;
      }
      this.#pending[t]!.length = 0;
      this.#ends[t]!.length = 0;
    }
    this.#free.length = 0;
    this.#top = 0;
  }

  /** An in-flight copy writing shared byte `b`, for notes. */
  findByDst(b: number): { thread: number; site: number } | undefined {
    return this.#find((id) => b >= this.#dst[id]! && b < this.#dst[id]! + this.#chunk[id]!);
  }

  /** An in-flight copy reading byte `b` of tensor `tens`, for notes. */
  findBySrc(tens: number, b: number): { thread: number; site: number } | undefined {
    return this.#find(
      (id) => this.#tens[id] === tens && b >= this.#src[id]! && b < this.#src[id]! + this.#len[id]!,
    );
  }

  #find(hit: (id: number) => boolean): { thread: number; site: number } | undefined {
    for (let t = 0; t < this.#pending.length; t++) {
      for (const id of this.#pending[t]!) if (hit(id)) return { thread: t, site: this.#site[id]! };
    }
    return undefined;
  }
}
