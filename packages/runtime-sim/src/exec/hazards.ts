import type { Note } from "@tirx-ts/core";
import { THREAD_BITS, THREAD_MASK, type GlobalMem, type Machine, type Placed } from "./machine.js";

/**
 * Per-byte hazard checks of ordinary loads and stores. Each fast path is a loop over the bytes
 * of one element reading typed arrays; the report (slow) path builds the message and notes.
 * Codes: TX6001 pending cp.async target, TX6002 global write under a pending cp.async read,
 * TX6003 read of another thread's write in the same barrier epoch, TX6004 never-written shared,
 * TX6005 out of bounds.
 */

function writerNote(m: Machine, w: number, what: string): Note {
  return {
    message: `thread ${m.thread(w & THREAD_MASK)} ${what} here`,
    span: m.sites[w >> THREAD_BITS],
  };
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
  const epoch = m.epoch;
  for (let i = 0; i < n; i++) {
    const b = a + i;
    const w = wr[b]!;
    if (pend[b] !== 0 || w < 0 || (ep[b] === epoch && (w & THREAD_MASK) !== t)) {
      reportSharedRead(m, buf, b, t, site);
      return;
    }
  }
}

function reportSharedRead(m: Machine, buf: Placed, b: number, t: number, site: number): void {
  const who = `thread ${m.thread(t)} of CTA ${m.cta()}`;
  const at = `shared "${buf.name}" byte ${b - buf.base}`;
  if (m.shPending[b] !== 0) {
    pendingAccess(m, buf, b, t, site, "reads");
    return;
  }
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
    return;
  }
  m.hazard(
    "TX6003",
    `${who} reads ${at}, which thread ${m.thread(w & THREAD_MASK)} wrote with no cta_sync in between`,
    site,
    [writerNote(m, w, "wrote it")],
  );
}

function pendingAccess(
  m: Machine,
  buf: Placed,
  b: number,
  t: number,
  site: number,
  verb: string,
): void {
  const other = m.async.findByDst(b);
  const notes = other
    ? [
        {
          message: `the cp.async (thread ${m.thread(other.thread)}) is issued here`,
          span: m.sites[other.site],
        },
      ]
    : [];
  m.hazard(
    "TX6001",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared "${buf.name}" byte ${b - buf.base} while a cp.async targeting it has not been waited for (cp.async.wait_group)`,
    site,
    notes,
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
  for (let i = 0; i < n; i++) {
    if (pend[a + i] !== 0) {
      pendingAccess(m, buf, a + i, t, site, "writes");
      break;
    }
  }
  const w = (site << THREAD_BITS) | t;
  const epoch = m.epoch;
  for (let i = 0; i < n; i++) {
    m.shWriter[a + i] = w;
    m.shEpoch[a + i] = epoch;
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
        const other = m.async.findBySrc(gm.index, a + i);
        const notes = other
          ? [
              {
                message: `the cp.async (thread ${m.thread(other.thread)}) reading it is issued here`,
                span: m.sites[other.site],
              },
            ]
          : [];
        m.hazard(
          "TX6002",
          `thread ${m.thread(t)} of CTA ${m.cta()} writes global "${gm.name}" byte ${a + i} while a cp.async that reads it is still pending`,
          site,
          notes,
        );
        break;
      }
    }
  }
  if (!meta.writer) {
    meta.writer = new Int32Array(gm.bytes.length).fill(-1);
    meta.epoch = new Int32Array(gm.bytes.length);
  }
  const wr = meta.writer;
  const ep = meta.epoch!;
  const w = (site << THREAD_BITS) | t;
  const epoch = m.epoch;
  for (let i = 0; i < n; i++) {
    wr[a + i] = w;
    ep[a + i] = epoch;
  }
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
