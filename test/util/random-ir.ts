// A generator of random valid IR functions (expression trees over int32/float32/bool with
// loads, stores, lets, ifs, whiles and loops over a few buffers, built as raw IR so that unfolded
// constants and no-op casts occur), driven by a tape of choices that fast-check generates and
// shrinks. Used by the printer round-trip property tests of both printers.
import {
  mkBuffer,
  mkVar,
  seq,
  type BinaryOp,
  type CompareOp,
  type DType,
  type Expr,
  type PrimFunc,
  type Stmt,
  type Var,
} from "@tirx-ts/core";

const N = 16;
type Ty = "int32" | "float32" | "bool";
const INT_OPS: BinaryOp[] = [
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "floordiv",
  "floormod",
  "min",
  "max",
  "bitand",
  "bitor",
  "bitxor",
  "shl",
  "shr",
];
const FLOAT_OPS: BinaryOp[] = ["add", "sub", "mul", "div", "min", "max"];
const CMP_OPS: CompareOp[] = ["eq", "ne", "lt", "le", "gt", "ge"];

/** Build one valid kernel from a tape of choices (fast-check generates and shrinks the tape). */
export function build(tape: readonly number[], index: number): PrimFunc {
  let at = 0;
  const pick = (n: number): number => (tape.length ? tape[at++ % tape.length]! % n : 0);
  const budget = { nodes: 60 };
  const A = mkBuffer("A", [N], "float32", "global");
  const B = mkBuffer("B", [N], "int32", "global");
  const n = mkVar("n", "int32");
  const x = mkVar("x", "float32");
  const tid = mkVar("tid", "int32");
  const local = mkBuffer("acc", [4], "float32", "local");
  /** Variables in scope by dtype; `idx` are int32 vars known to lie in [0, N). */
  const scope = { int32: [n, tid] as Var[], float32: [x] as Var[], bool: [] as Var[], idx: [tid] };
  const imm = (v: number, dtype: DType): Expr =>
    dtype === "float32"
      ? { kind: "FloatImm", value: v, dtype }
      : { kind: "IntImm", value: v, dtype };
  const index_ = (limit: number): Expr => {
    const vs = scope.idx.filter((v) => limit >= N || v !== tid);
    return pick(3) === 0 || vs.length === 0 ? imm(pick(limit), "int32") : vs[pick(vs.length)]!;
  };
  const expr = (ty: Ty, depth: number): Expr => {
    budget.nodes--;
    const leaf = depth <= 0 || budget.nodes <= 0 || pick(4) === 0;
    if (ty === "int32") {
      if (leaf) {
        const c = pick(4);
        if (c === 0) return imm(pick(41) - 20, "int32");
        if (c === 1) return { kind: "BufferLoad", buffer: B, offset: index_(N), dtype: "int32" };
        return scope.int32[pick(scope.int32.length)]!;
      }
      const c = pick(6);
      if (c === 0)
        return {
          kind: "Cast",
          value: expr(pick(2) ? "float32" : "bool", depth - 1),
          dtype: "int32",
        };
      if (c === 1)
        return {
          kind: "IfThenElse",
          cond: expr("bool", depth - 1),
          t: expr("int32", depth - 1),
          f: expr("int32", depth - 1),
          dtype: "int32",
        };
      if (c === 2) return { kind: "Cast", value: expr("int32", depth - 1), dtype: "int32" };
      const op = INT_OPS[pick(INT_OPS.length)]!;
      return {
        kind: "Binary",
        op,
        a: expr("int32", depth - 1),
        b: expr("int32", depth - 1),
        dtype: "int32",
      };
    }
    if (ty === "float32") {
      if (leaf) {
        const c = pick(4);
        if (c === 0) return imm((pick(81) - 40) / 4, "float32");
        if (c === 1) return { kind: "BufferLoad", buffer: A, offset: index_(N), dtype: "float32" };
        if (c === 2)
          return { kind: "BufferLoad", buffer: local, offset: index_(4), dtype: "float32" };
        return scope.float32[pick(scope.float32.length)]!;
      }
      const c = pick(5);
      if (c === 0) return { kind: "Cast", value: expr("int32", depth - 1), dtype: "float32" };
      if (c === 1)
        return {
          kind: "IfThenElse",
          cond: expr("bool", depth - 1),
          t: expr("float32", depth - 1),
          f: expr("float32", depth - 1),
          dtype: "float32",
        };
      const op = FLOAT_OPS[pick(FLOAT_OPS.length)]!;
      return {
        kind: "Binary",
        op,
        a: expr("float32", depth - 1),
        b: expr("float32", depth - 1),
        dtype: "float32",
      };
    }
    if (leaf) {
      if (pick(2) === 0 || scope.bool.length === 0) return imm(pick(2), "bool");
      return scope.bool[pick(scope.bool.length)]!;
    }
    const c = pick(4);
    if (c === 0) {
      const t = pick(2) ? "int32" : "float32";
      return {
        kind: "Compare",
        op: CMP_OPS[pick(6)]!,
        a: expr(t, depth - 1),
        b: expr(t, depth - 1),
        dtype: "bool",
      };
    }
    if (c === 1) return { kind: "Not", a: expr("bool", depth - 1), dtype: "bool" };
    return {
      kind: "Logical",
      op: pick(2) ? "and" : "or",
      a: expr("bool", depth - 1),
      b: expr("bool", depth - 1),
      dtype: "bool",
    };
  };
  const stmts = (depth: number, count: number): Stmt[] => {
    const out: Stmt[] = [];
    const saved = {
      int32: scope.int32.length,
      float32: scope.float32.length,
      bool: scope.bool.length,
      idx: scope.idx.length,
    };
    for (let k = 0; k < count && budget.nodes > 0; k++) {
      const c = pick(depth > 0 ? 8 : 4);
      if (c <= 1) {
        const [buf, ty] =
          pick(3) === 0
            ? [local, "float32" as const]
            : pick(2)
              ? [A, "float32" as const]
              : [B, "int32" as const];
        out.push({
          kind: "Store",
          buffer: buf,
          dtype: ty,
          offset: index_(buf === local ? 4 : N),
          value: expr(ty, 3),
        });
      } else if (c <= 3) {
        const ty = (["int32", "float32", "bool"] as const)[pick(3)]!;
        const v = mkVar(`v${k}`, ty);
        out.push({ kind: "Let", var: v, value: expr(ty, 3) });
        scope[ty].push(v);
      } else if (c === 4) {
        const e = pick(2) ? undefined : seq(stmts(depth - 1, 1 + pick(3)));
        out.push({
          kind: "If",
          cond: expr("bool", 2),
          then: seq(stmts(depth - 1, 1 + pick(3))),
          ...(e ? { else: e } : {}),
        });
      } else if (c === 5) {
        out.push({
          kind: "While",
          cond: expr("bool", 2),
          body: seq(stmts(depth - 1, 1 + pick(2))),
        });
      } else {
        const v = mkVar("i", "int32");
        const extent = 1 + pick(4);
        scope.int32.push(v);
        scope.idx.push(v);
        const body = seq(stmts(depth - 1, 1 + pick(3)));
        scope.int32.pop();
        scope.idx.pop();
        out.push({
          kind: "For",
          var: v,
          min: imm(0, "int32"),
          extent: imm(extent, "int32"),
          annotation: pick(2) ? "unroll" : "serial",
          body,
        });
      }
    }
    scope.int32.length = saved.int32;
    scope.float32.length = saved.float32;
    scope.bool.length = saved.bool;
    scope.idx.length = saved.idx;
    return out;
  };
  const body = seq([
    { kind: "Let", var: tid, value: { kind: "Special", name: "tid.x", dtype: "int32" } },
    { kind: "Alloc", buffer: local },
    ...stmts(2, 2 + pick(5)),
  ]);
  return {
    kind: "PrimFunc",
    name: `rand${index}`,
    params: [
      { kind: "buffer", name: "A", buffer: A },
      { kind: "buffer", name: "B", buffer: B },
      { kind: "scalar", name: "n", var: n },
      { kind: "scalar", name: "x", var: x },
    ],
    body: {
      kind: "DeviceEntry",
      launch: { grid: [1, 1, 1], block: [N, 1, 1], dynamicSharedBytes: 0 },
      body,
    },
  };
}
