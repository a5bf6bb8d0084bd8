import type { DType } from "../../dtype.js";
import { invariant } from "../../invariant.js";
import type { Span } from "../../span.js";
import { floatRounder } from "../../numeric/float.js";
import { badDtypes, valueArg } from "../define.js";
import type { ApproxBound, LowerCtx, OpDef, ThreadFn } from "../op.js";
import { ptxSeq, SIM_SEQ, f32Hex, type F32Seq } from "./f32-seq.js";
import { exp2Seq, expSeq, log2Seq, logSeq, rsqrtSeq } from "./accurate.js";

/**
 * The transcendental math ops, two records each: the accurate op (`exp`) and the fast
 * approximate op (`exp.approx`, `T.exp(x, { approx: true })`). All compute in float32; 16-bit
 * operands are promoted by `upcastHalf` and the float32 result is rounded once to their format.
 * float64 is refused (TX2005) except for the accurate rsqrt (`sqrt.rn.f64`, `div.rn.f64`).
 *
 * Accurate ops are programs of IEEE-exact PTX instructions (see `F32Seq`): simulator and GPU
 * agree bit for bit; their bounds are measured on the simulator (which is exact emulation), not
 * proved, except rsqrt (< 1.5 ulp: one rounding of sqrt, one of the quotient).
 *
 * Approximate ops are single `.approx` instructions (sin, cos, ex2, lg2, rsqrt, tanh) or
 * `ex2`/`lg2` composed with one `mul.rn.f32` by a float32 constant (exp = ex2(x·log2e), log =
 * lg2(x)·ln2, as CUDA's `__expf`/`__logf`). The hardware approximations cannot be emulated bit for
 * bit: the simulator returns the float64 function of the same (rounded, flushed) argument, rounded
 * to float32 and flushed as `.ftz` flushes, and the documented bound covers the difference.
 */

const HALF_AND_F32: readonly DType[] = ["float16", "bfloat16", "float32"];
const FTZ_MIN = 2 ** -126;

/** `.ftz`: a subnormal float32 becomes a zero of the same sign. */
export function flushF32(x: number): number {
  return x !== 0 && Math.abs(x) < FTZ_MIN ? (x < 0 ? -0 : 0) : x;
}

interface TransSpec {
  readonly name: string;
  readonly doc: string;
  readonly source: string;
  readonly dtypes: readonly DType[];
  readonly sm?: number;
  readonly ptx?: readonly [number, number];
  /** PTX for a float32 (or float64) operand in a register `a`, result into `d`. */
  readonly lower: (c: LowerCtx, d: string, a: string, dt: DType) => void;
  /** The simulator's value on a float32 (or float64) operand, before rounding to the result dtype. */
  readonly sem: (x: number, dt: DType) => number;
  readonly approx: ApproxBound;
}

function record(spec: TransSpec): OpDef {
  const surface = `T.${spec.name.replace(/\.approx$/, "")}`;
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== 1 || !spec.dtypes.includes(dts[0]!)) throw badDtypes(surface, dts, span);
    return dts[0]!;
  };
  return {
    name: spec.name,
    family: "math",
    surface,
    form: "value",
    operands: [valueArg("x")],
    result,
    signatures: spec.dtypes.map((dt) => [dt]),
    sm: spec.sm ?? 30,
    ptx: spec.ptx ?? [6, 0],
    source: `${spec.source}; ${spec.doc}`,
    lower: (c, d, ops, dts) => {
      const dt = dts[0]!;
      invariant(dt === "float32" || dt === "float64", `${surface} on ${dt} reached PTX unpromoted`);
      spec.lower(c, d, c.toReg(ops[0]!, dt), dt);
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const rt = result(dts);
        const r = floatRounder(rt);
        const wide = rt === "float64" ? "float64" : "float32";
        const r32 = floatRounder(wide);
        return ((x: number) => r(r32(spec.sem(x, wide)))) as ThreadFn;
      },
    },
    approx: spec.approx,
  };
}

/** An accurate op: the same `F32Seq` program lowered to PTX and run by the simulator. */
function accurate(
  name: string,
  doc: string,
  prog: <V, I, P>(o: F32Seq<V, I, P>, x: V) => V,
  approx: ApproxBound,
  f64?: { lower: (c: LowerCtx, d: string, a: string) => void; sem: (x: number) => number },
): OpDef {
  return record({
    name,
    doc,
    source:
      "tirx-ts accurate sequence (fdlibm method; PTX ISA add/mul/fma/div/sqrt .rn, cvt, selp)",
    dtypes: f64 ? [...HALF_AND_F32, "float64"] : HALF_AND_F32,
    lower: (c, d, a, dt) => {
      if (dt === "float64") return f64!.lower(c, d, a);
      c.ins(`mov.f32 ${d}, ${prog(ptxSeq(c), a)}`);
    },
    sem: (x, dt) => (dt === "float64" ? f64!.sem(x) : prog(SIM_SEQ, x)),
    approx,
  });
}

const MEASURED =
  "measured on the simulator's exact emulation over 6·10^6 random float32 bit patterns and " +
  "dense samples of the reduced range (max seen: ";

const f1 = (op: string) => (c: LowerCtx, d: string, a: string) => c.ins(`${op} ${d}, ${a}`);
const LOG2E = f32Hex(Math.fround(Math.LOG2E));
const LN2 = f32Hex(Math.fround(Math.LN2));
const F = Math.fround;

/** One `ex2`/`lg2` with a `mul.rn.f32` by a constant before (exp) or after (log). */
const withMul =
  (pre: boolean, op: string, k: string) =>
  (c: LowerCtx, d: string, a: string): void => {
    const t = c.tmp("float32");
    if (pre) {
      c.ins(`mul.rn.f32 ${t}, ${a}, ${k}`);
      c.ins(`${op} ${d}, ${t}`);
    } else {
      c.ins(`${op} ${t}, ${a}`);
      c.ins(`mul.rn.f32 ${d}, ${t}, ${k}`);
    }
  };

const CUDA_INTRINSICS =
  "CUDA C++ Programming Guide, Mathematical Functions, Intrinsic Functions (single precision)";
const CUDA_STANDARD =
  "CUDA C++ Programming Guide, Mathematical Functions, single-precision standard functions";

/** The approximate forms (`.approx` PTX instructions). */
const APPROX_OPS: readonly OpDef[] = [
  record({
    name: "exp2.approx",
    doc: "2^x by ex2.approx.ftz.f32",
    source: "PTX ISA, ex2",
    dtypes: HALF_AND_F32,
    lower: f1("ex2.approx.ftz.f32"),
    sem: (x) => flushF32(F(2 ** flushF32(x))),
    approx: {
      ulp: 2.5,
      viaFloat32: true,
      source: `${CUDA_STANDARD}: exp2f (ex2.approx), 2 ulp from the correctly rounded result, full range`,
      domain: "x ≥ -126 (smaller x give subnormal results, flushed to +0)",
      inDomain: (x) => x >= -126,
    },
  }),
  record({
    name: "exp.approx",
    doc: "e^x as ex2.approx.ftz.f32(x·log2e), log2e rounded to float32 (CUDA __expf)",
    source: "PTX ISA, ex2 and mul",
    dtypes: HALF_AND_F32,
    lower: withMul(true, "ex2.approx.ftz.f32", LOG2E),
    sem: (x) => flushF32(F(2 ** flushF32(F(x * F(Math.LOG2E))))),
    approx: {
      ulp: 2.5,
      ulpPerUnit: 1.173,
      viaFloat32: true,
      source: `${CUDA_INTRINSICS}: __expf, 2 + floor(|1.173·x|) ulp from the correctly rounded result (the growth is the rounding of x·log2e)`,
      domain: "x ≥ -87.33 (smaller x give subnormal results, flushed to +0)",
      inDomain: (x) => x >= -87.33,
    },
  }),
  record({
    name: "log2.approx",
    doc: "log2(x) by lg2.approx.ftz.f32",
    source: "PTX ISA, lg2",
    dtypes: HALF_AND_F32,
    lower: f1("lg2.approx.ftz.f32"),
    sem: (x) => Math.log2(flushF32(x)),
    approx: {
      ulp: 2.5,
      abs: 2 ** -22,
      viaFloat32: true,
      source: `${CUDA_INTRINSICS}: __log2f, absolute error 2^-22 for x in [0.5, 2], else 2 ulp from the correctly rounded result`,
      domain: "x normal (subnormal x are flushed to zero: -inf)",
      inDomain: (x) => x === 0 || !(Math.abs(x) < FTZ_MIN),
    },
  }),
  record({
    name: "log.approx",
    doc: "log(x) as lg2.approx.ftz.f32(x)·ln2, ln2 rounded to float32 (CUDA __logf)",
    source: "PTX ISA, lg2 and mul",
    dtypes: HALF_AND_F32,
    lower: withMul(false, "lg2.approx.ftz.f32", LN2),
    sem: (x) => F(F(Math.log2(flushF32(x))) * F(Math.LN2)),
    approx: {
      ulp: 3.5,
      abs: 2 ** -21.41,
      viaFloat32: true,
      source: `${CUDA_INTRINSICS}: __logf, absolute error 2^-21.41 for x in [0.5, 2], else 3 ulp from the correctly rounded result`,
      domain: "x normal (subnormal x are flushed to zero: -inf)",
      inDomain: (x) => x === 0 || !(Math.abs(x) < FTZ_MIN),
    },
  }),
  record({
    name: "rsqrt.approx",
    doc: "1/sqrt(x) by rsqrt.approx.ftz.f32",
    source: "PTX ISA, rsqrt",
    dtypes: HALF_AND_F32,
    lower: f1("rsqrt.approx.ftz.f32"),
    sem: (x) => flushF32(F(1 / Math.sqrt(flushF32(x)))),
    approx: {
      ulp: 2.5,
      viaFloat32: true,
      source: `${CUDA_STANDARD}: rsqrtf (rsqrt.approx), 2 ulp from the correctly rounded result, full range`,
      domain: "x normal (subnormal x are flushed to zero: ±inf)",
      inDomain: (x) => x === 0 || !(Math.abs(x) < FTZ_MIN),
    },
  }),
  record({
    name: "sin.approx",
    doc: "sin(x) by sin.approx.ftz.f32",
    source: "PTX ISA, sin",
    dtypes: HALF_AND_F32,
    lower: f1("sin.approx.ftz.f32"),
    sem: (x) => flushF32(F(Math.sin(flushF32(x)))),
    approx: {
      ulp: 0,
      abs: 2 ** -21.41,
      viaFloat32: true,
      source: `${CUDA_INTRINSICS}: __sinf, absolute error 2^-21.41 for x in [-π, π], larger otherwise`,
      domain: "-π ≤ x ≤ π",
      inDomain: (x) => Math.abs(x) <= Math.PI,
    },
  }),
  record({
    name: "cos.approx",
    doc: "cos(x) by cos.approx.ftz.f32",
    source: "PTX ISA, cos",
    dtypes: HALF_AND_F32,
    lower: f1("cos.approx.ftz.f32"),
    sem: (x) => flushF32(F(Math.cos(flushF32(x)))),
    approx: {
      ulp: 0,
      abs: 2 ** -21.19,
      viaFloat32: true,
      source: `${CUDA_INTRINSICS}: __cosf, absolute error 2^-21.19 for x in [-π, π], larger otherwise`,
      domain: "-π ≤ x ≤ π",
      inDomain: (x) => Math.abs(x) <= Math.PI,
    },
  }),
  record({
    name: "tanh.approx",
    doc: "tanh(x) by tanh.approx.f32 (sm_75, PTX 7.0; subnormals kept)",
    source: "PTX ISA, tanh",
    dtypes: HALF_AND_F32,
    sm: 75,
    ptx: [7, 0],
    lower: f1("tanh.approx.f32"),
    sem: (x) => F(Math.tanh(x)),
    approx: {
      ulp: 0,
      rel: 2 ** -10.987,
      viaFloat32: true,
      source: "PTX ISA, tanh: maximum relative error 2^-10.987 over the full range",
      domain: "all x",
    },
  }),
];

/** The accurate forms. */
const ACCURATE_OPS: readonly OpDef[] = [
  accurate("exp2", "2^x, range reduction x = n + f and a degree-7 polynomial", exp2Seq, {
    ulp: 2,
    viaFloat32: true,
    source: `${MEASURED}0.92 ulp)`,
    domain: "all x",
  }),
  accurate("exp", "e^x, Cody-Waite reduction by n·ln2 and a degree-7 polynomial", expSeq, {
    ulp: 2,
    viaFloat32: true,
    source: `${MEASURED}0.85 ulp)`,
    domain: "all x",
  }),
  accurate("log", "log(x), x = m·2^e with m in [√½, √2), fdlibm's log(1+f)", logSeq, {
    ulp: 2,
    viaFloat32: true,
    source: `${MEASURED}0.88 ulp)`,
    domain: "all x",
  }),
  accurate("log2", "log2(x) = e + log(1+f)·log2e", log2Seq, {
    ulp: 2,
    viaFloat32: true,
    source: `${MEASURED}1.54 ulp)`,
    domain: "all x",
  }),
  accurate(
    "rsqrt",
    "1/sqrt(x) as sqrt.rn then div.rn",
    rsqrtSeq,
    {
      ulp: 1.5,
      viaFloat32: true,
      source:
        "two correctly rounded steps: 0.5 ulp of the quotient plus < 1 ulp from sqrt's rounding",
      domain: "all x",
    },
    {
      lower: (c, d, a) => {
        const t = c.tmp("float64");
        c.ins(`sqrt.rn.f64 ${t}, ${a}`);
        c.ins(`div.rn.f64 ${d}, 0d3FF0000000000000, ${t}`);
      },
      sem: (x) => 1 / Math.sqrt(x),
    },
  ),
];

/**
 * exp, exp2, log, log2, rsqrt (accurate and approximate), sin, cos, tanh (approximate only: an
 * accurate sin/cos needs Payne–Hanek reduction and is not in the table yet).
 */
export const TRANSCENDENTAL_OPS: readonly OpDef[] = [...ACCURATE_OPS, ...APPROX_OPS];
