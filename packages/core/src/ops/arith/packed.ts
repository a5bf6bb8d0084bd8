import type { DType, PackedDType } from "../../dtype.js";
import type { Expr } from "../../ir/expr.js";
import type { Span } from "../../span.js";
import { cvtFloatRounded } from "../../numeric/directed.js";
import {
  joinLanes,
  laneAdd,
  laneBits,
  laneFma,
  laneMinMax,
  laneMul,
  laneOf,
  laneWise,
} from "../../numeric/packed.js";
import { badDtypes, valueArg } from "../define.js";
import type { OpDef, OpNeed, ThreadFn } from "../op.js";

/**
 * The packed 16-bit float pairs as values (PTX ISA, "Packed Data Types": `.f16x2`, `.bf16x2`,
 * one `.b32` register, lane 0 in the low half). One record per instruction; the pair's dtype
 * picks `.f16x2` or `.bf16x2`. Surfaces (dsl `packed.ts`):
 * - `T.ptx.pack(lo, hi)`: two float16 (bfloat16) values → float16x2 (bfloat16x2),
 *   `mov.b32 d, {lo, hi}`; `T.ptx.unpack(x, lane)`: `mov.b32 {a, b}, x`, lane 0 is `a`;
 * - `T.ptx.x2.{add,sub,mul,fma}` (`.rn`), `max`, `min`, `neg`, `abs` on pairs of one dtype;
 * - `T.ptx.x2.cvt(hi, lo, dtype)`: `cvt.rn.{f16x2,bf16x2}.f32 d, hi, lo`, the first float32
 *   source into the upper half (PTX ISA, cvt);
 * - `T.ptx.x2.bits(x)` (→ uint32) and `T.ptx.x2.from_bits(u, dtype)`: the same 32 bits
 *   (`mov.b32`), for pairs in uint32 tensors (no tensor or buffer has a pair dtype: TX1027;
 *   a view of a 16-bit float buffer may, `view_as`).
 * Targets: every form below assembles at sm_80 but bfloat16x2 add/sub/mul, which need sm_90 and
 * PTX 7.8 (TX5006, checked with ptxas 13.0 at sm_80 and sm_90a). Simulator semantics: each lane
 * computed exactly and rounded once to nearest even in its format (numeric/packed.ts), NaN and
 * ±∞ as IEEE 754, a NaN result the canonical NaN 0x7fff.
 */
const PAIRS: readonly PackedDType[] = ["float16x2", "bfloat16x2"];
const LANES = { float16x2: "float16", bfloat16x2: "bfloat16" } as const;
const SUFFIX = { float16x2: "f16x2", bfloat16x2: "bf16x2" } as const;

/** The result rule "every operand is one pair dtype": that dtype. */
function samePair(surface: string, arity: number) {
  return (dts: readonly DType[], span?: Span): DType => {
    const dt = dts[0]!;
    if (dts.length !== arity || !dts.every((d) => d === dt) || !PAIRS.includes(dt as PackedDType))
      throw badDtypes(surface, dts, span);
    return dt;
  };
}

/** bfloat16x2 add/sub/mul need sm_90 and PTX 7.8 (PTX ISA, add/sub/mul: `.bf16x2`). */
function bf16x2Need(kind: string, args: readonly Expr[]): OpNeed | undefined {
  if (args[0]?.dtype !== "bfloat16x2") return undefined;
  return {
    instr: `${kind}.rn.bf16x2`,
    sm: 90,
    ptx: [7, 8],
    code: "TX5006",
    source: "PTX ISA, Half Precision Floating-Point Instructions: add/sub/mul (.bf16x2: sm_90)",
  };
}

interface LaneOp {
  readonly kind: "add" | "sub" | "mul" | "fma" | "max" | "min";
  readonly arity: number;
  readonly rn: boolean;
  readonly lane: (dt: PackedDType, ...xs: number[]) => number;
  readonly source: string;
}

const HALF = "PTX ISA, Half Precision Floating-Point Instructions";
const LANE_OPS: readonly LaneOp[] = [
  {
    kind: "add",
    arity: 2,
    rn: true,
    lane: (dt, a, b) => laneAdd(dt, a!, b!),
    source: `${HALF}: add (.f16x2 sm_53; .bf16x2 sm_90, PTX 7.8)`,
  },
  {
    kind: "sub",
    arity: 2,
    rn: true,
    lane: (dt, a, b) => laneAdd(dt, a!, b!, true),
    source: `${HALF}: sub (.f16x2 sm_53; .bf16x2 sm_90, PTX 7.8)`,
  },
  {
    kind: "mul",
    arity: 2,
    rn: true,
    lane: (dt, a, b) => laneMul(dt, a!, b!),
    source: `${HALF}: mul (.f16x2 sm_53; .bf16x2 sm_90, PTX 7.8)`,
  },
  {
    kind: "fma",
    arity: 3,
    rn: true,
    lane: (dt, a, b, c) => laneFma(dt, a!, b!, c!),
    source: `${HALF}: fma (.f16x2 sm_53; .bf16x2 sm_80, PTX 7.0)`,
  },
  {
    kind: "max",
    arity: 2,
    rn: false,
    lane: (_dt, a, b) => laneMinMax(a!, b!, true),
    source: `${HALF}: max (.f16x2/.bf16x2 sm_80, PTX 7.0; a NaN operand gives the other)`,
  },
  {
    kind: "min",
    arity: 2,
    rn: false,
    lane: (_dt, a, b) => laneMinMax(a!, b!, false),
    source: `${HALF}: min (.f16x2/.bf16x2 sm_80, PTX 7.0; a NaN operand gives the other)`,
  },
];

function laneRecord(spec: LaneOp): OpDef {
  const instr = spec.rn ? `${spec.kind}.rn` : spec.kind;
  const surface = `T.ptx.x2.${spec.kind}`;
  const result = samePair(surface, spec.arity);
  return {
    name: `x2.${spec.kind}`,
    family: "arith",
    surface,
    form: "value",
    operands: ["a", "b", "c"].slice(0, spec.arity).map((n) => valueArg(n, PAIRS)),
    result,
    signatures: PAIRS.map((dt) => Array<DType>(spec.arity).fill(dt)),
    sm: 80,
    ptx: [7, 0],
    source: spec.source,
    ...(spec.kind === "add" || spec.kind === "sub" || spec.kind === "mul"
      ? { needs: (args: readonly Expr[]) => bf16x2Need(spec.kind, args) }
      : {}),
    lower(c, d, ops, dts) {
      const dt = dts[0] as PackedDType;
      const regs = ops.map((o) => c.toReg(o, dt));
      c.ins(`${instr}.${SUFFIX[dt]} ${d}, ${regs.join(", ")}`);
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts) as PackedDType;
        return ((...xs: number[]) =>
          laneWise(dt, xs, (...lanes) => spec.lane(dt, ...lanes))) as ThreadFn;
      },
    },
  };
}

/**
 * `neg` and `abs` flip or clear each lane's sign bit (PTX ISA, neg / abs half precision: .f16x2
 * sm_53, .bf16x2 sm_80, PTX 7.0); a NaN lane keeps its payload here, which PTX leaves
 * unspecified.
 */
function signRecord(kind: "neg" | "abs"): OpDef {
  const surface = `T.ptx.x2.${kind}`;
  const result = samePair(surface, 1);
  return {
    name: `x2.${kind}`,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("x", PAIRS)],
    result,
    signatures: PAIRS.map((dt) => [dt]),
    sm: 80,
    ptx: [7, 0],
    source: `${HALF}: ${kind} (.f16x2 sm_53, .bf16x2 sm_80, PTX 7.0; a NaN lane's result is unspecified)`,
    lower(c, d, ops, dts) {
      const dt = dts[0] as PackedDType;
      c.ins(`${kind}.${SUFFIX[dt]} ${d}, ${c.toReg(ops[0]!, dt)}`);
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        result(dts);
        return (
          kind === "neg"
            ? (x: number) => (x ^ 0x80008000) >>> 0
            : (x: number) => (x & 0x7fff7fff) >>> 0
        ) as ThreadFn;
      },
    },
  };
}

/** `T.ptx.pack(lo, hi)`: `mov.b32 d, {lo, hi}` (PTX ISA, mov: vector source of two .b16). */
function packRecord(): OpDef {
  const surface = "T.ptx.pack";
  const result = (dts: readonly DType[], span?: Span): DType => {
    const lane = dts[0];
    if (dts.length !== 2 || dts[1] !== lane || (lane !== "float16" && lane !== "bfloat16"))
      throw badDtypes(surface, dts, span);
    return lane === "float16" ? "float16x2" : "bfloat16x2";
  };
  return {
    name: "x2.pack",
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("lo", ["float16", "bfloat16"]), valueArg("hi", ["float16", "bfloat16"])],
    result,
    signatures: [
      ["float16", "float16"],
      ["bfloat16", "bfloat16"],
    ],
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, mov (d, {a, b}: a into the low half); Packed Data Types",
    lower(c, d, ops, dts) {
      const [lo, hi] = ops.map((o, i) => c.toReg(o, dts[i]!));
      c.ins(`mov.b32 ${d}, {${lo}, ${hi}}`);
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts) as PackedDType;
        return ((lo: number, hi: number) =>
          joinLanes(laneBits(lo, dt), laneBits(hi, dt))) as ThreadFn;
      },
    },
  };
}

/** `T.ptx.unpack(x, lane)`: `mov.b32 {a, b}, x`, the lane's half (a: lane 0). */
function unpackRecord(lane: 0 | 1): OpDef {
  const surface = `T.ptx.unpack(x, ${lane})`;
  const result = (dts: readonly DType[], span?: Span): DType => {
    const dt = dts[0];
    if (dts.length !== 1 || !PAIRS.includes(dt as PackedDType)) throw badDtypes(surface, dts, span);
    return LANES[dt as PackedDType];
  };
  return {
    name: `x2.unpack.${lane}`,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("x", PAIRS)],
    result,
    signatures: PAIRS.map((dt) => [dt]),
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, mov ({a, b}, d: the low half into a); Packed Data Types",
    lower(c, d, ops, dts) {
      const dt = dts[0] as PackedDType;
      const other = c.tmp(LANES[dt]);
      const halves = lane === 0 ? `${d}, ${other}` : `${other}, ${d}`;
      c.ins(`mov.b32 {${halves}}, ${c.toReg(ops[0]!, dt)}`);
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = dts[0] as PackedDType;
        result(dts);
        return ((x: number) => laneOf(x, lane, dt)) as ThreadFn;
      },
    },
  };
}

/**
 * `T.ptx.x2.cvt(hi, lo, dtype)`: `cvt.rn.{f16x2,bf16x2}.f32 d, hi, lo` (PTX ISA, cvt: "the first
 * source goes to the upper half"; sm_80, PTX 7.0): each float32 rounded once to nearest even.
 */
function cvtRecord(to: PackedDType): OpDef {
  const name = `cvt.rn.${SUFFIX[to]}.f32`;
  const surface = `T.ptx.x2.cvt(hi, lo, "${to}")`;
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== 2 || dts.some((d) => d !== "float32")) throw badDtypes(surface, dts, span);
    return to;
  };
  const lane = LANES[to];
  return {
    name,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("hi", ["float32"]), valueArg("lo", ["float32"])],
    result,
    signatures: [["float32", "float32"]],
    sm: 80,
    ptx: [7, 0],
    source: `PTX ISA, cvt (.${SUFFIX[to]}.f32 d, a, b: a into the upper half, b the lower; .rn; sm_80, PTX 7.0)`,
    lower(c, d, ops) {
      const [hi, lo] = ops.map((o) => c.toReg(o, "float32"));
      c.ins(`${name} ${d}, ${hi}, ${lo}`);
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        result(dts);
        const r = (x: number): number => laneBits(cvtFloatRounded(x, lane, "rn"), to);
        return ((hi: number, lo: number) => joinLanes(r(lo), r(hi))) as ThreadFn;
      },
    },
  };
}

/** The bit moves between a pair and uint32 (`mov.b32`: the same register bits). */
function bitsRecords(): OpDef[] {
  const toBits: OpDef = {
    name: "x2.bits",
    family: "arith",
    surface: "T.ptx.x2.bits",
    form: "value",
    operands: [valueArg("x", PAIRS)],
    result: (dts, span) => {
      if (dts.length !== 1 || !PAIRS.includes(dts[0] as PackedDType))
        throw badDtypes("T.ptx.x2.bits", dts, span);
      return "uint32";
    },
    signatures: PAIRS.map((dt) => [dt]),
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, mov.b32 (the pair's register bits, lane 0 low)",
    lower(c, d, ops, dts) {
      c.ins(`mov.b32 ${d}, ${c.toReg(ops[0]!, dts[0]!)}`);
    },
    sim: { kind: "thread", make: () => ((x: number) => x) as ThreadFn },
  };
  const fromBits = (to: PackedDType): OpDef => ({
    name: `x2.from_bits.${SUFFIX[to]}`,
    family: "arith",
    surface: `T.ptx.x2.from_bits(u, "${to}")`,
    form: "value",
    operands: [valueArg("u", ["uint32"])],
    result: (dts, span) => {
      if (dts.length !== 1 || dts[0] !== "uint32")
        throw badDtypes(`T.ptx.x2.from_bits(u, "${to}")`, dts, span);
      return to;
    },
    signatures: [["uint32"]],
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, mov.b32 (uint32 bits as a pair, lane 0 low)",
    lower(c, d, ops) {
      c.ins(`mov.b32 ${d}, ${c.toReg(ops[0]!, "uint32")}`);
    },
    sim: { kind: "thread", make: () => ((x: number) => x >>> 0) as ThreadFn },
  });
  return [toBits, ...PAIRS.map(fromBits)];
}

/** Every packed-pair record (see the comment above `PAIRS`). */
export const PACKED_OPS: readonly OpDef[] = [
  packRecord(),
  unpackRecord(0),
  unpackRecord(1),
  ...LANE_OPS.map(laneRecord),
  signRecord("neg"),
  signRecord("abs"),
  ...PAIRS.map(cvtRecord),
  ...bitsRecords(),
];
