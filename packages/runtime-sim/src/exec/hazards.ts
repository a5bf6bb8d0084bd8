import { bufferName, type Note, type Scope } from "@tirx-ts/core";
import { type GlobalMem, type Machine, type Placed } from "./machine.js";
import { THREAD_BITS, THREAD_MASK } from "./packed.js";
import { UNIFORM_MIN, type RaceHit } from "./races.js";
import {
  checkGlobalAtomics,
  checkGlobalReaders,
  checkGlobalWriters,
  materialiseGlobal,
  recordGlobalAtomic,
  recordGlobalRead,
  recordGlobalWrite,
  startReaders,
  startWriters,
} from "./global-shadow.js";

/**
 * Per-byte hazard checks of ordinary loads and stores, and of the bytes asynchronous copies
 * (cp.async, bulk) write. Each fast path is a loop over the bytes of one access reading typed
 * arrays; the report (slow) path builds the message and notes.
 * Codes: TX6001 pending cp.async target, TX6002 global write under a pending cp.async read,
 * TX6003 read of another thread's write not ordered before it (see RaceTracker), TX6004
 * never-written shared, TX6005 out of bounds, TX6007 bulk-copy bytes accessed too early (see
 * BulkUnit), TX6013 write after an unordered read, TX6014 write after an unordered write.
 */

/**
 * The note "`copy` (thread …)`role` is issued here" for the other copy of a report, when one was
 * found.
 */
export function issuedNotes(
  m: Machine,
  other: { thread: number; site: number } | undefined,
  copy: string,
  role = "",
): Note[] {
  return other
    ? [
        {
          message: `${copy} (thread ${m.thread(other.thread)})${role} is issued here`,
          span: m.sites[other.site],
        },
      ]
    : [];
}

/** A shared load of `n` bytes at absolute shared byte `a` by thread `t`. */
export function checkSharedRead(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  const pend = m.shPending;
  const races = m.races;
  if (n < UNIFORM_MIN && m.speculative === 0 && (races.perByte || !races.overlapsEntry(a, n))) {
    // The common case, an element with every byte written, nothing pending or guarding it: the
    // race check and record of RaceTracker.onRead without its range lookups. Any other byte
    // takes the general path below (which then reports), before anything is recorded.
    const wr = races.wr;
    const bk = races.bk;
    let plain = true;
    for (let b = a, e = a + n; b < e; b++) {
      if (pend[b] !== 0 || wr[b]! < 0 || bk[b] !== 0) {
        plain = false;
        break;
      }
    }
    if (plain) {
      const hit = races.onReadBytes(t, site, a, n);
      if (hit) reportRace(m, "TX6003", t, site, "reads", sharedAt(m, buf, a, n), hit, "wrote");
      return;
    }
  }
  const r = reportUnreadyBytes(m, buf, a, n, t, site);
  if (r) {
    // A read of never-written bytes (TX6004) is still a read: a later write by another thread
    // with nothing ordering it after this read is a write-after-read (TX6013).
    if (r === "unwritten" && m.speculative === 0) m.races.onRead(t, site, a, n);
    return;
  }
  if (m.speculative > 0) return;
  const hit = m.races.onRead(t, site, a, n);
  if (hit) reportRace(m, "TX6003", t, site, "reads", sharedAt(m, buf, a, n), hit, "wrote");
}

/**
 * A read of `n` shared bytes at absolute byte `a` by the async proxy on behalf of thread `t` (a
 * wgmma's operand): the checks of checkSharedRead (pending async copies, a bulk destination not
 * yet observed, never-written bytes, an unordered earlier write: TX6003), but no read is
 * recorded for the race tracker's write-after-read check: the reader's instruction keeps reading
 * until a wgmma.wait_group retires it, and WgmmaUnit checks later writes against that (TX6024).
 */
export function checkAsyncProxyRead(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  if (reportUnreadyBytes(m, buf, a, n, t, site)) return;
  if (m.speculative > 0) return;
  const hit = m.races.writeHit(t, a, n);
  if (hit) reportRace(m, "TX6003", t, site, "reads", sharedAt(m, buf, a, n), hit, "wrote");
}

/**
 * The byte checks of a shared read of [a, a + n) by thread `t` (pending async copies, a bulk
 * destination whose guard `t` has not passed, never-written bytes): reports the first such byte
 * and returns reportSharedRead's result for it, or false when every byte is ready. A lazy uniform
 * range (a bulk copy's bytes, no cp.async pending there) stands for all its bytes, so only a
 * report materialises them.
 */
function reportUnreadyBytes(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
): boolean | "unwritten" {
  const u = m.races.uniformAt(a, n);
  if (u !== undefined && u.wr >= 0 && (u.bk === 0 || !m.bulk.guardFails(u.bk, t))) return false;
  m.races.materialise(a, n);
  const pend = m.shPending;
  const wr = m.shWriter;
  const bk = m.shBulk;
  // The guard of a bulk copy this thread passed already (bytes of one copy come in runs).
  let passed = 0;
  for (let i = 0; i < n; i++) {
    const b = a + i;
    const g = bk[b]!;
    if (pend[b] !== 0 || wr[b]! < 0 || (g !== 0 && g !== passed)) {
      const r = reportSharedRead(m, buf, b, t, site);
      if (r) return r;
      passed = g;
    }
  }
  return false;
}

/**
 * The slow path of a shared read of byte `b`: reports and returns true ("unwritten" for a byte
 * nothing has written, TX6004), or finds it fine (false).
 */
function reportSharedRead(
  m: Machine,
  buf: Placed,
  b: number,
  t: number,
  site: number,
): boolean | "unwritten" {
  if (m.shPending[b] !== 0) {
    pendingAccess(m, buf, b, t, site, "reads");
    return true;
  }
  const g = m.shBulk[b]!;
  if (g !== 0) {
    if (!m.bulk.guardFails(g, t)) return false;
    m.bulk.reportGuard(m, buf, b, g, t, site, "reads");
    return true;
  }
  const who = `thread ${m.thread(t)} of CTA ${m.cta()}`;
  const at = `shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}`;
  const w = m.shWriter[b]!;
  if (w < 0) {
    const notes = buf.span
      ? [
          {
            message: `${bufferName(buf)} is allocated here; shared memory starts uninitialised`,
            span: buf.span,
          },
        ]
      : [];
    m.hazard(
      "TX6004",
      `${who} reads ${at}, which nothing has written since launch (if another thread writes it later, nothing orders that write before this read)`,
      site,
      notes,
      true,
    );
    return "unwritten";
  }
  return false;
}

/**
 * `shared "buf" bytes i..j` of the absolute range [a, a + n) (in a cluster of several CTAs, with
 * the CTA whose window holds them), for messages.
 */
function sharedAt(m: Machine, buf: Placed, a: number, n: number): string {
  const i = m.ctaLocal(a) - buf.base;
  const at = `shared ${bufferName(buf)} bytes ${i}..${i + n - 1}`;
  return m.ctas > 1 ? `${at} of CTA ${m.ctaOfRank(m.rankAt(a))}` : at;
}

/**
 * Report a race between thread `t`'s access at `site` (`verb` `at`) and the earlier access
 * `hit` (its thread `otherVerb` them): TX6003 read-after-write, TX6013 write-after-read, TX6014
 * write-after-write. The note points at the other access; a thread of another CTA is named with
 * its CTA.
 */
export function reportRace(
  m: Machine,
  code: "TX6003" | "TX6013" | "TX6014",
  t: number,
  site: number,
  verb: string,
  at: string,
  hit: RaceHit,
  otherVerb: string,
): void {
  const u = hit.other & THREAD_MASK;
  const cta = m.races.otherCta(hit.clock) ? m.races.ctaOf(hit.clock) : undefined;
  // A thread of another cluster is named by its rank there (m.thread names the running cluster's).
  const other =
    cta === undefined
      ? `thread ${m.thread(u)}`
      : m.ctas > 1
        ? `thread ${m.threadId(u)} of the CTA of rank ${m.rank[u]} in the cluster of CTA ${cta}`
        : `thread ${m.thread(u)} of CTA ${cta}`;
  const why =
    cta !== undefined
      ? `; ${m.ctas > 1 ? "clusters" : "CTAs"} of one launch are not ordered with each other (only atomics may meet)`
      : ` with no synchronization ordering the two (cta_sync, a named barrier, an mbarrier phase, __syncwarp${m.ctas > 1 ? ", barrier.cluster" : ""})`;
  m.hazard(
    code,
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} ${at}, which ${other} ${otherVerb}${why}`,
    site,
    [{ message: `${other} ${otherVerb} it here`, span: m.sites[hit.other >> THREAD_BITS] }],
  );
}

/** Report a write's race found by RaceTracker.onWrite. */
function reportWriteRace(
  m: Machine,
  t: number,
  site: number,
  verb: string,
  at: string,
  hit: RaceHit & { read: boolean },
): void {
  if (hit.read) reportRace(m, "TX6013", t, site, verb, at, hit, "read");
  else reportRace(m, "TX6014", t, site, verb, at, hit, "wrote");
}

function pendingAccess(
  m: Machine,
  buf: Placed,
  b: number,
  t: number,
  site: number,
  verb: string,
): void {
  const copy = m.async.findByDst(b);
  const why =
    copy && !copy.committed
      ? "was never committed to a group (cp.async.commit_group), so no cp.async.wait_group waits for it"
      : "has not been waited for (cp.async.wait_group)";
  m.hazard(
    "TX6001",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base} while a cp.async targeting it ${why}${copy ? `; ${waitAdvice(m, copy, t, `this ${verb === "reads" ? "read" : "write"}`)}` : ""}`,
    site,
    issuedNotes(m, copy, "the cp.async"),
  );
}

/**
 * An in-flight cp.async, for reports: the issuing thread, its site (an index into the
 * machine's sites), whether its group was committed, and `later`, the number of groups that
 * thread committed after the one holding the copy (0 when uncommitted). `cp.async.wait_group(n)`
 * in that thread completes the copy exactly when n <= later (PTX ISA, cp.async.wait_group: it
 * waits until at most n of the most recent groups are pending).
 */
export interface InFlightCopy {
  readonly thread: number;
  readonly site: number;
  readonly committed: boolean;
  readonly later: number;
}

/**
 * What completes the in-flight cp.async `copy` before an access by thread `t`, in words: the
 * smallest wait that covers it is `cp.async.wait_group(copy.later)` in the issuing thread (its
 * groups committed after the copy's own may stay pending), then `cta_sync` when the access is
 * another thread's; an uncommitted copy needs `commit_group` first, then `wait_group(0)`.
 * Source: PTX ISA, cp.async.wait_group ("wait until only N or fewer of the most recent
 * cp.async-groups are pending").
 */
export function waitAdvice(m: Machine, copy: InFlightCopy, t: number, access: string): string {
  const sync = copy.thread === t ? "" : `, then T.cuda.cta_sync(),`;
  const who = copy.thread === t ? "" : ` in thread ${m.thread(copy.thread)}`;
  if (!copy.committed) {
    return `T.ptx.cp.async_.commit_group() and T.ptx.cp.async_.wait_group(0)${who}${sync} before ${access} would cover it`;
  }
  const n = copy.later;
  const groups = n === 1 ? "1 group was" : `${n} groups were`;
  return `T.ptx.cp.async_.wait_group(${n})${who}${sync} before ${access} would cover it (${groups} committed after the one holding these bytes; a larger count leaves it pending)`;
}

/**
 * A shared store of `n` bytes at absolute shared byte `a` by thread `t` (an atomic's write when
 * `atomic`); records the writer. Races with earlier unordered reads (TX6013) and writes (TX6014).
 */
export function checkSharedWrite(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
  atomic = false,
): void {
  m.races.materialise(a, n);
  const pend = m.shPending;
  const s2g = m.bulk.firstUnread(a, n);
  const bk = m.shBulk;
  if (m.wgmma.tracked > 0) m.wgmma.checkWrite(m, buf, buf.base, a, n, t, site, "writes");
  for (let i = 0; i < n; i++) {
    const b = a + i;
    if (pend[b] !== 0 || b === s2g || bk[b] !== 0) {
      if (pend[b] !== 0) {
        pendingAccess(m, buf, b, t, site, "writes");
        break;
      }
      if (reportBulkWrite(m, buf, b, b === s2g, t, site, "writes")) break;
    }
  }
  const hit = m.races.onWrite(t, site, a, n, atomic, m.isAtomicSite);
  if (hit)
    reportWriteRace(
      m,
      t,
      site,
      atomic ? "atomically updates" : "writes",
      sharedAt(m, buf, a, n),
      hit,
    );
  for (let b = a, e = a + n; b < e; b++) bk[b] = 0;
}

/**
 * The shared bytes [a, a + n) an atomic of thread `t` reads: TX6004 when never written. Races
 * with plain accesses are checked by checkSharedWrite / checkGlobalWrite with `atomic` set
 * (atomics never race with each other).
 */
export function checkAtomicAccess(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  m.races.materialise(a, n);
  const writer = m.shWriter;
  for (let i = 0; i < n; i++) {
    if (writer[a + i]! < 0) {
      m.hazard(
        "TX6004",
        `thread ${m.thread(t)} of CTA ${m.cta()} atomically updates shared ${bufferName(buf)}, which nothing has written since launch`,
        site,
      );
      return;
    }
  }
}

/**
 * A global read of `n` bytes at byte `a` of `gm` by thread `t`: TX6003 when a write by another
 * thread of the CTA is not ordered before it, or by any thread of another CTA of this launch.
 */
export function checkGlobalRead(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  const meta = gm.meta;
  if (!meta.writer) {
    if (!meta.recordReads) return;
    trackWriters(gm);
  }
  checkGlobalBulkWrite(m, gm, a, n, t, site, "reads");
  if (m.speculative > 0) return;
  const hit = checkGlobalWriters(m.races, meta, a, n, t, false, m.isAtomicSite);
  if (hit) reportRace(m, "TX6003", t, site, "reads", globalAt(gm, a, n), hit, "wrote");
  if (meta.recordReads) recordGlobalRead(m.races, meta, a, n, t, site);
}

function globalAt(gm: GlobalMem, a: number, n: number): string {
  return `global "${gm.name}" bytes ${a}..${a + n - 1}`;
}

/**
 * A global store of `n` bytes at byte `a` of `gm` by thread `t` (an atomic's write when
 * `atomic`); records the writer. TX6014 when an earlier write by another thread of the CTA is not
 * ordered before it, or by a thread of another CTA (atomics do not race with atomics).
 */
export function checkGlobalWrite(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
  atomic = false,
): void {
  const meta = gm.meta;
  const pr = meta.pendingReads;
  if (pr) {
    for (let i = 0; i < n; i++) {
      if (pr[a + i] !== 0) {
        m.hazard(
          "TX6002",
          `thread ${m.thread(t)} of CTA ${m.cta()} writes global "${gm.name}" byte ${a + i} while an async copy (cp.async or bulk) that reads it is still pending`,
          site,
          pendingReaderNotes(m, gm, a + i),
        );
        break;
      }
    }
  }
  if (m.bulk.s2gLive > 0) checkGlobalBulkWrite(m, gm, a, n, t, site, "writes");
  if (!meta.writer) trackWriters(gm);
  const w = (site << THREAD_BITS) | t;
  const now = m.races.clock[t]!;
  if (n >= UNIFORM_MIN) {
    const hit = checkGlobalWriters(m.races, meta, a, n, t, atomic, m.isAtomicSite);
    if (hit) reportGlobalWrite(m, gm, a, n, t, site, atomic, hit);
    else checkReads(m, gm, a, n, t, site, atomic ? "atomically updates" : "writes");
    recordGlobalWrite(meta, a, n, w, now);
    return;
  }
  // An element: its bytes per byte (materialised once), then recorded by a loop.
  materialiseGlobal(meta, a, n);
  const wr = meta.writer!;
  const ep = meta.epoch!;
  const hit =
    m.races.checkGlobal(wr, ep, a, n, t, atomic, m.isAtomicSite) ??
    checkGlobalAtomics(m.races, meta, a, n, t, atomic);
  if (hit) reportGlobalWrite(m, gm, a, n, t, site, atomic, hit);
  else if (meta.r1) checkReads(m, gm, a, n, t, site, atomic ? "atomically updates" : "writes");
  if (atomic) {
    recordGlobalAtomic(m.races, meta, a, n, t, w, m.isAtomicSite);
    return;
  }
  if (meta.atomics !== undefined && meta.atomics.size > 0) meta.atomics.drop(a, n);
  for (let b = a, e = a + n; b < e; b++) {
    wr[b] = w;
    ep[b] = now;
  }
}

/**
 * TX6013: a write (`verb`) of global bytes [a, a + n) by thread `t` after a recorded read not
 * ordered before it (another thread of the CTA without synchronization, or another CTA).
 */
export function checkReads(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
  verb: string,
): void {
  const hit = checkGlobalReaders(m.races, gm.meta, a, n, t);
  if (hit) reportRace(m, "TX6013", t, site, verb, globalAt(gm, a, n), hit, "read");
}

function reportGlobalWrite(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
  atomic: boolean,
  hit: RaceHit,
): void {
  const verb = atomic ? "atomically updates" : "writes";
  reportRace(m, "TX6014", t, site, verb, globalAt(gm, a, n), hit, "wrote");
}

// ---------------------------------------------------------------- asynchronous copies

/**
 * An asynchronous write of shared bytes [a, a + n) by thread `t` (cp.async or bulk copy issue):
 * TX6007 when a pending shared → global bulk copy has not read them yet, or when they are the
 * destination of a global → shared bulk copy in flight or not yet observed by `t`.
 */
export function checkAsyncWrite(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
  verb: string,
): void {
  const races = m.races;
  // Bytes with the CTA-start records in a CTA with no bulk copy, wgmma operand or atomic record:
  // nothing below could find anything (the common cp.async issue into a fresh tile).
  if (!m.bulk.active && m.wgmma.tracked === 0 && races.atomics.size === 0 && races.fresh(a, n)) {
    return;
  }
  if (m.wgmma.tracked > 0) m.wgmma.checkWrite(m, buf, buf.base, a, n, t, site, verb);
  if (m.bulk.active) {
    // Only a CTA with bulk copies has bytes they guard.
    const s2g = m.bulk.firstUnread(a, n);
    const u = m.races.uniformAt(a, n);
    if (u !== undefined && !(u.bk !== 0 && m.bulk.guardFails(u.bk, t))) {
      // A lazy uniform range whose guard lets `t` write: only a bulk source can stop it.
      if (s2g >= 0 && reportBulkWrite(m, buf, s2g, true, t, site, verb)) return;
    } else {
      m.races.materialise(a, n);
      const bk = m.shBulk;
      let passed = 0;
      for (let i = 0; i < n; i++) {
        const b = a + i;
        if (b === s2g || (bk[b] !== 0 && bk[b] !== passed)) {
          if (reportBulkWrite(m, buf, b, b === s2g, t, site, verb)) return;
          passed = bk[b]!;
        }
      }
    }
  }
  // The copy writes at some point before it completes: it races with unordered earlier accesses.
  const hit = races.onWrite(t, site, a, n, false, m.isAtomicSite, false);
  if (hit) reportWriteRace(m, t, site, verb, sharedAt(m, buf, a, n), hit);
}

/**
 * The slow path of a write of shared byte `b` that a bulk copy touches: TX6007 (returns true)
 * when a pending shared → global copy has not read it, or when a global → shared copy guards it
 * from thread `t`; false when the write is fine.
 */
function reportBulkWrite(
  m: Machine,
  buf: Placed,
  b: number,
  s2g: boolean,
  t: number,
  site: number,
  verb: string,
): boolean {
  if (s2g) {
    reportS2gSource(m, buf, b, t, site, verb);
    return true;
  }
  const g = m.shBulk[b]!;
  if (g !== 0 && m.bulk.guardFails(g, t)) {
    m.bulk.reportGuard(m, buf, b, g, t, site, verb);
    return true;
  }
  return false;
}

/** TX6007: shared byte `b` is the source of a shared → global bulk copy that has not read it. */
function reportS2gSource(
  m: Machine,
  buf: Placed,
  b: number,
  t: number,
  site: number,
  verb: string,
): void {
  m.hazard(
    "TX6007",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}, which a pending shared → global bulk copy has not read yet; wait with T.ptx.cp.async_.bulk.wait_group_read first`,
    site,
    issuedNotes(m, m.bulk.findS2g(b), "the bulk copy", " reading it"),
  );
}

/** TX6007: an access of global bytes [a, a + n) that a pending shared → global bulk copy writes. */
export function checkGlobalBulkWrite(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
  verb: string,
): void {
  const b = m.bulk.firstBulkWrite(m, gm, a, n);
  if (b < 0) return;
  m.hazard(
    "TX6007",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} global "${gm.name}" byte ${b}, which a pending shared → global bulk copy writes; wait with T.ptx.cp.async_.bulk.wait_group first`,
    site,
    issuedNotes(m, m.bulk.findS2g(b, gm.index), "the bulk copy", " writing it"),
  );
}

/** TX6002: global byte `b` is read by a pending async copy (cp.async or bulk). */
export function globalPendingRead(
  m: Machine,
  gm: GlobalMem,
  b: number,
  t: number,
  site: number,
  verb: string,
): void {
  m.hazard(
    "TX6002",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} global "${gm.name}" byte ${b} while a pending async copy reads it`,
    site,
    pendingReaderNotes(m, gm, b),
  );
}

/** The note on the pending async copy (cp.async or bulk) that reads global byte `b`. */
function pendingReaderNotes(m: Machine, gm: GlobalMem, b: number): Note[] {
  const other = m.async.findBySrc(gm.index, b) ?? m.bulk.findBySrc(gm.index, b);
  return issuedNotes(m, other, "the async copy", " reading it");
}

/** Start keeping per-byte writers of `gm` (at its first tracked write). */
export function trackWriters(gm: GlobalMem): void {
  const meta = gm.meta;
  if (!meta.writer) {
    const { writer, epoch } = gm.pool.writers(gm.bytes.length);
    startWriters(meta, writer, epoch);
    if (meta.recordReads) startReaders(meta, gm.pool.readers(gm.bytes.length));
  }
}

/** True when `n` bytes at byte `rel` of buffer `p` lie inside it; otherwise TX6005, false. */
export function checkBounds(
  m: Machine,
  space: string,
  p: Placed,
  rel: number,
  n: number,
  t: number,
  site: number,
  verb: string,
): boolean {
  if (rel >= 0 && rel + n <= p.size) return true;
  reportOob(m, space, p.name, p.span, rel, n, p.size, t, site, verb);
  return false;
}

/** The buffer scope of a report's memory space ("global", "shared" or "local"). */
function scopeOf(space: string): Scope {
  return space === "global" ? "global" : space === "local" ? "local" : "shared";
}

/** TX6005: an access of `n` bytes at byte `rel` of a buffer of `size` bytes. */
export function reportOob(
  m: Machine,
  space: string,
  name: string,
  span: Note["span"],
  rel: number,
  n: number,
  size: number,
  t: number,
  site: number,
  verb: string,
): void {
  const label = bufferName({ name, span, scope: scopeOf(space) });
  const notes = span ? [{ message: `${label} is declared here`, span }] : [];
  m.hazard(
    "TX6005",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} ${space} ${label} bytes ${rel}..${rel + n - 1}, outside its ${size} bytes`,
    site,
    notes,
  );
}
