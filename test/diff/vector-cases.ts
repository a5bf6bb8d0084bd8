// Differential cases of the vector ops (core ops/arith/vector.ts): every record × signature,
// each a kernel whose operands and result travel in tensors of the lane dtype, loaded and stored
// one vector per thread through view_as (ld/st.global.v2/.v4), so the cases also check the
// vector accesses. The references are lane by lane from reference.ts (each lane computed exactly
// and rounded once, as the scalar cases' references), sharing no code with the simulator.
import {
  laneCount,
  laneDType,
  VECTOR_OPS,
  type DType,
  type OpDef,
  type PackedDType,
  type VectorDType,
} from "@tirx-ts/core";
import { T, callValueOp, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { compile } from "tirx-ts";
import type { DiffCase } from "./cases.js";
import { fma, refBinary, refCast, wrap } from "./reference.js";
import { encode, type Value } from "./values.js";

type Lanes = PackedDType | VectorDType;
type Ref = Value | "unspecified";

/** Operand columns of `dts` from the differential test's input maker (cases.ts operandValues). */
export type ValuesFn = (dts: readonly DType[], seed: number) => Value[][];

const half = (l: DType): boolean => l === "float16" || l === "bfloat16";
const isNeg0 = (x: number): boolean => Object.is(x, -0);

/** One lane of the elementwise op `kind` on lane dtype `l` (reference.ts, rounded once). */
function refLane(kind: string, l: DType, xs: readonly Value[]): Ref {
  const [a, b, c] = xs;
  switch (kind) {
    case "add":
    case "sub":
    case "mul":
      return refBinary(kind, l, a!, b!);
    case "max":
    case "min": {
      // The pair instructions leave +0 against −0 unordered (packed-reference.ts).
      const [x, y] = [Number(a), Number(b)];
      if (half(l) && x === 0 && y === 0 && isNeg0(x) !== isNeg0(y)) return "unspecified";
      return refBinary(kind, l, a!, b!);
    }
    case "fma":
      return l === "float32" || half(l)
        ? fma(Number(a), Number(b), Number(c), l)
        : Number(wrap(BigInt(a!) * BigInt(b!) + BigInt(c!), l));
    case "neg":
      return l === "int32" ? Number(wrap(-BigInt(a!), l)) : -Number(a);
  }
  throw new Error(`vector-cases: no lane reference for ${kind}`);
}

/** Pad each column with copies of its own values (cycled) to a multiple of `m`. */
function padTo(cols: Value[][], m: number): Value[][] {
  const len = Math.ceil(Math.max(...cols.map((c) => c.length)) / m) * m;
  return cols.map((c) => Array.from({ length: len }, (_, k) => c[k % c.length]!));
}

interface Shape {
  /** Operand tensors' dtypes and values. */
  readonly tensors: readonly DType[];
  readonly inputs: Value[][];
  /** Threads that run the op (one vector each). */
  readonly threads: number;
  /** Per thread: the op's operands from the operand tensors. */
  operands(xs: readonly TileView[], t: PrimExpr): PrimExpr[];
  /** Extra static operands of the call (vec.lane's index). */
  readonly statics: readonly number[];
  /** The output tensor's dtype and element count. */
  readonly out: DType;
  readonly outCount: number;
  /** Store the op's result of thread t. */
  store(y: TileView, t: PrimExpr, v: PrimExpr): void;
  reference(i: number): Ref;
}

/** The case layout of record `op` at operand dtypes `dts` (lane index `k` for vec.lane). */
function shapeOf(op: OpDef, dts: readonly DType[], values: ValuesFn, seed: number, k = 0): Shape {
  const rt = op.result(dts)!;
  const kind = op.name.split(".")[1]!;
  const vecOp = dts[0]! as Lanes;
  if (
    kind === "add" ||
    kind === "sub" ||
    kind === "mul" ||
    kind === "fma" ||
    kind === "max" ||
    kind === "min" ||
    kind === "neg" ||
    kind === "cvt"
  ) {
    // Lane-wise: lane j of the result is the op of lane j of each operand.
    const n = laneCount(vecOp);
    const from = laneDType(vecOp);
    const to = laneDType(rt as Lanes);
    const inputs = padTo(
      values(
        dts.map(() => from),
        seed,
      ),
      n,
    );
    const count = inputs[0]!.length;
    return {
      tensors: dts.map(() => from),
      inputs,
      threads: count / n,
      operands: (xs, t) => xs.map((x) => x.view_as(vecOp).get([t])),
      statics: [],
      out: to,
      outCount: count,
      store: (y, t, v) => y.view_as(rt).set([t], v),
      reference: (i) =>
        kind === "cvt"
          ? refCast(inputs[0]![i]!, from, to)
          : refLane(
              kind,
              from,
              inputs.map((c) => c[i]!),
            ),
    };
  }
  if (kind === "make" || kind === "broadcast") {
    // Lane j of vector t is operand j's element t (broadcast: operand 0's).
    const l = dts[0]!;
    const n = laneCount(rt as Lanes);
    const inputs = values(dts, seed);
    const count = inputs[0]!.length;
    return {
      tensors: dts,
      inputs,
      threads: count,
      operands: (xs, t) => xs.map((x) => x.get([t])),
      statics: [],
      out: l,
      outCount: count * n,
      store: (y, t, v) => y.view_as(rt).set([t], v),
      reference: (i) => inputs[kind === "make" ? i % n : 0]![Math.floor(i / n)]!,
    };
  }
  // A vector to one scalar: lane k, or the tree reduction.
  const l = laneDType(vecOp);
  const n = laneCount(vecOp);
  const inputs = padTo(values([l], seed), n);
  const count = inputs[0]!.length;
  const col = inputs[0]!;
  const tree = (red: string, i: number): Ref => {
    let level: Ref[] = col.slice(i * n, (i + 1) * n);
    while (level.length > 1) {
      const next: Ref[] = [];
      for (let j = 0; j < level.length; j += 2) {
        const [a, b] = [level[j]!, level[j + 1]!];
        next.push(
          a === "unspecified" || b === "unspecified" ? "unspecified" : refBinary(red, l, a, b),
        );
      }
      level = next;
    }
    return level[0]!;
  };
  const red = kind === "sum" ? "add" : kind === "reduce_max" ? "max" : "min";
  return {
    tensors: [l],
    inputs,
    threads: count / n,
    operands: (xs, t) => [xs[0]!.view_as(vecOp).get([t])],
    statics: kind === "lane" ? [k] : [],
    out: l,
    outCount: count / n,
    store: (y, t, v) => y.set([t], v),
    reference: (i) => (kind === "lane" ? col[i * n + k]! : tree(red, i)),
  };
}

/** The case of record `op` at `dts` (and lane `k` for vec.lane). */
function vectorCase(op: OpDef, dts: readonly DType[], values: ValuesFn, seed: number, k?: number) {
  const s = shapeOf(op, dts, values, seed, k);
  const id = `${op.name}.${dts.join(".")}${k !== undefined ? `.lane${k}` : ""}`;
  const params: Record<string, ReturnType<typeof T.Tensor>> = {};
  s.tensors.forEach((dt, j) => (params[`X${j}`] = T.Tensor([s.inputs[j]!.length], dt)));
  params["Y"] = T.Tensor([s.outCount], s.out);
  const block = 256;
  const fn = T.function(`diff_${id.replace(/[^A-Za-z0-9]/g, "_")}`, params, (p) => {
    T.device_entry({
      launch: T.cuda.LaunchConfig({ grid: Math.ceil(s.threads / block), block }),
    });
    const t = T.let_("t", T.cuda.block_idx("x").mul(block).add(T.cuda.thread_idx("x")));
    T.if_(t.lt(s.threads), () => {
      const xs = s.tensors.map((_, j) => p[`X${j}`] as TileView);
      const y = callValueOp(op.name, [...s.operands(xs, t), ...s.statics]);
      s.store(p["Y"] as TileView, t, y);
    });
  });
  const module = compile(fn, { target: "cuda", arch: "sm_90" }).module;
  const c: DiffCase = {
    id,
    family: "vector",
    operands: s.tensors,
    result: s.out,
    fn,
    module,
    inputs: s.inputs,
    n: s.outCount,
    bytes: s.inputs.map((vals, j) => encode(vals, s.tensors[j]!)),
    reference: (i) => s.reference(i),
  };
  return c;
}

/**
 * A case per vector record × signature (per lane index for vec.lane), in the order of
 * VECTOR_OPS; `values` makes operand columns (edges, then random values).
 * @throws Error for a record with no case layout here (a new op must get one).
 */
export function vectorCases(values: ValuesFn, firstSeed: number): DiffCase[] {
  let seed = firstSeed;
  const out: DiffCase[] = [];
  for (const op of VECTOR_OPS) {
    for (const dts of op.signatures) {
      if (op.name === "vec.lane") {
        const v = dts[0] as VectorDType;
        for (let k = 0; k < laneCount(v); k++) {
          out.push(vectorCase(op, [v, "int32"], values, seed++, k));
        }
        continue;
      }
      out.push(vectorCase(op, dts, values, seed++));
    }
  }
  return out;
}
