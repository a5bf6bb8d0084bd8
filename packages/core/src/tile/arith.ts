import type { DType } from "../dtype.js";
import type { Expr } from "../ir/expr.js";
import type { BinaryOp } from "../ir/expr.js";
import { pairedCast } from "./cast-pair.js";
import { binary, constant, elementwise, ifThenElse, maybeApprox } from "./elementwise.js";
import { asDType, valueOp, type TilePrimitive } from "./primitive.js";

// The elementwise family (TIRx `Tx.tile.fill`, `cast`, `add`, …): one record each, built by
// `elementwise`. Exact ops round once in dst's dtype as the IR's arithmetic does (IEEE
// round-to-nearest-even); `{ approx: true }` picks the PTX `.approx` instruction, whose bound is on
// its op record (core ops/math).

const conv = (ins: readonly Expr[], dtype: DType): Expr[] => ins.map((e) => asDType(e, dtype));

function bin(name: string, op: BinaryOp, doc: string) {
  return elementwise(name, doc, ["a", "b"], (ins, dtype) => {
    const [a, b] = conv(ins, dtype);
    return binary(op, a!, b!);
  });
}

/** A one-operand math op (`src`) that takes `{ approx }` for its PTX `.approx` form. */
function approxUnary(name: "exp" | "exp2" | "log2", doc: string) {
  return elementwise(
    name,
    doc,
    ["src"],
    (ins, dtype, o, ctx) => maybeApprox(name, asDType(ins[0]!, dtype), o, ctx),
    ["approx"],
  );
}

/** `dst[i] = value` for every element. */
export const fill = elementwise("fill", "dst = value (a scalar)", ["value"], (ins, dtype) =>
  asDType(ins[0]!, dtype),
);
/** `dst[i] = 0`. */
export const zero = elementwise("zero", "dst = 0", [], (_ins, dtype) => constant(0, dtype));
/** The element-wise cast: one conversion per slot (see {@link castPrim}). */
const castSlots = elementwise(
  "cast",
  "dst = src converted to dst's dtype (float32 → float16/bfloat16 two slots at a time: cvt.rn.{f16x2,bf16x2}.f32)",
  ["src"],
  (ins, dtype) => asDType(ins[0]!, dtype),
);
/**
 * `T.tile.<scope>.cast(dst, src)`: `dst[i] = (dst dtype) src[i]`, dst a register tile, src a
 * register tile of dst's shape and layout, one that broadcasts to it, or a scalar (the
 * elementwise rules, {@link elementwise}); any dtypes the IR's cast converts. Floats round to
 * nearest even (`cvt.rn`), float → int truncates (`cvt.rzi`), as the IR's cast (PTX ISA, cvt).
 * Lowered per thread over its own slots:
 * - float32 → float16 / bfloat16 with src in dst's layout (slot for slot) and an even extent on
 *   dst's `m` iter of stride 1: two adjacent slots (2k, 2k + 1) at a time, `cvt.rn.f16x2.f32` /
 *   `cvt.rn.bf16x2.f32 d, hi, lo` into one packed register and its halves into dst (PTX ISA, cvt:
 *   sm_80, PTX 7.0, every target tirx-ts has; the same rounding per element, so the same bits:
 *   {@link pairedCast}). For a wgmma accumulator those are adjacent columns of a row, the pairs
 *   wgmma's register A operand takes (one F2FP per pair on sm_90, not one per element and PRMTs);
 * - every other cast (other dtypes, a broadcast or scalar src, an odd extent): one scalar
 *   conversion per slot (`cvt.rn.bf16.f32`, `cvt.f32.f16`, …).
 * @throws TirxError TX2022 as {@link elementwise} (src of another shape or layout that does not
 *   broadcast, a memory operand, a dst without a TileLayout at warp/wg/cta scope).
 */
export const castPrim: typeof castSlots = {
  ...castSlots,
  lower: (args, ctx) => pairedCast(args, ctx) ?? castSlots.lower(args, ctx),
};
/** `dst = a + b`. */
export const add = bin("add", "add", "dst = a + b");
/** `dst = a - b`. */
export const sub = bin("sub", "sub", "dst = a - b");
/** `dst = a * b`. */
export const mul = bin("mul", "mul", "dst = a * b");
/** `dst = a / b`: floats correctly rounded (PTX div.rn), integers truncated toward zero (C's /). */
export const fdiv = bin(
  "fdiv",
  "div",
  "dst = a / b (floats: IEEE division; integers: truncating, C's /)",
);
/** `dst = max(a, b)` (PTX max: a NaN operand yields the other). */
export const maximum = bin("maximum", "max", "dst = max(a, b)");
/** `dst = min(a, b)`. */
export const minimum = bin("minimum", "min", "dst = min(a, b)");
/** `dst = fma(a, b, c)`, rounded once (PTX fma.rn). */
export const fma = elementwise(
  "fma",
  "dst = a * b + c, rounded once",
  ["a", "b", "c"],
  (ins, dtype, _o, ctx) => valueOp("fma", conv(ins, dtype), ctx),
);
/** `dst = e^src`; `{ approx: true }`: ex2.approx-based `__expf`. */
export const exp = approxUnary("exp", "dst = e^src ({ approx } for the PTX .approx form)");
/** `dst = 2^src`; `{ approx: true }`: ex2.approx.ftz.f32. */
export const exp2 = approxUnary("exp2", "dst = 2^src ({ approx } for ex2.approx)");
/** `dst = log2(src)`; `{ approx: true }`: lg2.approx. */
export const log2 = approxUnary("log2", "dst = log2(src) ({ approx } for lg2.approx)");
/** `dst = sqrt(src)`, correctly rounded (sqrt.rn). */
export const sqrt = elementwise("sqrt", "dst = sqrt(src)", ["src"], (ins, dtype, _o, ctx) =>
  valueOp("sqrt", [asDType(ins[0]!, dtype)], ctx),
);
/** `dst = 1 / src`, correctly rounded. */
export const reciprocal = elementwise("reciprocal", "dst = 1 / src", ["src"], (ins, dtype) =>
  binary("div", constant(1, dtype), asDType(ins[0]!, dtype)),
);
const select0 = elementwise("select", "dst = cond ? a : b", ["cond", "a", "b"], (ins, dtype) => {
  const [a, b] = conv(ins.slice(1), dtype);
  return ifThenElse(asDType(ins[0]!, "bool"), a!, b!);
});
/**
 * `dst = cond ? a : b` (both arms evaluated, PTX selp). `cond` is a bool tile (dst's layout, or
 * broadcast), a scalar, or a function of dst's logical indices returning a bool, evaluated per
 * element (TIRx's primitives take reified lambdas, `LambdaExprNode`), e.g. the causal mask of
 * attention's diagonal block, `off` a runtime int32:
 * `T.tile.wg.select(S, ([i, j]) => j.gt(i.add(off)), -Infinity, S)`.
 */
export const select = {
  ...select0,
  doc: "dst = cond ? a : b (cond: a bool tile, a scalar, or a function of dst's indices as one array: ([i, j]) => j.lt(i))",
  operands: [
    { name: "dst", kind: "register" },
    { name: "cond", kind: "predicate" },
    { name: "a", kind: "value" },
    { name: "b", kind: "value" },
  ] as const,
} satisfies TilePrimitive;
/** `dst = src / (1 + e^-src)` (SiLU); `{ approx: true }` uses the .approx exp. */
export const silu = elementwise(
  "silu",
  "dst = src / (1 + e^-src) ({ approx } for the .approx exp)",
  ["src"],
  (ins, dtype, o, ctx) => {
    const x = asDType(ins[0]!, dtype);
    const e = maybeApprox("exp", binary("sub", constant(0, dtype), x), o, ctx);
    return binary("div", x, binary("add", constant(1, dtype), e));
  },
  ["approx"],
);
