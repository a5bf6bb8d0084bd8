import { bufferName } from "@tirx-ts/core";
import {
  accessRecord,
  type AsyncPort,
  type GlobalAccess,
  type InFlightCopy,
  type SharedAccess,
  type SimContext,
} from "./context.js";
import { checkAsyncWrite, checkGlobalRead } from "./hazards.js";
import type { Placed } from "./memory.js";
import { issuedNotes, waitAdvice } from "./reports.js";

/** The fewest copies issueRun keeps as one run entry. */
const RUN_ENTRY_MIN = 8;

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
export class AsyncUnit implements AsyncPort {
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
  /** The issuing thread's commit batch (`#batch[t]` at issue), for TX6008. */
  #cbatch: Int32Array = new Int32Array(this.#cap);
  /** The copy's issue order in the CTA (the latest of the copies covering a byte clashes last). */
  #issueOrder: Int32Array = new Int32Array(this.#cap);
  #issued = 0;
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
   * of the shadow's pending counts is 0 (each completion undoes its issue's counts).
   */
  #counted = 0;
  /** True when a thread issued or committed since the last reset (the per-thread state changed). */
  #used = true;
  /**
   * Shared bytes [#pendLo, #pendHi) hold every byte whose pending count is nonzero (empty when
   * #counted is 0): a range outside it has none, with no scan.
   */
  #pendLo = 0;
  #pendHi = 0;
  /**
   * Copies issued as runs (issueRun) and not yet in the threads' lists, in issue order; every
   * one is newer than every copy in a list (a thread's copies in issue order are its list, then
   * the runs holding it). Anything other than issueRun and waitLanes first spreads them into
   * the lists (#spread).
   */
  readonly #runs: CopyRun[] = [];
  /** Copies in the threads' lists (#live counts these and the runs' copies). */
  #listed = 0;
  /** The issue's access records (issue): its global read and its shared write. */
  #read: GlobalAccess | undefined;
  #write: SharedAccess | undefined;
  /** Per thread: the stamp of the last waitLanes whose lanes held it. */
  readonly #inLanes: Int32Array;
  #stamp = 0;

  constructor(threads: number) {
    this.#head = new Int32Array(threads).fill(-1);
    this.#tail = new Int32Array(threads).fill(-1);
    this.#commits = new Int32Array(threads);
    this.#batch = new Int32Array(threads);
    this.#inLanes = new Int32Array(threads);
  }

  /**
   * Forget every copy (CTA start): no copy in flight, no group committed, a fresh batch per
   * thread, and the shadow's per-byte pending counts all 0. Costs nothing for a CTA after
   * one that used no cp.async; O(threads) after one that did, plus O(shared bytes) when copies
   * were left counted (a CTA that ended or threw with copies in flight).
   */
  reset(m: SimContext): void {
    if (this.#counted > 0) {
      m.shadow.pendClear();
      this.#counted = 0;
    }
    this.#pendLo = this.#pendHi = 0;
    this.#issued = 0;
    this.#runs.length = 0;
    this.#listed = 0;
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
      this.#cbatch = grow(this.#cbatch);
      this.#issueOrder = grow(this.#issueOrder);
      this.#next = grow(this.#next);
    }
    return this.#top++;
  }

  /**
   * Thread `t` issues a copy of `len` bytes from byte `src` of tensor `tens` to shared byte `dst`
   * (absolute), zero-filling up to `chunk` bytes. Bounds were checked by the caller.
   */
  issue(
    m: SimContext,
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
    this.#spread();
    if (m.opts.track) {
      if (len > 0) {
        const g = (this.#read ??= accessRecord(m, gm, len, site, "reads"));
        g.buf = gm;
        g.addr = src;
        g.n = len;
        g.thread = t;
        g.site = site;
        checkGlobalRead(g);
      }
      const w = (this.#write ??= accessRecord(m, buf, chunk, site, "issues a cp.async to"));
      w.buf = buf;
      w.addr = dst;
      w.n = chunk;
      w.thread = t;
      w.site = site;
      checkAsyncWrite(w);
      // Counted before the bytes, so that a report thrown below still leaves them to reset.
      this.#counted++;
      this.#pending(dst, dst + chunk);
      // The first byte an earlier cp.async still targets is reported (once); every byte counts
      // this copy as pending.
      const clash = m.shadow.pendIssue(dst, chunk);
      if (clash >= 0) {
        const b = clash;
        const sameBatch = this.#latestBatch(b) === this.#batch[t]!;
        const earlier = this.findByDst(b);
        const notes = issuedNotes(m, earlier, "the other cp.async");
        if (sameBatch) {
          m.hazard(
            "TX6008",
            `thread ${m.thread(t)} of CTA ${m.cta()} issues two cp.async in one commit group that both write shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}; their order is undefined`,
            site,
            notes,
          );
        } else {
          m.hazard(
            "TX6001",
            `thread ${m.thread(t)} of CTA ${m.cta()} issues a cp.async to shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}, which an earlier cp.async still targets (not yet waited for)${earlier ? `; ${waitAdvice(m, earlier, t, "this cp.async")}` : ""}`,
            site,
            notes,
          );
        }
      }
      // Per-byte pending reads only once the tensor has them (see exec/pending-reads.ts).
      gm.shadow.pendingRead(src, len, 1);
    }
    this.#add(
      t,
      dst,
      tens,
      src,
      len,
      chunk,
      site,
      this.#commits[t]!,
      this.#batch[t]!,
      this.#issued++,
    );
  }

  /** Thread `t`'s copy joins its list of copies in flight (see issue). */
  #add(
    t: number,
    dst: number,
    tens: number,
    src: number,
    len: number,
    chunk: number,
    site: number,
    group: number,
    batch: number,
    order: number,
  ): void {
    const id = this.#alloc();
    this.#dst[id] = dst;
    this.#tens[id] = tens;
    this.#src[id] = src;
    this.#len[id] = len;
    this.#chunk[id] = chunk;
    this.#site[id] = site;
    this.#group[id] = group;
    this.#cbatch[id] = batch;
    this.#issueOrder[id] = order;
    this.#listed++;
    this.#next[id] = -1;
    const tail = this.#tail[t]!;
    if (tail < 0) this.#head[t] = id;
    else this.#next[tail] = id;
    this.#tail[t] = id;
    this.#live++;
  }

  /** Shared bytes [lo, hi) may now have a nonzero pending count (the pending box grows). */
  #pending(lo: number, hi: number): void {
    if (this.#pendLo >= this.#pendHi) {
      this.#pendLo = lo;
      this.#pendHi = hi;
      return;
    }
    if (lo < this.#pendLo) this.#pendLo = lo;
    if (hi > this.#pendHi) this.#pendHi = hi;
  }

  /** Move the runs' copies into the threads' lists (in issue order, after what they hold). */
  #spread(): void {
    const runs = this.#runs;
    if (runs.length === 0) return;
    for (const r of runs) {
      this.#live -= r.count;
      for (let i = 0; i < r.count; i++) {
        const o = i * r.chunk;
        const t = r.t0 + i;
        this.#add(
          t,
          r.dst + o,
          r.tens,
          r.src + o,
          r.chunk,
          r.chunk,
          r.site,
          r.group,
          r.batch + i,
          r.order + i,
        );
      }
    }
    runs.length = 0;
  }

  /** The commit batch of the latest-issued copy in flight that writes shared byte `b`. */
  #latestBatch(b: number): number {
    this.#spread();
    let best = -1;
    let batch = 0;
    for (let t = 0; t < this.#head.length; t++) {
      for (let id = this.#head[t]!; id >= 0; id = this.#next[id]!) {
        const d = this.#dst[id]!;
        if (b >= d && b < d + this.#chunk[id]! && this.#issueOrder[id]! > best) {
          best = this.#issueOrder[id]!;
          batch = this.#cbatch[id]!;
        }
      }
    }
    return batch;
  }

  /**
   * Threads t0, t0 + 1, ... t0 + count - 1 each issue a whole chunk (`chunk` bytes, all copied):
   * thread t0 + i from byte `src + i·chunk` of tensor `tens` to absolute shared byte
   * `dst + i·chunk`, in that order; bounds and alignment were checked by the caller. As `issue`
   * for each, in one step when nothing could be reported or recorded per thread (#clear);
   * otherwise each thread issues in turn.
   */
  issueRun(
    m: SimContext,
    t0: number,
    count: number,
    dst: number,
    buf: Placed,
    tens: number,
    src: number,
    chunk: number,
    site: number,
  ): void {
    if (!m.opts.rangeChecks || (m.opts.track && !this.#clear(m, tens, dst, count * chunk))) {
      // With range checks off (the reference), or where a check could find something.
      for (let i = 0; i < count; i++) {
        const o = i * chunk;
        this.issue(m, t0 + i, dst + o, buf, tens, src + o, chunk, chunk, site);
      }
      return;
    }
    this.#place(m, t0, count, dst, tens, src, chunk, site);
  }

  /**
   * A tile's repeats issued as runs (see issueRun), repeat r of `dsts.length` from shared byte
   * `dsts[r]` and tensor byte `srcs[r]`, their destinations disjoint: all of them when every one
   * is clear as things stand (issuing one cannot make another report, the bytes being disjoint
   * and fresh), returning true; else nothing, returning false (the caller issues thread by
   * thread, in the threads' order).
   */
  issueRuns(
    m: SimContext,
    t0: number,
    count: number,
    dsts: readonly number[],
    tens: number,
    srcs: readonly number[],
    chunk: number,
    site: number,
  ): boolean {
    if (!m.opts.rangeChecks) return false;
    const n = count * chunk;
    if (m.opts.track) for (const d of dsts) if (!this.#clear(m, tens, d, n)) return false;
    for (let r = 0; r < dsts.length; r++) {
      this.#place(m, t0, count, dsts[r]!, tens, srcs[r]!, chunk, site);
    }
    return true;
  }

  /**
   * Issuing copies to shared bytes [dst, dst + n) from tensor `tens` can report and record
   * nothing per thread: the tensor keeps no read records, the bytes are fresh and no copy in
   * flight targets them, and the CTA has no bulk copy, wgmma operand or atomic record (see
   * checkAsyncWrite).
   */
  #clear(m: SimContext, tens: number, dst: number, n: number): boolean {
    const sh = m.shadow;
    return (
      !m.globals[tens]!.shadow.watched &&
      !m.bulk.active &&
      m.wgmma.tracked === 0 &&
      sh.atomicRecords === 0 &&
      (this.#pendLo >= this.#pendHi || dst + n <= this.#pendLo || this.#pendHi <= dst) &&
      sh.fresh(dst, n)
    );
  }

  /** The issue of a run that is #clear (or untracked): pending counts, then the copies. */
  #place(
    m: SimContext,
    t0: number,
    count: number,
    dst: number,
    tens: number,
    src: number,
    chunk: number,
    site: number,
  ): void {
    const n = count * chunk;
    if (m.opts.track) {
      this.#counted += count;
      this.#pending(dst, dst + n);
      m.shadow.pendSet(dst, n);
      m.globals[tens]!.shadow.pendingRead(src, n, 1);
    }
    this.#used = true;
    const order = this.#issued;
    this.#issued += count;
    // A run is one entry when its threads are in the same group and their batches continue
    // each other (as after a commit by each in turn); a run of a few copies is cheaper in the
    // threads' lists.
    const commits = this.#commits;
    const batch = this.#batch;
    const g0 = commits[t0]!;
    const b0 = batch[t0]!;
    let entry = count >= RUN_ENTRY_MIN;
    for (let i = 1; i < count && entry; i++) {
      entry = commits[t0 + i] === g0 && batch[t0 + i] === b0 + i;
    }
    if (entry) {
      this.#runs.push({ t0, count, dst, tens, src, chunk, site, group: g0, batch: b0, order });
      this.#live += count;
      return;
    }
    this.#spread();
    for (let i = 0; i < count; i++) {
      const o = i * chunk;
      const t = t0 + i;
      this.#add(t, dst + o, tens, src + o, chunk, chunk, site, commits[t]!, batch[t]!, order + i);
    }
  }

  /** `cp.async.commit_group` by thread `t`: its uncommitted copies (maybe none) become a group. */
  commit(t: number): void {
    this.#used = true;
    this.#commits[t]!++;
    this.#batch[t] = this.#nextBatch++;
  }

  /**
   * `cp.async.wait_group keep` by the threads `lanes[0..n)` (with `commit`, each commits first:
   * wait_all). With range checks (SimOptions.rangeChecks) the completions are made at the end:
   * consecutive threads' whole chunks at consecutive bytes move as one range, and their race
   * records are made as one (SharedShadow.landRun); nothing reads the
   * bytes or records in between, so the outcome is that of completing each copy in turn.
   */
  waitLanes(m: SimContext, lanes: Int32Array, n: number, keep: number, commit: boolean): void {
    this.#waiting = m.opts.rangeChecks;
    try {
      if (this.#runs.length > 0) {
        if (this.#waiting && this.#listed === 0) {
          if (commit) for (let i = 0; i < n; i++) this.commit(lanes[i]!);
          if (this.#waitRuns(m, lanes, n, keep)) return;
          commit = false;
        }
        this.#spread();
      }
      for (let i = 0; i < n; i++) {
        if (commit) this.commit(lanes[i]!);
        this.wait(m, lanes[i]!, keep);
      }
    } finally {
      this.#waiting = false;
      this.#completeDone(m);
      this.#recordLanded(m);
    }
  }

  /** Set during waitLanes: completions queue in #done, their records in #landed. */
  #waiting = false;
  /** Copies whose completion waits (waitLanes): their threads and ids, in completion order. */
  #doneT = new Int32Array(256);
  #doneId = new Int32Array(256);
  #nDone = 0;
  /** Landed runs whose records wait: flat `[thread, dst, chunk, site, clock, count, ...]`. */
  #landed = new Int32Array(768);
  /** Values in #landed (6 per run). */
  #nLanded = 0;
  #order = new Int32Array(0);

  /**
   * Queue the records of `count` landed chunks of `chunk` bytes (see #recordLanded): thread
   * t + i's at shared byte dst + i·chunk, written at `site` as of clock `now`.
   */
  #land(t: number, dst: number, chunk: number, site: number, now: number, count: number): void {
    let q = this.#landed;
    const j = this.#nLanded;
    if (j + 6 > q.length) {
      q = new Int32Array(q.length * 2);
      q.set(this.#landed);
      this.#landed = q;
    }
    q[j] = t;
    q[j + 1] = dst;
    q[j + 2] = chunk;
    q[j + 3] = site;
    q[j + 4] = now;
    q[j + 5] = count;
    this.#nLanded = j + 6;
  }

  /**
   * Record the queued landed runs: sorted by shared byte, runs of consecutive threads' chunks
   * (same size, site and clock) at consecutive bytes as one range each, the others chunk by
   * chunk. Overlapping chunks (reported at their issue, TX6001/TX6008) are recorded chunk by
   * chunk in landing order, so the last one's records stay, as without queueing.
   */
  #recordLanded(m: SimContext): void {
    const q = this.#landed;
    const len = this.#nLanded;
    const k = len / 6;
    if (k === 0) return;
    this.#nLanded = 0;
    const each = (j: number): void => {
      const chunk = q[j + 2]!;
      for (let i = 0; i < q[j + 5]!; i++) {
        m.shadow.recordLanded(q[j]! + i, q[j + 3]!, q[j + 1]! + i * chunk, chunk, q[j + 4]!);
      }
    };
    // Landing order is usually by byte already (a thread's chunk follows the one before it).
    const order = this.#order.length >= k ? this.#order : (this.#order = new Int32Array(k * 2));
    let sorted = true;
    for (let i = 0; i < k; i++) {
      order[i] = i * 6;
      if (i > 0 && q[i * 6 + 1]! < q[i * 6 - 5]!) sorted = false;
    }
    if (!sorted) order.subarray(0, k).sort((x, y) => q[x + 1]! - q[y + 1]!);
    const end = (j: number): number => q[j + 1]! + q[j + 2]! * q[j + 5]!;
    let overlap = false;
    for (let i = 1; i < k && !overlap; i++) overlap = end(order[i - 1]!) > q[order[i]! + 1]!;
    if (overlap) {
      for (let j = 0; j < len; j += 6) each(j);
      return;
    }
    let from = 0;
    let threads = q[order[0]! + 5]!;
    for (let i = 1; i <= k; i++) {
      if (i < k) {
        const p = order[i - 1]!;
        const c = order[i]!;
        if (
          q[c]! === q[p]! + q[p + 5]! &&
          q[c + 1]! === end(p) &&
          q[c + 2]! === q[p + 2]! &&
          q[c + 3]! === q[p + 3]! &&
          q[c + 4]! === q[p + 4]!
        ) {
          threads += q[c + 5]!;
          continue;
        }
      }
      const f = order[from]!;
      const chunk = q[f + 2]!;
      const sh = Math.log2(chunk);
      const whole =
        Number.isInteger(sh) &&
        m.shadow.landRun(
          q[f + 3]!,
          q[f]!,
          q[f + 1]!,
          threads * chunk,
          sh,
          q[f + 4]!,
          this.#live > 0,
        );
      if (!whole) for (let j = from; j < i; j++) each(order[j]!);
      from = i;
      if (i < k) threads = q[order[i]! + 5]!;
    }
  }

  /**
   * waitLanes over the runs alone (no copy is in a list, the lanes have committed): each run
   * whose threads all wait for it (in `lanes`, its group among those completed) completes as
   * one; one whose threads all do not stays. Returns false, changing nothing, when some run is
   * waited for by part of its threads, or by threads whose clocks differ (its chunks land at
   * each thread's own clock; the caller spreads the runs and completes copy by copy).
   */
  #waitRuns(m: SimContext, lanes: Int32Array, n: number, keep: number): boolean {
    const stamp = ++this.#stamp;
    const inLanes = this.#inLanes;
    for (let i = 0; i < n; i++) inLanes[lanes[i]!] = stamp;
    const commits = this.#commits;
    const runs = this.#runs;
    let done = 0;
    const clock = m.clocks.clock;
    for (const r of runs) {
      let hit = 0;
      let oneClock = true;
      const now = clock[r.t0]!;
      for (let t = r.t0, e = r.t0 + r.count; t < e; t++) {
        if (inLanes[t] === stamp && r.group <= commits[t]! - 1 - keep) hit++;
        if (clock[t] !== now) oneClock = false;
      }
      // Completed as one, the run's chunks land at one clock: its threads' must agree.
      if (hit !== 0 && (hit !== r.count || !oneClock)) return false;
      if (hit !== 0) done++;
    }
    if (done === 0) return true;
    let k = 0;
    for (const r of runs) {
      const t = r.t0;
      if (inLanes[t] === stamp && r.group <= commits[t]! - 1 - keep) {
        this.#live -= r.count;
        this.#completeRange(
          m,
          t,
          r.count,
          r.dst,
          r.src,
          r.chunk * r.count,
          r.chunk,
          r.tens,
          r.site,
        );
      } else runs[k++] = r;
    }
    runs.length = k;
    return true;
  }

  /** `cp.async.wait_group n` by thread `t`: complete all but its `n` most recent groups. */
  wait(m: SimContext, t: number, n: number): void {
    this.#spread();
    // Committed groups are numbered 0 .. commits - 1; complete those up to commits - 1 - n.
    const last = this.#commits[t]! - 1 - n;
    let id = this.#head[t]!;
    while (id >= 0 && this.#group[id]! <= last) {
      const next = this.#next[id]!;
      if (this.#waiting) this.#defer(t, id);
      else this.#complete(m, t, id, 1);
      id = next;
    }
    this.#head[t] = id;
    if (id < 0) this.#tail[t] = -1;
  }

  /** Queue thread `t`'s copy `id` for completion at the end of waitLanes. */
  #defer(t: number, id: number): void {
    const k = this.#nDone;
    if (k === this.#doneT.length) {
      const grow = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.#doneT = grow(this.#doneT);
      this.#doneId = grow(this.#doneId);
    }
    this.#doneT[k] = t;
    this.#doneId[k] = id;
    this.#nDone = k + 1;
  }

  /**
   * Complete the queued copies in order: each run of consecutive threads' whole chunks at
   * consecutive bytes of one tensor and shared memory (one site, one clock) as one.
   */
  #completeDone(m: SimContext): void {
    const k = this.#nDone;
    if (k === 0) return;
    this.#nDone = 0;
    const T = this.#doneT;
    const I = this.#doneId;
    const clock = m.clocks.clock;
    for (let i = 0; i < k;) {
      const t0 = T[i]!;
      const id0 = I[i]!;
      const chunk = this.#chunk[id0]!;
      let j = i + 1;
      if (this.#len[id0] === chunk) {
        const dst = this.#dst[id0]!;
        const src = this.#src[id0]!;
        const tens = this.#tens[id0]!;
        const site = this.#site[id0]!;
        const now = clock[t0]!;
        for (; j < k; j++) {
          const id = I[j]!;
          const t = T[j]!;
          const o = (j - i) * chunk;
          if (
            t !== t0 + (j - i) ||
            this.#dst[id] !== dst + o ||
            this.#src[id] !== src + o ||
            this.#len[id] !== chunk ||
            this.#chunk[id] !== chunk ||
            this.#tens[id] !== tens ||
            this.#site[id] !== site ||
            clock[t] !== now
          ) {
            break;
          }
        }
      }
      this.#complete(m, t0, id0, j - i);
      for (let x = i + 1; x < j; x++) this.#release(I[x]!);
      i = j;
    }
  }

  // Int32 views (word moves) of shared memory and of the last tensor copied from, and the bytes
  // they view; undefined for a tensor whose bytes do not start on a 4-byte boundary.
  #shBytes: Uint8Array | undefined = undefined;
  #sh32: Int32Array = EMPTY_WORDS;
  #gBytes: Uint8Array | undefined = undefined;
  #g32: Int32Array | undefined = undefined;

  /**
   * Complete copy `id` of thread `t` and, with `count` > 1, the copies of threads t + 1, ... that
   * continue it (whole chunks at the next bytes on both sides; the caller releases their ids).
   */
  #complete(m: SimContext, t: number, id: number, count: number): void {
    const chunk = this.#chunk[id]!;
    const len = count === 1 ? this.#len[id]! : count * chunk;
    const tens = this.#tens[id]!;
    this.#completeRange(
      m,
      t,
      count,
      this.#dst[id]!,
      this.#src[id]!,
      len,
      chunk,
      tens,
      this.#site[id]!,
    );
    this.#release(id);
  }

  /**
   * The completion of `count` copies of `chunk` bytes (at `site`): thread t + i's lands at shared
   * byte dst + i·chunk; `len` bytes from byte `src` of tensor `tens` in all (all chunks whole
   * when count > 1, else the first `len` bytes of the one chunk and zeros after).
   */
  #completeRange(
    m: SimContext,
    t: number,
    count: number,
    dst: number,
    src: number,
    len: number,
    chunk: number,
    tens: number,
    site: number,
  ): void {
    const bytes = count * chunk;
    const gm = m.globals[tens]!;
    const sh = m.shared;
    const g = gm.bytes;
    if (count > 1) {
      sh.set(g.subarray(src, src + len), dst);
    } else {
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
        for (let i = dst >> 2, j = src >> 2, e = (dst + len) >> 2; i < e; i++, j++) {
          s32[i] = g32[j]!;
        }
      } else {
        for (let i = 0; i < len; i++) sh[dst + i] = g[src + i]!;
      }
      if (len < chunk) sh.fill(0, dst + len, dst + chunk);
    }
    if (m.opts.track) {
      // The write becomes thread t's own write as of its wait (cp.async is a generic-proxy write).
      this.#counted -= count;
      // No copy left counted: every other byte is 0 already.
      const last = this.#counted === 0;
      m.shadow.pendDone(dst, bytes, last);
      if (last) this.#pendLo = this.#pendHi = 0;
      // Until the CTA issues a bulk copy every guard is 0 already (BulkUnit.active).
      if (m.bulk.active) m.shadow.clearGuards(dst, bytes);
      gm.shadow.pendingRead(src, len, -1);
      const now = m.clocks.clock[t]!;
      if (this.#waiting || count > 1) this.#land(t, dst, chunk, site, now, count);
      else m.shadow.recordLanded(t, site, dst, chunk, now);
    }
  }

  /** Copy `id` is no longer in flight: its id is free again. */
  #release(id: number): void {
    this.#next[id] = this.#free;
    this.#free = id;
    this.#live--;
    this.#listed--;
  }

  /** TX6017 for each thread that has cp.async copies not waited for (CTA exit). */
  reportPending(m: SimContext): void {
    this.#spread();
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
  dropAll(m: SimContext): void {
    this.#spread();
    // The word views hold tensors: let them go with the launch (CTA end is the cheap place).
    this.#shBytes = this.#gBytes = this.#g32 = undefined;
    this.#sh32 = EMPTY_WORDS;
    if (this.#live === 0) return;
    for (let t = 0; t < this.#head.length; t++) {
      for (let id = this.#head[t]!; id >= 0; id = this.#next[id]!) {
        if (m.opts.track) {
          m.globals[this.#tens[id]!]?.shadow.pendingRead(this.#src[id]!, this.#len[id]!, -1);
        }
      }
    }
    this.#head.fill(-1);
    this.#tail.fill(-1);
    this.#free = -1;
    this.#top = 0;
    this.#live = 0;
    this.#listed = 0;
  }

  /** Copies in flight in the CTA. */
  get live(): number {
    return this.#live;
  }

  /** Call `f(tens, src, len)` for every copy in flight (tensor index, source byte, bytes read). */
  forEachRead(f: (tens: number, src: number, len: number) => void): void {
    this.#spread();
    if (this.#live === 0) return;
    for (let t = 0; t < this.#head.length; t++) {
      for (let id = this.#head[t]!; id >= 0; id = this.#next[id]!) {
        f(this.#tens[id]!, this.#src[id]!, this.#len[id]!);
      }
    }
  }

  /** An in-flight copy writing shared byte `b`, for notes. */
  findByDst(b: number): InFlightCopy | undefined {
    return this.#find((id) => b >= this.#dst[id]! && b < this.#dst[id]! + this.#chunk[id]!);
  }

  /** An in-flight copy reading byte `b` of tensor `tens`, for notes. */
  findBySrc(tens: number, b: number): InFlightCopy | undefined {
    return this.#find(
      (id) => this.#tens[id] === tens && b >= this.#src[id]! && b < this.#src[id]! + this.#len[id]!,
    );
  }

  /**
   * The in-flight copy `hit` picks: its thread, site, whether it was committed to a group
   * (cp.async.commit_group; an uncommitted copy is one no wait_group can complete), and how many
   * of its thread's groups were committed after the one holding it.
   */
  #find(hit: (id: number) => boolean): InFlightCopy | undefined {
    this.#spread();
    for (let t = 0; t < this.#head.length; t++) {
      for (let id = this.#head[t]!; id >= 0; id = this.#next[id]!) {
        if (hit(id)) {
          const committed = this.#committed(t, id);
          const later = committed ? this.#commits[t]! - 1 - this.#group[id]! : 0;
          return { thread: t, site: this.#site[id]!, committed, later };
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

/** Copies of one issueRun kept as one entry (AsyncUnit's runs): thread t0 + i's chunk i. */
interface CopyRun {
  readonly t0: number;
  readonly count: number;
  /** Absolute shared byte of chunk 0, byte of tensor `tens` it reads, chunk bytes, site. */
  readonly dst: number;
  readonly tens: number;
  readonly src: number;
  readonly chunk: number;
  readonly site: number;
  /** The threads' group (the same for all) and thread t0's batch (thread t0 + i's is batch + i). */
  readonly group: number;
  readonly batch: number;
  /** Issue order of chunk 0 (chunk i's is order + i). */
  readonly order: number;
}
