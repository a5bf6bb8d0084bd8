import {
  isVector,
  laneCount,
  laneDType,
  vectorOf,
  type DType,
  type PackedDType,
  type VectorDType,
  type VectorLane,
} from "../../dtype.js";
import { TirxError } from "../../diagnostics.js";
import type { Expr } from "../../ir/expr.js";
import { constInt } from "../../ir/expr.js";
import type { Span } from "../../span.js";
import { cvtFloatRounded } from "../../numeric/directed.js";
import { fromWords, lanesOf, ofLanes, wordsOf } from "../../numeric/vector.js";
import { badDtypes, staticArg, valueArg } from "../define.js";
import type { LowerCtx, OpDef, OpNeed, ThreadFn } from "../op.js";
import { vectorRegs } from "../ptx-type.js";
import { binaryOp } from "./binary.js";
import { FMA } from "./fma.js";
import { PACKED_OPS } from "./packed.js";

/**
 * The vectors as values (dtype.ts: float32x2/x4, int32x2/x4, uint32x2/x4, float16x4/x8,
 * bfloat16x4/x8; PTX ISA, "Vectors": 2 or 4 registers of 32 bits, written `{%f1, %f2, %f3, %f4}`).
 * PTX has no arithmetic on vector operands before sm_100, so each op is one instruction per
 * 32-bit lane (the scalar op's own record: `add.rn.f32`, `fma.rn.f32`, `mul.lo.s32`, …) or, for
 * 16-bit lanes, one packed-pair instruction per register (`add.rn.f16x2`, …: ops/arith/packed.ts),
 * and its simulator semantics are those records' lane by lane, so a vector computes exactly what
 * its lanes would as scalars or pairs. Loads and stores are not ops: a buffer of the lane dtype
 * viewed as vectors (`view_as("float32x4")`) moves one vector per `ld`/`st.v2`/`.v4`
 * (codegen-ptx types.ts `memType`; the verifier checks the alignment, verify/access-check.ts).
 * Surfaces (dsl `vector.ts`): `T.ptx.vec.make`, `broadcast`, `lane` (and `v.lane(i)`), `add`,
 * `sub`, `mul`, `fma`, `max`, `min`, `neg`, `cast`, `sum`, `reduce_max`, `reduce_min`.
 */
export const VECTORS: readonly VectorDType[] = [
  "float32x2",
  "float32x4",
  "int32x2",
  "int32x4",
  "uint32x2",
  "uint32x4",
  "float16x4",
  "float16x8",
  "bfloat16x4",
  "bfloat16x8",
];

const HALF = (l: VectorLane): boolean => l === "float16" || l === "bfloat16";
/** The `mov` type of one register of a vector of `lane`. */
const movType = (l: VectorLane): string => (l === "float32" ? "f32" : "b32");
/** The pair dtype of one register of a 16-bit vector. */
const pairOf = (l: VectorLane): PackedDType => (l === "float16" ? "float16x2" : "bfloat16x2");
const SOURCE = "PTX ISA, Vectors (.v2/.v4 of 32-bit registers, at most 128 bits on sm_90)";

/** The result rule "every operand is one vector dtype of `allowed`": that dtype. */
function sameVector(surface: string, arity: number, allowed: readonly VectorDType[]) {
  return (dts: readonly DType[], span?: Span): DType => {
    const dt = dts[0]!;
    if (dts.length !== arity || !dts.every((d) => d === dt) || !allowed.includes(dt as VectorDType))
      throw badDtypes(surface, dts, span);
    return dt;
  };
}

/** The registers of a vector (or pair: one register) operand or result. */
const regsOf = (op: string, dt: DType): string[] => (isVector(dt) ? vectorRegs(op, dt) : [op]);

/**
 * A 16-bit vector computes with the pair instructions: sm_80, PTX 7.0 (bfloat16x2 add/sub/mul
 * sm_90, PTX 7.8), as the pair records require (ops/arith/packed.ts).
 */
function halfNeed(kind: string, args: readonly Expr[]): OpNeed | undefined {
  const dt = args[0]?.dtype;
  if (!dt || !isVector(dt) || !HALF(laneDType(dt))) return undefined;
  const bf = laneDType(dt) === "bfloat16" && ["add", "sub", "mul"].includes(kind);
  return {
    instr: `${kind} of ${dt} (${kind}${bf || kind === "fma" ? ".rn" : ""}.${bf ? "bf16x2" : laneDType(dt) === "float16" ? "f16x2" : "bf16x2"})`,
    sm: bf ? 90 : 80,
    ptx: bf ? [7, 8] : [7, 0],
    code: "TX5006",
    source:
      "PTX ISA, Half Precision Floating-Point Instructions (.f16x2/.bf16x2 sm_80; .bf16x2 add/sub/mul sm_90, PTX 7.8)",
  };
}

/** Scalar record lowering and semantics of one 32-bit lane of `kind`. */
interface LaneImpl {
  lower(c: LowerCtx, d: string, ops: readonly string[]): void;
  fn: ThreadFn;
}

type ElemKind = "add" | "sub" | "mul" | "fma" | "max" | "min" | "neg";

/** One 32-bit lane of `kind` in `lane`: the scalar record's lowering and semantics. */
function laneImpl(kind: ElemKind, lane: "float32" | "int32" | "uint32"): LaneImpl {
  const int = lane !== "float32";
  const t = lane === "float32" ? "f32" : lane === "int32" ? "s32" : "u32";
  if (kind === "neg") {
    return {
      lower: (c, d, ops) => c.ins(`neg.${int ? "s32" : "f32"} ${d}, ${ops[0]}`),
      fn: (int ? (x: number) => -x | 0 : (x: number) => -x) as ThreadFn,
    };
  }
  if (kind === "fma") {
    if (!int) {
      return {
        lower: (c, d, ops) => FMA.lower(c, d, ops, ["float32", "float32", "float32"], "float32"),
        fn: (FMA.sim as Extract<OpDef["sim"], { kind: "thread" }>).make(
          ["float32", "float32", "float32"],
          "float32",
        ),
      };
    }
    // mad.lo: the low 32 bits of a·b + c (PTX ISA, mad).
    return {
      lower: (c, d, ops) => c.ins(`mad.lo.${t} ${d}, ${ops[0]}, ${ops[1]}, ${ops[2]}`),
      fn: (lane === "int32"
        ? (a: number, b: number, x: number) => (Math.imul(a, b) + x) | 0
        : (a: number, b: number, x: number) => (Math.imul(a, b) + x) >>> 0) as ThreadFn,
    };
  }
  const rec = binaryOp(kind);
  return {
    lower: (c, d, ops) => rec.lower(c, d, ops, [lane, lane], lane),
    fn: (rec.sim as Extract<OpDef["sim"], { kind: "thread" }>).make([lane, lane], lane),
  };
}

const ELEM: readonly { kind: ElemKind; arity: number; what: string }[] = [
  { kind: "add", arity: 2, what: "add.rn.f32 / add.s32 / add.rn.{f16x2,bf16x2} per register" },
  { kind: "sub", arity: 2, what: "sub.rn.f32 / sub.s32 / sub.rn.{f16x2,bf16x2} per register" },
  { kind: "mul", arity: 2, what: "mul.rn.f32 / mul.lo.s32 / mul.rn.{f16x2,bf16x2} per register" },
  { kind: "fma", arity: 3, what: "fma.rn.f32 / mad.lo.s32 / fma.rn.{f16x2,bf16x2} per register" },
  { kind: "max", arity: 2, what: "max.f32 / max.s32 / max.{f16x2,bf16x2} per register" },
  { kind: "min", arity: 2, what: "min.f32 / min.s32 / min.{f16x2,bf16x2} per register" },
  { kind: "neg", arity: 1, what: "neg.f32 / neg.s32 / neg.{f16x2,bf16x2} per register" },
];

/** `T.ptx.vec.<kind>`: lane by lane on vectors of one dtype. */
function elemRecord(spec: (typeof ELEM)[number]): OpDef {
  const surface = `T.ptx.vec.${spec.kind}`;
  // neg of unsigned lanes is no PTX instruction (neg takes .s and .f types).
  const allowed = VECTORS.filter((v) => spec.kind !== "neg" || laneDType(v) !== "uint32");
  const result = sameVector(surface, spec.arity, allowed);
  const pairRec = PACKED_OPS.find((o) => o.name === `x2.${spec.kind}`)!;
  const pairSim = pairRec.sim as Extract<OpDef["sim"], { kind: "thread" }>;
  return {
    name: `vec.${spec.kind}`,
    family: "arith",
    surface,
    form: "value",
    operands: ["a", "b", "c"].slice(0, spec.arity).map((n) => valueArg(n, allowed)),
    result,
    signatures: allowed.map((dt) => Array<DType>(spec.arity).fill(dt)),
    sm: 30,
    ptx: [6, 0],
    source: `${SOURCE}; ${spec.what}`,
    needs: (args) => halfNeed(spec.kind, args),
    lower(c, d, ops, dts) {
      const dt = dts[0] as VectorDType;
      const lane = laneDType(dt);
      const out = vectorRegs(d, dt);
      const ins = ops.map((o) => vectorRegs(o, dt));
      if (HALF(lane)) {
        const p = pairOf(lane);
        out.forEach((r, k) =>
          pairRec.lower(
            c,
            r,
            ins.map((x) => x[k]!),
            ins.map(() => p),
            p,
          ),
        );
        return;
      }
      const impl = laneImpl(spec.kind, lane as "float32" | "int32" | "uint32");
      out.forEach((r, k) =>
        impl.lower(
          c,
          r,
          ins.map((x) => x[k]!),
        ),
      );
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts) as VectorDType;
        const lane = laneDType(dt);
        if (HALF(lane)) {
          const p = pairOf(lane);
          const f = pairSim.make(
            dts.map(() => p),
            p,
          ) as (...w: number[]) => number;
          return ((...xs: bigint[]) => {
            const ws = xs.map((x) => wordsOf(x, dt));
            return fromWords(
              ws[0]!.map((_, k) => f(...ws.map((w) => w[k]!))),
              dt,
            );
          }) as ThreadFn;
        }
        const f = laneImpl(spec.kind, lane as "float32" | "int32" | "uint32").fn as (
          ...v: number[]
        ) => number;
        return ((...xs: bigint[]) => {
          const ls = xs.map((x) => lanesOf(x, dt));
          return ofLanes(
            ls[0]!.map((_, k) => f(...ls.map((l) => l[k]!))),
            dt,
          );
        }) as ThreadFn;
      },
    },
  };
}

/**
 * `T.ptx.vec.make(x0, …, x{n-1})`: n scalars of one lane dtype as the vector of n lanes, x0 in
 * lane 0: `mov.{f32,b32}` per 32-bit lane, `mov.b32 r, {x2k, x2k+1}` per pair of 16-bit lanes
 * (PTX ISA, mov). Two 16-bit lanes make a pair (`T.ptx.pack`, the surface's choice).
 */
function makeRecord(n: 2 | 4 | 8): OpDef {
  const surface = `T.ptx.vec.make (${n} lanes)`;
  const lanes = VECTORS.filter((v) => laneCount(v) === n).map(laneDType);
  const result = (dts: readonly DType[], span?: Span): DType => {
    const l = dts[0]!;
    const v = vectorOf(l, n);
    if (dts.length !== n || !dts.every((d) => d === l) || !v || !isVector(v))
      throw badDtypes(surface, dts, span);
    return v;
  };
  return {
    name: `vec.make.x${n}`,
    family: "arith",
    surface,
    form: "value",
    operands: Array.from({ length: n }, (_, k) => valueArg(`x${k}`, lanes)),
    result,
    signatures: lanes.map((l) => Array<DType>(n).fill(l)),
    sm: 30,
    ptx: [6, 0],
    source: `${SOURCE}; mov (d, {a, b}: a into the low half)`,
    lower(c, d, ops, dts, rt) {
      const dt = rt as VectorDType;
      const lane = laneDType(dt);
      const out = vectorRegs(d, dt);
      if (HALF(lane)) {
        const h = ops.map((o) => c.toReg(o, lane));
        out.forEach((r, k) => c.ins(`mov.b32 ${r}, {${h[2 * k]}, ${h[2 * k + 1]}}`));
      } else out.forEach((r, k) => c.ins(`mov.${movType(lane)} ${r}, ${ops[k]}`));
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts) as VectorDType;
        return ((...xs: number[]) => ofLanes(xs, dt)) as ThreadFn;
      },
    },
  };
}

/**
 * `T.ptx.vec.broadcast(x, n)` (TVM's `T.Broadcast`): every lane of the n-lane vector is `x`;
 * one `mov` per register (PTX ISA, mov).
 */
function broadcastRecord(n: 2 | 4 | 8): OpDef {
  const surface = `T.ptx.vec.broadcast(x, ${n})`;
  const lanes = VECTORS.filter((v) => laneCount(v) === n).map(laneDType);
  const result = (dts: readonly DType[], span?: Span): DType => {
    const v = dts.length === 1 ? vectorOf(dts[0]!, n) : undefined;
    if (!v || !isVector(v)) throw badDtypes(surface, dts, span);
    return v;
  };
  return {
    name: `vec.broadcast.x${n}`,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("x", lanes)],
    result,
    signatures: lanes.map((l) => [l]),
    sm: 30,
    ptx: [6, 0],
    source: `${SOURCE}; mov`,
    lower(c, d, ops, _dts, rt) {
      const dt = rt as VectorDType;
      const lane = laneDType(dt);
      const out = vectorRegs(d, dt);
      if (HALF(lane)) {
        const h = c.toReg(ops[0]!, lane);
        out.forEach((r) => c.ins(`mov.b32 ${r}, {${h}, ${h}}`));
      } else out.forEach((r) => c.ins(`mov.${movType(lane)} ${r}, ${ops[0]}`));
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts) as VectorDType;
        return ((x: number) => ofLanes(Array<number>(n).fill(x), dt)) as ThreadFn;
      },
    },
  };
}

/**
 * `T.ptx.vec.lane(v, i)` / `v.lane(i)`: lane `i` (a static integer below the lane count) of a
 * vector: its register (`mov`), or the half of its pair register (`mov.b32 {a, b}, r`).
 * @throws TirxError TX2010 for a lane index past the vector's lanes.
 */
function laneRecord(): OpDef {
  const surface = "T.ptx.vec.lane";
  const result = (dts: readonly DType[], span?: Span): DType => {
    const dt = dts[0]!;
    if (dts.length !== 2 || !isVector(dt)) throw badDtypes(surface, dts, span);
    return laneDType(dt);
  };
  return {
    name: "vec.lane",
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("v", VECTORS), staticArg("i", 0, 7)],
    result,
    signatures: VECTORS.map((v) => [v, "int32"]),
    sm: 30,
    ptx: [6, 0],
    source: `${SOURCE}; mov`,
    check(args, span) {
      const dt = args[0]!.dtype;
      const i = constInt(args[1]!);
      if (isVector(dt) && i !== undefined && i >= laneCount(dt)) {
        throw new TirxError(
          "TX2010",
          `${surface}: ${dt} has lanes 0..${laneCount(dt) - 1}, got lane ${i}`,
          span,
        );
      }
    },
    lower(c, d, ops, dts) {
      const dt = dts[0] as VectorDType;
      const lane = laneDType(dt);
      const regs = vectorRegs(ops[0]!, dt);
      const i = Number(ops[1]);
      if (HALF(lane)) {
        const other = c.tmp(lane);
        const halves = i % 2 === 0 ? `${d}, ${other}` : `${other}, ${d}`;
        c.ins(`mov.b32 {${halves}}, ${regs[i >> 1]}`);
      } else c.ins(`mov.${movType(lane)} ${d}, ${regs[i]}`);
    },
    halfNative: true,
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = dts[0] as VectorDType;
        result(dts);
        return ((v: bigint, i: number) => lanesOf(v, dt)[i]!) as ThreadFn;
      },
    },
  };
}

/**
 * `T.ptx.vec.cast(v, dtype)`: each lane converted to the lane dtype of `dtype`, a vector (or
 * pair) of as many lanes (PTX ISA, cvt):
 * - float32 → float16/bfloat16: `cvt.rn.{f16x2,bf16x2}.f32 d, hi, lo` per pair of lanes (sm_80,
 *   PTX 7.0), each rounded once to nearest even;
 * - float16 → float32: `mov.b32 {h0, h1}, r` and `cvt.f32.f16` per lane (exact);
 * - bfloat16 → float32: the lane's bits into the upper half, `shl.b32 d, r, 16` /
 *   `and.b32 d, r, 0xFFFF0000` (exact, bit for bit: a bfloat16 is a float32's upper half);
 * - int32/uint32 → float32: `cvt.rn.f32.{s32,u32}` (nearest even); float32 → int32/uint32:
 *   `cvt.rzi.{s32,u32}.f32` (toward zero, saturating, NaN → 0).
 */
function castRecord(from: PackedDType | VectorDType, to: PackedDType | VectorDType): OpDef {
  const fl = laneDType(from);
  const tl = laneDType(to);
  const surface = `T.ptx.vec.cast(v, "${to}")`;
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== 1 || dts[0] !== from) throw badDtypes(surface, dts, span);
    return to;
  };
  const cvt16 = tl === "float16" || tl === "bfloat16";
  const ty = (l: VectorLane): string =>
    l === "float32"
      ? "f32"
      : l === "int32"
        ? "s32"
        : l === "uint32"
          ? "u32"
          : l === "float16"
            ? "f16"
            : "bf16";
  let source: string;
  let sm = 30;
  let ptx: [number, number] = [6, 0];
  if (cvt16) {
    source = `PTX ISA, cvt (.${ty(tl)}x2.f32 d, a, b: a into the upper half; .rn; sm_80, PTX 7.0)`;
    sm = 80;
    ptx = [7, 0];
  } else if (fl === "float16") source = "PTX ISA, mov ({a, b}, r); cvt (.f32.f16: exact)";
  else if (fl === "bfloat16")
    source = "PTX ISA, shl / and (.b32: a bfloat16 is the upper half of a float32)";
  else if (tl === "float32") source = `PTX ISA, cvt (.rn.f32.${ty(fl)})`;
  else source = `PTX ISA, cvt (.rzi.${ty(tl)}.f32: toward zero, saturating, NaN → 0)`;
  return {
    name: `vec.cvt.${to}.${from}`,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("v", [from])],
    result,
    signatures: [[from]],
    sm,
    ptx,
    source,
    lower(c, d, ops) {
      const src = regsOf(ops[0]!, from);
      const out = regsOf(d, to);
      if (cvt16) {
        out.forEach((r, k) =>
          c.ins(`cvt.rn.${ty(tl)}x2.f32 ${r}, ${src[2 * k + 1]}, ${src[2 * k]}`),
        );
      } else if (fl === "float16") {
        src.forEach((r, k) => {
          const [h0, h1] = [c.tmp("float16"), c.tmp("float16")];
          c.ins(`mov.b32 {${h0}, ${h1}}, ${r}`);
          c.ins(`cvt.f32.f16 ${out[2 * k]}, ${h0}`);
          c.ins(`cvt.f32.f16 ${out[2 * k + 1]}, ${h1}`);
        });
      } else if (fl === "bfloat16") {
        src.forEach((r, k) => {
          c.ins(`shl.b32 ${out[2 * k]}, ${r}, 16`);
          c.ins(`and.b32 ${out[2 * k + 1]}, ${r}, -65536`);
        });
      } else if (tl === "float32") {
        out.forEach((r, k) => c.ins(`cvt.rn.f32.${ty(fl)} ${r}, ${src[k]}`));
      } else out.forEach((r, k) => c.ins(`cvt.rzi.${ty(tl)}.f32 ${r}, ${src[k]}`));
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        result(dts);
        if (fl === "bfloat16") {
          // Bits, not values: the lane's 16 bits become the float32's upper half unchanged.
          return ((v: number | bigint) =>
            fromWords(
              wordsOf(v, from).flatMap((w) => [(w << 16) >>> 0, (w & 0xffff0000) >>> 0]),
              to,
            )) as ThreadFn;
        }
        const conv = cvt16
          ? (x: number): number => cvtFloatRounded(x, tl, "rn")
          : tl === "float32"
            ? (x: number): number => Math.fround(x)
            : tl === "int32"
              ? (x: number): number =>
                  x !== x ? 0 : Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(x)))
              : fl === "float32"
                ? (x: number): number =>
                    x !== x ? 0 : Math.max(0, Math.min(2 ** 32 - 1, Math.trunc(x)))
                : (x: number): number => x;
        return ((v: number | bigint) => ofLanes(lanesOf(v, from).map(conv), to)) as ThreadFn;
      },
    },
  };
}

/** The casts `T.ptx.vec.cast` has, as (from, to) pairs (see `castRecord`). */
function castPairs(): [PackedDType | VectorDType, PackedDType | VectorDType][] {
  const out: [PackedDType | VectorDType, PackedDType | VectorDType][] = [];
  for (const n of [2, 4]) {
    const f32 = vectorOf("float32", n)!;
    for (const l of ["float16", "bfloat16", "int32", "uint32"] as const) {
      const v = vectorOf(l, n)!;
      out.push([f32, v], [v, f32]);
    }
  }
  return out;
}

/**
 * `T.ptx.vec.sum` / `reduce_max` / `reduce_min`: the lanes of a 32-bit-lane vector combined into
 * one scalar, as a tree: (l0 ∘ l1) ∘ (l2 ∘ l3), each step the scalar op (`add.rn.f32` rounds
 * once per step, `max.f32` / `min.f32` give the non-NaN operand, integer add wraps).
 */
function reduceRecord(kind: "add" | "max" | "min"): OpDef {
  const name = kind === "add" ? "sum" : `reduce_${kind}`;
  const surface = `T.ptx.vec.${name}`;
  const allowed = VECTORS.filter((v) => !HALF(laneDType(v)));
  const result = (dts: readonly DType[], span?: Span): DType => {
    const dt = dts[0]!;
    if (dts.length !== 1 || !allowed.includes(dt as VectorDType))
      throw badDtypes(surface, dts, span);
    return laneDType(dt as VectorDType);
  };
  const rec = binaryOp(kind);
  return {
    name: `vec.${name}`,
    family: "arith",
    surface,
    form: "value",
    operands: [valueArg("v", allowed)],
    result,
    signatures: allowed.map((v) => [v]),
    sm: 30,
    ptx: [6, 0],
    source: `${SOURCE}; ${kind === "add" ? "add.rn.f32 / add.s32" : `${kind}.f32 / ${kind}.s32`} in a tree of lane pairs`,
    lower(c, d, ops, dts) {
      const dt = dts[0] as VectorDType;
      const lane = laneDType(dt);
      let level = vectorRegs(ops[0]!, dt);
      while (level.length > 1) {
        const next: string[] = [];
        for (let k = 0; k < level.length; k += 2) {
          const r = level.length === 2 ? d : c.tmp(lane);
          rec.lower(c, r, [level[k]!, level[k + 1]!], [lane, lane], lane);
          next.push(r);
        }
        level = next;
      }
    },
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = dts[0] as VectorDType;
        const lane = result(dts);
        const f = (rec.sim as Extract<OpDef["sim"], { kind: "thread" }>).make(
          [lane, lane],
          lane,
        ) as (a: number, b: number) => number;
        return ((v: bigint) => {
          let level = lanesOf(v, dt);
          while (level.length > 1) {
            const next: number[] = [];
            for (let k = 0; k < level.length; k += 2) next.push(f(level[k]!, level[k + 1]!));
            level = next;
          }
          return level[0]!;
        }) as ThreadFn;
      },
    },
  };
}

/** Every vector record (see the comment above `VECTORS`). */
export const VECTOR_OPS: readonly OpDef[] = [
  makeRecord(2),
  makeRecord(4),
  makeRecord(8),
  broadcastRecord(2),
  broadcastRecord(4),
  broadcastRecord(8),
  laneRecord(),
  ...ELEM.map(elemRecord),
  ...castPairs().map(([f, t]) => castRecord(f, t)),
  reduceRecord("add"),
  reduceRecord("max"),
  reduceRecord("min"),
];
