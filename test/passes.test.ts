// core/transform: copy-on-write mapping, substitute, the passes, the pipeline; TX2013 at every
// front door; TX1015 literal range.
import { describe, expect, test } from "vitest";
import {
  binary,
  DEFAULT_PASSES,
  intImm,
  MAX_EXPR_DEPTH,
  mapExpr,
  mapStmt,
  mkVar,
  runPipeline,
  simplifyExpr,
  structuralEqual,
  substitute,
  walkStmt,
  type Expr,
  type PrimFunc,
  type Stmt,
} from "@tirx-ts/core";
import type { PrimExpr, TileView } from "@tirx-ts/dsl";
import { T, compileToPtx, printFunc, verify } from "tirx-ts";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { copy_async } from "../examples/copy_async.js";

const x = mkVar("x", "int32");
const y = mkVar("y", "int32");
const bin = (op: Parameters<typeof binary>[0], a: Expr, b: Expr): Expr => ({
  kind: "Binary",
  op,
  a,
  b,
  dtype: a.dtype,
});
const c = (v: number | bigint, dt: Expr["dtype"] = "int32"): Expr => ({
  kind: "IntImm",
  value: v,
  dtype: dt,
});

describe("mapExpr / mapStmt / substitute", () => {
  test("an identity rewrite returns the same objects", () => {
    const e = bin("add", bin("mul", x, c(4)), y);
    expect(mapExpr(e, (n) => n)).toBe(e);
    const s: Stmt = { kind: "Let", var: y, value: e };
    expect(mapStmt(s, { expr: (n) => n, stmt: (n) => n })).toBe(s);
  });
  test("only the path to a changed leaf is rebuilt", () => {
    const left = bin("mul", x, c(4));
    const e = bin("add", left, y);
    const out = substitute(e, new Map([[y.id, c(7)]])) as Extract<Expr, { kind: "Binary" }>;
    expect(out).not.toBe(e);
    expect(out.a).toBe(left);
    expect(out.b).toEqual(c(7));
  });
  test("substitute renames binders when mapped to a variable", () => {
    const z = mkVar("z", "int32");
    const s: Stmt = { kind: "Seq", stmts: [{ kind: "Let", var: y, value: x }] };
    const out = substitute(s, new Map<number, Expr>([[y.id, z]]));
    expect((out as unknown as { stmts: { var: unknown }[] }).stmts[0]!.var).toBe(z);
  });
  test("mapExpr is iterative: a chain of 100,000 adds does not overflow the stack", () => {
    let e: Expr = x;
    for (let i = 0; i < 100_000; i++) e = bin("add", e, c(1));
    const out = mapExpr(e, (n) => (n.kind === "Var" ? y : n));
    let leaf = out;
    while (leaf.kind === "Binary") leaf = leaf.a;
    expect(leaf).toBe(y);
  });
});

describe("simplify", () => {
  test("constant folding wraps at the dtype width", () => {
    expect(simplifyExpr(bin("add", c(127, "int8"), c(1, "int8")))).toEqual(c(-128, "int8"));
    expect(simplifyExpr(bin("sub", c(0, "uint8"), c(1, "uint8")))).toEqual(c(255, "uint8"));
    expect(simplifyExpr(bin("mul", c(2 ** 31 - 1), c(2)))).toEqual(c(-2));
    const big = simplifyExpr(bin("mul", c(2n ** 62n, "int64"), c(2n, "int64")));
    expect(big).toEqual(c(-(2n ** 63n), "int64"));
    expect(simplifyExpr(bin("mul", c(0), c(4)))).toEqual(c(0));
  });
  test("division by zero, MIN / -1 and over-wide shifts stay unfolded", () => {
    for (const e of [
      bin("div", c(1), c(0)),
      bin("div", c(-(2 ** 31)), c(-1)),
      bin("shl", c(1), c(32)),
    ]) {
      expect(simplifyExpr(e)).toBe(e);
    }
  });
  test("affine canonicalisation: like terms, (x*a)*b, (x+c1)+c2, x*0, x*1", () => {
    expect(simplifyExpr(bin("add", bin("add", x, c(3)), c(4)))).toEqual(bin("add", x, c(7)));
    expect(simplifyExpr(bin("mul", bin("mul", x, c(4)), c(8)))).toEqual(bin("mul", x, c(32)));
    expect(simplifyExpr(bin("add", bin("mul", x, c(0)), y))).toBe(y);
    expect(simplifyExpr(bin("sub", bin("add", x, y), x))).toBe(y);
    expect(simplifyExpr(bin("add", bin("mul", x, c(2)), bin("mul", x, c(3))))).toEqual(
      bin("mul", x, c(5)),
    );
  });
  test("(4x)/4 folds only when ranges prove no wrap", () => {
    const e = bin("floordiv", bin("mul", x, c(4)), c(4));
    expect(simplifyExpr(e)).toEqual(e); // x unbounded: 4x may wrap
    const env = { vars: new Map([[x.id, { min: 0, max: 1000 }]]) };
    expect(simplifyExpr(e, env)).toBe(x);
    const neg = { vars: new Map([[x.id, { min: -5, max: 1000 }]]) };
    expect(simplifyExpr(e, neg)).toEqual(e);
  });
  test("floats fold only where exact", () => {
    const f = (v: number): Expr => ({ kind: "FloatImm", value: v, dtype: "float32" });
    expect(simplifyExpr(bin("add", f(1), f(2)))).toEqual(f(3));
    const inexact = bin("add", f(0.1), f(0.2));
    expect(simplifyExpr(inexact)).toBe(inexact);
  });
});

describe("pipeline", () => {
  const unrolled = T.function("unrolled", { A: T.Tensor([64], "int32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
    for (const i of T.unroll(4)) {
      const k = T.let_("k", i.mul(2));
      A.set([k], k);
    }
  });
  test("unroll copies the body with constants and fresh let variables", () => {
    const vf = runPipeline(verify(unrolled), DEFAULT_PASSES, { after: "unroll" });
    const lets = new Set<number>();
    let fors = 0;
    walkStmt(vf.entry.body, (s) => {
      if (s.kind === "Let") lets.add(s.var.id);
      if (s.kind === "For") fors++;
    });
    expect(fors).toBe(0);
    expect(lets.size).toBe(4);
  });
  test("stops after a named pass, reports each stage, refuses unknown names", () => {
    const seen: string[] = [];
    runPipeline(verify(copy_async), DEFAULT_PASSES, {
      after: "unroll",
      onStage: (n) => void seen.push(n),
    });
    expect(seen).toEqual(["lower-tile", "axis-checks", "tile-storage", "unroll"]);
    expect(() => runPipeline(verify(copy_async), DEFAULT_PASSES, { after: "nope" })).toThrow(
      /lower-tile, axis-checks, tile-storage, unroll, simplify, swizzle, upcast-half/,
    );
  });
  test("lower-tile moves each plan into a TileOp and empties plans", () => {
    const vf = runPipeline(verify(copy_async), DEFAULT_PASSES, { after: "lower-tile" });
    const kinds: string[] = [];
    walkStmt(vf.entry.body, (s) => void kinds.push(s.kind));
    expect(kinds).toContain("TileOp");
    expect(kinds).not.toContain("TileApply");
    expect(vf.plans.size).toBe(0);
  });
  test("passes are pure: the verified function is unchanged", () => {
    const vf = verify(unrolled);
    const before = printFunc(vf.fn);
    runPipeline(vf, DEFAULT_PASSES);
    expect(printFunc(vf.fn)).toBe(before);
    expect(structuralEqual(vf.fn, unrolled)).toBe(true);
  });
  test("no multiply by a constant zero or one reaches PTX", () => {
    const k = T.function("k", { A: T.Tensor([64], "int32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 16 }) });
      const t = T.cuda.thread_idx("x");
      for (const i of T.unroll(2)) A.set([t.add(i.mul(16))], t.mul(i.add(1)));
    });
    const ptx = compileToPtx(k).text;
    expect(ptx).not.toMatch(/mul\.lo\.s32 [^,]+, 0, /);
    expect(ptx).not.toMatch(/mul\.lo\.s32 [^,]+, [^,]+, [01];/);
  });
});

describe("TX2013: deep IR stops with a TirxError at every front door", () => {
  /** A chain of `n` adds made with the builder; `made` counts the adds it made before refusing. */
  const chain = (n: number, made = { adds: 0 }) =>
    T.function("chain", { A: T.Tensor([4], "int32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      let e = A.get([0]);
      for (let i = 0; i < n; i++) {
        e = e.add(1);
        made.adds++;
      }
      A.set([0], e);
    });
  test("the builder refuses a chain of 10000 or 100000 adds at the same add, below the limit", () => {
    // Each add checks its own depth from its operands' (O(1)): the refusal comes at the add that
    // crosses MAX_EXPR_DEPTH, however long the author's loop would have run.
    const made = [10_000, 100_000].map((n) => {
      const m = { adds: 0 };
      expect(() => chain(n, m)).toThrow(expect.objectContaining({ code: "TX2013" }));
      return m.adds;
    });
    expect(made[1]).toBe(made[0]);
    expect(made[0]).toBeLessThan(MAX_EXPR_DEPTH);
    expect(made[0]).toBeGreaterThan(MAX_EXPR_DEPTH - 8);
  });
  // IR built without the builder (or by a pass) reaches the other doors. Every chain node counts
  // the reads of its fields (`reads`): the work a door does on the chain.
  let reads = 0;
  const counted = (e: Expr): Expr =>
    new Proxy(e, {
      get(target, key, receiver) {
        reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
  const deep = (n: number) => {
    const fn = chain(1);
    const entry = (fn.body.kind === "Seq" ? fn.body.stmts[0] : fn.body) as Extract<
      Stmt,
      { kind: "DeviceEntry" }
    >;
    const store = entry.body.kind === "Seq" ? entry.body.stmts.at(-1)! : entry.body;
    let e = (store as { value: Expr }).value;
    for (let i = 0; i < n; i++) e = counted(bin("add", e, intImm(1)));
    const body: Stmt = { ...entry, body: { ...store, value: e } as Stmt };
    return { ...fn, body };
  };
  test("verify, compileToPtx, printFunc, runSim: 10x the levels cost at most 12x the reads", () => {
    // Each door measures the depth in one linear walk before anything recurses; a walk that is
    // quadratic in the depth (or that recurses first and overflows the stack) fails here.
    const doors: [string, (fn: ReturnType<typeof deep>) => unknown][] = [
      ["verify", (fn) => verify(fn)],
      ["compileToPtx", (fn) => compileToPtx(fn)],
      ["printFunc", (fn) => printFunc(fn)],
      ["runSim", (fn) => runSim(verify(fn), [])],
    ];
    const cost = (n: number): number[] => {
      const fn = deep(n);
      return doors.map(([, door]) => {
        const before = reads;
        expect(() => door(fn)).toThrow(expect.objectContaining({ code: "TX2013" }));
        return reads - before;
      });
    };
    const small = cost(10_000);
    const large = cost(100_000);
    doors.forEach(([name], i) => {
      expect(small[i], name).toBeGreaterThanOrEqual(10_000);
      expect(large[i], name).toBeLessThanOrEqual(12 * small[i]!);
    });
  });
});

describe("chains of loads within the depth limit: every door walks them in linear time", () => {
  // A load whose index holds a load (a gather), nested to 1800 levels: each level's analyses
  // (bounds of the index, whether the index is static, whether simplify's rebuilt sum is
  // smaller) once walked everything under that level, so a chain cost quadratic time. Every
  // node of the chain counts the reads of its fields: 10x the levels may cost at most 12x.
  let reads = 0;
  const counting = (root: Expr): Expr => {
    const memo = new Map<Expr, Expr>();
    const wrap = (e: Expr): Expr => {
      const hit = memo.get(e);
      if (hit) return hit;
      let copy: Expr = e;
      if (e.kind === "BufferLoad") copy = { ...e, offset: wrap(e.offset) };
      else if (e.kind === "Binary") copy = { ...e, a: wrap(e.a), b: wrap(e.b) };
      else if (e.kind === "Cast") copy = { ...e, value: wrap(e.value) };
      const p = new Proxy(copy, {
        get(target, key, receiver) {
          reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
      memo.set(e, p);
      return p;
    };
    return wrap(root);
  };
  /** Each shape with the steps of its small chain (a step adds 1 to 4 levels). */
  const SHAPES: Record<string, [(I: TileView, e: PrimExpr) => PrimExpr, number]> = {
    "I[e]": [(I, e) => I.get([e]), 90],
    "I[e + 4]": [(I, e) => I.get([e.add(4)]), 90],
    "I[(e * 3 + 1) % 8]": [(I, e) => I.get([e.mul(3).add(1).mod(8)]), 40],
  };
  const kernel = (step: (I: TileView, e: PrimExpr) => PrimExpr, n: number) => {
    const fn = T.function(
      "gathers",
      { I: T.Tensor([8], "int32"), B: T.Tensor([4], "int32") },
      ({ I, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
        let e: PrimExpr = T.cuda.thread_idx("x");
        for (let i = 0; i < n; i++) e = step(I, e);
        B.set([T.cuda.thread_idx("x")], e);
      },
    );
    return { ...fn, body: deepen(fn.body) };
  };
  /** The body with the stored value's chain rebuilt of counting nodes. */
  const deepen = (body: Stmt): Stmt =>
    mapStmt(body, {
      stmt: (s) => (s.kind === "Store" ? { ...s, value: counting(s.value) } : s),
    });
  for (const [name, [step, steps]] of Object.entries(SHAPES)) {
    test(`${name}: verify, compileToPtx and runSim cost at most 12x the reads for 10x the levels`, () => {
      const doors: [string, (fn: PrimFunc) => unknown][] = [
        ["verify", (fn) => verify(fn)],
        ["compileToPtx", (fn) => compileToPtx(fn)],
        [
          "runSim",
          (fn) =>
            runSim(verify(fn), [
              simTensor([2, 3, 1, 0, 1, 2, 3, 0], { shape: [8], dtype: "int32" }),
              simZeros([4], "int32"),
            ]),
        ],
      ];
      const cost = (n: number): number[] => {
        const fn = kernel(step, n);
        return doors.map(([, door]) => {
          const before = reads;
          door(fn);
          return reads - before;
        });
      };
      // Above SHALLOW_HEIGHT (64) levels the walks run bottom-up; the small chain is above it too.
      const small = cost(steps);
      const large = cost(10 * steps);
      doors.forEach(([door], i) => {
        expect(small[i], door).toBeGreaterThanOrEqual(steps);
        expect(large[i], door).toBeLessThanOrEqual(12 * small[i]!);
      });
    });
  }
});

describe("TX1015: literals must fit their dtype", () => {
  const store = (dt: "int8" | "uint8" | "float16" | "bfloat16" | "int32", v: number | bigint) =>
    T.function("lit", { A: T.Tensor([4], dt) }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      A.set([0], v);
    });
  test.each([
    ["int8", 300],
    ["int8", -129],
    ["uint8", -1],
    ["uint8", 256],
    ["float16", 70000],
    ["bfloat16", 1e39],
  ] as const)("%s %s", (dt, v) => {
    let err: unknown;
    try {
      store(dt, v);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({
      code: "TX1015",
      span: { file: expect.stringMatching(/passes\.test\.ts$/) },
    });
  });
  test("in-range literals, explicit Infinity and typed constructors", () => {
    expect(() => store("int8", 127)).not.toThrow();
    expect(() => store("float16", 65504)).not.toThrow();
    expect(() => store("float16", Infinity)).not.toThrow();
    expect(() => T.int8(300)).toThrow(expect.objectContaining({ code: "TX1015" }));
    expect(() => intImm(2 ** 32, "uint32")).toThrow(expect.objectContaining({ code: "TX1015" }));
  });
});
