import type { DType } from "../../dtype.js";
import type { LowerCtx } from "../op.js";

/** Which result of the exact float division the lowering produces (see numeric/float-rem.ts). */
export type FloatRemKind = "mod" | "floormod" | "floordiv";

interface Format {
  /** Register widths: `b32`/`b64` bits, `u32`/`u64`, `s32`/`s64`, float `f32`/`f64`. */
  readonly b: string;
  readonly u: string;
  readonly s: string;
  readonly f: string;
  /** Bits integer dtype of the registers. */
  readonly bits: DType;
  /** Stored significand bits, and the bit patterns of the sign, +inf and the canonical NaN. */
  readonly m: number;
  readonly sign: string;
  readonly inf: string;
  readonly nan: string;
  /** Quotient bits kept exactly before the rest is folded into sticky flags. */
  readonly keep: number;
}

const F32: Format = {
  b: "b32",
  u: "u32",
  s: "s32",
  f: "f32",
  bits: "uint32",
  m: 23,
  sign: "0x80000000",
  inf: "0x7F800000",
  nan: "0f7FFFFFFF",
  keep: 40,
};

const F64: Format = {
  b: "b64",
  u: "u64",
  s: "s64",
  f: "f64",
  bits: "uint64",
  m: 52,
  sign: "0x8000000000000000",
  inf: "0x7FF0000000000000",
  nan: "0d7FFFFFFFFFFFFFFF",
  keep: 62,
};

/**
 * Exact `mod` (C fmod), `floormod` (Python `%`) and `floordiv` (floor of the exact quotient,
 * rounded once) of float32 or float64 registers, as the simulator defines them
 * (numeric/float-rem.ts). PTX has no remainder instruction for floats, and `div.rn` followed by
 * `cvt.rmi` and `fma` loses the quotient once it passes 2^24, so the lowering is the long
 * division of the significands (as musl's `fmodf`): one shift-and-subtract step per bit of the
 * exponent difference (at most 278 steps for float32, 2100 for float64), each step producing
 * one quotient bit. The remainder is exact; the first `keep` quotient bits are kept exactly and
 * the rest folded into "any one" / "all ones" flags, enough to round `trunc(|a/b|)` or
 * `trunc(|a/b|) + 1` once with `cvt.rn` (the lowest bit carries the sticky information).
 * Special values: NaN operands, b = 0 or infinite a give NaN for mod/floormod; floordiv gives the
 * IEEE `a / b` for b = 0 or NaN operands and NaN for infinite a.
 */
export function lowerFloatRem(
  kind: FloatRemKind,
  c: LowerCtx,
  d: string,
  aOp: string,
  bOp: string,
  dt: "float32" | "float64",
): void {
  const F = dt === "float32" ? F32 : F64;
  const wide = dt === "float64";
  const ins = (s: string) => c.ins(s);
  const bits = () => c.tmp(F.bits);
  const i32 = () => c.tmp("int32");
  const pred = () => c.tmp("bool");
  const a = c.toReg(aOp, dt);
  const b = c.toReg(bOp, dt);
  const [ua, ub, sa, sb, ax, bx, sq, rb] = [
    bits(),
    bits(),
    bits(),
    bits(),
    bits(),
    bits(),
    bits(),
    bits(),
  ];
  const [mx, my, t] = [bits(), bits(), bits()];
  const [ex, ey, lz, dd, i, s, sh] = [i32(), i32(), i32(), i32(), i32(), i32(), i32()];
  const q = c.tmp("uint64");
  const bit = c.tmp("uint64");
  const [pn, pz, pb, pk, pl, any, all, psm] = [
    pred(),
    pred(),
    pred(),
    pred(),
    pred(),
    pred(),
    pred(),
    pred(),
  ];
  const [done, loop, remDone] = [
    c.newLabel("rem_done"),
    c.newLabel("rem_loop"),
    c.newLabel("rem_built"),
  ];
  const top = (wide ? 63 : 31) - F.m; // clz of a significand whose leading one is at bit m
  const implicit = wide ? "0x0010000000000000" : "0x00800000";
  const mantMask = wide ? "0x000FFFFFFFFFFFFF" : "0x007FFFFF";

  ins(`mov.${F.b} ${ua}, ${a}`);
  ins(`mov.${F.b} ${ub}, ${b}`);
  ins(`and.${F.b} ${sa}, ${ua}, ${F.sign}`);
  ins(`and.${F.b} ${sb}, ${ub}, ${F.sign}`);
  ins(`xor.${F.b} ${sq}, ${sa}, ${sb}`);
  ins(`xor.${F.b} ${ax}, ${ua}, ${sa}`);
  ins(`xor.${F.b} ${bx}, ${ub}, ${sb}`);
  // NaN operand, b = 0, or infinite a: no finite remainder.
  ins(`setp.gt.${F.u} ${pn}, ${ax}, ${F.inf}`);
  ins(`setp.gt.or.${F.u} ${pn}, ${bx}, ${F.inf}, ${pn}`);
  ins(`setp.eq.or.${F.u} ${pn}, ${bx}, 0, ${pn}`);
  ins(`setp.eq.or.${F.u} ${pn}, ${ax}, ${F.inf}, ${pn}`);
  // Defaults for |a| < |b| (infinite b included): remainder a, quotient 0.
  ins(`mov.${F.b} ${rb}, ${ua}`);
  ins(`mov.u64 ${q}, 0`);
  ins(`mov.s32 ${s}, 0`);
  ins(`setp.ne.${F.u} ${any}, ${ua}, ${ua}`);
  ins(`setp.eq.${F.u} ${all}, ${ua}, ${ua}`);
  ins(`setp.lt.or.${F.u} ${psm}, ${ax}, ${bx}, ${pn}`);
  ins(`@${psm} bra ${done}`);

  // Significands with the leading one at bit m, and their exponents (subnormals normalized).
  const unpack = (x: string, m: string, e: string) => {
    if (wide) {
      ins(`shr.${F.u} ${t}, ${x}, ${F.m}`);
      ins(`cvt.u32.u64 ${e}, ${t}`);
    } else {
      ins(`shr.u32 ${e}, ${x}, ${F.m}`);
    }
    ins(`and.${F.b} ${m}, ${x}, ${mantMask}`);
    ins(`setp.eq.s32 ${pz}, ${e}, 0`);
    ins(`@!${pz} or.${F.b} ${m}, ${m}, ${implicit}`);
    ins(`@${pz} clz.${F.b} ${lz}, ${m}`);
    ins(`@${pz} sub.s32 ${lz}, ${lz}, ${top}`);
    ins(`@${pz} shl.${F.b} ${m}, ${m}, ${lz}`);
    ins(`@${pz} sub.s32 ${e}, 1, ${lz}`);
  };
  unpack(ax, mx, ex);
  unpack(bx, my, ey);

  // Long division: dd + 1 quotient bits, most significant first.
  ins(`sub.s32 ${dd}, ${ex}, ${ey}`);
  ins(`mov.s32 ${i}, 0`);
  c.label(loop);
  ins(`sub.${F.s} ${t}, ${mx}, ${my}`);
  ins(`setp.ge.${F.s} ${pb}, ${t}, 0`);
  ins(`@${pb} mov.${F.b} ${mx}, ${t}`);
  ins(`selp.u64 ${bit}, 1, 0, ${pb}`);
  ins(`setp.lt.s32 ${pk}, ${i}, ${F.keep}`);
  ins(`@${pk} shl.b64 ${q}, ${q}, 1`);
  ins(`@${pk} or.b64 ${q}, ${q}, ${bit}`);
  ins(`@!${pk} or.pred ${any}, ${any}, ${pb}`);
  ins(`@!${pk} and.pred ${all}, ${all}, ${pb}`);
  ins(`@!${pk} add.s32 ${s}, ${s}, 1`);
  ins(`add.s32 ${i}, ${i}, 1`);
  ins(`setp.le.s32 ${pl}, ${i}, ${dd}`);
  ins(`@${pl} shl.${F.b} ${mx}, ${mx}, 1`);
  ins(`@${pl} bra ${loop}`);

  // The remainder mx * 2^(ey - m), with a's sign; exact in the format (subnormal if need be).
  ins(`setp.eq.${F.u} ${pz}, ${mx}, 0`);
  ins(`@${pz} mov.${F.b} ${rb}, ${sa}`);
  ins(`@${pz} bra ${remDone}`);
  ins(`clz.${F.b} ${lz}, ${mx}`);
  ins(`sub.s32 ${lz}, ${lz}, ${top}`);
  ins(`shl.${F.b} ${mx}, ${mx}, ${lz}`);
  ins(`sub.s32 ${ey}, ${ey}, ${lz}`);
  ins(`setp.lt.s32 ${pz}, ${ey}, 1`);
  ins(`@${pz} sub.s32 ${sh}, 1, ${ey}`);
  ins(`@${pz} shr.${F.u} ${mx}, ${mx}, ${sh}`);
  ins(`@${pz} mov.s32 ${ey}, 1`);
  ins(`sub.s32 ${ey}, ${ey}, 1`);
  if (wide) {
    ins(`cvt.u64.u32 ${t}, ${ey}`);
    ins(`shl.b64 ${t}, ${t}, ${F.m}`);
  } else {
    ins(`shl.b32 ${t}, ${ey}, ${F.m}`);
  }
  ins(`add.${F.u} ${rb}, ${t}, ${mx}`);
  ins(`or.${F.b} ${rb}, ${rb}, ${sa}`);
  c.label(remDone);
  c.label(done);

  const r = c.tmp(dt);
  ins(`mov.${F.b} ${r}, ${rb}`);
  if (kind === "mod") {
    ins(`selp.${F.f} ${d}, ${F.nan}, ${r}, ${pn}`);
    return;
  }
  // r != 0 and its sign (a's) differs from b's.
  const pnz = pred();
  const pfix = pred();
  ins(`xor.${F.b} ${t}, ${rb}, ${sa}`);
  ins(`setp.ne.${F.u} ${pnz}, ${t}, 0`);
  ins(`setp.ne.and.${F.u} ${pfix}, ${sq}, 0, ${pnz}`);
  if (kind === "floormod") {
    ins(`@${pfix} add.rn.${F.f} ${r}, ${r}, ${b}`);
    ins(`@!${pnz} mov.${F.b} ${r}, ${sb}`);
    ins(`selp.${F.f} ${d}, ${F.nan}, ${r}, ${pn}`);
    return;
  }
  // floordiv: V = trunc(|a/b|) + pfix = q * 2^s + low + pfix, rounded once, with the sign of a/b.
  const [pinc, st, tmp] = [pred(), pred(), pred()];
  ins(`and.pred ${pinc}, ${pfix}, ${all}`);
  ins(`@${pinc} add.u64 ${q}, ${q}, 1`);
  ins(`not.pred ${tmp}, ${all}`);
  // sticky = s > 0 and (pfix ? not all : any)
  ins(`and.pred ${tmp}, ${tmp}, ${pfix}`);
  ins(`not.pred ${st}, ${pfix}`);
  ins(`and.pred ${st}, ${st}, ${any}`);
  ins(`or.pred ${st}, ${st}, ${tmp}`);
  ins(`setp.gt.and.s32 ${st}, ${s}, 0, ${st}`);
  ins(`selp.u64 ${bit}, 1, 0, ${st}`);
  ins(`shl.b64 ${q}, ${q}, 1`);
  ins(`or.b64 ${q}, ${q}, ${bit}`);
  // scale = 2^(s - 1) as a float64 (s - 1 clamped where the result overflows anyway).
  const v = c.tmp("float64");
  const scale = c.tmp("float64");
  const e64 = c.tmp("uint64");
  ins(`cvt.rn.f64.u64 ${v}, ${q}`);
  ins(`min.s32 ${s}, ${s}, 1024`);
  ins(`add.s32 ${s}, ${s}, 1022`);
  ins(`cvt.u64.u32 ${e64}, ${s}`);
  ins(`shl.b64 ${e64}, ${e64}, 52`);
  ins(`mov.b64 ${scale}, ${e64}`);
  if (wide) {
    ins(`mul.rn.f64 ${r}, ${v}, ${scale}`);
  } else {
    ins(`mul.rn.f64 ${v}, ${v}, ${scale}`);
    ins(`cvt.rn.f32.f64 ${r}, ${v}`);
  }
  ins(`mov.${F.b} ${t}, ${r}`);
  ins(`or.${F.b} ${t}, ${t}, ${sq}`);
  ins(`mov.${F.b} ${r}, ${t}`);
  // Special operands: a / b, except NaN for infinite a and nonzero b.
  const sp = c.tmp(dt);
  ins(`div.rn.${F.f} ${sp}, ${a}, ${b}`);
  ins(`setp.eq.${F.u} ${tmp}, ${ax}, ${F.inf}`);
  ins(`setp.ne.and.${F.u} ${tmp}, ${bx}, 0, ${tmp}`);
  ins(`@${tmp} mov.${F.f} ${sp}, ${F.nan}`);
  ins(`selp.${F.f} ${d}, ${sp}, ${r}, ${pn}`);
}
