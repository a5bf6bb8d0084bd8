import {
  applySwizzle,
  bufferName,
  dtypeBytes,
  TirxError,
  tensorMapLaunchDims,
  type TileApply,
  type TmaPlan,
} from "@tirx-ts/core";
import { checkBounds } from "../exec/hazards.js";
import { accessRecord } from "../exec/context.js";
import { Tracer } from "../exec/trace.js";
import type { Machine } from "../exec/machine.js";
import { placementOf } from "./access.js";
import type { ExprCompiler } from "./expr.js";
import type { Exec } from "./compiled.js";

/** One contiguous run of a TMA box: shared offset (logical, in the tile), global byte offset or -1 (out of bounds). */
interface Run {
  readonly tile: number;
  readonly global: number;
  readonly len: number;
}

/**
 * The runs of the box at `coords` (outermost first): for each box row (all indices but the
 * innermost), the in-bounds elements as one run (split further into 16-byte chunks when the
 * tile is swizzled, since TMA permutes 16-byte chunks) and the out-of-bounds ones as runs with
 * `global` -1. Element strides step the global coordinate (`c + i·stride`). `shape` is the
 * tensor's at this launch (its symbolic dims' values).
 */
function boxRuns(
  p: TmaPlan,
  shape: readonly number[],
  coords: readonly number[],
  chunk: number,
): Run[] {
  const m = p.map;
  const rank = shape.length;
  const eb = dtypeBytes(m.dtype);
  const tile = m.box.map((b, k) => Math.ceil(b / m.elementStrides[k]!));
  const inner = tile[rank - 1]!;
  const esIn = m.elementStrides[rank - 1]!;
  const gStrides: number[] = [];
  let acc = eb;
  for (let k = rank - 1; k >= 0; k--) {
    gStrides[k] = acc;
    acc *= shape[k]!;
  }
  const runs: Run[] = [];
  const rows = tile.slice(0, -1).reduce((a, b) => a * b, 1);
  const idx = new Array<number>(rank).fill(0);
  for (let r = 0; r < rows; r++) {
    let rem = r;
    for (let k = rank - 2; k >= 0; k--) {
      idx[k] = rem % tile[k]!;
      rem = Math.floor(rem / tile[k]!);
    }
    let rowIn = true;
    let rowBase = 0;
    for (let k = 0; k < rank - 1; k++) {
      const g = coords[k]! + idx[k]! * m.elementStrides[k]!;
      if (g < 0 || g >= shape[k]!) rowIn = false;
      rowBase += g * gStrides[k]!;
    }
    const tileRow = r * inner * eb;
    // Elements j of the row, split where in-bounds-ness or the chunk changes.
    let j = 0;
    while (j < inner) {
      const g = coords[rank - 1]! + j * esIn;
      const inside = rowIn && g >= 0 && g < shape[rank - 1]!;
      let e = j + 1;
      const chunkEnd = (Math.floor((j * eb) / chunk) + 1) * chunk;
      while (e < inner && e * eb < chunkEnd && esIn === 1) {
        const ge = coords[rank - 1]! + e;
        if ((rowIn && ge >= 0 && ge < shape[rank - 1]!) !== inside) break;
        e++;
      }
      runs.push({
        tile: tileRow + j * eb,
        global: inside ? rowBase + g * gStrides[rank - 1]! : -1,
        len: (e - j) * eb,
      });
      j = e;
    }
  }
  return runs;
}

/** The bytes TMA writes for one out-of-bounds element with the "none" fill: zeros. */
function fillBytes(p: TmaPlan): Uint8Array {
  return new Uint8Array(dtypeBytes(p.map.dtype));
}

/**
 * A TMA `tile.apply` (PTX ISA "cp.async.bulk.tensor"): every active thread whose `pred` holds
 * issues one tensor copy of the map's box at `coords`. A load lands, like a cp.async.bulk copy,
 * when every thread of the CTA (of the cluster) is blocked (see BulkUnit): in-bounds runs are
 * copied from the tensor, out-of-bounds ones filled with zeros, at the shared addresses the
 * buffer's swizzle gives, each run completing its bytes on the mbarrier; its destination is
 * guarded until the phase is observed (TX6007). With `.multicast::cluster` the box lands in
 * every CTA of the cluster whose rank bit is set in `cta_mask`, at the same shared offset, and
 * completes its bytes on the mbarrier at the same offset in each of them; a bit naming no CTA of
 * the cluster is TX6005. A store writes only in-bounds runs, through the thread's bulk
 * async-group. A prefetch only warms L2: nothing to simulate.
 */
export function compileTmaCopy(ec: ExprCompiler, s: TileApply, plan: TmaPlan): Exec {
  const m = ec.m;
  const site = m.site(s.span);
  const dir = plan.opcode.direction;
  const coords = plan.coords.map((c) => ec.num(c, s.span));
  const pred = plan.pred ? ec.num(plan.pred, s.span) : undefined;
  if (dir === "prefetch" || dir === "descriptor") {
    return (lanes, n) => {
      for (let i = 0; i < n; i++) {
        const t = lanes[i]!;
        if (pred && !pred(t)) continue;
        for (const c of coords) c(t); // evaluated, no effect
      }
    };
  }
  const g2s = dir === "g2s";
  if (g2s && plan.map.oobFill === "nan") {
    // The bit pattern of CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA is not documented.
    throw new TirxError(
      "TX2010",
      `tensor map "${plan.map.name}" with oob_fill "nan" is not supported by the simulator (the driver does not document the NaN it writes)`,
      s.span,
    );
  }
  const tileSide = g2s ? plan.dst : plan.src;
  const sh = placementOf(ec.layout, tileSide.buffer, s.span);
  const gl = placementOf(ec.layout, plan.map.buffer, s.span);
  const base = ec.num(tileSide.baseBytes, s.span);
  const bar = g2s ? ec.bar(plan.mbar!, s.span) : undefined;
  const mask = plan.ctaMask ? ec.num(plan.ctaMask, s.span) : undefined;
  const layout = tileSide.buffer.layout;
  const chunk = layout ? 16 : Number.MAX_SAFE_INTEGER;
  const fill = fillBytes(plan);
  const elemBytes = dtypeBytes(plan.map.dtype);
  const bu = m.bulk;
  const k = gl.param;
  const placed = sh.placed;
  const what = g2s
    ? "cp.async.bulk.tensor global → shared"
    : "cp.async.bulk.tensor shared → global";
  const C = m.ctas;
  const stride = m.sharedStride;
  const ranks: number[] = [];
  const box = accessRecord(m, placed, plan.boxBytes, site, "cp.async.bulk.tensor accesses");
  // The tensor's dims at this launch: static, or its symbolic dims' scalar arguments, checked
  // as the driver's encoding would (tensorMapLaunchDims: TX4024 for a stride it refuses).
  const gshape = plan.map.buffer.shape;
  const dimFns = gshape.map((d) => (typeof d === "number" ? undefined : ec.num(d, s.span)));
  const symbolic = dimFns.some((f) => f !== undefined);
  let shape: readonly number[] = symbolic ? [] : (gshape as readonly number[]);
  const shapeOf = (t: number): readonly number[] => {
    if (!symbolic) return shape;
    const now = gshape.map((d, k) => (typeof d === "number" ? d : dimFns[k]!(t)));
    if (now.length === shape.length && now.every((x, k) => x === shape[k])) return shape;
    const r = tensorMapLaunchDims(plan.map, now);
    if (typeof r === "string") throw new TirxError("TX4024", r, s.span);
    return (shape = now);
  };
  return (lanes, n) => {
    m.opts.tracer?.bulkIssue(Tracer.warpsOf(lanes, n), what);
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      if (pred && !pred(t)) continue;
      // The destination CTAs, by rank: the thread's own, or those of the multicast mask.
      ranks.length = 0;
      if (mask) {
        const mk = mask(t) & 0xffff;
        for (let r = 0; r < 16; r++) {
          if (((mk >> r) & 1) === 0) continue;
          if (r < C) ranks.push(r);
          else {
            m.hazard(
              "TX6005",
              `thread ${m.thread(t)} of CTA ${m.cta()} multicasts a TMA copy with cta_mask 0x${mk.toString(16)}, whose bit ${r} names no CTA of its cluster of ${C} (PTX ISA, cp.async.bulk.tensor: ctaMask)`,
              site,
            );
          }
        }
      } else ranks.push(m.rank[t]!);
      if (ranks.length === 0) continue;
      const b0 = base(t);
      box.addr = b0;
      box.thread = t;
      if (!checkBounds(box, "shared")) continue;
      if ((placed.base + b0) % 128 !== 0) {
        m.hazard(
          "TX6018",
          `thread ${m.thread(t)} of CTA ${m.cta()} issues a TMA copy at shared ${bufferName(placed)} byte ${b0}, which is not 128-byte aligned`,
          site,
        );
        continue;
      }
      const at = coords.map((c) => c(t));
      // The box's innermost coordinate in bytes must be a multiple of 16: on the H200 a copy
      // at K block 1 of a float32 [rows, 4] box stopped the kernel with
      // CUDA_ERROR_ILLEGAL_INSTRUCTION at its UTMALDG (compute-sanitizer, 2026-12-03;
      // bench/results/gemm-fp8-2026-12-03d.md); Triton's Gluon TMA tutorial states the rule.
      const inner = at[at.length - 1]! * elemBytes;
      if (inner % 16 !== 0) {
        m.hazard(
          "TX6031",
          `thread ${m.thread(t)} of CTA ${m.cta()} issues a TMA copy of tensor map "${plan.map.name}" at innermost coordinate ${at[at.length - 1]} (${inner} bytes of ${plan.map.dtype}), not a multiple of 16 bytes: on the GPU the copy is an illegal instruction; start the box at a multiple of ${16 / elemBytes} elements and read inside it`,
          site,
        );
        continue;
      }
      const runs = boxRuns(plan, shapeOf(t), at, chunk);
      // The mbarrier's CTA-local address (the same offset in every destination CTA).
      const mbLocal = g2s ? bar!.addr(t) - m.win[t]! : 0;
      for (const r of ranks) {
        const w = r * stride;
        let last = -1;
        let piece = false;
        for (const run of runs) {
          const rel = layout ? applySwizzle(layout, b0 + run.tile) : b0 + run.tile;
          const at = w + placed.base + rel;
          if (g2s) {
            const mb = w + mbLocal;
            if (run.global < 0)
              last = bu.issueG2s(m, t, at, placed, -1, 0, run.len, mb, bar!.bb, site, fill);
            else last = bu.issueG2s(m, t, at, placed, k, run.global, run.len, mb, bar!.bb, site);
          } else if (run.global >= 0) {
            bu.issueS2g(m, t, at, placed, k, run.global, run.len, site, piece);
            piece = true;
          }
        }
        if (g2s && r !== m.rank[t]) {
          const what = `multicasts a TMA copy into shared ${bufferName(placed)}`;
          m.clusterUnit.recordRemoteCopy(t, r, last, site, what);
        }
      }
    }
  };
}
