import {
  axisOutOfRange,
  axisOutOfRangeNote,
  bufferName,
  dtypeBytes,
  type AxisLabel,
  type Note,
  type Scope,
} from "@tirx-ts/core";
import type { Access, GlobalAccess, InFlightCopy, SharedAccess, SimContext } from "./context.js";
import type { Placed } from "./memory.js";
import { THREAD_BITS, THREAD_MASK, type RaceHit, type WriteHit } from "./packed.js";

/**
 * The reports of the hazard checks (exec/hazards.ts): each builds the message and notes of one
 * code for one access record and hands it to the Machine (SimContext.hazard). Slow paths only.
 */

/**
 * The note "`copy` (thread …)`role` is issued here" for the other copy of a report, when one was
 * found.
 */
export function issuedNotes(
  m: SimContext,
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

/**
 * `shared "buf" bytes i..j` of the absolute range [a, a + n) (in a cluster of several CTAs, with
 * the CTA whose window holds them), for messages.
 */
export function sharedAt(m: SimContext, buf: Placed, a: number, n: number): string {
  const i = m.ctaLocal(a) - buf.base;
  const at = `shared ${bufferName(buf)} bytes ${i}..${i + n - 1}`;
  return m.ctas > 1 ? `${at} of CTA ${m.ctaOfRank(m.rankAt(a))}` : at;
}

/** `global "name" bytes i..j` of the access's bytes, for messages. */
export function globalAt(acc: GlobalAccess): string {
  return `global "${acc.buf.name}" bytes ${acc.addr}..${acc.addr + acc.n - 1}`;
}

/**
 * Report a race between the access `acc` (its thread `verb` `at`) and the earlier access `hit`
 * (its thread `otherVerb` them): TX6003 read-after-write, TX6013 write-after-read, TX6014
 * write-after-write. The note points at the other access; a thread of another CTA is named with
 * its CTA.
 */
export function reportRace(
  acc: SharedAccess | GlobalAccess,
  code: "TX6003" | "TX6013" | "TX6014",
  verb: string,
  at: string,
  hit: RaceHit,
  otherVerb: string,
): void {
  const m = acc.m;
  const u = hit.other & THREAD_MASK;
  const cta = m.clocks.otherCta(hit.clock) ? m.clocks.ctaOf(hit.clock) : undefined;
  // A thread of another cluster is named by its rank there (m.thread names the running cluster's).
  const other =
    cta === undefined
      ? `thread ${m.thread(u)}`
      : m.ctas > 1
        ? `thread ${m.threadId(u)} of the CTA of rank ${m.rank[u]} in the cluster of CTA ${cta}`
        : `thread ${m.thread(u)} of CTA ${cta}`;
  const mine = code === "TX6003" ? "read" : "write";
  const theirs = otherVerb === "read" ? "read" : "write";
  const why =
    cta !== undefined
      ? `; no release/acquire or fence orders ${m.ctas > 1 ? "the cluster of " : ""}CTA ${cta}'s ${theirs} before this ${mine} (${m.ctas > 1 ? "clusters" : "CTAs"} of one launch are not ordered with each other unless a release there after the ${theirs}, st.release, atom.release/acq_rel, or fence.acq_rel/fence.sc then a strong write such as an atomic, is observed by an acquire on this side before the ${mine}, ld.acquire, atom.acquire/acq_rel, or a strong read then a fence, in this thread or one a barrier orders before it; PTX ISA, Memory Consistency Model, "Release and Acquire Patterns"; atomics and other strong accesses of one element with .gpu or .sys scope never race with each other)`
      : m.pes > 1 && m.rank[u] !== m.rank[acc.thread]
        ? ` with nothing ordering the two across PEs (a put_signal or signal_op the reader waited for with signal_wait_until, barrier_all, or another release the reader's acquire observed; NVSHMEM memory model, PTX ISA "Release and Acquire Patterns")`
        : ` with no synchronization ordering the two (cta_sync, a named barrier, an mbarrier phase, __syncwarp${m.ctas > 1 ? ", barrier.cluster" : ""})`;
  // Two strong accesses race only when they are not morally strong: say why (scope, size).
  const me = `thread ${m.thread(acc.thread)} of CTA ${m.cta()}`;
  // A strong load's record (write-after-read) and a write that is not strong: say so.
  const moral =
    m.strong.whyNot(hit.other, hit.clock, other, acc.thread, acc.site, me) ??
    (code === "TX6013" ? m.strong.whyNotWithLoad(hit.other, acc.site) : undefined) ??
    "";
  m.hazard(code, `${me} ${verb} ${at}, which ${other} ${otherVerb}${why}${moral}`, acc.site, [
    { message: `${other} ${otherVerb} it here`, span: m.sites[hit.other >> THREAD_BITS] },
  ]);
}

/** Report a write's race (SharedShadow.onWrite): TX6013 after a read, TX6014 after a write. */
export function reportWriteRace(acc: SharedAccess, verb: string, at: string, hit: WriteHit): void {
  if (hit.read) reportRace(acc, "TX6013", verb, at, hit, "read");
  else reportRace(acc, "TX6014", verb, at, hit, "wrote");
}

/** TX6001: the access `acc` (`verb`) of shared byte `b`, which a pending cp.async targets. */
export function pendingAccess(acc: SharedAccess, b: number, verb: string): void {
  const { m, buf, thread: t } = acc;
  const copy = m.async.findByDst(b);
  const why =
    copy && !copy.committed
      ? "was never committed to a group (cp.async.commit_group), so no cp.async.wait_group waits for it"
      : "has not been waited for (cp.async.wait_group)";
  m.hazard(
    "TX6001",
    `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base} while a cp.async targeting it ${why}${copy ? `; ${waitAdvice(m, copy, t, `this ${verb === "reads" ? "read" : "write"}`)}` : ""}`,
    acc.site,
    issuedNotes(m, copy, "the cp.async"),
  );
}

/**
 * What completes the in-flight cp.async `copy` before an access by thread `t`, in words: the
 * smallest wait that covers it is `cp.async.wait_group(copy.later)` in the issuing thread (its
 * groups committed after the copy's own may stay pending), then `cta_sync` when the access is
 * another thread's; an uncommitted copy needs `commit_group` first, then `wait_group(0)`.
 * Source: PTX ISA, cp.async.wait_group ("wait until only N or fewer of the most recent
 * cp.async-groups are pending").
 */
export function waitAdvice(m: SimContext, copy: InFlightCopy, t: number, access: string): string {
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
 * TX6004 for the read `acc` of shared byte `b`, which nothing has written since launch; held
 * for the write that may race with it (Machine.hazard's `hold`).
 */
export function reportUnwritten(acc: SharedAccess, b: number): void {
  const { m, buf } = acc;
  const who = `thread ${m.thread(acc.thread)} of CTA ${m.cta()}`;
  const at = `shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}`;
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
    acc.site,
    notes,
    true,
  );
}

/**
 * TX6028 for the read `acc` of a local buffer (`acc.buf`; `acc.addr`, `acc.n`: its bytes, relative
 * to the thread's local memory) whose byte `b` (relative to the thread's local memory) its thread
 * has not written since its CTA started (exec/local-written.ts): the element holding `b`, as the
 * author indexes the buffer, and a note on the buffer's declaration. Source: PTX ISA,
 * "Initializers" (.reg and .local variables have no defined value before their first write).
 */
export function reportUnwrittenLocal(acc: Access<Placed>, b: number): void {
  const { m, buf } = acc;
  const label = bufferName({ name: buf.name, span: buf.span, scope: "local" });
  const eb = buf.dtype !== undefined ? dtypeBytes(buf.dtype) : 1;
  const e = Math.floor((b - buf.base) / eb);
  const notes = buf.span
    ? [
        {
          message: `${label} is declared here; a register array starts with no defined value (the simulator's reads 0, a GPU's whatever its registers held)`,
          span: buf.span,
        },
      ]
    : [];
  m.hazard(
    "TX6028",
    `thread ${m.thread(acc.thread)} of CTA ${m.cta()} ${acc.verb} local ${label}[${e}], which no instruction of the thread has written since its CTA started; write every element before reading it (T.tile.fill, a store, or the instruction that produces it)`,
    acc.site,
    notes,
  );
}

/**
 * TX6007: shared byte `b` is the source of a bulk copy that has not read it (a shared → global
 * copy before its wait_group.read, a shared::cta → shared::cluster copy in flight).
 */
export function reportS2gSource(acc: SharedAccess, b: number, verb: string): void {
  const { m, buf } = acc;
  const r = m.bulk.sourceReader(b);
  m.hazard(
    "TX6007",
    `thread ${m.thread(acc.thread)} of CTA ${m.cta()} ${verb} shared ${bufferName(buf)} byte ${m.ctaLocal(b) - buf.base}, which ${r?.what ?? "a pending shared → global bulk copy"} has not read yet; ${r?.fix ?? "wait with T.ptx.cp.async_.bulk.wait_group_read first"}`,
    acc.site,
    issuedNotes(m, r, "the bulk copy", " reading it"),
  );
}

/** TX6007: byte `b` of the access `acc` (`verb`) is written by a pending shared → global bulk copy. */
export function reportBulkDestination(acc: GlobalAccess, b: number, verb: string): void {
  const { m, buf: gm } = acc;
  m.hazard(
    "TX6007",
    `thread ${m.thread(acc.thread)} of CTA ${m.cta()} ${verb} global "${gm.name}" byte ${b}, which a pending shared → global bulk copy writes; wait with T.ptx.cp.async_.bulk.wait_group first`,
    acc.site,
    issuedNotes(m, m.bulk.findS2g(b, gm.index), "the bulk copy", " writing it"),
  );
}

/** TX6002: global byte `b` of the access `acc` (`verb`) is read by a pending async copy. */
export function globalPendingRead(acc: GlobalAccess, b: number, verb: string): void {
  const { m, buf: gm } = acc;
  m.hazard(
    "TX6002",
    `thread ${m.thread(acc.thread)} of CTA ${m.cta()} ${verb} global "${gm.name}" byte ${b} while a pending async copy reads it`,
    acc.site,
    pendingReaderNotes(acc, b),
  );
}

/** TX6002 for a write of global byte `b`, which an async copy still pending reads. */
export function reportPendingReadWrite(acc: GlobalAccess, b: number): void {
  const { m, buf: gm } = acc;
  m.hazard(
    "TX6002",
    `thread ${m.thread(acc.thread)} of CTA ${m.cta()} writes global "${gm.name}" byte ${b} while an async copy (cp.async or bulk) that reads it is still pending`,
    acc.site,
    pendingReaderNotes(acc, b),
  );
}

/** The note on the pending async copy (cp.async or bulk) that reads global byte `b`. */
function pendingReaderNotes(acc: GlobalAccess, b: number): Note[] {
  const m = acc.m;
  const i = acc.buf.index;
  const other = m.async.findBySrc(i, b) ?? m.bulk.findBySrc(i, b);
  return issuedNotes(m, other, "the async copy", " reading it");
}

/** The buffer scope of a report's memory space ("global", "shared" or "local"). */
function scopeOf(space: string): Scope {
  return space === "global" ? "global" : space === "local" ? "local" : "shared";
}

/**
 * TX6005: the access `acc` (`verb`) of `n` bytes at byte `addr` of its buffer (`addr` relative
 * to the buffer here), which holds `size` bytes, in memory `space` ("global", "shared" or
 * "local"); the buffer's name and declaration name it.
 */
export function reportOob(acc: Access<Placed>, space: string, size: number): void {
  const { m, buf } = acc;
  const label = bufferName({ name: buf.name, span: buf.span, scope: scopeOf(space) });
  const notes = buf.span ? [{ message: `${label} is declared here`, span: buf.span }] : [];
  const rel = acc.addr;
  m.hazard(
    "TX6005",
    `thread ${m.thread(acc.thread)} of CTA ${m.cta()} ${acc.verb} ${space} ${label} bytes ${rel}..${rel + acc.n - 1}, outside its ${size} bytes`,
    acc.site,
    notes,
  );
}

/**
 * TX6005: the access `acc` (`verb`, of its buffer in memory `space`) with `value` on axis `a`,
 * outside [0, extent) (`extent` its value, or a symbolic dim's name), though its flat offset may
 * lie inside the buffer; named as the verifier names an axis (core's `axisOutOfRange`), with the
 * notes of reportOob's and why the access was skipped.
 */
export function reportAxis(
  acc: Access<Placed>,
  space: string,
  a: AxisLabel,
  extent: number | string,
  value: number,
): void {
  const { m, buf } = acc;
  const label = bufferName({ name: buf.name, span: buf.span, scope: scopeOf(space) });
  const notes: Note[] = buf.span ? [{ message: `${label} is declared here`, span: buf.span }] : [];
  notes.push({ message: axisOutOfRangeNote(`${space} ${label}`) });
  const who = `thread ${m.thread(acc.thread)} of CTA ${m.cta()}`;
  m.hazard(
    "TX6005",
    axisOutOfRange(who, acc.verb, `${space} ${label}`, a, extent, value),
    acc.site,
    notes,
  );
}
