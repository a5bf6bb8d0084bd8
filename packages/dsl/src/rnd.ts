import { cvtType, isDType, TirxError, type DType, type Span } from "@tirx-ts/core";
import { callValueOp } from "./op-call.js";
import type { ExprLike, PrimExpr } from "./expr.js";
import { callerSpan } from "./span.js";

/** A PTX float rounding modifier: nearest-even, toward zero, toward −∞, toward +∞. */
export type Rnd = "rn" | "rz" | "rm" | "rp";
/** A PTX float → integer rounding modifier (round to an integral value in those directions). */
export type IntRnd = "rni" | "rzi" | "rmi" | "rpi";

const RND: readonly string[] = ["rn", "rz", "rm", "rp"];
const IRND: readonly string[] = ["rni", "rzi", "rmi", "rpi"];

function mode(surface: string, m: unknown, allowed: readonly string[], span?: Span): string {
  if (typeof m === "string" && allowed.includes(m)) return m;
  throw new TirxError(
    "TX2010",
    `${surface}: rounding mode ${JSON.stringify(m)} is not one of ${allowed.map((a) => `"${a}"`).join(", ")} (PTX ISA, "Rounding Modifiers")`,
    span,
  );
}

/**
 * `T.ptx.rnd`: PTX's float arithmetic and conversions with an explicit rounding direction
 * (PTX ISA, "Floating-Point Instructions: add/sub/mul/fma" and "cvt"; op records in core
 * `ops/arith/rounding.ts`). `rn` rounds to nearest (ties to even), `rz` toward zero, `rm` toward
 * −∞, `rp` toward +∞; overflow gives ±∞ or ±max-finite as IEEE 754 §7.4 says for that direction.
 * float32/float64 take every mode; float16/bfloat16 only `rn` (the ISA's half-precision forms;
 * bfloat16 add/sub/mul need sm_90). The simulator computes each exactly and rounds once.
 * @example T.ptx.rnd.add(a, b, "rz") // add.rz.f32 for float32 a, b
 * @example T.ptx.rnd.cvt(x, "int32", "rmi") // cvt.rmi.s32.f32: floor, clamped, NaN → 0
 */
export const rnd = {
  /**
   * `add.<mode>.<type> d, a, b`: a + b rounded once in direction `mode`; a, b of one float dtype.
   * @throws TirxError TX2010 for an unknown mode, TX2005 for a dtype the mode lacks.
   */
  add: (a: ExprLike, b: ExprLike, m: Rnd): PrimExpr => {
    const span = callerSpan();
    return callValueOp(`add.${mode("T.ptx.rnd.add", m, RND, span)}`, [a, b], span);
  },
  /** `sub.<mode>.<type> d, a, b`: a − b rounded once in direction `mode`. @throws TirxError TX2010, TX2005. */
  sub: (a: ExprLike, b: ExprLike, m: Rnd): PrimExpr => {
    const span = callerSpan();
    return callValueOp(`sub.${mode("T.ptx.rnd.sub", m, RND, span)}`, [a, b], span);
  },
  /** `mul.<mode>.<type> d, a, b`: a · b rounded once in direction `mode`. @throws TirxError TX2010, TX2005. */
  mul: (a: ExprLike, b: ExprLike, m: Rnd): PrimExpr => {
    const span = callerSpan();
    return callValueOp(`mul.${mode("T.ptx.rnd.mul", m, RND, span)}`, [a, b], span);
  },
  /**
   * `fma.<mode>.<type> d, a, b, c`: a · b + c with one rounding in direction `mode` (float16 and
   * bfloat16: `rn` only). @throws TirxError TX2010, TX2005.
   */
  fma: (a: ExprLike, b: ExprLike, c: ExprLike, m: Rnd): PrimExpr => {
    const span = callerSpan();
    return callValueOp(`fma.${mode("T.ptx.rnd.fma", m, RND, span)}`, [a, b, c], span);
  },
  /**
   * `cvt.<mode>.<to>.<from> d, x`: `x` converted to dtype `to`. A float `to` takes `rn/rz/rm/rp`
   * from an integer or a float it narrows (float64 → float32/16-bit, float32 → 16-bit, float16 ↔
   * bfloat16); an integer `to` (int8..uint64) takes `rni/rzi/rmi/rpi` from a float, clamped to
   * its range with NaN → 0 (PTX ISA, cvt). bfloat16 with anything but float32 needs sm_90.
   * @throws TirxError TX2010 for an unknown mode or one of the wrong kind for `to`, TX2005 for a
   *   source dtype the conversion lacks (a widening float conversion is exact: use `x.cast(to)`).
   */
  cvt: (x: ExprLike, to: DType, m: Rnd | IntRnd): PrimExpr => {
    const span = callerSpan();
    if (!isDType(to) || to === "bool" || to.startsWith("float8")) {
      throw new TirxError(
        "TX2005",
        `T.ptx.rnd.cvt: destination ${JSON.stringify(to)} is not an integer or a 16/32/64-bit float dtype`,
        span,
      );
    }
    const toFloat = to.startsWith("float") || to === "bfloat16";
    const md = mode("T.ptx.rnd.cvt", m, toFloat ? RND : IRND, span);
    return callValueOp(`cvt.${md}.${cvtType(to)}`, [x], span);
  },
};
