// The cases of the differential test: every operator, conversion and per-thread op of the op
// table × every dtype it accepts, each as a kernel `Y[i] = op(X0[i], X1[i], ...)` over random and
// edge inputs, with an independent reference (reference.ts).
import {
  allOps,
  BINARY_OPERATORS,
  COMPARE_OPERATORS,
  DTYPES,
  isFloat,
  isFloat8,
  isLaneValue,
  isPacked,
  isTirxError,
  isVector,
  type ApproxBound,
  type DType,
  type PrimFunc,
} from "@tirx-ts/core";
import { T, callValueOp, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import type { PtxModule } from "@tirx-ts/codegen-ptx";
import { compile } from "tirx-ts";
import {
  decode,
  edges,
  encode,
  fp8Ties,
  ocpFp8Code,
  ocpFp8Value,
  prng,
  random,
  type Value,
} from "./values.js";
import { getFloat16, setFloat16 } from "@petamoriken/float16";
import { warpCases } from "./warp-cases.js";
import { vectorCases } from "./vector-cases.js";
import { fma, refBinary, refCast, refCompare, roundTo, wrap } from "./reference.js";
import { packedExtras, packedReferences, samePairBits } from "./packed-reference.js";
import {
  arithExtras,
  cvtFloatExtras,
  cvtIntExtras,
  refRoundedArith,
  refRoundedCvtFloat,
  refRoundedCvtInt,
  type Dir,
} from "./rounding-reference.js";

/** One op × dtype of the differential test. */
export interface DiffCase {
  /** `add.float32`, `cast.float32.int8`, `tirx.exp.float16` ... */
  readonly id: string;
  /** The op's family, for the counts in the report. */
  readonly family: string;
  /** The operand tensors' dtypes (a packed pair's is uint32: its bits). */
  readonly operands: readonly DType[];
  /** The output tensor's dtype (uint32 for a packed pair). */
  readonly result: DType;
  readonly fn: PrimFunc;
  readonly module: PtxModule;
  /** Operand values, one array per operand, all of length `n`. */
  readonly inputs: readonly (readonly Value[])[];
  readonly n: number;
  /** Raw bytes of each operand tensor. */
  readonly bytes: readonly Uint8Array[];
  /** The reference result, "unspecified" where PTX leaves it machine-specific, or undefined for an approximate op without one. */
  reference(i: number): Value | "unspecified" | undefined;
  /** The output tensor's bytes before the run (default: poisoned with 0xa5). */
  readonly initial?: Uint8Array;
  /** Set for approximate ops: the op's documented bound. */
  readonly approx?: ApproxBound;
  /**
   * Set for packed pair results: equality of the output's uint32 bits with the reference's, lane
   * by lane, a NaN lane equal to any NaN (payloads aside, as `sameValue` for floats).
   */
  readonly same?: (got: Value, want: Value) => boolean;
}

const RANDOM = 2048;

/**
 * Inputs: every combination of edge values (up to 3 operands), then `extra` values per operand
 * (columns padded with random values to one length), then seeded random tuples.
 */
function operandValues(
  dts: readonly DType[],
  seed: number,
  extra?: readonly (readonly Value[])[],
): Value[][] {
  const rnd = prng(seed);
  const cols: Value[][] = dts.map(() => []);
  const es = dts.map(edges);
  const combos = es.reduce((n, e) => n * e.length, 1);
  if (combos <= 2048) {
    for (let k = 0; k < combos; k++) {
      let r = k;
      dts.forEach((_, j) => {
        const e = es[j]!;
        cols[j]!.push(e[r % e.length]!);
        r = Math.floor(r / e.length);
      });
    }
  } else {
    dts.forEach((_, j) => es[j]!.forEach((v) => cols[j]!.push(v)));
    const longest = Math.max(...cols.map((c) => c.length));
    dts.forEach((dt, j) => {
      while (cols[j]!.length < longest) cols[j]!.push(random(dt, rnd));
    });
  }
  if (extra) {
    dts.forEach((_, j) => cols[j]!.push(...(extra[j] ?? [])));
    const longest = Math.max(...cols.map((c) => c.length));
    dts.forEach((dt, j) => {
      while (cols[j]!.length < longest) cols[j]!.push(random(dt, rnd));
    });
  }
  for (let k = 0; k < RANDOM; k++) dts.forEach((dt, j) => cols[j]!.push(random(dt, rnd)));
  // Values exactly as the tensors hold them (edge values such as 257 round in bfloat16).
  return cols.map((col, j) => decode(encode(col, dts[j]!), dts[j]!));
}

let seed = 1;

/**
 * The tensor dtype that carries values of `dt`: a packed pair (float16x2, bfloat16x2; no tensor
 * holds one, TX1027) travels as its uint32 bits, moved by T.ptx.x2.from_bits / bits.
 */
const storage = (dt: DType): DType => (isPacked(dt) ? "uint32" : dt);
/** The dtypes the scalar operator and cast tables run over (pairs and vectors have their own ops). */
const SCALARS = DTYPES.filter((dt) => !isLaneValue(dt));

/** Build the kernel for `body`, or undefined when the op refuses these dtypes (a TirxError). */
function kernel(
  id: string,
  dts: readonly DType[],
  rt: DType,
  n: number,
  body: (xs: PrimExpr[]) => PrimExpr,
): { fn: PrimFunc; module: PtxModule } | undefined {
  const params: Record<string, ReturnType<typeof T.Tensor>> = {};
  dts.forEach((dt, j) => (params[`X${j}`] = T.Tensor([n], storage(dt))));
  params["Y"] = T.Tensor([n], storage(rt));
  const block = 256;
  try {
    const fn = T.function(`diff_${id.replace(/[^A-Za-z0-9]/g, "_")}`, params, (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: Math.ceil(n / block), block }) });
      const i = T.let_("i", T.cuda.block_idx("x").mul(block).add(T.cuda.thread_idx("x")));
      T.if_(i.lt(n), () => {
        const xs = dts.map((dt, j) => {
          const x = (p[`X${j}`] as TileView).get([i]);
          return isPacked(dt) ? T.ptx.x2.from_bits(x, dt) : x;
        });
        const y = body(xs);
        (p["Y"] as TileView).set([i], isPacked(rt) ? T.ptx.x2.bits(y) : y);
      });
    });
    const arch = "sm_90";
    // compile's module (the PTX compileToPtx gives): runCase's compile of the same kernel and
    // options then finds it in the compile cache instead of verifying and emitting it again.
    return { fn, module: compile(fn, { target: "cuda", arch }).module };
  } catch (e) {
    if (isTirxError(e) && (e.code === "TX2005" || e.code === "TX1007")) return undefined;
    throw e;
  }
}

function makeCase(
  family: string,
  id: string,
  dts: readonly DType[],
  rt: DType,
  body: (xs: PrimExpr[]) => PrimExpr,
  ref: (args: Value[]) => Value | "unspecified" | undefined,
  approx?: ApproxBound,
  extra?: readonly (readonly Value[])[],
): DiffCase | undefined {
  const stored = dts.map(storage);
  const inputs = operandValues(stored, seed++, extra);
  const n = inputs[0]?.length ?? RANDOM;
  const k = kernel(id, dts, rt, n, body);
  if (!k) return undefined;
  return {
    id,
    family,
    operands: stored,
    result: storage(rt),
    fn: k.fn,
    module: k.module,
    inputs,
    n,
    bytes: inputs.map((vals, j) => encode(vals, stored[j]!)),
    reference: (i) => ref(inputs.map((c) => c[i]!)),
    ...(approx ? { approx } : {}),
    ...(isPacked(rt) ? { same: samePairBits(rt) } : {}),
  };
}

/** Every case of the differential test, in a stable order. */
export function diffCases(): DiffCase[] {
  return [
    ...threadCases(),
    ...vectorCases((dts, s) => operandValues(dts, s), 100_000),
    ...warpCases(),
  ];
}

/** Cases of operators, conversions and per-thread ops. */
function threadCases(): DiffCase[] {
  seed = 1;
  const out: DiffCase[] = [];
  const push = (c: DiffCase | undefined): void => void (c && out.push(c));
  for (const op of BINARY_OPERATORS) {
    for (const dt of SCALARS) {
      push(
        makeCase(
          "arith",
          `${op}.${dt}`,
          [dt, dt],
          dt,
          ([a, b]) => (a as unknown as Record<string, (x: PrimExpr) => PrimExpr>)[op]!(b!),
          ([a, b]) => refBinary(op, dt, a!, b!),
        ),
      );
    }
  }
  for (const op of COMPARE_OPERATORS) {
    for (const dt of SCALARS) {
      push(
        makeCase(
          "compare",
          `${op}.${dt}`,
          [dt, dt],
          "bool",
          ([a, b]) => (a as unknown as Record<string, (x: PrimExpr) => PrimExpr>)[op]!(b!),
          ([a, b]) => refCompare(op, a!, b!),
        ),
      );
    }
  }
  for (const from of SCALARS) {
    for (const to of SCALARS) {
      if (from === to) continue;
      push(
        makeCase(
          "cast",
          `cast.${from}.${to}`,
          [from],
          to,
          ([a]) => a!.cast(to),
          ([a]) => refCast(a!, from, to),
          undefined,
          // Into float8: every rounding tie and the saturation edge of the format, too.
          isFloat8(to) && isFloat(from) && !isFloat8(from) ? [fp8Ties(to)] : undefined,
        ),
      );
    }
  }
  for (const op of allOps()) {
    // Operators (Binary/Compare nodes) are covered above; here every other per-thread op.
    if (op.form !== "value" || op.sim.kind !== "thread") continue;
    for (const dts of op.signatures) {
      const rt = op.result(dts);
      if (!rt) continue;
      // Vector operands and results travel in tensors of their lanes: vector-cases.ts.
      if (isVector(rt) || dts.some(isVector)) continue;
      const exact = EXACT_REFERENCES[op.name];
      push(
        makeCase(
          op.family,
          `${op.name}.${dts.join(".")}`,
          dts,
          rt,
          (xs) => callValueOp(op.name, xs),
          (args) => (exact ? exact(args, rt) : approxReference(op.name, args, rt)),
          op.approx,
          EXTRA_INPUTS[op.name]?.(dts),
        ),
      );
    }
  }
  return out;
}

type F8 = "float8_e4m3" | "float8_e5m2";
const F8S: readonly [string, F8][] = [
  ["e4m3", "float8_e4m3"],
  ["e5m2", "float8_e5m2"],
];

const f16Of = (bits: number): number => {
  const dv = new DataView(new ArrayBuffer(2));
  dv.setUint16(0, bits & 0xffff, true);
  return getFloat16(dv, 0, true);
};
const f16BitsOf = (x: number): number => {
  const dv = new DataView(new ArrayBuffer(2));
  setFloat16(dv, 0, x, true);
  return dv.getUint16(0, true);
};

/**
 * References of the packed float8 conversions (cvt-fp8.ts), built from the OCP definition and the
 * saturating rounding of reference.ts. PTX leaves a NaN result's payload and sign unspecified, so
 * an element with a NaN input is "unspecified" here (NaN → NaN is checked by the scalar casts).
 */
function fp8CvtReferences(): Record<string, (args: Value[]) => Value | "unspecified"> {
  const out: Record<string, (args: Value[]) => Value | "unspecified"> = {};
  for (const [f, dt] of F8S) {
    const code = (x: number): number => ocpFp8Code(roundTo(x, dt), dt);
    out[`cvt.rn.satfinite.${f}x2.f32`] = ([a, b]) => {
      const [x, y] = [Number(a), Number(b)];
      return x !== x || y !== y ? "unspecified" : (code(x) << 8) | code(y);
    };
    out[`cvt.rn.satfinite.${f}x2.f16x2`] = ([a]) => {
      const [hi, lo] = [f16Of(Number(a) >>> 16), f16Of(Number(a))];
      return hi !== hi || lo !== lo ? "unspecified" : (code(hi) << 8) | code(lo);
    };
    out[`cvt.rn.f16x2.${f}x2`] = ([a]) => {
      const [hi, lo] = [ocpFp8Value(Number(a) >>> 8, dt), ocpFp8Value(Number(a) & 0xff, dt)];
      return hi !== hi || lo !== lo ? "unspecified" : ((f16BitsOf(hi) << 16) | f16BitsOf(lo)) >>> 0;
    };
  }
  return out;
}

/**
 * References of the rounding-mode ops (core ops/arith/rounding.ts: `add.rz`, `cvt.rmi.s32`, …),
 * from rounding-reference.ts, by op name.
 */
function roundingReferences(): Record<string, (args: Value[], rt: DType) => Value> {
  const out: Record<string, (args: Value[], rt: DType) => Value> = {};
  const dirs: Dir[] = ["rn", "rz", "rm", "rp"];
  for (const d of dirs) {
    for (const k of ["add", "sub", "mul", "fma"] as const) {
      out[`${k}.${d}`] = (args, rt) => refRoundedArith(k, d, rt, args.map(Number));
    }
    for (const to of ["float16", "bfloat16", "float32", "float64"] as const) {
      out[`cvt.${d}.${PTX_FLOAT[to]}`] = ([x]) => refRoundedCvtFloat(x!, to, d);
    }
    for (const to of INT_DTYPES) {
      out[`cvt.${d}i.${intSuffix(to)}`] = ([x]) => refRoundedCvtInt(Number(x), to, d);
    }
  }
  return out;
}

const PTX_FLOAT = { float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64" } as const;
const INT_DTYPES: readonly DType[] = [
  "int8",
  "uint8",
  "int16",
  "uint16",
  "int32",
  "uint32",
  "int64",
  "uint64",
];
const intSuffix = (dt: DType): string =>
  `${dt.startsWith("u") ? "u" : "s"}${dt.replace(/\D/g, "")}`;

/**
 * Extra inputs of the rounding-mode ops, by op name (so one list serves every operand dtype: the
 * pairs of each float format, rounded to the operands' dtype): ties, near-ties and the overflow
 * threshold of the result format.
 */
function roundingExtras(): Record<string, (dts: readonly DType[]) => Value[][]> {
  const out: Record<string, (dts: readonly DType[]) => Value[][]> = {};
  for (const d of ["rn", "rz", "rm", "rp"]) {
    const pairs = (): [number[], number[]] => {
      const fs = (["float16", "bfloat16", "float32", "float64"] as const).map(arithExtras);
      return [fs.flatMap((p) => p[0]), fs.flatMap((p) => p[1])];
    };
    for (const k of ["add", "sub", "mul"]) out[`${k}.${d}`] = pairs;
    out[`fma.${d}`] = () => {
      const [a, b] = pairs();
      return [a, b.map(() => 1), b];
    };
    for (const to of ["float16", "bfloat16", "float32"] as const) {
      out[`cvt.${d}.${PTX_FLOAT[to]}`] = (dts) => (isFloat(dts[0]!) ? [cvtFloatExtras(to)] : []);
    }
    for (const to of INT_DTYPES) out[`cvt.${d}i.${intSuffix(to)}`] = () => [cvtIntExtras(to)];
  }
  return out;
}

/** Inputs beyond the operand dtypes' edges, by op name: the float8 ties and saturation edges. */
const EXTRA_INPUTS: Record<string, (dts: readonly DType[]) => Value[][]> = Object.fromEntries(
  F8S.flatMap(([f, dt]) => {
    const ties = fp8Ties(dt);
    // Each tie against a few partners, both orders, so both bytes see every tie.
    const partner = ties.map((_, i) => ties[(i * 7 + 3) % ties.length]!);
    const halves = ties.map((v) => f16BitsOf(v));
    const pairs16 = halves.map((h, i) => ((h << 16) | halves[(i * 5 + 1) % halves.length]!) >>> 0);
    // Every code in the low byte and in the high byte.
    const codes = Array.from({ length: 256 }, (_, c) => [
      c | (((c * 37) & 0xff) << 8),
      (c << 8) | ((c * 11) & 0xff),
    ]).flat();
    return [
      [
        `cvt.rn.satfinite.${f}x2.f32`,
        () => [
          [...ties, ...partner],
          [...partner, ...ties],
        ],
      ],
      [`cvt.rn.satfinite.${f}x2.f16x2`, () => [pairs16]],
      [`cvt.rn.f16x2.${f}x2`, () => [codes]],
    ];
  }),
);
Object.assign(EXTRA_INPUTS, roundingExtras(), packedExtras());

/** Exact references of per-thread ops that are not operators (by op name). */
const EXACT_REFERENCES: Record<string, (args: Value[], rt: DType) => Value | "unspecified"> = {
  ...fp8CvtReferences(),
  ...roundingReferences(),
  ...packedReferences(),
  fma: ([a, b, c], rt) => fma(Number(a), Number(b), Number(c), rt),
  // The low 32 bits plus n (mod 2^32), the high 32 bits as they were (PTX ISA, Matrix Descriptor
  // Format: the start address is bits 0–13; CUTLASS's descriptor iterator).
  "wgmma.advance_descriptor": ([d, n]) => {
    const x = BigInt(d!);
    const hi = x >> 32n;
    const lo = (Number(x & 0xffffffffn) + Number(n)) % 2 ** 32;
    return (hi << 32n) + BigInt(lo);
  },
  // float64's sqrt is correctly rounded (IEEE 754), and rounding it again to a format of at most
  // 24 bits is innocuous (53 ≥ 2·24 + 2).
  sqrt: ([a], rt) => roundTo(Math.sqrt(Number(a)), rt),
  abs: ([a], rt) =>
    isFloat(rt)
      ? Math.abs(Number(a))
      : Number(wrap(BigInt(a!) < 0n ? -BigInt(a!) : BigInt(a!), rt)),
  floor: ([a]) => Math.floor(Number(a)),
  ceil: ([a]) => Math.ceil(Number(a)),
  round: ([a]) => roundHalfEven(Number(a)),
  isnan: ([a]) => (Number.isNaN(Number(a)) ? 1 : 0),
  isinf: ([a]) => (Math.abs(Number(a)) === Infinity ? 1 : 0),
};

/** Round to the nearest integer, ties to even, keeping the sign of zero (PTX cvt.rni). */
function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x);
  const d = x - f;
  const r = d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
  return r === 0 ? (x < 0 || Object.is(x, -0) ? -0 : 0) : r;
}

/** A float64 reference of an approximate op, for its bound; undefined when none is known here. */
function approxReference(name: string, args: Value[], rt: DType): Value | undefined {
  const x = Number(args[0]);
  const f: Record<string, (x: number) => number> = {
    exp: Math.exp,
    exp2: (v) => 2 ** v,
    log: Math.log,
    log2: Math.log2,
    sqrt: Math.sqrt,
    rsqrt: (v) => 1 / Math.sqrt(v),
    tanh: Math.tanh,
    sin: Math.sin,
    cos: Math.cos,
  };
  const short = name.replace(/^(tirx|T)\./, "").replace(/\.(approx|fast)$/, "");
  const g = f[short];
  if (!g || !isFloat(rt)) return undefined;
  return g(x);
}
