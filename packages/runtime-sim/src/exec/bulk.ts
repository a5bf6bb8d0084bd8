import { bufferName } from "@tirx-ts/core";
import {
  accessRecord,
  type BulkPort,
  setAccess,
  type GlobalAccess,
  type SharedAccess,
  type SimContext,
} from "./context.js";
import { THREAD_BITS, THREAD_MASK } from "./packed.js";
import {
  checkAsyncWrite,
  checkGlobalBulkWrite,
  checkGlobalRead,
  checkReads,
  checkSharedRead,
} from "./hazards.js";
import type { BulkReducer } from "./bulk-reduce.js";
import type { Mbarriers } from "./mbarrier.js";
import type { BarBuffer, GlobalMem, Placed } from "./memory.js";
import { firstPendingRead } from "./pending-reads.js";
import { globalAt, globalPendingRead, issuedNotes, reportRace } from "./reports.js";

/**
 * Hopper bulk copies (PTX ISA: "cp.async.bulk", "cp.async.bulk.commit_group",
 * "cp.async.bulk.wait_group") of the CTA that is running; their mbarriers are `Mbarriers`.
 *
 * Timing model (deterministic): a global → shared bulk copy is "in flight" from its issue until
 * every thread of the CTA is blocked (every runnable group of threads is in an mbarrier wait loop
 * whose try_wait failed, and no mbarrier changed in that scheduling round). Then every copy in
 * flight lands, oldest first: its bytes are written to shared memory and complete_tx(chunk) is
 * performed on its mbarrier. So a copy is in flight as long as possible (early reads are
 * caught), and a wait that a copy can satisfy always gets it. If nothing is in flight either, the
 * CTA is deadlocked: TX6006 at the wait loop, and the CTA is abandoned.
 *
 * Shared → global copies are found by interval (a scan of the pending copies, which are few),
 * not by per-byte counts: a launch's shadow work per copy does not grow with its bytes beyond a
 * few native fills.
 *
 * Landed bytes stay guarded: a thread may access them only once it observed the completion of
 * the mbarrier phase the copy completed in: by a try_wait that returned true, by a cta_sync after
 * a thread that did, or transitively through another mbarrier (what a thread observed travels
 * with its arrivals to the threads that observe that phase's completion, like a vector clock:
 * a producer that waited on the "empty" barrier the consumers arrived on after they waited on
 * "full" may refill the stage); otherwise TX6007. An ordinary write by an observing thread
 * ends the guard (the usual cta_sync rules apply from then on).
 *
 * Shared → global bulk copies are tracked per issuing thread in bulk async-groups (like
 * cp.async groups): `commit_group` closes the thread's uncommitted copies into a group;
 * `wait_group.read n` has all but the n most recent groups read their source (the bytes are
 * taken at that moment; before that, a write to them is TX6007); `wait_group n` also writes their
 * destination (before that, a read or write of those global bytes is TX6007). Copies still
 * pending at CTA end are completed then. `pred` false issues nothing.
 *
 * A bulk reduction (PTX ISA, "cp.reduce.async.bulk") is a shared → global copy with a reducer:
 * it reads its source as a copy does (same hazards), and where the copy would overwrite the
 * destination, the reduction combines each element with it (BulkReducer), at the same moment
 * (the wait_group that completes its group, or CTA end). So the simulator applies a CTA's
 * reductions in the order their groups complete, and CTAs in the order they run; on the GPU the
 * order among CTAs is unspecified, so float sums may differ there in the last bits. Towards
 * other accesses the reduction is a set of relaxed gpu-scope atomics of its elements (PTX ISA,
 * "Data races": morally strong): other reductions and `atom`/`red` of the bytes never race with
 * it, pending or completed; a plain load or store of them that happens-before does not order
 * with it does (TX6003/TX6013/TX6014), and so does a plain access by a thread of this CTA while
 * it is pending (TX6007).
 *
 * A shared::cta → shared::cluster copy (PTX ISA, cp.async.bulk; `issueDsmem`) is a global →
 * shared copy whose source is the issuing CTA's shared memory: the same record, in flight until
 * every thread is blocked, landing in the destination CTA's window as an async-proxy write and
 * completing its bytes on that CTA's mbarrier, its bytes guarded until a thread observes that
 * phase. Its source is read by the async proxy at issue (the checks of a shared → global copy's
 * source: races, unwritten bytes, TX6015 without fence.proxy.async) and is taken when it lands:
 * a write to the source while it is in flight is TX6007.
 */
export class BulkUnit implements BulkPort {
  readonly threads: number;
  readonly #bars: Mbarriers;

  /** Global → shared copies (one record per chunk), landed or in flight; id = index. */
  readonly #g2s: G2sCopy[] = [];
  /** Ids of copies in flight, in issue order. */
  #inflight: number[] = [];

  // Shared → global copies, per thread.
  readonly #s2g: S2gCopy[][];
  /** Per thread: for each committed group not yet fully waited for, how many `#s2g` entries end it. */
  readonly #ends: number[][];
  /** Per thread: how many of its `#s2g` entries (oldest first) have read their source. */
  readonly #read: Int32Array;
  /**
   * True once the running CTA issued a bulk copy: until then no shared byte is guarded (the
   * shadow's guards all 0) and the per-thread lists are empty, so CTA start and end skip them.
   */
  active = false;

  /** Scratch records of the checks of issues and completions, made at first use. */
  #global: GlobalAccess | undefined;
  #shared: SharedAccess | undefined;

  #globalAccess(m: SimContext, gm: GlobalMem): GlobalAccess {
    return (this.#global ??= accessRecord(m, gm, 0, 0, "reads"));
  }

  #sharedAccess(m: SimContext, buf: Placed): SharedAccess {
    return (this.#shared ??= accessRecord(m, buf, 0, 0, "reads"));
  }

  constructor(threads: number, bars: Mbarriers) {
    this.threads = threads;
    this.#bars = bars;
    this.#s2g = Array.from({ length: threads }, () => []);
    this.#ends = Array.from({ length: threads }, () => []);
    this.#read = new Int32Array(threads);
  }

  /** Forget everything (CTA start). */
  reset(): void {
    if (!this.active) return;
    this.active = false;
    this.#g2s.length = 0;
    this.#inflight = [];
    this.#unread = 0;
    this.#dsmemLive = 0;
    for (let t = 0; t < this.threads; t++) {
      this.#s2g[t]!.length = 0;
      this.#ends[t]!.length = 0;
    }
    this.#read.fill(0);
  }

  // ---------------------------------------------------------------- global → shared

  /**
   * Thread `t` issues a global → shared bulk copy of `len` bytes from byte `src` of tensor `tens`
   * to shared byte `dst` (absolute), completing on the mbarrier at `bar`. Bounds were checked.
   * Returns the copy's id, -1 when the mbarrier is unusable (reported) and nothing was issued.
   */
  issueG2s(
    m: SimContext,
    t: number,
    dst: number,
    buf: Placed,
    tens: number,
    src: number,
    len: number,
    bar: number,
    bb: BarBuffer,
    site: number,
    fill?: Uint8Array,
  ): number {
    const slot = this.#bars.use(m, t, bar, bb, site, "completes a bulk copy on");
    if (slot < 0) return -1;
    this.#bars.checkInitFence(m, slot, t, site, "issues a bulk copy completing on");
    this.active = true;
    // tens < 0: a TMA out-of-bounds fill (no global read), `fill` repeated over the bytes.
    const gm = tens >= 0 ? m.globals[tens]! : undefined;
    if (m.opts.track) {
      if (gm) {
        const g = setAccess(this.#globalAccess(m, gm), gm, src, len, t, site, "reads");
        checkGlobalRead(g);
        if (gm.shadow.tracksWriters) this.#checkGlobalProxy(g);
      }
      checkAsyncWrite(
        setAccess(this.#sharedAccess(m, buf), buf, dst, len, t, site, "issues a bulk copy to"),
      );
      this.#checkSharedProxy(m, t, buf, dst, len, site, "writing");
    }
    const id = this.#g2s.length;
    this.#g2s.push({ dst, tens, src, len, slot, site, thread: t, phase: -1, fill });
    this.#inflight.push(id);
    m.shadow.guardRange(dst, len, id + 1);
    gm?.shadow.pendingRead(src, len, 1);
    this.#bars.progress++;
    return id;
  }

  /** Shared::cta → shared::cluster copies in flight (their sources are not yet taken). */
  #dsmemLive = 0;

  /**
   * Thread `t` issues a shared::cta → shared::cluster bulk copy of `len` bytes from absolute
   * shared byte `src` (in `srcBuf`, the issuing CTA's window) to absolute shared byte `dst` (in
   * `dstBuf`, the destination CTA's window), completing on the mbarrier at absolute `bar` (of the
   * destination CTA). Bounds, alignment and the CTAs were checked. Returns the copy's id, -1 when
   * the mbarrier is unusable (reported) and nothing was issued.
   */
  issueDsmem(
    m: SimContext,
    t: number,
    src: number,
    srcBuf: Placed,
    dst: number,
    dstBuf: Placed,
    len: number,
    bar: number,
    bb: BarBuffer,
    site: number,
  ): number {
    const slot = this.#bars.use(m, t, bar, bb, site, "completes a bulk copy on");
    if (slot < 0) return -1;
    this.#bars.checkInitFence(m, slot, t, site, "issues a bulk copy completing on");
    this.active = true;
    if (m.opts.track) {
      checkSharedRead(setAccess(this.#sharedAccess(m, srcBuf), srcBuf, src, len, t, site, "reads"));
      this.#checkSharedProxy(m, t, srcBuf, src, len, site);
      checkAsyncWrite(
        setAccess(
          this.#sharedAccess(m, dstBuf),
          dstBuf,
          dst,
          len,
          t,
          site,
          "issues a bulk copy to",
        ),
      );
    }
    const id = this.#g2s.length;
    this.#g2s.push({
      dst,
      tens: -1,
      src,
      len,
      slot,
      site,
      thread: t,
      phase: -1,
      fill: undefined,
      shared: true,
    });
    this.#inflight.push(id);
    this.#dsmemLive++;
    m.shadow.guardRange(dst, len, id + 1);
    this.#bars.progress++;
    return id;
  }

  /**
   * TX6015 for shared memory: the async proxy reads (`how` "reading") or writes ("writing": a
   * bulk copy's or TMA load's destination) bytes [a, a + n) of `buf` that a thread wrote through
   * the generic proxy with no fence.proxy.async on a causality path from the write to thread
   * `t`'s issue (SharedShadow.unfenced; PTX ISA, fence.proxy.async: "accessing the same memory
   * location across multiple proxies needs a cross-proxy fence").
   */
  #checkSharedProxy(
    m: SimContext,
    t: number,
    buf: Placed,
    a: number,
    n: number,
    site: number,
    how = "reading",
  ): void {
    const b = m.shadow.unfenced(a, n, t);
    if (b < 0) return;
    const w = m.shadow.writerAt(b);
    const u = m.thread(w & THREAD_MASK);
    m.hazard(
      "TX6015",
      `thread ${m.thread(t)} of CTA ${m.cta()} issues a bulk copy (async proxy) ${how} shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}, which thread ${u} wrote through the generic proxy with no fence.proxy.async (T.ptx.fence.proxy_async) between that write and this access (by the writer after it, or by a thread after synchronizing with the writer)`,
      site,
      [{ message: `thread ${u} writes it here`, span: m.sites[w >> THREAD_BITS] }],
    );
  }

  /**
   * TX6015 for global memory: the async proxy reads (`how` "reading": an issue's read of its
   * tensor), writes or updates (a bulk store's or reduction's destination) the bytes of `acc`
   * that a thread of this CTA wrote through the generic proxy in this launch with no proxy fence
   * covering global memory on a causality path from the write to this issue (PTX ISA,
   * fence.proxy.async: "accessing the same memory location across multiple proxies needs a
   * cross-proxy fence"; `fence.proxy.async.global` or `fence.proxy.async`; `.shared::cta`
   * covers shared memory only).
   */
  #checkGlobalProxy(acc: GlobalAccess, how = "reading", what = "bulk copy"): void {
    const { m, buf: gm, thread: t, site } = acc;
    const clocks = m.clocks;
    const hit = gm.shadow.genericWriteIn(
      acc.addr,
      acc.n,
      (s) => m.asyncWriteSites.has(s),
      (w, c) => clocks.globalFenced(w, c, t),
    );
    if (!hit) return;
    const u = m.thread(hit.w & THREAD_MASK);
    m.hazard(
      "TX6015",
      `thread ${m.thread(t)} of CTA ${m.cta()} issues a ${what} (async proxy) ${how} global "${gm.name}" byte ${hit.b}, which thread ${u} wrote through the generic proxy in this launch with no fence.proxy.async.global between that write and this access (T.ptx.fence.proxy_async("global") by the writer after it, or by a thread after synchronizing with the writer; the default T.ptx.fence.proxy_async() covers shared memory only)`,
      site,
      [{ message: `thread ${u} writes it here`, span: m.sites[hit.w >> THREAD_BITS] }],
    );
  }

  /**
   * Whether a thread in [lo, hi) observed the completion of the mbarrier phase copy `id` landed
   * in (undefined while it is in flight), and that mbarrier's label.
   */
  landingObserved(
    m: SimContext,
    id: number,
    lo: number,
    hi: number,
  ): { seen?: boolean; bar: string } {
    const c = this.#g2s[id]!;
    const bar = this.#bars.label(m, c.slot);
    if (c.phase < 0) return { bar };
    for (let t = lo; t < hi; t++)
      if (this.#bars.observed(c.slot, t) > c.phase) return { seen: true, bar };
    return { seen: false, bar };
  }

  /** Every thread is blocked: land every copy in flight, oldest first. False when none was. */
  landAll(m: SimContext): boolean {
    const ids = this.#inflight;
    if (ids.length === 0) return false;
    this.#inflight = [];
    for (const id of ids) {
      const c = this.#g2s[id]!;
      const { dst, src, len } = c;
      if (c.shared) {
        m.shared.copyWithin(dst, src, src + len);
        this.#dsmemLive--;
      } else if (c.tens < 0) {
        const f = c.fill!;
        for (let i = 0; i < len; i++) m.shared[dst + i] = f[i % f.length]!;
      } else {
        const gm = m.globals[c.tens]!;
        m.shared.set(gm.bytes.subarray(src, src + len), dst);
        gm.shadow.pendingRead(src, len, -1);
      }
      // Bytes written by the async proxy: visibility is the mbarrier's business (the guard), so
      // they count as ordered for the race rules while the guard stands.
      m.shadow.recordAsyncProxyWrite(c.thread, c.site, dst, len);
      c.phase = this.#bars.phase(c.slot);
      this.#bars.completeTx(m, c.slot, len, c.thread, c.site);
    }
    return true;
  }

  /** The guard of copy `g - 1` (`g` from the shadow) stops thread `t` from accessing its bytes. */
  guardFails(g: number, t: number): boolean {
    const c = this.#g2s[g - 1]!;
    return c.phase < 0 || this.#bars.observed(c.slot, t) <= c.phase;
  }

  /** TX6007 for the access `acc` (`verb`, by default its own) of shared byte `b` under guard `g`. */
  reportGuard(acc: SharedAccess, b: number, g: number, verb = acc.verb): void {
    const { m, buf, thread: t, site } = acc;
    const c = this.#g2s[g - 1]!;
    const bar = this.#bars.label(m, c.slot);
    const why =
      c.phase < 0
        ? `while it is still in flight (its mbarrier ${bar} phase has not completed)`
        : `before this thread observed the completion of its mbarrier ${bar} phase`;
    m.hazard(
      "TX6007",
      `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}, the destination of a bulk copy, ${why}; wait with T.ptx.mbarrier.try_wait (or cta_sync after a thread that waited) first`,
      site,
      issuedNotes(m, c, "the bulk copy"),
    );
  }

  /** Shared → global copies not yet written (issued, not completed by wait_group or CTA end). */
  #s2gLive = 0;

  /** Shared → global copies issued and not yet written. */
  get s2gLive(): number {
    return this.#s2gLive;
  }

  /** Shared → global copies issued and not yet read (wait_group.read). */
  #unread = 0;

  /**
   * The first shared byte of [a, a + n) that a pending shared → global copy has not read yet, or
   * -1 (an interval scan of the pending copies; TX6007 for a write to it).
   */
  firstUnread(a: number, n: number): number {
    if (this.#unread === 0 && this.#dsmemLive === 0) return -1;
    let hit = -1;
    const e = a + n;
    if (this.#dsmemLive > 0) {
      for (const id of this.#inflight) {
        const c = this.#g2s[id]!;
        if (!c.shared) continue;
        const lo = c.src > a ? c.src : a;
        if (lo < e && lo < c.src + c.len && (hit < 0 || lo < hit)) hit = lo;
      }
    }
    for (const list of this.#s2g) {
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!;
        if (c.data !== undefined) continue;
        const lo = c.src > a ? c.src : a;
        if (lo < e && lo < c.src + c.len && (hit < 0 || lo < hit)) hit = lo;
      }
    }
    return hit;
  }

  /**
   * The first byte of [a, a + n) of `gm`'s tensor that a pending shared → global copy writes,
   * or -1 (an interval scan of the copies not yet written). `atomic`: the access is an atomic
   * (or a bulk reduction), which pending bulk reductions do not conflict with.
   */
  firstBulkWrite(m: SimContext, gm: GlobalMem, a: number, n: number, atomic = false): number {
    if (this.#s2gLive === 0) return -1;
    let hit = -1;
    const e = a + n;
    for (const list of this.#s2g) {
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!;
        if (m.globals[c.tens]?.shadow !== gm.shadow || (atomic && c.red)) continue;
        const lo = c.dst > a ? c.dst : a;
        if (lo < e && lo < c.dst + c.len && (hit < 0 || lo < hit)) hit = lo;
      }
    }
    return hit;
  }

  /** Call `f(tens, dst, len)` for every shared → global copy not yet written. */
  forEachWrite(f: (tens: number, dst: number, len: number) => void): void {
    if (this.#s2gLive === 0) return;
    for (const list of this.#s2g) for (const c of list) f(c.tens, c.dst, c.len);
  }

  /** Global → shared copies in flight. */
  get inflight(): number {
    return this.#inflight.length;
  }

  /** Call `f(tens, src, len)` for every global → shared copy in flight. */
  forEachRead(f: (tens: number, src: number, len: number) => void): void {
    for (const id of this.#inflight) {
      const c = this.#g2s[id]!;
      f(c.tens, c.src, c.len);
    }
  }

  /** An in-flight bulk copy reading byte `b` of tensor `tens`, for notes. */
  findBySrc(tens: number, b: number): { thread: number; site: number } | undefined {
    for (const id of this.#inflight) {
      const c = this.#g2s[id]!;
      if (c.tens === tens && b >= c.src && b < c.src + c.len) return c;
    }
    return undefined;
  }

  // ---------------------------------------------------------------- shared → global

  /** Instructions issued (ids of shared → global copies; the pieces of one share it). */
  #instr = 0;

  /**
   * Thread `t` issues a shared → global bulk copy of `len` bytes. Bounds were checked.
   * `piece`: a further contiguous run of the instruction the previous call began (TMA stores).
   * `red`: a bulk reduction (cp.reduce.async.bulk), combining with the destination on completion.
   */
  issueS2g(
    m: SimContext,
    t: number,
    src: number,
    buf: Placed,
    tens: number,
    dst: number,
    len: number,
    site: number,
    piece = false,
    red?: BulkReducer,
  ): void {
    this.active = true;
    if (!piece) this.#instr++;
    m.asyncWriteSites.add(site);
    // The copy reads its source as thread t would (races, uninitialised bytes, pending copies).
    if (m.opts.track) {
      checkSharedRead(setAccess(this.#sharedAccess(m, buf), buf, src, len, t, site, "reads"));
      // The async proxy reads them: generic-proxy writes need a fence.proxy.async on a causality
      // path to this issue.
      this.#checkSharedProxy(m, t, buf, src, len, site);
    }
    const gm = m.globals[tens]!;
    const verb = red ? "issues a bulk reduction that updates" : "issues a bulk copy that writes";
    const g = setAccess(this.#globalAccess(m, gm), gm, dst, len, t, site, verb);
    const hit = firstPendingRead(m, gm, dst, len);
    if (hit >= 0) globalPendingRead(g, hit, verb);
    // The async proxy writes (or reads and writes) the destination: generic-proxy writes of it
    // need a fence.proxy.async covering global memory first.
    if (m.opts.track && gm.shadow.tracksWriters) {
      this.#checkGlobalProxy(g, red ? "updating" : "writing", red ? "bulk reduction" : "bulk copy");
    }
    // Pending bulk stores writing these bytes (an interval scan); reductions among themselves
    // are atomics, which never conflict.
    g.atomic = red !== undefined;
    checkGlobalBulkWrite(g);
    g.atomic = false;
    gm.shadow.trackWriters();
    this.#s2gLive++;
    this.#unread++;
    this.#s2g[t]!.push({ src, tens, dst, len, site, instr: this.#instr, data: undefined, red });
    this.#bars.progress++;
  }

  /** `cp.async.bulk.commit_group` by thread `t`. */
  commit(t: number): void {
    this.#ends[t]!.push(this.#s2g[t]!.length);
  }

  /**
   * `cp.async.bulk.wait_group n` (`readOnly` false) or `.read n` (true) by thread `t`: all but
   * its n most recent bulk groups read their source; with `readOnly` false they also complete.
   */
  wait(m: SimContext, t: number, n: number, readOnly: boolean): void {
    const ends = this.#ends[t]!;
    const g = ends.length;
    if (g <= n) return;
    const k = ends[g - n - 1]!;
    const list = this.#s2g[t]!;
    for (let i = this.#read[t]!; i < k; i++) this.#readSource(m, list[i]!);
    if (this.#read[t]! < k) this.#read[t] = k;
    if (readOnly) return;
    for (let i = 0; i < k; i++) this.#writeDest(m, t, list[i]!);
    list.splice(0, k);
    ends.splice(0, g - n);
    for (let i = 0; i < ends.length; i++) ends[i]! -= k;
    this.#read[t]! -= k;
    this.#bars.progress++;
  }

  /** Buffers for the source bytes of shared → global copies, by length, reused (no per-copy allocation). */
  readonly #spare = new Map<number, Uint8Array[]>();

  #readSource(m: SimContext, c: S2gCopy): void {
    const data = this.#spare.get(c.len)?.pop() ?? new Uint8Array(c.len);
    data.set(m.shared.subarray(c.src, c.src + c.len));
    c.data = data;
    this.#unread--;
  }

  #writeDest(m: SimContext, t: number, c: S2gCopy): void {
    const gm = m.globals[c.tens]!;
    const red = c.red;
    if (red) red(gm.dv, c.dst, c.data!);
    else gm.bytes.set(c.data!, c.dst);
    let spare = this.#spare.get(c.len);
    if (!spare) this.#spare.set(c.len, (spare = []));
    spare.push(c.data!);
    const sh = gm.shadow;
    this.#s2gLive--;
    const verb = red ? "updates (bulk reduction)" : "writes (bulk copy)";
    const acc = setAccess(this.#globalAccess(m, gm), gm, c.dst, c.len, t, c.site, verb);
    // A reduction is atomic per element: earlier atomics (and reductions) do not race with it.
    const atomic = red !== undefined;
    const hit = sh.checkWriters(c.dst, c.len, t, atomic, m.isAtomicSite);
    if (hit) reportRace(acc, "TX6014", verb, globalAt(acc), hit, "wrote");
    else checkReads(acc);
    const w = (c.site << THREAD_BITS) | t;
    if (!atomic) {
      sh.recordWrite(c.dst, c.len, w, m.clocks.clock[t]!);
      return;
    }
    // Recorded as atomics of at most MAX_ATOMIC (8) bytes each, as AtomicShadow keeps them.
    for (let a = c.dst, e = c.dst + c.len; a < e; a += 8)
      sh.recordAtomic(a, 8, t, w, m.isAtomicSite);
  }

  /**
   * The pending copy that still reads shared byte `b` (a shared → global copy not yet read, or a
   * shared::cta → shared::cluster copy in flight), as `what` and how to wait for it, for TX6007.
   */
  sourceReader(b: number): { thread: number; site: number; what: string; fix: string } | undefined {
    const s2g = this.findS2g(b);
    if (s2g) {
      return {
        ...s2g,
        what: "a pending shared → global bulk copy",
        fix: "wait with T.ptx.cp.async_.bulk.wait_group_read first",
      };
    }
    for (const id of this.#inflight) {
      const c = this.#g2s[id]!;
      if (c.shared && b >= c.src && b < c.src + c.len) {
        return {
          thread: c.thread,
          site: c.site,
          what: "a shared::cta → shared::cluster bulk copy in flight",
          fix: "rewrite it only after its destination CTA observed the copy's mbarrier phase and told this CTA so (a remote mbarrier arrive or barrier.cluster)",
        };
      }
    }
    return undefined;
  }

  /** A pending shared → global copy reading shared byte `b` (`global` false) or writing byte `b` of tensor `tens`. */
  findS2g(b: number, tens = -1): { thread: number; site: number } | undefined {
    for (let t = 0; t < this.threads; t++) {
      const list = this.#s2g[t]!;
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!;
        const hit =
          tens < 0
            ? c.data === undefined && b >= c.src && b < c.src + c.len
            : c.tens === tens && b >= c.dst && b < c.dst + c.len;
        if (hit) return { thread: t, site: c.site };
      }
    }
    return undefined;
  }

  // ---------------------------------------------------------------- CTA end

  /** CTA end: pending shared → global copies complete; copies to shared are dropped. */
  finishCta(m: SimContext): void {
    if (!this.active) return;
    for (let t = 0; t < this.threads; t++) {
      const list = this.#s2g[t]!;
      if (list.length > 0 && !this.#bars.deadlocked) {
        const copies = new Set(list.map((c) => c.instr)).size;
        m.hazard(
          "TX6017",
          `thread ${m.thread(t)} of CTA ${m.cta()} exits with ${copies} shared → global bulk ${copies === 1 ? "copy" : "copies"} not waited for (T.ptx.cp.async_.bulk.wait_group); the CTA's shared memory may be gone before they read it`,
          list[0]!.site,
        );
      }
      for (let i = this.#read[t]!; i < list.length; i++) this.#readSource(m, list[i]!);
      for (const c of list) this.#writeDest(m, t, c);
      list.length = 0;
      this.#ends[t]!.length = 0;
      this.#read[t] = 0;
    }
    for (const id of this.#bars.deadlocked ? [] : this.#inflight) {
      const c = this.#g2s[id]!;
      m.hazard(
        "TX6017",
        `thread ${m.thread(c.thread)} of CTA ${m.cta()} exits while its ${c.shared ? "shared::cta → shared::cluster" : "global → shared"} bulk copy is still in flight (no thread waited for its mbarrier phase)`,
        c.site,
      );
    }
    this.#dropInflight(m);
  }

  /** A launch stopped (a hazard thrown, or a deadlock): undo every pending count on tensors. */
  dropAll(m: SimContext): void {
    if (!this.active) return;
    for (let t = 0; t < this.threads; t++) {
      this.#s2g[t]!.length = 0;
      this.#ends[t]!.length = 0;
      this.#read[t] = 0;
    }
    this.#s2gLive = 0;
    this.#unread = 0;
    this.#dropInflight(m);
  }

  #dropInflight(m: SimContext): void {
    for (const id of this.#inflight) {
      const c = this.#g2s[id]!;
      if (!c.shared) m.globals[c.tens]?.shadow.pendingRead(c.src, c.len, -1);
    }
    this.#inflight = [];
    this.#dsmemLive = 0;
  }
}

interface G2sCopy {
  readonly dst: number;
  readonly tens: number;
  readonly src: number;
  readonly len: number;
  /** The mbarrier it completes on. */
  readonly slot: number;
  readonly site: number;
  readonly thread: number;
  /** Phase (absolute) the copy's complete_tx counted into; -1 while in flight. */
  phase: number;
  /** For a TMA out-of-bounds fill (tens < 0): the element's fill bytes, repeated. */
  readonly fill: Uint8Array | undefined;
  /**
   * A shared::cta → shared::cluster copy (tens < 0): `src` is an absolute shared byte of the
   * issuing CTA's window.
   */
  readonly shared?: true;
}

interface S2gCopy {
  readonly src: number;
  readonly tens: number;
  readonly dst: number;
  readonly len: number;
  readonly site: number;
  /** The instruction it is a piece of (a TMA store is one record per contiguous run). */
  readonly instr: number;
  /** The source bytes, once read (wait_group.read). */
  data: Uint8Array | undefined;
  /** A bulk reduction's element-wise update (cp.reduce.async.bulk); undefined for a copy. */
  readonly red: BulkReducer | undefined;
}
