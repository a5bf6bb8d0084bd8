import { isFloat, type DType } from "../../dtype.js";
import { roundBf16, roundF16 } from "../../numeric/float.js";
import { badDtypes, staticArg, valueArg } from "../define.js";
import type { OpDef, SimValue } from "../op.js";
import { checkWidth, emitShfl } from "./shfl.js";
import { checkMembers, shflC, shuffle } from "./lanes.js";

/** The reductions of TIRx's `warp_reduce` (`op`: "sum" | "max" | "min"). */
export type ReduceKind = "sum" | "max" | "min";

/**
 * Dtypes warp_reduce accepts. float16/bfloat16 combine in their own format at every step
 * (`add.rn.f16`; bfloat16 sums as `fma.rn.bf16 a, 1.0, b`, the same one rounding of a + b, which
 * sm_80 has where `add.bf16` needs sm_90; `min/max.{f16,bf16}`, sm_80), so a 16-bit sum rounds
 * log2(width) times: reduce in float32 where that matters.
 */
export const REDUCE_DTYPES: readonly DType[] = [
  "float16",
  "bfloat16",
  "float32",
  "float64",
  "int32",
  "uint32",
  "int64",
  "uint64",
];

const SUFFIX: Partial<Record<DType, string>> = {
  float16: "f16",
  bfloat16: "bf16",
  float32: "f32",
  float64: "f64",
  int32: "s32",
  uint32: "u32",
  int64: "s64",
  uint64: "u64",
};

/** PTX min/max.f32/f64: a NaN operand yields the other; -0 < +0. */
const fmax = (a: number, b: number): number => (a !== a ? b : b !== b ? a : Math.max(a, b));
const fmin = (a: number, b: number): number => (a !== a ? b : b !== b ? a : Math.min(a, b));

/**
 * The combining step `a op b` of a reduction, as the PTX instruction computes it (`add.f32` is
 * rounded once to float32; integer adds wrap).
 */
export function combine(kind: ReduceKind, dt: DType): (a: SimValue, b: SimValue) => SimValue {
  if (dt === "int64" || dt === "uint64") {
    const wrap = dt === "int64" ? BigInt.asIntN : BigInt.asUintN;
    if (kind === "sum") return (a, b) => wrap(64, (a as bigint) + (b as bigint));
    if (kind === "max") return (a, b) => ((a as bigint) >= (b as bigint) ? a : b);
    return (a, b) => ((a as bigint) <= (b as bigint) ? a : b);
  }
  const x = (f: (a: number, b: number) => number) => (a: SimValue, b: SimValue) =>
    f(a as number, b as number);
  if (kind === "max") return x(isFloat(dt) ? fmax : Math.max);
  if (kind === "min") return x(isFloat(dt) ? fmin : Math.min);
  switch (dt) {
    case "float32":
      return x((a, b) => Math.fround(a + b));
    // The float64 sum of two 16-bit floats rounds innocuously once more (53 ≥ 2·11 + 2).
    case "float16":
      return x((a, b) => roundF16(a + b));
    case "bfloat16":
      return x((a, b) => roundBf16(a + b));
    case "int32":
      return x((a, b) => (a + b) | 0);
    case "uint32":
      return x((a, b) => (a + b) >>> 0);
    default:
      return x((a, b) => a + b);
  }
}

function reduceOp(kind: ReduceKind): OpDef {
  const surface = `T.cuda.warp_${kind}`;
  const ins = kind === "sum" ? "add" : kind;
  return {
    name: `warp_${kind}`,
    family: "warp",
    surface,
    form: "value",
    operands: [valueArg("value"), staticArg("width", 2, 32)],
    result(dts, span) {
      const dt = dts[0]!;
      if (!REDUCE_DTYPES.includes(dt)) throw badDtypes(surface, dts, span);
      return dt;
    },
    signatures: REDUCE_DTYPES.map((dt) => [dt, "int32"]),
    sm: 30,
    ptx: [6, 0],
    source:
      "TIRx warp_reduce: log2(width) steps of __shfl_xor_sync(0xFFFFFFFF, v, m), m = width/2 .. 1 (PTX ISA, shfl.sync)",
    check(args, span) {
      checkWidth(surface, args[1]!, 2, span);
    },
    // Unrolled butterfly: v = v op shfl.bfly(v, m) for m = width/2, ..., 1, full member mask,
    // clamp 31 (whole-warp segment, as __shfl_xor_sync's default width); every lane of a group
    // of `width` ends with the same value.
    lower(c, d, ops, dts) {
      const dt = dts[0]!;
      const width = Number(ops[1]);
      let v = c.toReg(ops[0]!, dt);
      let one: string | undefined;
      for (let m = width >> 1; m >= 1; m >>= 1) {
        const t = c.tmp(dt);
        emitShfl(c, "bfly", t, v, dt, String(m), shflC("bfly", 32), "0xffffffff");
        const nv = m === 1 ? d : c.tmp(dt);
        if (dt === "bfloat16" && ins === "add") {
          // add.bf16 is sm_90; fma.rn.bf16 (sm_80) with b = 1.0 rounds the exact a + c once.
          one ??= c.tmp(dt);
          if (m === width >> 1) c.ins(`mov.b16 ${one}, 0x3F80`);
          c.ins(`fma.rn.bf16 ${nv}, ${v}, ${one}, ${t}`);
        } else c.ins(`${ins}.${SUFFIX[dt]!} ${nv}, ${v}, ${t}`);
        v = nv;
      }
    },
    sim: {
      kind: "warp",
      make(dts) {
        const op = combine(kind, dts[0]!);
        return (w) => {
          checkMembers(w, () => 0xffffffff);
          const width = Number(w.arg(1, w.lanes[0]!));
          let cur = new Map<number, SimValue>();
          for (const l of w.lanes) cur.set(l, w.arg(0, l));
          for (let m = width >> 1; m >= 1; m >>= 1) {
            const next = new Map<number, SimValue>();
            const from = cur;
            shuffle(
              w,
              "bfly",
              0xffffffff,
              (l) => from.get(l)!,
              () => m,
              shflC("bfly", 32),
              (l, t) => next.set(l, op(from.get(l)!, t)),
            );
            cur = next;
          }
          for (const [l, v] of cur) w.set(l, v);
        };
      },
    },
  };
}

/**
 * TIRx's warp reductions `warp_sum`, `warp_max`, `warp_min` (= `warp_reduce(value, op, width)`):
 * a butterfly over groups of `width` adjacent lanes with the full member mask, so every lane of
 * the warp must execute it (TX6011 in the simulator otherwise). The simulator combines in the
 * same order as the PTX (lane l: `v = v op v[l ^ m]`, m = width/2 .. 1), so float sums agree
 * with the GPU bit for bit.
 */
export const REDUCE_OPS: readonly OpDef[] = [reduceOp("sum"), reduceOp("max"), reduceOp("min")];
