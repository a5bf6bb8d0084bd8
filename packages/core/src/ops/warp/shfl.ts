import { TirxError } from "../../diagnostics.js";
import type { DType } from "../../dtype.js";
import { constInt, type Expr } from "../../ir/expr.js";
import type { Span } from "../../span.js";
import { badDtypes, staticArg, valueArg } from "../define.js";
import type { LowerCtx, OpDef } from "../op.js";
import { checkMembers, shflC, shuffle, type ShflMode } from "./lanes.js";

/** Dtypes a shuffle moves: 32-bit ones directly, narrower ones widened, 64-bit ones in halves. */
export const SHFL_DTYPES: readonly DType[] = [
  "int32",
  "uint32",
  "float32",
  "int64",
  "uint64",
  "float64",
  "float16",
  "bfloat16",
  "int8",
  "int16",
  "uint8",
  "uint16",
  "bool",
];

const MASK_DTYPES: readonly DType[] = ["uint32", "int32"];

/**
 * TX2010 unless `args[i]` is a static power of two in [lo, 32] (CUDA's `width`, TIRx's
 * warp_reduce `width`).
 */
export function checkWidth(surface: string, e: Expr, lo: number, span?: Span): number {
  const w = constInt(e);
  if (w === undefined || w < lo || w > 32 || (w & (w - 1)) !== 0) {
    throw new TirxError(
      "TX2010",
      `width of ${surface} must be a static power of two in ${lo}..32, got ${w ?? "a runtime value"}`,
      span,
    );
  }
  return w;
}

/**
 * Emit `shfl.sync.mode.b32` of `a` (a register or immediate of `dt`) into `d`, widening 8/16-bit
 * and bool values to 32 bits and splitting 64-bit ones into two shuffles of their halves.
 */
export function emitShfl(
  c: LowerCtx,
  mode: ShflMode,
  d: string,
  a: string,
  dt: DType,
  b: string,
  cc: number,
  mask: string,
): void {
  const shfl = (dst: string, src: string): void =>
    c.ins(`shfl.sync.${mode}.b32 ${dst}, ${src}, ${b}, ${cc}, ${mask}`);
  const src = c.toReg(a, dt);
  switch (dt) {
    case "int32":
    case "uint32":
    case "float32":
      return shfl(d, src);
    case "int64":
    case "uint64":
    case "float64": {
      const [lo, hi, lo2, hi2] = [
        c.tmp("uint32"),
        c.tmp("uint32"),
        c.tmp("uint32"),
        c.tmp("uint32"),
      ];
      c.ins(`mov.b64 {${lo}, ${hi}}, ${src}`);
      shfl(lo2, lo);
      shfl(hi2, hi);
      return c.ins(`mov.b64 ${d}, {${lo2}, ${hi2}}`);
    }
    case "float16":
    case "bfloat16": {
      const [r, r2, junk] = [c.tmp("uint32"), c.tmp("uint32"), c.tmp(dt)];
      c.ins(`mov.b32 ${r}, {${src}, ${src}}`);
      shfl(r2, r);
      return c.ins(`mov.b32 {${d}, ${junk}}, ${r2}`);
    }
    case "bool": {
      const [r, r2] = [c.tmp("uint32"), c.tmp("uint32")];
      c.ins(`selp.u32 ${r}, 1, 0, ${src}`);
      shfl(r2, r);
      return c.ins(`setp.ne.u32 ${d}, ${r2}, 0`);
    }
    default: {
      // 8- and 16-bit integers live in 16-bit registers, already extended to 16 bits.
      const [r, r2] = [c.tmp("uint32"), c.tmp("uint32")];
      c.ins(`cvt.u32.u16 ${r}, ${src}`);
      shfl(r2, r);
      return c.ins(`cvt.u16.u32 ${d}, ${r2}`);
    }
  }
}

function shflOp(mode: ShflMode, surface: string, laneName: string): OpDef {
  return {
    name: `shfl.sync.${mode}`,
    family: "warp",
    surface,
    form: "value",
    operands: [
      valueArg("mask", MASK_DTYPES),
      valueArg("value"),
      valueArg(laneName, ["int32", "uint32"]),
      staticArg("width", 1, 32),
    ],
    result(dts, span) {
      const dt = dts[1]!;
      if (!SHFL_DTYPES.includes(dt)) throw badDtypes(surface, dts, span);
      return dt;
    },
    signatures: SHFL_DTYPES.map((dt) => ["uint32", dt, "int32", "int32"]),
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, shfl.sync (sm_30, PTX 6.0; c = ((32 - width) << 8) | clamp)",
    check(args, span) {
      checkWidth(surface, args[3]!, 1, span);
    },
    lower(c, d, ops, dts) {
      const cc = shflC(mode, Number(ops[3]));
      emitShfl(c, mode, d, ops[1]!, dts[1]!, ops[2]!, cc, ops[0]!);
    },
    sim: {
      kind: "warp",
      make: () => (w) => {
        const mask = checkMembers(w, (l) => Number(w.arg(0, l)));
        const cc = shflC(mode, Number(w.arg(3, w.lanes[0]!)));
        shuffle(
          w,
          mode,
          mask,
          (l) => w.arg(1, l),
          (l) => Number(w.arg(2, l)),
          cc,
          (l, v) => w.set(l, v),
        );
      },
    },
  };
}

/**
 * Warp shuffles, in CUDA's argument order `(mask, value, lane|delta|laneMask, width)`
 * (PTX ISA, shfl.sync; CUDA C++ Programming Guide, "Warp Shuffle Functions"). Each executing
 * lane must be named in `mask` and every non-exited lane `mask` names must execute the shuffle;
 * the simulator reports TX6011 otherwise.
 */
export const SHFL_OPS: readonly OpDef[] = [
  shflOp("idx", "T.cuda.__shfl_sync", "src_lane"),
  shflOp("up", "T.cuda.__shfl_up_sync", "delta"),
  shflOp("down", "T.cuda.__shfl_down_sync", "delta"),
  shflOp("bfly", "T.cuda.__shfl_xor_sync", "lane_mask"),
];
