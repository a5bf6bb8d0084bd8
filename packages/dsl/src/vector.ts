import { isLaneValue, isPacked, findOp, TirxError, type DType, type Span } from "@tirx-ts/core";
import { callValueOp } from "./op-call.js";
import { toExpr, type ExprLike, type PrimExpr } from "./expr.js";
import { callerSpan } from "./span.js";

/** The operand dtype of `x` (a JS literal: its default dtype, int32 or float32; no vector has one). */
const dtypeOf = (x: ExprLike, span?: Span): DType => toExpr(x, undefined, span).dtype;

function laneOp(kind: string, args: readonly ExprLike[], span?: Span): PrimExpr {
  const dt = dtypeOf(args[0]!, span);
  return callValueOp(isPacked(dt) ? `x2.${kind}` : `vec.${kind}`, args, span);
}

function lanesArg(surface: string, n: unknown, span?: Span): 2 | 4 | 8 {
  if (n === 2 || n === 4 || n === 8) return n;
  throw new TirxError(
    "TX2010",
    `${surface}: a vector has 2, 4 or 8 lanes (at most 128 bits), got ${JSON.stringify(n)}`,
    span,
  );
}

/**
 * Lane `i` of a pair or vector as a scalar of its lane dtype (`mov`, or `mov.b32 {a, b}` for a
 * 16-bit lane). `i` is a static integer.
 * @throws TirxError TX2010 for a lane past the vector's (or a non-integer), TX2005 for a value
 *   that is no pair or vector.
 */
export function lane(v: ExprLike, i: number): PrimExpr {
  const span = callerSpan();
  const dt = dtypeOf(v, span);
  if (isPacked(dt)) {
    if (i !== 0 && i !== 1) {
      throw new TirxError(
        "TX2010",
        `lane: ${dt} has lanes 0..1, got lane ${JSON.stringify(i)}`,
        span,
      );
    }
    return callValueOp(`x2.unpack.${i}`, [v], span);
  }
  return callValueOp("vec.lane", [v, i], span);
}

/**
 * `T.ptx.vec`: vector values (TVM's dtypes with lanes: `float32x4`, `int32x2`, `float16x8`, …),
 * 2 or 4 registers of 32 bits each (PTX ISA, "Vectors"). Op records in core
 * `ops/arith/vector.ts`; a vector computes one instruction per 32-bit lane or per pair of 16-bit
 * lanes. The pairs `float16x2` / `bfloat16x2` are the one-register case: every surface here also
 * takes them, through the pair records (`T.ptx.x2.*`, `T.ptx.pack` / `unpack`). Vectors load and
 * store through a view of a buffer of the lane dtype, one `ld`/`st.v2`/`.v4` per access:
 * `A.view_as("float32x4").get([i])` reads elements 4i..4i+3 of a float32 buffer.
 * @example
 * const v = X.view_as("float32x4").get([i]); // ld.global.v4.f32
 * const w = T.ptx.vec.fma(v, T.ptx.vec.broadcast(2.0, 4), v);
 * Y.view_as("float32x4").set([i], w); // st.global.v4.f32
 * const s = T.ptx.vec.sum(w); // float32
 */
export const vec = {
  /**
   * `T.ptx.vec.make(x0, …, x{n-1})`: n (2, 4 or 8) scalars of one lane dtype (float32, int32,
   * uint32, float16, bfloat16) as the vector of n lanes, x0 in lane 0 (two 16-bit lanes: a pair,
   * `T.ptx.pack`). @throws TirxError TX2010 (lane count), TX2005 (mixed or unsupported dtypes).
   */
  make: (...xs: ExprLike[]): PrimExpr => {
    const span = callerSpan();
    const n = lanesArg("T.ptx.vec.make", xs.length, span);
    const l = dtypeOf(xs[0]!, span);
    if (n === 2 && (l === "float16" || l === "bfloat16")) return callValueOp("x2.pack", xs, span);
    return callValueOp(`vec.make.x${n}`, xs, span);
  },
  /**
   * `T.ptx.vec.broadcast(x, n)` (TVM `T.Broadcast`): the n-lane vector whose every lane is `x`.
   * @throws TirxError TX2010 (lane count), TX2005 (no vector of n lanes of x's dtype).
   */
  broadcast: (x: ExprLike, n: number): PrimExpr => {
    const span = callerSpan();
    const k = lanesArg("T.ptx.vec.broadcast", n, span);
    const l = dtypeOf(x, span);
    if (k === 2 && (l === "float16" || l === "bfloat16"))
      return callValueOp("x2.pack", [x, x], span);
    return callValueOp(`vec.broadcast.x${k}`, [x], span);
  },
  lane,
  /** Lane-wise `a + b` (`.rn` for floats, wrapping for integers). @throws TirxError TX2005, TX5006. */
  add: (a: ExprLike, b: ExprLike): PrimExpr => laneOp("add", [a, b], callerSpan()),
  /** Lane-wise `a - b`. @throws TirxError TX2005, TX5006 (bfloat16 lanes below sm_90). */
  sub: (a: ExprLike, b: ExprLike): PrimExpr => laneOp("sub", [a, b], callerSpan()),
  /** Lane-wise `a · b` (integers: the low 32 bits). @throws TirxError TX2005, TX5006. */
  mul: (a: ExprLike, b: ExprLike): PrimExpr => laneOp("mul", [a, b], callerSpan()),
  /** Lane-wise `a · b + c`, one rounding (integers: `mad.lo`). @throws TirxError TX2005. */
  fma: (a: ExprLike, b: ExprLike, c: ExprLike): PrimExpr => laneOp("fma", [a, b, c], callerSpan()),
  /** Lane-wise max (a NaN lane gives the other operand's). @throws TirxError TX2005. */
  max: (a: ExprLike, b: ExprLike): PrimExpr => laneOp("max", [a, b], callerSpan()),
  /** Lane-wise min (a NaN lane gives the other operand's). @throws TirxError TX2005. */
  min: (a: ExprLike, b: ExprLike): PrimExpr => laneOp("min", [a, b], callerSpan()),
  /** Lane-wise negation (not on uint32 lanes). @throws TirxError TX2005. */
  neg: (x: ExprLike): PrimExpr => laneOp("neg", [x], callerSpan()),
  /**
   * Each lane converted to the lane dtype of `dtype`, a vector (or pair) of as many lanes:
   * float32 ↔ float16 / bfloat16 / int32 / uint32 (core `ops/arith/vector.ts` castRecord: `.rn`
   * into floats, `.rzi` saturating into integers).
   * @throws TirxError TX2005 for a conversion there is no record of (another lane count, …).
   */
  cast: (v: ExprLike, dtype: DType): PrimExpr => {
    const span = callerSpan();
    const from = dtypeOf(v, span);
    if (!isLaneValue(from) || typeof dtype !== "string") {
      throw new TirxError("TX2005", `T.ptx.vec.cast: ${from} is no pair or vector`, span);
    }
    const name = `vec.cvt.${dtype}.${from}`;
    if (findOp(name) === undefined) {
      throw new TirxError(
        "TX2005",
        `T.ptx.vec.cast: no conversion ${from} → ${JSON.stringify(dtype)}: vectors convert lane by lane between float32 and float16, bfloat16, int32 or uint32 lanes, keeping the lane count`,
        span,
      );
    }
    return callValueOp(name, [v], span);
  },
  /** The lanes' sum as a scalar, in a tree ((l0+l1)+(l2+l3)). 32-bit lanes. @throws TirxError TX2005. */
  sum: (v: ExprLike): PrimExpr => callValueOp("vec.sum", [v], callerSpan()),
  /** The largest lane (NaN lanes ignored unless all are). 32-bit lanes. @throws TirxError TX2005. */
  reduce_max: (v: ExprLike): PrimExpr => callValueOp("vec.reduce_max", [v], callerSpan()),
  /** The smallest lane (NaN lanes ignored unless all are). 32-bit lanes. @throws TirxError TX2005. */
  reduce_min: (v: ExprLike): PrimExpr => callValueOp("vec.reduce_min", [v], callerSpan()),
};
