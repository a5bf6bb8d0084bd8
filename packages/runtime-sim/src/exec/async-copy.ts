import { THREAD_BITS, type Machine, type Placed } from "./machine.js";
import { checkAsyncWrite, checkGlobalRead, issuedNotes } from "./hazards.js";
import { recordSharedWriteRun } from "./access-runs.js";

/**
 * The race records of a landed cp.async chunk, shared bytes [dst, dst + chunk) written by thread
 * `t` at `site` as of clock `now` (RaceTracker.recordWrite's records, in one loop over the
 * chunk's bytes, materialised first so any lazy range is cut around them).
 */
function recordLanded(
  m: Machine,
  t: number,
  dst: number,
  chunk: number,
  site: number,
  now: number,
): void {
  const races = m.races;
  races.materialise(dst, chunk);
  const w = (site << THREAD_BITS) | t;
  const { wr, wc, r1, r2 } = races;
  races.touch(dst, dst + chunk);
  for (let i = dst, e = dst + chunk; i < e; i++) {
    wr[i] = w;
    wc[i] = now;
    r1[i] = -1;
    r2[i] = -1;
  }
}

/** The word view of no bytes (AsyncUnit's cache when empty). */
const EMPTY_WORDS = new Int32Array(0);

/** An Int32Array over `b` (whose byteOffset is 4-aligned); a trailing partial word is left out. */
function wordsOf(b: Uint8Array): Int32Array {
  return new Int32Array(b.buffer, b.byteOffset, b.byteLength >> 2);
}

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
  // Copies in flight, struct of arrays; ids are recycled through a free list (`#next` links).
  #dst: Int32Array = new Int32Array(this.#cap);
  #tens: Int32Array = new Int32Array(this.#cap);
  #src: Int32Array = new Int32Array(this.#cap);
  #len: Int32Array = new Int32Array(this.#cap);
  #chunk: Int32Array = new Int32Array(this.#cap);
  #site: Int32Array = new Int32Array(this.#cap);
  /** The thread's group number the copy belongs to (its commit count when it was issued). */
  #group: Int32Array = new Int32Array(this.#cap);
  /** Next copy of the same thread in issue order, or next free id; -1 ends a list. */
  #next: Int32Array = new Int32Array(this.#cap);
  #top = 0;
  #free = -1;
  /** Per thread: first and last of its issued, uncompleted copies (a list in issue order), -1 when none. */
  readonly #head: Int32Array;
  readonly #tail: Int32Array;
  /** Per thread: commit_group count since CTA start (the number of the uncommitted group). */
  readonly #commits: Int32Array;
  /** Per thread: id of its current uncommitted batch (unique within a launch, for TX6008). */
  readonly #batch: Int32Array;
  #nextBatch = 1;
  /** Copies in flight in the CTA. */
  #live = 0;
  /**
   * Copies issued with tracking on and not completed since the last reset: while 0, every byte
   * of the Machine's shPending is 0 (each completion undoes its issue's counts).
   */
  #counted = 0;
  /** True when a thread issued or committed since the last reset (the per-thread state changed). */
  #used = true;

  constructor(threads: number) {
    this.#head = new Int32Array(threads).fill(-1);
    this.#tail = new Int32Array(threads).fill(-1);
    this.#commits = new Int32Array(threads);
    this.#batch = new Int32Array(threads);
  }

  /**
   * Forget every copy (CTA start): no copy in flight, no group committed, a fresh batch per
   * thread, and `m`'s per-byte pending counts (shPending) all 0. Costs nothing for a CTA after
   * one that used no cp.async; O(threads) after one that did, plus O(shared bytes) when copies
   * were left counted (a CTA that ended or threw with copies in flight).
   */
  reset(m: Machine): void {
    if (this.#counted > 0) {
      m.shPending.fill(0);
      this.#counted = 0;
    }
    if (!this.#used) return;
    this.#used = false;
    this.#head.fill(-1);
    this.#tail.fill(-1);
    this.#commits.fill(0);
    const b = this.#batch;
    for (let t = 0; t < b.length; t++) b[t] = this.#nextBatch++;
    this.#top = 0;
    this.#free = -1;
    this.#live = 0;
  }

  #alloc(): number {
    const id = this.#free;
    if (id >= 0) {
      this.#free = this.#next[id]!;
      return id;
    }
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
      this.#group = grow(this.#group);
      this.#next = grow(this.#next);
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
    this.#used = true;
    if (m.track) {
      if (len > 0) checkGlobalRead(m, gm, src, len, t, site);
      checkAsyncWrite(m, buf, dst, chunk, t, site, "issues a cp.async to");
      m.races.materialise(dst, chunk);
      const pend = m.shPending;
      const batch = this.#batch[t]!;
      const sb = m.shBatch;
      // Counted before the bytes, so that a report thrown below still leaves them to reset.
      this.#counted++;
      // One pass: the first byte an earlier cp.async still targets is reported (once), and every
      // byte counts this copy as pending; four bytes a step (chunks are 4, 8 or 16 bytes).
      let clash = -1;
      let sameBatch = false;
      const e = dst + chunk;
      let b = dst;
      for (; b + 4 <= e; b += 4) {
        const p0 = pend[b]!;
        const p1 = pend[b + 1]!;
        const p2 = pend[b + 2]!;
        const p3 = pend[b + 3]!;
        if (clash < 0 && (p0 | p1 | p2 | p3) !== 0) {
          clash = b + (p0 !== 0 ? 0 : p1 !== 0 ? 1 : p2 !== 0 ? 2 : 3);
          sameBatch = sb[clash] === batch;
        }
        pend[b] = p0 + 1;
        pend[b + 1] = p1 + 1;
        pend[b + 2] = p2 + 1;
        pend[b + 3] = p3 + 1;
        sb[b] = batch;
        sb[b + 1] = batch;
        sb[b + 2] = batch;
        sb[b + 3] = batch;
      }
      for (; b < e; b++) {
        if (clash < 0 && pend[b] !== 0) {
          clash = b;
          sameBatch = sb[b] === batch;
        }
        pend[b]!++;
        sb[b] = batch;
      }
      if (clash >= 0) {
        const b = clash;
        const notes = issuedNotes(m, this.findByDst(b), "the other cp.async");
        if (sameBatch) {
          m.hazard(
            "TX6008",
            `thread ${m.thread(t)} of CTA ${m.cta()} issues two cp.async in one commit group that both write shared "${buf.name}" byte ${m.ctaLocal(b) - buf.base}; their order is undefined`,
            site,
            notes,
          );
        } else {
          m.hazard(
            "TX6001",
            `thread ${m.thread(t)} of CTA ${m.cta()} issues a cp.async to shared "${buf.name}" byte ${m.ctaLocal(b) - buf.base}, which an earlier cp.async still targets (not yet waited for)`,
            site,
            notes,
          );
        }
      }
      // Per-byte pending reads only once the tensor has them (see pendingReadsOf).
      const pr = gm.meta.pendingReads;
      if (pr) for (let i = src, e = src + len; i < e; i++) pr[i]!++;
    }
    const id = this.#alloc();
    this.#dst[id] = dst;
    this.#tens[id] = tens;
    this.#src[id] = src;
    this.#len[id] = len;
    this.#chunk[id] = chunk;
    this.#site[id] = site;
    this.#group[id] = this.#commits[t]!;
    this.#next[id] = -1;
    const tail = this.#tail[t]!;
    if (tail < 0) this.#head[t] = id;
    else this.#next[tail] = id;
    this.#tail[t] = id;
    this.#live++;
  }

  /** `cp.async.commit_group` by thread `t`: its uncommitted copies (maybe none) become a group. */
  commit(t: number): void {
    this.#used = true;
    this.#commits[t]!++;
    this.#batch[t] = this.#nextBatch++;
  }

  /**
   * `cp.async.wait_group keep` by the threads `lanes[0..n)` (with `commit`, each commits first:
   * wait_all). The landed chunks' race records are made at the end, consecutive threads' chunks
   * at consecutive bytes as one range (exec/access-runs.ts, recordSharedWriteRun).
   */
  waitLanes(m: Machine, lanes: Int32Array, n: number, keep: number, commit: boolean): void {
    this.#waiting = m.batch.enabled;
    try {
      for (let i = 0; i < n; i++) {
        if (commit) this.commit(lanes[i]!);
        this.wait(m, lanes[i]!, keep);
      }
    } finally {
      this.#waiting = false;
      this.#recordLanded(m);
    }
  }

  /** Set during waitLanes: completions queue their records in #landed. */
  #waiting = false;
  /** Landed chunks whose records wait: flat `[thread, dst, chunk, site, clock, ...]`. */
  #landed = new Int32Array(640);
  /** Values in #landed (5 per chunk). */
  #nLanded = 0;
  #order = new Int32Array(0);

  /** Queue a landed chunk's records (see #recordLanded). */
  #land(t: number, dst: number, chunk: number, site: number, now: number): void {
    let q = this.#landed;
    const j = this.#nLanded;
    if (j + 5 > q.length) {
      q = new Int32Array(q.length * 2);
      q.set(this.#landed);
      this.#landed = q;
    }
    q[j] = t;
    q[j + 1] = dst;
    q[j + 2] = chunk;
    q[j + 3] = site;
    q[j + 4] = now;
    this.#nLanded = j + 5;
  }

  /**
   * Record the queued landed chunks: sorted by shared byte, runs of consecutive threads'
   * chunks (same size, site and clock) at consecutive bytes as one range each, the others chunk
   * by chunk. Overlapping chunks (reported at their issue, TX6001/TX6008) are recorded chunk by
   * chunk in landing order, so the last one's records stay, as without queueing.
   */
  #recordLanded(m: Machine): void {
    const q = this.#landed;
    const len = this.#nLanded;
    const k = len / 5;
    if (k === 0) return;
    this.#nLanded = 0;
    // Landing order is usually by byte already (a thread's chunk follows the one before it).
    const order = this.#order.length >= k ? this.#order : (this.#order = new Int32Array(k * 2));
    let sorted = true;
    for (let i = 0; i < k; i++) {
      order[i] = i * 5;
      if (i > 0 && q[i * 5 + 1]! < q[i * 5 - 4]!) sorted = false;
    }
    if (!sorted) order.subarray(0, k).sort((x, y) => q[x + 1]! - q[y + 1]!);
    let overlap = false;
    for (let i = 1; i < k && !overlap; i++) {
      overlap = q[order[i - 1]! + 1]! + q[order[i - 1]! + 2]! > q[order[i]! + 1]!;
    }
    if (overlap) {
      for (let j = 0; j < len; j += 5)
        recordLanded(m, q[j]!, q[j + 1]!, q[j + 2]!, q[j + 3]!, q[j + 4]!);
      return;
    }
    let from = 0;
    for (let i = 1; i <= k; i++) {
      if (i < k) {
        const p = order[i - 1]!;
        const c = order[i]!;
        if (
          q[c]! === q[p]! + 1 &&
          q[c + 1]! === q[p + 1]! + q[p + 2]! &&
          q[c + 2]! === q[p + 2]! &&
          q[c + 3]! === q[p + 3]! &&
          q[c + 4]! === q[p + 4]!
        )
          continue;
      }
      const f = order[from]!;
      const chunk = q[f + 2]!;
      const sh = Math.log2(chunk);
      const whole =
        Number.isInteger(sh) &&
        recordSharedWriteRun(
          m,
          q[f + 3]!,
          q[f]!,
          q[f + 1]!,
          (i - from) * chunk,
          sh,
          q[f + 4]!,
          this.#live > 0,
        );
      if (!whole) {
        for (let j = from; j < i; j++) {
          const o = order[j]!;
          recordLanded(m, q[o]!, q[o + 1]!, q[o + 2]!, q[o + 3]!, q[o + 4]!);
        }
      }
      from = i;
    }
  }

  /** `cp.async.wait_group n` by thread `t`: complete all but its `n` most recent groups. */
  wait(m: Machine, t: number, n: number): void {
    // Committed groups are numbered 0 .. commits - 1; complete those up to commits - 1 - n.
    const last = this.#commits[t]! - 1 - n;
    let id = this.#head[t]!;
    while (id >= 0 && this.#group[id]! <= last) {
      const next = this.#next[id]!;
      this.#complete(m, t, id);
      id = next;
    }
    this.#head[t] = id;
    if (id < 0) this.#tail[t] = -1;
  }

  // Int32 views (word moves) of shared memory and of the last tensor copied from, and the bytes
  // they view; undefined for a tensor whose bytes do not start on a 4-byte boundary.
  #shBytes: Uint8Array | undefined = undefined;
  #sh32: Int32Array = EMPTY_WORDS;
  #gBytes: Uint8Array | undefined = undefined;
  #g32: Int32Array | undefined = undefined;

  #complete(m: Machine, t: number, id: number): void {
    const dst = this.#dst[id]!;
    const len = this.#len[id]!;
    const chunk = this.#chunk[id]!;
    const gm = m.globals[this.#tens[id]!]!;
    const src = this.#src[id]!;
    const sh = m.shared;
    const g = gm.bytes;
    if (g !== this.#gBytes) {
      this.#gBytes = g;
      this.#g32 = (g.byteOffset & 3) === 0 ? wordsOf(g) : undefined;
    }
    const g32 = this.#g32;
    if (g32 !== undefined && ((dst | src | len) & 3) === 0) {
      // Whole aligned words (the usual 4-, 8- and 16-byte chunks): a quarter of the moves.
      // Shared memory is its own buffer (offset 0).
      if (sh !== this.#shBytes) {
        this.#shBytes = sh;
        this.#sh32 = wordsOf(sh);
      }
      const s32 = this.#sh32;
      for (let i = dst >> 2, j = src >> 2, e = (dst + len) >> 2; i < e; i++, j++) s32[i] = g32[j]!;
    } else {
      for (let i = 0; i < len; i++) sh[dst + i] = g[src + i]!;
    }
    if (len < chunk) sh.fill(0, dst + len, dst + chunk);
    if (m.track) {
      // The write becomes thread t's own write as of its wait (cp.async is a generic-proxy write).
      const pend = m.shPending;
      this.#counted--;
      for (let i = dst, e = dst + chunk; i < e; i++) pend[i]!--;
      // Until the CTA issues a bulk copy every guard is 0 already (BulkUnit.active).
      if (m.bulk.active) m.shBulk.fill(0, dst, dst + chunk);
      const pr = gm.meta.pendingReads;
      if (pr) for (let i = src, e = src + len; i < e; i++) pr[i]!--;
      const site = this.#site[id]!;
      const now = m.races.clock[t]!;
      if (this.#waiting) this.#land(t, dst, chunk, site, now);
      else recordLanded(m, t, dst, chunk, site, now);
    }
    this.#next[id] = this.#free;
    this.#free = id;
    this.#live--;
  }

  /** TX6017 for each thread that has cp.async copies not waited for (CTA exit). */
  reportPending(m: Machine): void {
    // No copy in flight: no thread has any (skips the per-thread scan).
    if (this.#live === 0 || m.bars.deadlocked) return;
    for (let t = 0; t < this.#head.length; t++) {
      const first = this.#head[t]!;
      if (first < 0) continue;
      let count = 0;
      for (let id = first; id >= 0; id = this.#next[id]!) count++;
      m.hazard(
        "TX6017",
        `thread ${m.thread(t)} of CTA ${m.cta()} exits with ${count} cp.async copies ${this.#waitAdvice(t, first)}`,
        this.#site[first]!,
      );
    }
  }

  /** Drop every copy still in flight (CTA end, or a hazard thrown mid-launch). */
  dropAll(m: Machine): void {
    // The word views hold tensors: let them go with the launch (CTA end is the cheap place).
    this.#shBytes = this.#gBytes = this.#g32 = undefined;
    this.#sh32 = EMPTY_WORDS;
    if (this.#live === 0) return;
    for (let t = 0; t < this.#head.length; t++) {
      for (let id = this.#head[t]!; id >= 0; id = this.#next[id]!) {
        const len = this.#len[id]!;
        const pr = m.globals[this.#tens[id]!]?.meta.pendingReads;
        if (pr && m.track) for (let i = 0; i < len; i++) pr[this.#src[id]! + i]!--;
      }
    }
    this.#head.fill(-1);
    this.#tail.fill(-1);
    this.#free = -1;
    this.#top = 0;
    this.#live = 0;
  }

  /** Copies in flight in the CTA. */
  get live(): number {
    return this.#live;
  }

  /** Call `f(tens, src, len)` for every copy in flight (tensor index, source byte, bytes read). */
  forEachRead(f: (tens: number, src: number, len: number) => void): void {
    if (this.#live === 0) return;
    for (let t = 0; t < this.#head.length; t++) {
      for (let id = this.#head[t]!; id >= 0; id = this.#next[id]!) {
        f(this.#tens[id]!, this.#src[id]!, this.#len[id]!);
      }
    }
  }

  /** An in-flight copy writing shared byte `b`, for notes. */
  findByDst(b: number): { thread: number; site: number; committed: boolean } | undefined {
    return this.#find((id) => b >= this.#dst[id]! && b < this.#dst[id]! + this.#chunk[id]!);
  }

  /** An in-flight copy reading byte `b` of tensor `tens`, for notes. */
  findBySrc(
    tens: number,
    b: number,
  ): { thread: number; site: number; committed: boolean } | undefined {
    return this.#find(
      (id) => this.#tens[id] === tens && b >= this.#src[id]! && b < this.#src[id]! + this.#len[id]!,
    );
  }

  /**
   * The in-flight copy `hit` picks: its thread, site, and whether it was committed to a group
   * (cp.async.commit_group); an uncommitted copy is one no wait_group can complete.
   */
  #find(
    hit: (id: number) => boolean,
  ): { thread: number; site: number; committed: boolean } | undefined {
    for (let t = 0; t < this.#head.length; t++) {
      for (let id = this.#head[t]!; id >= 0; id = this.#next[id]!) {
        if (hit(id)) {
          return { thread: t, site: this.#site[id]!, committed: this.#committed(t, id) };
        }
      }
    }
    return undefined;
  }

  #committed(t: number, id: number): boolean {
    return this.#group[id]! < this.#commits[t]!;
  }

  /** The advice for thread `t`'s in-flight copies starting at `first`: wait, or commit first. */
  #waitAdvice(t: number, first: number): string {
    for (let id = first; id >= 0; id = this.#next[id]!) {
      if (!this.#committed(t, id)) {
        return "never committed to a group (cp.async.commit_group), so no cp.async.wait_group waits for them";
      }
    }
    return "not waited for (cp.async.wait_group / wait_all)";
  }
}
