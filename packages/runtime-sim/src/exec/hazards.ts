import { bufferName } from "@tirx-ts/core";
import type { Access, GlobalAccess, SharedAccess } from "./context.js";
import { GLOBAL_RANGE_MIN } from "./global-shadow.js";
import type { Placed } from "./memory.js";
import { THREAD_BITS } from "./packed.js";
import { NOT_PLAIN } from "./shared-shadow.js";
import {
  globalAt,
  pendingAccess,
  reportBulkDestination,
  reportOob,
  reportPendingReadWrite,
  reportRace,
  reportS2gSource,
  reportUnwritten,
  reportWriteRace,
  sharedAt,
} from "./reports.js";

/**
 * Hazard checks of ordinary loads and stores, and of the bytes asynchronous copies (cp.async,
 * bulk) write. Each check takes one access record (exec/context.ts, Access): the machine, the
 * buffer, the bytes, the thread, the site and the verb. The decisions are the shadows'
 * (exec/shared-shadow.ts, exec/global-shadow.ts, one loop over the bytes of one access reading
 * typed arrays); the reports are exec/reports.ts's.
 * Codes: TX6001 pending cp.async target, TX6002 global write under a pending cp.async read,
 * TX6003 read of another thread's write not ordered before it (see exec/clocks.ts), TX6004
 * never-written shared, TX6005 out of bounds, TX6007 bulk-copy bytes accessed too early (see
 * BulkUnit), TX6013 write after an unordered read, TX6014 write after an unordered write.
 */

/** A shared load (`acc.verb` "reads") of `n` bytes at absolute shared byte `addr`; records the read. */
export function checkSharedRead(acc: SharedAccess): void {
  const m = acc.m;
  const sh = m.shadow;
  const a = acc.addr;
  const n = acc.n;
  if (m.speculative === 0) {
    // The common case, an element with every byte written, nothing pending or guarding it: the
    // race check and record of SharedShadow.onRead without its range lookups. Any other byte
    // takes the general path below (which then reports), before anything is recorded.
    const hit = sh.readPlain(acc.thread, acc.site, a, n);
    if (hit !== NOT_PLAIN) {
      if (hit) reportRace(acc, "TX6003", "reads", sharedAt(m, acc.buf, a, n), hit, "wrote");
      return;
    }
  }
  const r = reportUnready(acc);
  if (r) {
    // A read of never-written bytes (TX6004) is still a read: a later write by another thread
    // with nothing ordering it after this read is a write-after-read (TX6013).
    if (r === "unwritten" && m.speculative === 0) sh.onRead(acc.thread, acc.site, a, n);
    return;
  }
  if (m.speculative > 0) return;
  const hit = sh.onRead(acc.thread, acc.site, a, n);
  if (hit) reportRace(acc, "TX6003", "reads", sharedAt(m, acc.buf, a, n), hit, "wrote");
}

/**
 * A read of shared bytes by the async proxy on behalf of a thread (a wgmma's operand): the
 * checks of checkSharedRead (pending async copies, a bulk destination not yet observed,
 * never-written bytes, an unordered earlier write: TX6003), but no read is recorded for the
 * shadow's write-after-read check: the reader's instruction keeps reading until a
 * wgmma.wait_group retires it, and WgmmaUnit checks later writes against that (TX6024).
 */
export function checkAsyncProxyRead(acc: SharedAccess): void {
  if (reportUnready(acc)) return;
  const m = acc.m;
  if (m.speculative > 0) return;
  const hit = m.shadow.writeHit(acc.thread, acc.addr, acc.n);
  if (hit) reportRace(acc, "TX6003", "reads", sharedAt(m, acc.buf, acc.addr, acc.n), hit, "wrote");
}

/**
 * The byte checks of a shared read (pending async copies, a bulk destination whose guard the
 * thread has not passed, never-written bytes): reports the first such byte and returns true
 * ("unwritten" for a byte nothing has written, TX6004), or false when every byte is ready.
 */
function reportUnready(acc: SharedAccess): boolean | "unwritten" {
  const m = acc.m;
  const sh = m.shadow;
  const b = sh.firstUnready(acc.addr, acc.n, acc.thread, m.bulk);
  if (b < 0) return false;
  if (sh.pendingAt(b) !== 0) {
    pendingAccess(acc, b, "reads");
    return true;
  }
  const g = sh.guardAt(b);
  if (g !== 0) {
    m.bulk.reportGuard(acc, b, g, "reads");
    return true;
  }
  reportUnwritten(acc, b);
  return "unwritten";
}

/**
 * A shared store (`acc.verb` "writes"; an atomic's write when `acc.atomic`) of `n` bytes at
 * absolute shared byte `addr`; records the writer and ends the bytes' bulk guards. Races with
 * earlier unordered reads (TX6013) and writes (TX6014; not the store of another lane of the warp
 * in the same instance of the same store instruction, exec/store-instances.ts); TX6001 on a
 * pending cp.async, TX6007 on bytes a bulk copy still reads or guards, TX6024 on a wgmma operand.
 */
export function checkSharedWrite(acc: SharedAccess): void {
  const m = acc.m;
  const sh = m.shadow;
  const a = acc.addr;
  const n = acc.n;
  const t = acc.thread;
  const s2g = m.bulk.firstUnread(a, n);
  if (m.wgmma.tracked > 0) m.wgmma.checkWrite(acc);
  const b = sh.firstBlockedWrite(a, n, t, s2g, m.bulk);
  if (b >= 0) {
    if (sh.pendingAt(b) !== 0) pendingAccess(acc, b, "writes");
    else if (b === s2g) reportS2gSource(acc, b, "writes");
    else m.bulk.reportGuard(acc, b, sh.guardAt(b), "writes");
  }
  // The recorded write ends the bytes' bulk guards (SharedShadow.recordWrite).
  const atomic = acc.atomic;
  if (!atomic && m.order.live) m.order.plainWrite(undefined, a, n);
  const hit = sh.onWrite(t, acc.site, a, n, atomic, m.isAtomicSite);
  if (hit) {
    const verb = atomic ? "atomically updates" : "writes";
    reportWriteRace(acc, verb, sharedAt(m, acc.buf, a, n), hit);
  }
}

/**
 * The shared bytes an atomic reads: TX6004 when never written. Races are checked by
 * checkSharedWrite / checkGlobalWrite with `atomic` set (atomics race with unordered plain
 * accesses, and with unordered strong ones they are not morally strong with: exec/strong-sites.ts).
 */
export function checkAtomicAccess(acc: SharedAccess): void {
  const m = acc.m;
  if (m.shadow.firstUnwritten(acc.addr, acc.n) < 0) return;
  m.hazard(
    "TX6004",
    `thread ${m.thread(acc.thread)} of CTA ${m.cta()} atomically updates shared ${bufferName(acc.buf)}, which nothing has written since launch`,
    acc.site,
  );
}

/**
 * A global read (`acc.verb` "reads") of `n` bytes at byte `addr` of the tensor: TX6003 when a
 * write by another thread of the CTA is not ordered before it, or by any thread of another CTA of
 * this launch; TX6007 when a pending shared → global bulk copy writes the bytes. Records the read
 * when the kernel may write the tensor.
 */
export function checkGlobalRead(acc: GlobalAccess): void {
  checkGlobalReadOf(acc, false);
}

/**
 * checkGlobalRead (`strong` false) and checkStrongGlobalRead (`strong` true): a strong read races
 * only with unordered writes it is not morally strong with (plain ones, and strong ones whose
 * scope or its own does not include the other's thread), and is recorded for write-after-read
 * among the strong loads (TensorShadow.recordStrongRead), a plain read in the reader slots.
 */
function checkGlobalReadOf(acc: GlobalAccess, strong: boolean): void {
  const m = acc.m;
  const sh = acc.buf.shadow;
  if (!sh.tracksWriters) {
    if (!sh.recordReads) return;
    sh.trackWriters();
  }
  checkGlobalBulkWrite(acc, "reads");
  if (m.speculative > 0) return;
  const focus = m.order.live ? focusOn(m, sh, acc.addr, acc.thread) : false;
  const site = strong ? acc.site : -1;
  const hit = sh.checkWriters(acc.addr, acc.n, acc.thread, strong, m.isAtomicSite, site);
  if (focus) m.clocks.focus = undefined;
  if (hit) reportRace(acc, "TX6003", "reads", globalAt(acc), hit, "wrote");
  if (!sh.recordReads) return;
  if (strong) sh.recordStrongRead(acc.addr, acc.n, acc.thread, acc.site);
  else sh.recordRead(acc.addr, acc.n, acc.thread, acc.site);
}

/**
 * Point the clocks' focus (Clocks.focus) at the strong writes of location (`key`, `addr`) that
 * thread `t` observed, for the race checks of its access there; true when it set one (the caller
 * clears it after the checks).
 */
function focusOn(m: GlobalAccess["m"], key: object | undefined, addr: number, t: number): boolean {
  const f = m.order.observedFor(key, addr, t);
  if (f === undefined) return false;
  m.clocks.focus = f;
  return true;
}

/**
 * A strong global read (ld.relaxed / ld.acquire): as checkGlobalRead, but morally strong with
 * atomics and strong stores whose scopes and its own include each other's thread, so only an
 * unordered plain write, or an unordered strong one of too narrow a scope (`st.relaxed.cta` of
 * another CTA), is a race (TX6003: PTX ISA, "Data races", "Morally strong operations"). The read
 * is recorded as a strong load: a later write races with it by the same rule (TX6013, checkReads).
 */
export function checkStrongGlobalRead(acc: GlobalAccess): void {
  checkGlobalReadOf(acc, true);
}

/**
 * A strong shared read (ld.relaxed / ld.acquire): TX6004 for never-written bytes, TX6003 for an
 * unordered plain write, or an unordered strong one it is not morally strong with (another CTA
 * of the cluster, a scope too narrow: SharedShadow.strongReadHit). Recorded as a strong load
 * (SharedShadow.recordStrongRead; a read of never-written bytes too, as checkSharedRead records
 * one): a later write races with it by the same rule (TX6013, SharedShadow.onWrite).
 */
export function checkStrongSharedRead(acc: SharedAccess): void {
  const m = acc.m;
  if (m.speculative > 0) return;
  const sh = m.shadow;
  if (sh.firstUnwritten(acc.addr, acc.n) >= 0) checkAtomicAccess(acc);
  else {
    const hit = sh.strongReadHit(acc.thread, acc.site, acc.addr, acc.n);
    if (hit)
      reportRace(acc, "TX6003", "reads", sharedAt(m, acc.buf, acc.addr, acc.n), hit, "wrote");
  }
  sh.recordStrongRead(acc.thread, acc.site, acc.addr, acc.n);
}

/**
 * A global store (`acc.verb` "writes"; an atomic's write when `acc.atomic`) of `n` bytes at byte
 * `addr` of the tensor; records the writer. TX6014 when an earlier write by another thread of the
 * CTA is not ordered before it, or by a thread of another CTA (a strong write does not race with
 * a strong write it is morally strong with, exec/strong-sites.ts, nor a plain store with the
 * store of another lane of its warp in the same instance of the same store instruction,
 * exec/store-instances.ts);
 * TX6013 after an unordered recorded read; TX6002 while an async copy reads the bytes; TX6007
 * while a pending shared → global bulk copy writes them.
 */
export function checkGlobalWrite(acc: GlobalAccess): void {
  const m = acc.m;
  const sh = acc.buf.shadow;
  const a = acc.addr;
  const n = acc.n;
  const t = acc.thread;
  const p = sh.firstPendingRead(a, n);
  if (p >= 0) reportPendingReadWrite(acc, p);
  if (m.bulk.s2gLive > 0) checkGlobalBulkWrite(acc, "writes");
  sh.trackWriters();
  const atomic = acc.atomic;
  // A plain write ends the release chains of its bytes (exec/memory-order.ts); the writes of the
  // chain this thread observed there are ordered before it (Clocks.focus).
  const focus = m.order.live ? focusOn(m, sh, a, t) : false;
  if (!atomic && m.order.live) m.order.plainWrite(sh, a, n);
  const w = (acc.site << THREAD_BITS) | t;
  const now = m.clocks.clock[t]!;
  const verb = atomic ? "atomically updates" : "writes";
  if (n >= GLOBAL_RANGE_MIN) {
    const hit = sh.checkWriters(a, n, t, atomic, m.isAtomicSite, acc.site);
    if (focus) m.clocks.focus = undefined;
    if (hit) reportRace(acc, "TX6014", verb, globalAt(acc), hit, "wrote");
    else checkReads(acc, verb);
    sh.recordWrite(a, n, w, now);
    return;
  }
  // An element: its bytes per byte (the block around it materialised once).
  const hit = sh.checkElement(a, n, t, atomic, m.isAtomicSite, acc.site);
  if (focus) m.clocks.focus = undefined;
  if (hit) reportRace(acc, "TX6014", verb, globalAt(acc), hit, "wrote");
  else if (sh.hasReaders) checkReads(acc, verb);
  if (atomic) sh.recordAtomic(a, n, t, w, m.isAtomicSite);
  else sh.recordWrite(a, n, w, now);
}

/**
 * TX6013: a write (`verb`, by default the record's) of the global bytes of `acc` after a recorded
 * read not ordered before it (another thread of the CTA without synchronization, or another CTA),
 * or after such a strong load that the write, a strong one (`acc.atomic`), is not morally strong
 * with (TensorShadow.checkReaders).
 */
export function checkReads(acc: GlobalAccess, verb = acc.verb): void {
  const site = acc.atomic ? acc.site : -1;
  const hit = acc.buf.shadow.checkReaders(acc.addr, acc.n, acc.thread, site);
  if (hit) reportRace(acc, "TX6013", verb, globalAt(acc), hit, "read");
}

// ---------------------------------------------------------------- asynchronous copies

/**
 * An asynchronous write (`acc.verb`: a cp.async or bulk copy issue) of shared bytes: TX6007 when
 * a pending shared → global bulk copy has not read them yet, or when they are the destination of
 * a global → shared bulk copy in flight or not yet observed by the thread; TX6024 on a wgmma
 * operand; TX6013/TX6014 when the copy's write (which lands later) races with an earlier access.
 */
export function checkAsyncWrite(acc: SharedAccess): void {
  const m = acc.m;
  const sh = m.shadow;
  const a = acc.addr;
  const n = acc.n;
  const t = acc.thread;
  // Bytes with the CTA-start records in a CTA with no bulk copy, wgmma operand or atomic record:
  // nothing below could find anything (the common cp.async issue into a fresh tile).
  if (!m.bulk.active && m.wgmma.tracked === 0 && sh.atomicRecords === 0 && sh.fresh(a, n)) {
    return;
  }
  if (m.wgmma.tracked > 0) m.wgmma.checkWrite(acc);
  if (m.bulk.active) {
    // Only a CTA with bulk copies has bytes they guard.
    const s2g = m.bulk.firstUnread(a, n);
    const b = sh.firstGuardedWrite(a, n, t, s2g, m.bulk);
    if (b >= 0) {
      if (b === s2g) reportS2gSource(acc, b, acc.verb);
      else m.bulk.reportGuard(acc, b, sh.guardAt(b), acc.verb);
      return;
    }
  }
  // The copy writes at some point before it completes: it races with unordered earlier accesses.
  const hit = sh.onWrite(t, acc.site, a, n, false, m.isAtomicSite, false);
  if (hit) reportWriteRace(acc, acc.verb, sharedAt(m, acc.buf, a, n), hit);
}

/**
 * TX6007: an access (`verb`, by default the record's) of global bytes of `acc` that a pending
 * shared → global bulk copy writes (an atomic access: a pending bulk copy that is no reduction).
 */
export function checkGlobalBulkWrite(acc: GlobalAccess, verb = acc.verb): void {
  const m = acc.m;
  const b = m.bulk.firstBulkWrite(m, acc.buf, acc.addr, acc.n, acc.atomic);
  if (b >= 0) reportBulkDestination(acc, b, verb);
}

/**
 * True when the `n` bytes at byte `addr` (relative to the buffer) of `acc.buf` lie inside it;
 * otherwise TX6005 (`acc.verb` of memory `space`), false.
 */
export function checkBounds(acc: Access<Placed>, space: string): boolean {
  const rel = acc.addr;
  if (rel >= 0 && rel + acc.n <= acc.buf.size) return true;
  reportOob(acc, space, acc.buf.size);
  return false;
}
