import { invariant } from "../../invariant.js";
import type { LowerCtx } from "../op.js";
import { fma32 } from "../../numeric/fma32.js";

/**
 * A straight-line float32 program written once and run two ways: as PTX (every step one
 * IEEE-exact instruction: `add/sub/mul/fma/div/sqrt.rn.f32` without `.ftz`, `cvt`, `mov.b32`,
 * integer bit operations, `setp`, `selp`, `testp`, `min/max.f32`) and on numbers in the
 * simulator, where each step is emulated bit for bit (Math.fround of the float64 result, which is
 * innocuous for +, -, *, /, sqrt of float32 operands since 53 ≥ 2·24 + 2; {@link fma32} for fma).
 * The accurate transcendental ops are such programs, so simulator and GPU agree bit for bit.
 * `V` is a float32 value, `I` an int32 value, `P` a predicate.
 */
export interface F32Seq<V, I, P> {
  /** A float32 constant (must be a float32 value). */
  f(c: number): V;
  add(a: V, b: V): V;
  sub(a: V, b: V): V;
  mul(a: V, b: V): V;
  fma(a: V, b: V, c: V): V;
  div(a: V, b: V): V;
  sqrt(a: V): V;
  /** Round to an integral value, ties to even (`cvt.rni.f32.f32`). */
  rni(a: V): V;
  /** PTX `min`/`max.f32`: a NaN operand yields the other operand. */
  min(a: V, b: V): V;
  max(a: V, b: V): V;
  /** `cvt.rzi.s32.f32` of an integral value in int32 range. */
  toInt(a: V): I;
  /** `cvt.rn.f32.s32`. */
  toF(a: I): V;
  bits(a: V): I;
  fromBits(a: I): V;
  iadd(a: I, b: I | number): I;
  isub(a: I, b: I | number): I;
  iand(a: I, m: number): I;
  ior(a: I, m: number): I;
  /** Arithmetic shift right by a constant. */
  ishr(a: I, k: number): I;
  ishl(a: I, k: number): I;
  /** Float comparisons (`setp.<cmp>.f32`; false when either operand is NaN). */
  lt(a: V, b: V): P;
  gt(a: V, b: V): P;
  eq(a: V, b: V): P;
  /** Signed integer comparison `a > c`. */
  igt(a: I, c: number): P;
  nan(a: V): P;
  /** `p ? a : b`. */
  sel(p: P, a: V, b: V): V;
  seli(p: P, a: I | number, b: I | number): I;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const i32 = new Int32Array(f32.buffer);

/** The float32 bits of a float32 value, as an int32. */
export function f32Bits(x: number): number {
  f32[0] = x;
  return i32[0]!;
}

/** The float32 value of int32 bits. */
export function f32FromBits(b: number): number {
  i32[0] = b | 0;
  return f32[0]!;
}

/** The PTX spelling of a float32 constant (`0f3F800000`). */
export function f32Hex(c: number): string {
  f32[0] = c;
  invariant(f32[0] === c || c !== c, `${c} is not a float32 value`);
  return `0f${u32[0]!.toString(16).toUpperCase().padStart(8, "0")}`;
}

const R = Math.fround;
const pmin = (a: number, b: number, m: (x: number, y: number) => number): number =>
  a !== a ? b : b !== b ? a : m(a, b);

/** The simulator's run of an {@link F32Seq} program: numbers, each step emulated exactly. */
export const SIM_SEQ: F32Seq<number, number, boolean> = {
  f: (c) => {
    invariant(R(c) === c || c !== c, `${c} is not a float32 value`);
    return c;
  },
  add: (a, b) => R(a + b),
  sub: (a, b) => R(a - b),
  mul: (a, b) => R(a * b),
  fma: (a, b, c) => fma32(a, b, c),
  div: (a, b) => R(a / b),
  sqrt: (a) => R(Math.sqrt(a)),
  rni: (a) => {
    if (!Number.isFinite(a) || Math.abs(a) >= 2 ** 23) return a;
    const f = Math.floor(a);
    const d = a - f;
    const r = d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
    return r === 0 && (a < 0 || Object.is(a, -0)) ? -0 : r;
  },
  min: (a, b) => pmin(a, b, Math.min),
  max: (a, b) => pmin(a, b, Math.max),
  toInt: (a) => {
    invariant(Number.isInteger(a) && Math.abs(a) < 2 ** 31, `toInt of ${a}`);
    return a | 0;
  },
  toF: (a) => R(a),
  bits: f32Bits,
  fromBits: f32FromBits,
  iadd: (a, b) => (a + b) | 0,
  isub: (a, b) => (a - b) | 0,
  iand: (a, m) => a & m,
  ior: (a, m) => a | m,
  ishr: (a, k) => a >> k,
  ishl: (a, k) => a << k,
  lt: (a, b) => a < b,
  gt: (a, b) => a > b,
  eq: (a, b) => a === b,
  igt: (a, c) => a > c,
  nan: (a) => a !== a,
  sel: (p, a, b) => (p ? a : b),
  seli: (p, a, b) => (p ? a : b),
};

/** The PTX emission of an {@link F32Seq} program into `c`; values are register names or immediates. */
export function ptxSeq(c: LowerCtx): F32Seq<string, string, string> {
  const fr = (): string => c.tmp("float32");
  const ir = (): string => c.tmp("int32");
  const pr = (): string => c.tmp("bool");
  const f1 = (op: string) => (a: string) => {
    const d = fr();
    c.ins(`${op} ${d}, ${a}`);
    return d;
  };
  const f2 = (op: string) => (a: string, b: string) => {
    const d = fr();
    c.ins(`${op} ${d}, ${a}, ${b}`);
    return d;
  };
  const i2 = (op: string) => (a: string, b: string | number) => {
    const d = ir();
    c.ins(`${op} ${d}, ${a}, ${b}`);
    return d;
  };
  const p2 = (cmp: string) => (a: string, b: string) => {
    const d = pr();
    c.ins(`setp.${cmp}.f32 ${d}, ${a}, ${b}`);
    return d;
  };
  return {
    f: (v) => f32Hex(v),
    add: f2("add.rn.f32"),
    sub: f2("sub.rn.f32"),
    mul: f2("mul.rn.f32"),
    fma: (a, b, x) => {
      const d = fr();
      c.ins(`fma.rn.f32 ${d}, ${a}, ${b}, ${x}`);
      return d;
    },
    div: f2("div.rn.f32"),
    sqrt: f1("sqrt.rn.f32"),
    rni: f1("cvt.rni.f32.f32"),
    min: f2("min.f32"),
    max: f2("max.f32"),
    toInt: (a) => {
      const d = ir();
      c.ins(`cvt.rzi.s32.f32 ${d}, ${a}`);
      return d;
    },
    toF: (a) => {
      const d = fr();
      c.ins(`cvt.rn.f32.s32 ${d}, ${a}`);
      return d;
    },
    bits: (a) => {
      const d = ir();
      c.ins(`mov.b32 ${d}, ${a}`);
      return d;
    },
    fromBits: (a) => {
      const d = fr();
      c.ins(`mov.b32 ${d}, ${a}`);
      return d;
    },
    iadd: i2("add.s32"),
    isub: i2("sub.s32"),
    iand: i2("and.b32"),
    ior: i2("or.b32"),
    ishr: i2("shr.s32"),
    ishl: i2("shl.b32"),
    lt: p2("lt"),
    gt: p2("gt"),
    eq: p2("eq"),
    igt: (a, k) => {
      const d = pr();
      c.ins(`setp.gt.s32 ${d}, ${a}, ${k}`);
      return d;
    },
    nan: (a) => {
      const d = pr();
      c.ins(`testp.notanumber.f32 ${d}, ${a}`);
      return d;
    },
    sel: (p, a, b) => {
      const d = fr();
      c.ins(`selp.f32 ${d}, ${a}, ${b}, ${p}`);
      return d;
    },
    seli: (p, a, b) => {
      const d = ir();
      c.ins(`selp.b32 ${d}, ${a}, ${b}, ${p}`);
      return d;
    },
  };
}
