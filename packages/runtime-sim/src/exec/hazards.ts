import type { Note } from "@tirx-ts/core";
import { THREAD_BITS, THREAD_MASK, type GlobalMem, type Machine, type Placed } from "./machine.js";

/**
 * Per-byte hazard checks of ordinary loads and stores, and of the bytes asynchronous copies
 * (cp.async, bulk) write. Each fast path is a loop over the bytes of one access reading typed
 * arrays; the report (slow) path builds the message and notes.
 * Codes: TX6001 pending cp.async target, TX6002 global write under a pending cp.async read,
 * TX6003 read of another thread's write in the same barrier epoch, TX6004 never-written shared,
 * TX6005 out of bounds, TX6007 bulk-copy bytes accessed too early (see BulkUnit).
 */

function writerNote(m: Machine, w: number, what: string): Note {
  return {
    message: `thread ${m.thread(w & THREAD_MASK)} ${what} here`,
    span: m.sites[w >> THREAD_BITS],
  };
}

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
  const wr = m.shWriter;
  const ep = m.shEpoch;
  const bk = m.shBulk;
  const epoch = m.epoch;
  // The guard of a bulk copy this thread passed already (bytes of one copy come in runs).
  let passed = 0;
  for (let i = 0; i < n; i++) {
    const b = a + i;
    const w = wr[b]!;
    const g = bk[b]!;
    if (
      pend[b] !== 0 ||
      w < 0 ||
      (g !== 0 && g !== passed) ||
      (ep[b] === epoch && (w & THREAD_MASK) !== t)
    ) {
      if (reportSharedRead(m, buf, b, t, site)) return;
      passed = g;
    }
  }
}

/** The slow path of a shared read of byte `b`: reports and returns true, or finds it fine. */
function reportSharedRead(m: Machine, buf: Placed, b: number, t: number, site: number): boolean {
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
  const at = `shared "${buf.name}" byte ${b - buf.base}`;
  const w = m.shWriter[b]!;
  if (w < 0) {
    const notes = buf.span
      ? [
          {
            message: `"${buf.name}" is allocated here; shared memory starts uninitialised`,
            span: buf.span,
          },
        ]
      : [];
    m.hazard("TX6004", `${who} reads ${at}, which nothing has written since launch`, site, notes);
    return true;
  }
  m.hazard(
    "TX6003",
    `${who} reads ${at}, which thread ${m.thread(w & THREAD_MASK)} wrote with no cta_sync in between`,
    site,
    [writerNote(m, w, "wrote it")],
  );
  return true;
}

function pendingAccess(
  m: Machine,
  buf: Placed,
  b: number,
  t: number,
  site: number,
  verb: string,
): void {
  m.hazard(
    "TX6001",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared "${buf.name}" byte ${b - buf.base} while a cp.async targeting it has not been waited for (cp.async.wait_group)`,
    site,
    issuedNotes(m, m.async.findByDst(b), "the cp.async"),
  );
}

/** A shared store of `n` bytes at absolute shared byte `a` by thread `t`; records the writer. */
export function checkSharedWrite(
  m: Machine,
  buf: Placed,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  const pend = m.shPending;
  const s2g = m.shS2g;
  const bk = m.shBulk;
  for (let i = 0; i < n; i++) {
    const b = a + i;
    if (pend[b] !== 0 || s2g[b] !== 0 || bk[b] !== 0) {
      if (pend[b] !== 0) {
        pendingAccess(m, buf, b, t, site, "writes");
        break;
      }
      if (reportBulkWrite(m, buf, b, t, site, "writes")) break;
    }
  }
  const w = (site << THREAD_BITS) | t;
  const epoch = m.epoch;
  for (let i = 0; i < n; i++) {
    m.shWriter[a + i] = w;
    m.shEpoch[a + i] = epoch;
    bk[a + i] = 0;
  }
}

/**
 * The bytes [a, a + n) an atomic of thread `t` reads and writes, against per-byte `writer` and
 * `epochs` (shared memory's, or a global tensor's): TX6004 for never-written shared bytes, TX6003
 * when another thread wrote them with a plain store in the current barrier epoch. Writes by
 * atomics (sites in `m.atomicSites`) are not races: atomics serialize.
 */
export function checkAtomicAccess(
  m: Machine,
  space: "shared" | "global",
  name: string,
  writer: Int32Array,
  epochs: Int32Array,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  const epoch = m.epoch;
  for (let i = 0; i < n; i++) {
    const w = writer[a + i]!;
    if (w < 0) {
      if (space === "global") continue;
      m.hazard(
        "TX6004",
        `thread ${m.thread(t)} of CTA ${m.cta()} atomically updates shared "${name}", which nothing has written since launch`,
        site,
      );
      return;
    }
    if (
      epochs[a + i] === epoch &&
      (w & THREAD_MASK) !== t &&
      !m.atomicSites.has(w >> THREAD_BITS)
    ) {
      m.hazard(
        "TX6003",
        `thread ${m.thread(t)} of CTA ${m.cta()} atomically updates ${space} "${name}", which thread ${m.thread(w & THREAD_MASK)} wrote with a plain store and no cta_sync in between`,
        site,
        [writerNote(m, w, "wrote it")],
      );
      return;
    }
  }
}

/** A global read of `n` bytes at byte `a` of `gm` by thread `t` (same-CTA races only). */
export function checkGlobalRead(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
): void {
  const wr = gm.meta.writer;
  if (!wr) return;
  if (gm.meta.bulkWrites) checkGlobalBulkWrite(m, gm, a, n, t, site, "reads");
  const ep = gm.meta.epoch!;
  const epoch = m.epoch;
  for (let i = 0; i < n; i++) {
    const b = a + i;
    if (ep[b] === epoch && (wr[b]! & THREAD_MASK) !== t) {
      const w = wr[b]!;
      m.hazard(
        "TX6003",
        `thread ${m.thread(t)} of CTA ${m.cta()} reads global "${gm.name}" byte ${b}, which thread ${m.thread(w & THREAD_MASK)} of the same CTA wrote with no cta_sync in between`,
        site,
        [writerNote(m, w, "wrote it")],
      );
      return;
    }
  }
}

/** A global store of `n` bytes at byte `a` of `gm` by thread `t`; records the writer. */
export function checkGlobalWrite(
  m: Machine,
  gm: GlobalMem,
  a: number,
  n: number,
  t: number,
  site: number,
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
  if (meta.bulkWrites) checkGlobalBulkWrite(m, gm, a, n, t, site, "writes");
  trackWriters(gm);
  const wr = meta.writer!;
  const ep = meta.epoch!;
  const w = (site << THREAD_BITS) | t;
  const epoch = m.epoch;
  for (let i = 0; i < n; i++) {
    wr[a + i] = w;
    ep[a + i] = epoch;
  }
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
  const s2g = m.shS2g;
  const bk = m.shBulk;
  for (let i = 0; i < n; i++) {
    const b = a + i;
    if ((s2g[b] !== 0 || bk[b] !== 0) && reportBulkWrite(m, buf, b, t, site, verb)) return;
  }
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
  t: number,
  site: number,
  verb: string,
): boolean {
  if (m.shS2g[b] !== 0) {
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
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared "${buf.name}" byte ${b - buf.base}, which a pending shared → global bulk copy has not read yet; wait with T.ptx.cp.async_.bulk.wait_group_read first`,
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
  const bw = gm.meta.bulkWrites;
  if (!bw) return;
  for (let i = 0; i < n; i++) {
    if (bw[a + i] !== 0) {
      m.hazard(
        "TX6007",
        `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} global "${gm.name}" byte ${a + i}, which a pending shared → global bulk copy writes; wait with T.ptx.cp.async_.bulk.wait_group first`,
        site,
        issuedNotes(m, m.bulk.findS2g(a + i, gm.index), "the bulk copy", " writing it"),
      );
      return;
    }
  }
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
    meta.writer = writer;
    meta.epoch = epoch;
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
  const notes = span ? [{ message: `"${name}" is declared here`, span }] : [];
  m.hazard(
    "TX6005",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} ${space} "${name}" bytes ${rel}..${rel + n - 1}, outside its ${size} bytes`,
    site,
    notes,
  );
}
