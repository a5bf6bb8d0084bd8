// Nesting up to the documented limit (MAX_EXPR_DEPTH = 2048 levels of expressions and statements)
// goes through every front door with the right results, and one level more is TX2013 at the
// author's line: the builder, verify, compileToPtx (assembled by ptxas), printFunc, printScript
// and the simulator (closures and generated code). Also the tree-size limit (TX2018) that keeps
// walkers linear, and a body that returns a promise (TX1025).
import { describe, expect, test } from "vitest";
import { T, compile, printFunc, printScript } from "tirx-ts";
import {
  binary,
  checkDepth,
  intImm,
  MAX_EXPR_DEPTH,
  MAX_EXPR_NODES,
  verify,
  type Expr,
  type PrimFunc,
  type Stmt,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import type { PrimExpr, TileView } from "@tirx-ts/dsl";
import { MAX_COROUTINE_DEPTH, runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";

const A = [1, 2, 3, 4];
const I = [2, 3, 1, 0, 1, 2, 3, 0];

type Body = (h: { A: TileView; I: TileView; B: TileView }, t: PrimExpr, n: number) => void;

/** A kernel over A (float32[4]), I (int32[4]) and B (float32[4]), one thread per element. */
const kernel = (body: Body, n: number): PrimFunc =>
  T.function(
    "deep",
    { A: T.Tensor([4], "float32"), I: T.Tensor([8], "int32"), B: T.Tensor([4], "float32") },
    ({ A, I, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
      body({ A, I, B }, T.cuda.thread_idx("x"), n);
    },
  );

/**
 * Expression shapes, each with what B holds afterwards, computed here from A and I (exact:
 * small integers in float32).
 */
const SHAPES: Record<string, { body: Body; expect: (n: number) => number[] }> = {
  // The reported instance: e = e.add(A.get([t])), a left-deep sum of loads.
  "sum of loads": {
    body: ({ A, B }, t, n) => {
      let e = A.get([t]);
      for (let i = 0; i < n; i++) e = e.add(A.get([t]));
      B.set([t], e);
    },
    expect: (n) => A.map((a) => a * (n + 1)),
  },
  // Every other kind of value node in one chain, right- and left-deep: a difference, a select,
  // a pair of casts, an fma (an op call) and a max, in turn.
  "mixed value operations": {
    body: ({ A, B }, t, n) => {
      let e = A.get([t]);
      for (let i = 0; i < n; i++) {
        const a = A.get([t]);
        const k = i % 5;
        if (k === 0) e = a.sub(e);
        else if (k === 1) e = T.if_then_else(t.lt(4), e, a);
        else if (k === 2) e = e.cast("float64").cast("float32");
        else if (k === 3) e = T.fma(e, T.float32(1), a);
        else e = T.max(e, a);
      }
      B.set([t], e);
    },
    expect: (n) =>
      A.map((a) => {
        let e = a;
        for (let i = 0; i < n; i++) {
          const k = i % 5;
          if (k === 0) e = a - e;
          else if (k === 3) e = e + a;
          else if (k === 4) e = Math.max(e, a);
        }
        return e;
      }),
  },
  "a condition of ands and nots": {
    body: ({ A, B }, t, n) => {
      let c = t.lt(4);
      for (let i = 0; i < n; i++) c = i % 2 === 0 ? c.and(t.ge(0)) : c.not().not();
      T.if_(c, () => B.set([t], A.get([t])));
    },
    expect: () => A,
  },
  "gathers with an added constant (I[I[i] + 4])": {
    body: ({ I, B }, t, n) => {
      let e = t;
      for (let i = 0; i < n; i++) e = I.get([e.add(4)]);
      B.set([t], e.cast("float32"));
    },
    expect: (n) =>
      [0, 1, 2, 3].map((t) => {
        let e = t;
        for (let i = 0; i < n; i++) e = I[e + 4]!;
        return e;
      }),
  },
  "gathers (a load in each index)": {
    body: ({ I, B }, t, n) => {
      let e = t;
      for (let i = 0; i < n; i++) e = I.get([e]);
      B.set([t], e.cast("float32"));
    },
    expect: (n) =>
      [0, 1, 2, 3].map((t) => {
        let e = t;
        for (let i = 0; i < n; i++) e = I[e]!;
        return e;
      }),
  },
};

/**
 * The most steps `n` of `body` whose kernel is at most MAX_EXPR_DEPTH deep, and that kernel:
 * extrapolated from two small kernels (depth grows by a fixed amount every step or two), then
 * stepped to the edge.
 */
function atLimit(body: Body): { n: number; fn: PrimFunc } {
  const built = new Map<number, PrimFunc>();
  const depth = (n: number): number => {
    try {
      const fn = kernel(body, n);
      built.set(n, fn);
      return checkDepth(fn, Infinity);
    } catch {
      return Infinity; // the builder refused it
    }
  };
  const d10 = depth(10);
  const d30 = depth(30);
  let n = 10 + Math.floor(((MAX_EXPR_DEPTH - d10) * 20) / (d30 - d10));
  while (depth(n) > MAX_EXPR_DEPTH) n--;
  while (depth(n + 1) <= MAX_EXPR_DEPTH) n++;
  return { n, fn: built.get(n) ?? kernel(body, n) };
}

/** What `f` throws (undefined when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** What building then verifying throws (undefined when both pass). */
function refusal(build: () => PrimFunc): unknown {
  try {
    verify(build());
  } catch (e) {
    return e;
  }
  return undefined;
}

/** A TirxError of `code` at a line of this file. */
const here = (code: string) => ({ code, span: { file: expect.stringMatching(/depth-limit/) } });

/** B after running `fn` (verified here, or already) on the simulator with A and I. */
function simB(fn: PrimFunc | VerifiedFunc, jitAfter: number): number[] {
  const b = simZeros([4], "float32");
  runSim(
    "entry" in fn ? fn : verify(fn),
    [
      simTensor(A, { shape: [4], dtype: "float32" }),
      simTensor(I, { shape: [8], dtype: "int32" }),
      b,
    ],
    {
      jitAfter,
    },
  );
  return Array.from(b.toArray() as Float32Array);
}

/** Every door on `fn`: the results it gives (B on the simulator, both ways), or what it throws. */
async function doors(fn: PrimFunc, want: number[], name: string): Promise<void> {
  const vf = verify(fn);
  const ptx = compileToPtx(fn);
  assembleLater(ptx.text, ptx.target, name);
  expect(printFunc(fn)).toContain('T.function("deep"');
  expect(await printScript(fn)).toContain("T.prim_func(function deep(");
  // Both simulator doors on the one verified function (verify is the door above): closures
  // first, then generated code (a statement that moved to generated code stays moved).
  expect(simB(vf, Infinity)).toEqual(want);
  expect(simB(vf, 0)).toEqual(want);
}

describe("expressions nested to the limit", () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    test(`${name}: every door at depth ${MAX_EXPR_DEPTH}, TX2013 one level deeper`, async () => {
      const { n, fn } = atLimit(shape.body);
      // A step may add two levels: the deepest kernel is 2048 or 2047 deep.
      expect(checkDepth(fn)).toBeGreaterThanOrEqual(MAX_EXPR_DEPTH - 1);
      await doors(fn, shape.expect(n), name);
      expect(refusal(() => kernel(shape.body, n + 1))).toMatchObject(here("TX2013"));
    });
  }

  test("the reported 1,200 loads compile", () => {
    const fn = kernel(SHAPES["sum of loads"]!.body, 1200);
    const ptx = compileToPtx(fn);
    assembleLater(ptx.text, ptx.target, "sum_1200");
    expect(simB(fn, Infinity)).toEqual(SHAPES["sum of loads"]!.expect(1200));
  });
});

/** The device body of `fn` and a copy of `fn` with another one. */
function deviceBody(fn: PrimFunc): { body: Stmt; with: (b: Stmt) => PrimFunc } {
  const top = fn.body.kind === "Seq" ? fn.body.stmts : [fn.body];
  const entry = top.find((s) => s.kind === "DeviceEntry") as Extract<Stmt, { kind: "DeviceEntry" }>;
  return {
    body: entry.body,
    with: (b) => ({
      ...fn,
      body: { kind: "Seq", stmts: top.map((s) => (s === entry ? { ...entry, body: b } : s)) },
    }),
  };
}

describe("statements nested to the limit", () => {
  // The innermost statement: B[t] = A[t] + 1, in a kernel whose first statement binds t.
  const inner = kernel(({ A, B }, t) => B.set([t], A.get([t]).add(1)), 0);
  const { body, with: withBody } = deviceBody(inner);
  const [bindT, store] = (body as Extract<Stmt, { kind: "Seq" }>).stmts as [Stmt, Stmt];
  const t = (bindT as Extract<Stmt, { kind: "Let" }>).var;
  const cond: Expr = { kind: "Compare", op: "lt", a: t, b: intImm(4), dtype: "bool" };
  const never: Expr = { kind: "Compare", op: "lt", a: t, b: intImm(0), dtype: "bool" };
  // If, the else arm of an If, a For and a While beside an If, in turn.
  const wrap = (s: Stmt, k: number): Stmt => {
    switch (k % 4) {
      case 0:
        return { kind: "If", cond, then: s };
      case 1:
        return { kind: "If", cond: never, then: { kind: "Seq", stmts: [] }, else: s };
      case 2:
        return {
          kind: "For",
          var: { kind: "Var", name: "i", dtype: "int32", id: 1_000_000 + k },
          min: intImm(0),
          extent: intImm(1),
          annotation: "serial",
          body: s,
        };
      default:
        return {
          kind: "Seq",
          stmts: [{ kind: "While", cond: never, body: { kind: "Seq", stmts: [] } }, s],
        };
    }
  };
  const nest = (how: (s: Stmt, k: number) => Stmt, levels: number): PrimFunc => {
    let s: Stmt = store;
    for (let k = 0; k < levels; k++) s = how(s, k);
    return withBody({ kind: "Seq", stmts: [bindT, s] });
  };
  test(`if, else, for and while: every door at depth ${MAX_EXPR_DEPTH}, TX2013 one level deeper`, async () => {
    const depth = (k: number): number => checkDepth(nest(wrap, k), Infinity);
    let levels = 8 + Math.floor(((MAX_EXPR_DEPTH - depth(8)) * 8) / (depth(16) - depth(8)));
    while (depth(levels) > MAX_EXPR_DEPTH) levels--;
    while (depth(levels + 1) <= MAX_EXPR_DEPTH) levels++;
    const fn = nest(wrap, levels);
    expect(checkDepth(fn)).toBe(MAX_EXPR_DEPTH);
    await doors(
      fn,
      A.map((a) => a + 1),
      "statements",
    );
    expect(refusal(() => nest(wrap, levels + 1))).toMatchObject({ code: "TX2013" });
  });

  test("T.grid loops nested to the limit run; one loop more is TX2013 at the T.grid line", () => {
    const loops = (k: number) =>
      kernel(({ A, B }, t) => {
        for (const _ of T.grid(...Array.from({ length: k }, () => 1)))
          B.set([t], A.get([t]).add(1));
      }, 0);
    const d1 = checkDepth(loops(1));
    const k = 1 + MAX_EXPR_DEPTH - d1;
    expect(checkDepth(loops(k))).toBe(MAX_EXPR_DEPTH);
    expect(simB(loops(k), Infinity)).toEqual(A.map((a) => a + 1));
    expect(refusal(() => loops(k + 1))).toMatchObject(here("TX2013"));
  });

  test(`waits nested ${MAX_COROUTINE_DEPTH} statements deep run; deeper is TX2010`, () => {
    // Each thread arrives on an mbarrier and waits for its phase: warps run as coroutines.
    const waits = kernel(({ A, B }, t) => {
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.if_(t.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 4);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.ptx.mbarrier.arrive(bar.sub(0));
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      B.set([t], A.get([t]).add(1));
    }, 0);
    const { body: wbody, with: withWaits } = deviceBody(waits);
    const [bind, ...rest] = (wbody as Extract<Stmt, { kind: "Seq" }>).stmts as [Stmt, ...Stmt[]];
    const guard: Expr = {
      kind: "Compare",
      op: "lt",
      a: (bind as Extract<Stmt, { kind: "Let" }>).var,
      b: intImm(4),
      dtype: "bool",
    };
    const nested = (k: number): PrimFunc => {
      let s: Stmt = { kind: "Seq", stmts: rest };
      for (let i = 0; i < k; i++) s = { kind: "If", cond: guard, then: s };
      return withWaits({ kind: "Seq", stmts: [bind, s] });
    };
    const deepest = MAX_COROUTINE_DEPTH - 1; // the wait loop is a level too
    expect(simB(nested(deepest), Infinity)).toEqual(A.map((a) => a + 1));
    expect(thrown(() => simB(nested(deepest + 1), Infinity))).toMatchObject({ code: "TX2010" });
  });

  test("T.if_ bodies nested by recursion stop at the limit with TX2013, not a stack overflow", () => {
    let reached = 0;
    const build = () =>
      kernel(({ A, B }, t) => {
        const c = t.lt(4);
        const rec = (d: number): void => {
          reached = d;
          T.if_(c, () => (d < 3000 ? rec(d + 1) : B.set([t], A.get([t]))));
        };
        rec(0);
      }, 0);
    expect(build).toThrow(expect.objectContaining({ code: "TX2013" }));
    expect(reached).toBeGreaterThanOrEqual(MAX_EXPR_DEPTH - 3);
  });
});

describe("expression size (TX2018)", () => {
  // e = e.add(e) doubles the tree each step: 3·2^k - 1 operations after k steps.
  const doubling = (k: number) =>
    kernel(({ A, B }, t) => {
      let e = A.get([t]);
      for (let i = 0; i < k; i++) e = e.add(e);
      B.set([t], e);
    }, 0);
  const steps = Math.floor(Math.log2((MAX_EXPR_NODES + 1) / 3));

  test(`${steps} doublings (${3 * 2 ** steps - 1} operations) run; one more is TX2018 at its line`, () => {
    expect(simB(doubling(steps), Infinity)).toEqual(A.map((a) => a * 2 ** steps));
    expect(refusal(() => doubling(steps + 1))).toMatchObject(here("TX2018"));
  });

  test("IR that doubles 60 times without the builder is TX2018 at verify, not a hang", () => {
    const fn = doubling(1);
    const { body, with: withBody } = deviceBody(fn);
    const stmts = (body as Extract<Stmt, { kind: "Seq" }>).stmts;
    const st = stmts[stmts.length - 1] as Extract<Stmt, { kind: "Store" }>;
    let e: Expr = st.value;
    for (let i = 0; i < 60; i++) e = binary("add", e, e);
    const big = withBody({ kind: "Seq", stmts: [...stmts.slice(0, -1), { ...st, value: e }] });
    for (const door of [
      () => verify(big),
      () => compileToPtx(big),
      () => compile(big),
      () => printFunc(big),
    ]) {
      expect(door).toThrow(expect.objectContaining({ code: "TX2018" }));
    }
  });
});
