import type { SimContext } from "./context.js";
import { GLOBAL_RANGE_MIN } from "./global-shadow.js";
import type { GlobalMem } from "./memory.js";
import { beforeGlobalWrite } from "./pending-reads.js";

/**
 * Runs of element accesses, decided and recorded as one range (exec/access-batch.ts gathers
 * them): `count` elements of 2^sh bytes at consecutive addresses from `a`, element i accessed by
 * thread `t0 + i`. A warp's or a CTA's `B[row, tid] = s[tid]` is one run per access.
 *
 * Each function here takes a run only when its outcome is certain without per-byte work: the
 * bytes lie in one lazy range entry of the shadow (SharedShadow's entries for shared memory,
 * TensorShadow's for tensors) or are fresh, the threads are consecutive with one clock, and
 * nothing would be reported (no unordered record, nothing pending or guarded, no atomic or
 * overflow record). It then records the run as one entry whose records name each byte's thread
 * and returns true. Otherwise it records nothing and returns false, and the caller checks the
 * run's elements one by one (checkSharedRead and the other element checks), which report exactly
 * as if no run had been formed. The conditions on the Machine's other state (a speculative arm,
 * wgmma operands, bulk copies, pending reads) are checked here; those on the shadow's records by
 * the shadow (SharedShadow.readRun and the others).
 *
 * Strided runs (elements a fixed step of more than their size apart: a column, a transpose) have
 * no range entry; their functions (`...Strided`) decide every element's bytes in one loop with
 * the element checks' own conditions for reporting nothing, and record them per byte as the
 * element checks would, or decline the same way.
 */

/** A run: `count` elements of 2^sh bytes from address `a`, element i by thread `t0 + i`, at `site`. */
export interface Run {
  readonly site: number;
  readonly t0: number;
  readonly count: number;
  readonly a: number;
  readonly sh: number;
}

/** A run of shared loads (checkSharedRead per element; SharedShadow.readRun). */
export function sharedReadRun(m: SimContext, r: Run): boolean {
  if (m.speculative > 0) return false;
  return m.shadow.readRun(r.site, r.t0, r.count, r.a, r.sh);
}

/**
 * A run of shared stores (checkSharedWrite per element; SharedShadow.writeRun): also no wgmma
 * operand is tracked and no pending bulk store still reads the bytes.
 */
export function sharedWriteRun(m: SimContext, r: Run): boolean {
  const n = r.count << r.sh;
  if (m.wgmma.tracked > 0 || m.bulk.firstUnread(r.a, n) >= 0) return false;
  return m.shadow.writeRun(r.site, r.t0, r.count, r.a, r.sh);
}

/**
 * A run of global stores to `gm` (checkGlobalWrite per element; TensorShadow.writeRun): taken
 * when no bulk store is in flight and the tensor's shadow is quiet over the run (no async copy
 * reads the bytes, no atomic or read records there) and takes it. Declining, it may still have
 * made the tensor's pending-read counts and writer records (beforeGlobalWrite, trackWriters),
 * which the element checks make first too.
 */
export function globalWriteRun(m: SimContext, gm: GlobalMem, r: Run): boolean {
  const eb = 1 << r.sh;
  if (r.count << r.sh < GLOBAL_RANGE_MIN || !globalWriteQuiet(m, gm, r.a, r.count, eb, eb)) {
    return false;
  }
  if (!m.clocks.oneClock(r.t0, r.count)) return false;
  const sh = gm.shadow;
  sh.trackWriters();
  return sh.writeRun(r.site, r.t0, r.count, r.a, r.sh);
}

/**
 * The conditions every run of global stores to `gm` shares (`count` elements of `eb` bytes,
 * `step` bytes apart from `a`): no bulk store in flight, and the tensor's shadow quiet there
 * (TensorShadow.quiet). Makes the tensor's pending-read counts first (beforeGlobalWrite), as the
 * element checks do.
 */
function globalWriteQuiet(
  m: SimContext,
  gm: GlobalMem,
  a: number,
  count: number,
  eb: number,
  step: number,
): boolean {
  if (m.bulk.s2gLive > 0) return false;
  beforeGlobalWrite(m, gm);
  return gm.shadow.quiet(a, count, eb, step);
}

/**
 * A run of global loads of `gm` (checkGlobalRead per element): taken when the tensor has no
 * writer records and records no reads in this launch (a tensor the kernel never writes), where
 * the element checks do nothing either.
 */
export function globalReadRun(gm: GlobalMem): boolean {
  return !gm.shadow.watched;
}

/** A strided run of shared loads (checkSharedRead per element; SharedShadow.readStrided). */
export function sharedReadStrided(m: SimContext, r: Run, step: number): boolean {
  if (m.speculative > 0) return false;
  return m.shadow.readStrided(r.site, r.t0, r.count, r.a, r.sh, step);
}

/**
 * A strided run of global stores to `gm` (checkGlobalWrite per element, elements `step` bytes
 * apart; TensorShadow.writeStrided), under the conditions of globalWriteRun.
 */
export function globalWriteStrided(m: SimContext, gm: GlobalMem, r: Run, step: number): boolean {
  if (!globalWriteQuiet(m, gm, r.a, r.count, 1 << r.sh, step)) return false;
  const sh = gm.shadow;
  sh.trackWriters();
  return sh.writeStrided(r.site, r.t0, r.count, r.a, r.sh, step);
}

/**
 * A strided run of shared stores (checkSharedWrite per element; SharedShadow.writeStrided): also
 * no wgmma operand is tracked and no pending bulk store still reads the bytes.
 */
export function sharedWriteStrided(m: SimContext, r: Run, step: number): boolean {
  if (m.wgmma.tracked > 0) return false;
  const span = (r.count - 1) * step + (1 << r.sh);
  if (m.bulk.firstUnread(r.a, span) >= 0) return false;
  return m.shadow.writeStrided(r.site, r.t0, r.count, r.a, r.sh, step);
}
