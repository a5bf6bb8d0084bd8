// Fixed-seed fuzzing of nesting: random chains of value operations and random nests of
// statements, mostly shallow, some at and past the documented limit (MAX_EXPR_DEPTH). Every
// kernel either gives the right data on the simulator (closures and generated code; its PTX is
// assembled by ptxas) or is refused with a TirxError (TX2013 past the limit), never a
// RangeError or another exception.
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { T } from "tirx-ts";
import {
  checkDepth,
  intImm,
  isTirxError,
  MAX_EXPR_DEPTH,
  verify,
  type Expr,
  type PrimFunc,
  type Stmt,
} from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { printFunc, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";

const A = [1, 2, 3, 4];
const I = [2, 3, 1, 0];

/** One step of a value chain: the builder's operation and the same on numbers. */
interface Step {
  readonly name: string;
  readonly build: (e: PrimExpr, a: PrimExpr, t: PrimExpr) => PrimExpr;
  readonly run: (e: number, a: number) => number;
}

const f = Math.fround;
const STEPS: readonly Step[] = [
  { name: "add", build: (e, a) => e.add(a), run: (e, a) => f(e + a) },
  { name: "rsub", build: (e, a) => a.sub(e), run: (e, a) => f(a - e) },
  { name: "mul", build: (e, a) => e.mul(a.sub(a).add(1)), run: (e) => e },
  { name: "select", build: (e, a, t) => T.if_then_else(t.lt(4), e, a), run: (e) => e },
  { name: "casts", build: (e) => e.cast("float64").cast("float32"), run: (e) => e },
  { name: "fma", build: (e, a) => T.fma(e, T.float32(1), a), run: (e, a) => f(e + a) },
  { name: "max", build: (e, a) => T.max(e, a), run: (e, a) => Math.max(e, a) },
  { name: "min", build: (e, a) => T.min(e, a.add(100)), run: (e, a) => Math.min(e, a + 100) },
];

/** What the simulator computes for B, both ways (closures, and generated code from the start). */
function simB(fn: PrimFunc): number[][] {
  return [Infinity, 0].map((jitAfter) => {
    const b = simZeros([4], "float32");
    const a = simTensor(A, { shape: [4], dtype: "float32" });
    const i = simTensor(I, { shape: [4], dtype: "int32" });
    runSim(verify(fn), [a, i, b], { jitAfter });
    return Array.from(b.toArray() as Float32Array);
  });
}

/**
 * Run `build` through every door: a kernel at most MAX_EXPR_DEPTH deep must verify, compile,
 * print and give `want` on the simulator; a deeper one must be TX2013. Returns whether it ran.
 */
function check(build: () => PrimFunc, want: () => number[], name: string): boolean {
  let fn: PrimFunc;
  try {
    fn = build();
  } catch (e) {
    // The builder refuses only what is too deep (or too large) for the limits.
    expect(isTirxError(e) && ["TX2013", "TX2018"].includes(e.code)).toBe(true);
    return false;
  }
  const depth = checkDepth(fn, Infinity);
  if (depth > MAX_EXPR_DEPTH) {
    for (const door of [() => verify(fn), () => compileToPtx(fn), () => printFunc(fn)]) {
      expect(door).toThrow(expect.objectContaining({ code: "TX2013" }));
    }
    return false;
  }
  const ptx = compileToPtx(fn);
  assembleLater(ptx.text, ptx.target, name);
  expect(printFunc(fn)).toContain("T.function(");
  const w = want();
  expect(simB(fn)).toEqual([w, w]);
  return true;
}

/** Lengths: mostly short, some around the limit. */
const lengths = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 80 }) },
  { weight: 1, arbitrary: fc.integer({ min: MAX_EXPR_DEPTH - 12, max: MAX_EXPR_DEPTH + 4 }) },
);

describe("random chains of value operations", () => {
  test("the right data or TX2013", () => {
    let ran = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        fc.array(fc.nat(STEPS.length - 1), { minLength: 1, maxLength: 16 }),
        lengths,
        fc.boolean(),
        (pattern, n, gather) => {
          const steps = Array.from({ length: n }, (_, i) => STEPS[pattern[i % pattern.length]!]!);
          const build = (): PrimFunc =>
            T.function(
              "chain",
              {
                A: T.Tensor([4], "float32"),
                I: T.Tensor([4], "int32"),
                B: T.Tensor([4], "float32"),
              },
              ({ A: a, I: idx, B }) => {
                T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
                const t = T.cuda.thread_idx("x");
                // Optionally index through a gather (I[I[t]]), so loads nest in offsets too.
                const at = gather ? idx.get([idx.get([t])]) : t;
                let e = a.get([at]);
                for (const s of steps) e = s.build(e, a.get([at]), t);
                B.set([t], e);
              },
            );
          const want = (): number[] =>
            [0, 1, 2, 3].map((t) => {
              const av = A[gather ? I[I[t]!]! : t]!;
              let e = av;
              for (const s of steps) e = s.run(e, av);
              return e;
            });
          if (check(build, want, `chain_${n}`)) ran++;
          else refused++;
        },
      ),
      { seed: 20, numRuns: 16 },
    );
    expect(ran).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});

describe("random nests of statements", () => {
  // B[t] = A[t] + 1 under the nest; every If condition holds for t < 4 (or the else arm runs).
  const inner = T.function(
    "nest",
    { A: T.Tensor([4], "float32"), I: T.Tensor([4], "int32"), B: T.Tensor([4], "float32") },
    ({ A: a, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
      const t = T.cuda.thread_idx("x");
      B.set([t], a.get([t]).add(1));
    },
  );
  const top = inner.body.kind === "Seq" ? inner.body.stmts : [inner.body];
  const entry = top.find((s) => s.kind === "DeviceEntry") as Extract<Stmt, { kind: "DeviceEntry" }>;
  const [bindT, store] = (entry.body as Extract<Stmt, { kind: "Seq" }>).stmts as [Stmt, Stmt];
  const t = (bindT as Extract<Stmt, { kind: "Let" }>).var;
  const holds: Expr = { kind: "Compare", op: "lt", a: t, b: intImm(4), dtype: "bool" };
  const fails: Expr = { kind: "Compare", op: "lt", a: t, b: intImm(0), dtype: "bool" };
  const empty: Stmt = { kind: "Seq", stmts: [] };
  let ids = 2_000_000;
  const WRAPS: ((s: Stmt) => Stmt)[] = [
    (s) => ({ kind: "If", cond: holds, then: s }),
    (s) => ({ kind: "If", cond: holds, then: s, else: empty }),
    (s) => ({ kind: "If", cond: fails, then: empty, else: s }),
    (s) => ({
      kind: "For",
      var: { kind: "Var", name: "i", dtype: "int32", id: ids++ },
      min: intImm(0),
      extent: intImm(1),
      annotation: "serial",
      body: s,
    }),
    (s) => ({
      kind: "For",
      var: { kind: "Var", name: "u", dtype: "int32", id: ids++ },
      min: intImm(0),
      extent: intImm(1),
      annotation: "unroll",
      body: s,
    }),
    (s) => ({ kind: "Seq", stmts: [{ kind: "While", cond: fails, body: empty }, s] }),
  ];

  test("the right data or TX2013", () => {
    let ran = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        fc.array(fc.nat(WRAPS.length - 1), { minLength: 1, maxLength: 12 }),
        lengths,
        (pattern, n) => {
          const build = (): PrimFunc => {
            let s: Stmt = store;
            for (let k = 0; k < n; k++) s = WRAPS[pattern[k % pattern.length]!]!(s);
            const body: Stmt = { kind: "Seq", stmts: [bindT, s] };
            return {
              ...inner,
              body: { kind: "Seq", stmts: top.map((x) => (x === entry ? { ...entry, body } : x)) },
            };
          };
          if (check(build, () => A.map((a) => a + 1), `nest_${n}`)) ran++;
          else refused++;
        },
      ),
      { seed: 21, numRuns: 16 },
    );
    expect(ran).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
