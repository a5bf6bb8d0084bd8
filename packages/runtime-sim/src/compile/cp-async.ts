import { applySwizzle, impure, TirxError, type CpAsyncPlan, type TileApply } from "@tirx-ts/core";
import { checkBounds } from "../exec/hazards.js";
import { accessRecord } from "../exec/context.js";
import { placementOf } from "./access.js";
import type { ExprCompiler } from "./expr.js";
import type { Exec } from "./compiled.js";
import type { Machine } from "../exec/machine.js";
import { Tracer } from "../exec/trace.js";
import { lanesPerPhase, type LaneMove } from "../exec/access-log.js";
import { Affine, affineOf } from "./affine.js";

/**
 * TX6021: a runtime cp.async or bulk-copy address not aligned to `align` bytes (PTX ISA,
 * cp.async: "the source and destination addresses must be aligned to cp-size"; cp.async.bulk:
 * 16 bytes). The verifier proves alignment where it can (TX3014, TX4004); this checks the
 * addresses each thread computes. Tensors start 256-byte aligned, so a global byte offset stands
 * for its address. The copy is skipped.
 */
export function misaligned(
  m: Machine,
  t: number,
  site: number,
  what: string,
  sharedByte: number,
  globalByte: number,
  align: number,
): void {
  const side =
    sharedByte % align !== 0 ? `shared byte ${sharedByte}` : `global byte offset ${globalByte}`;
  m.hazard(
    "TX6021",
    `thread ${m.thread(t)} of CTA ${m.cta()} issues a ${what} at ${side}, which is not ${align}-byte aligned`,
    site,
  );
}

/** Σ r_k * strides[k] over every repeat index in row-major order. */
export function repeatOffsets(shape: readonly number[], strides: readonly number[]): Int32Array {
  let offs = [0];
  shape.forEach((n, k) => {
    const next: number[] = [];
    for (const o of offs) for (let r = 0; r < n; r++) next.push(o + r * strides[k]!);
    offs = next;
  });
  return Int32Array.from(offs);
}

/**
 * A cp.async `tile.apply` (seed: cp.async tile pattern): every active thread issues one copy per
 * repeat index, at the atom addresses of the verified plan. At CTA scope the thread with linear
 * index L adds `(L / 32) * group[0] + (L % 32) * group[1]` bytes on each side. `pred` false
 * issues nothing; `ignore_src` true copies 0 bytes; `src_size` (as uint32) copies that prefix and
 * the rest of the chunk is zeros; a src_size above chunk_bytes, undefined in PTX, is TX6010.
 */
export function compileCpAsync(ec: ExprCompiler, s: TileApply, plan: CpAsyncPlan): Exec {
  const m = ec.m;
  const site = m.site(s.span);
  const dst = placementOf(ec.layout, plan.dst.buffer, s.span);
  const src = placementOf(ec.layout, plan.src.buffer, s.span);
  if (dst.space !== "shared" || src.space !== "global") {
    throw new TirxError(
      "TX3011",
      "cp.async copies from a global tensor parameter to shared memory",
      s.span,
    );
  }
  const chunk = plan.chunkBytes;
  const dBase = ec.num(plan.dst.baseBytes, s.span);
  const sBase = ec.num(plan.src.baseBytes, s.span);
  const cta = plan.scope === "cta";
  const [dw, dl] = cta ? [plan.dst.groupStridesBytes[0]!, plan.dst.groupStridesBytes[1]!] : [0, 0];
  const [sw, sl] = cta ? [plan.src.groupStridesBytes[0]!, plan.src.groupStridesBytes[1]!] : [0, 0];
  const dRep = repeatOffsets(plan.repeatShape, plan.dst.repeatStridesBytes);
  const sRep = repeatOffsets(plan.repeatShape, plan.src.repeatStridesBytes);
  const pred = plan.pred ? ec.num(plan.pred, s.span) : undefined;
  const ignore = plan.ignoreSrc ? ec.num(plan.ignoreSrc, s.span) : undefined;
  const size = plan.srcSize ? ec.num(plan.srcSize, s.span) : undefined;
  const dPlaced = dst.placed;
  const sPlaced = src.placed;
  const k = src.param;
  const au = m.async;
  const per = m.ctaThreads;
  // A swizzled destination: each atom lands at the swizzle of its logical offset (the verifier
  // proved the atom lies in one swizzle atom, TX3025).
  const swz = plan.dst.buffer.layout;
  const R = dRep.length;
  const opName = `cp.async.${plan.opcode.cache}.shared.global`;
  // Fixed for this Machine and placement: read once here, not per copy.
  const dAt = dPlaced.base;
  const rank = m.rank;
  const win = m.win;
  // Consecutive threads' whole chunks at consecutive bytes on both sides issue as one run
  // (AsyncUnit.issueRun), when no operand expression can report anything while it is evaluated
  // (a run is issued before the next report, so reports keep their order).
  const quiet = [plan.dst.baseBytes, plan.src.baseBytes, plan.pred, plan.ignoreSrc, plan.srcSize]
    .filter((e) => e !== undefined)
    .every((e) => !impure(e));
  let rt = 0;
  let rn = 0;
  let rd = 0;
  let rs = 0;
  /**
   * With consecutive chunks on both sides (lane stride one chunk, warp stride 32 chunks) and
   * base addresses the same for every thread, each repeat index of the tile over a block of
   * consecutive threads is one run: thread t's chunk is chunk (t - its CTA's first thread) from
   * each base plus the repeat's offset. Issued so, all repeats at once (AsyncUnit.issueRuns),
   * when the runs do not overlap, both ends of each are in bounds and aligned (so is every chunk
   * between) and none could report; otherwise (false) the lane loop issues and reports thread by
   * thread.
   */
  const blockIssue = (): ((lanes: Int32Array, n: number) => boolean) | undefined => {
    if (!quiet || pred || ignore || size || swz) return undefined;
    if (dl !== chunk || sl !== chunk || dw !== 32 * chunk || sw !== 32 * chunk) return undefined;
    // The least distance between two repeats' destination offsets.
    const sorted = Array.from(dRep).sort((x, y) => x - y);
    let dGap = Infinity;
    for (let r = 1; r < R; r++) dGap = Math.min(dGap, sorted[r]! - sorted[r - 1]!);
    const dsts: number[] = new Array<number>(R).fill(0);
    const srcs: number[] = new Array<number>(R).fill(0);
    const af = new Affine(m);
    const dA = affineOf(ec, af, plan.dst.baseBytes);
    const sA = affineOf(ec, af, plan.src.baseBytes);
    if (!dA || !sA) return undefined;
    return (lanes, n) => {
      // With range checks off (the reference), every thread issues in the lane loop.
      if (!m.opts.rangeChecks || !af.atLanes(lanes, n)) return false;
      const t0 = af.t0;
      if (!dA() || af.b !== 0) return false;
      const d = af.a + (t0 - rank[t0]! * per) * chunk;
      if (!sA() || af.b !== 0) return false;
      const sb = af.a + (t0 - rank[t0]! * per) * chunk;
      const bytes = n * chunk;
      // Each repeat index is a run; they must not overlap (so their issue and completion order,
      // repeat by repeat instead of thread by thread, changes nothing).
      if (R > 1 && dGap < bytes) return false;
      for (let r = 0; r < R; r++) {
        const dr = d + dRep[r]!;
        const sr = sb + sRep[r]!;
        if (!(dr >= 0 && dr + bytes <= dSize && sr >= 0 && sr + bytes <= sSize)) return false;
        if (((dAt + dr) | sr) & (chunk - 1)) return false;
      }
      const at = win[t0]! + dAt;
      for (let r = 0; r < R; r++) {
        dsts[r] = at + d + dRep[r]!;
        srcs[r] = sb + sRep[r]!;
      }
      return au.issueRuns(m, t0, n, dsts, k, srcs, chunk, site);
    };
  };
  const flush = (): void => {
    if (rn > 0) {
      const c = rn;
      rn = 0;
      au.issueRun(m, rt, c, rd, dPlaced, k, rs, chunk, site);
    }
  };
  const dSize = dPlaced.size;
  const sSize = sPlaced.size;
  const dAcc = accessRecord(m, dPlaced, chunk, site, "cp.async writes");
  const sAcc = accessRecord(m, sPlaced, chunk, site, "cp.async reads");
  const block = blockIssue();
  return (lanes, n) => {
    m.opts.tracer?.cpAsyncIssue(Tracer.warpsOf(lanes, n));
    // The access log: moves per (warp, repeat index), recorded as one warp instruction each.
    const log = m.opts.accesses;
    if (block !== undefined && !log && block(lanes, n)) return;
    const byKey = log ? new Map<number, LaneMove[]>() : undefined;
    log?.enter(site);
    const runs = quiet && !log;
    try {
      for (let i = 0; i < n; i++) {
        const t = lanes[i]!;
        if (pred && !pred(t)) continue;
        let len: number = chunk;
        if (ignore && ignore(t)) len = 0;
        else if (size) {
          len = size(t) >>> 0;
          if (len > chunk) {
            flush();
            m.hazard(
              "TX6010",
              `thread ${m.thread(t)} of CTA ${m.cta()} issues cp.async with src_size ${len}, larger than chunk_bytes ${chunk}: undefined behaviour in PTX (cp.async)`,
              site,
            );
            len = chunk; // in collect mode, go on as if the whole chunk were copied
          }
        }
        // The warp's index in its own CTA (threads of a cluster are numbered across its CTAs).
        const wi = (t - rank[t]! * per) >> 5;
        const d0 = dBase(t) + wi * dw + (t & 31) * dl;
        const s0 = sBase(t) + wi * sw + (t & 31) * sl;
        // The thread's CTA window plus the buffer's base: the absolute shared byte of offset 0.
        const at = win[t]! + dAt;
        for (let r = 0; r < R; r++) {
          const d = swz ? applySwizzle(swz, d0 + dRep[r]!) : d0 + dRep[r]!;
          const sb = s0 + sRep[r]!;
          if (!(d >= 0 && d + chunk <= dSize && sb >= 0 && sb + chunk <= sSize)) {
            flush();
            dAcc.addr = d;
            dAcc.thread = t;
            if (!checkBounds(dAcc, "shared")) continue;
            sAcc.addr = sb;
            sAcc.thread = t;
            if (!checkBounds(sAcc, "global")) continue;
          }
          if (((dAt + d) | sb) & (chunk - 1)) {
            flush();
            misaligned(m, t, site, "cp.async", dAt + d, sb, chunk);
            continue;
          }
          if (runs && len === chunk) {
            const o = rn * chunk;
            if (rn > 0 && t === rt + rn && at + d === rd + o && sb === rs + o) {
              rn++;
              continue;
            }
            flush();
            rt = t;
            rn = 1;
            rd = at + d;
            rs = sb;
            continue;
          }
          flush();
          au.issue(m, t, at + d, dPlaced, k, sb, len, chunk, site);
          if (byKey) {
            const key = (t >> 5) * R + r;
            let list = byKey.get(key);
            if (!list) byKey.set(key, (list = []));
            list.push({
              warp: t >> 5,
              lane: t & 31,
              dst: {
                space: "shared",
                name: dPlaced.name,
                byte: d,
                bytes: chunk,
                addr: dPlaced.base + d,
              },
              src: { space: "global", name: sPlaced.name, byte: sb, bytes: len },
            });
          }
        }
      }
      flush();
    } finally {
      rn = 0;
    }
    if (log && byKey) {
      for (const key of [...byKey.keys()].sort((a, b) => a - b)) {
        log.record(
          site,
          s.span,
          opName,
          byKey.get(key)!,
          "dst",
          lanesPerPhase(chunk),
          m.firstCta(),
        );
      }
    }
  };
}
