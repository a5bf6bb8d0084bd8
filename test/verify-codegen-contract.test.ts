// What code generation assumes, the verifier refuses: each state codegen-ptx used to refuse with a
// user code (TX2004, TX2005, TX2006, TX7001) is now refused by verify() with that code, so the
// simulator and the GPU agree on which kernels exist and codegen checks only invariants. Kernels
// that compiled still compile (assembled with ptxas).
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { isTirxError, verify, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";

/** The TirxError `f` throws (the test fails when it throws none, or something else). */
function errorOf(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("no TirxError");
}

/** `fn`'s code from verify() and from compileToPtx() (which verifies first): the same error. */
function refused(fn: PrimFunc): TirxError {
  const e = errorOf(() => verify(fn));
  const c = errorOf(() => compileToPtx(fn, { arch: "sm_90" }));
  expect([c.code, c.message]).toEqual([e.code, e.message]);
  return e;
}

/** A kernel adding 1 to float32 A and masking int32 B with 3, as the builder writes it. */
const twoOps = (): PrimFunc =>
  T.function("two_ops", { A: T.Tensor([128], "float32"), B: T.Tensor([128], "int32") }, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const t = T.cuda.thread_idx("x");
    p.A.set([t], p.A.get([t]).add(T.float32(1)));
    p.B.set([t], p.B.get([t]).bitand(3));
  });

/** Every object under `x` (the IR is plain data), depth first. */
function* nodes(x: unknown): Generator<Record<string, unknown>> {
  if (typeof x !== "object" || x === null) return;
  yield x as Record<string, unknown>;
  for (const v of Object.values(x)) yield* nodes(v);
}

describe("IR the DSL does not build, refused at verification", () => {
  test("a device entry inside the device entry is TX2004", () => {
    const fn = twoOps();
    const entry = [...nodes(fn.body)].find((n) => n["kind"] === "DeviceEntry")!;
    (entry as { body: unknown }).body = { kind: "Seq", stmts: [{ ...entry }] };
    const e = refused(fn);
    expect(e.code).toBe("TX2004");
    expect(e.text).toBe("T.device_entry may not be nested");
  });

  test("a bit operator on float32 is TX2005", () => {
    const fn = twoOps();
    const add = [...nodes(fn.body)].find((n) => n["kind"] === "Binary" && n["op"] === "add")!;
    (add as { op: string }).op = "bitand";
    const e = refused(fn);
    expect(e.code).toBe("TX2005");
    expect(e.text).toMatch(/bitand is not defined on float32/);
  });

  test("the kernel both were made from verifies and compiles", () => {
    const mod = compileToPtx(twoOps(), { arch: "sm_90" });
    assembleLater(mod.text, "sm_90", "two_ops");
    expect(mod.text).toMatch(/and\.b32/);
  });
});

/**
 * A register array r of 4 float32 filled from A, then for each i of an unrolled loop of `trips`
 * the element `index(i)` read, under `guard` (a condition no thread meets) or not.
 */
const readBack = (index: (i: PrimExpr) => PrimExpr, trips = 4, guard = true): PrimFunc =>
  T.function("read_back", { A: T.Tensor([128], "float32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const t = T.cuda.thread_idx("x");
    const r = T.alloc_local([4], "float32", { name: "r" });
    for (const i of T.unroll(4)) r.set([i], A.get([t]));
    for (const i of T.unroll(trips)) {
      const read = (): void => A.set([t], r.get([index(i)]));
      if (guard) T.if_(t.gt(200), read);
      else read();
    }
  });

describe("register arrays: every element an access names exists, in every unrolled iteration", () => {
  test("an element past the array under a guard no thread meets is TX2006 (codegen names it)", () => {
    const e = refused(readBack((i) => i.add(4)));
    expect(e.code).toBe("TX2006");
    expect(e.text).toMatch(/"r" at element 4 when i = 0, but it holds 4 elements/);
  });

  test("an index that divides by zero in one iteration is TX2006", () => {
    // (i - 1) is 0 at i = 1 only.
    const e = refused(readBack((i) => T.int32(3).floordiv(i.sub(1)).floormod(4), 3, false));
    expect(e.code).toBe("TX2006");
    expect(e.text).toMatch(/the index of "r" divides by zero when i = 1/);
  });

  test("a fragment of an array that stays in .local is TX7001, saying why it stays there", () => {
    const fn = T.function("frag_local", { Y: T.Tensor([32], "float32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const l = T.cuda.thread_idx("x");
      const S = T.alloc_shared([32, 8], "float16", { name: "S" });
      const x = T.alloc_local([8], "float16", { name: "x" });
      T.ptx.ldmatrix(false, 4, ".b16", x, 0, S.ptr([l, 0]));
      Y.set([l], T.float32(x.get([l.bitand(7)]))); // a runtime index: x stays in .local
    });
    const e = refused(fn);
    expect(e.code).toBe("TX7001");
    expect(e.text).toMatch(/register array "x" must live in registers/);
    expect(e.notes[0]?.message).toMatch(
      /stays in \.local memory: the index of the load at .* is not a constant/,
    );
  });

  test("a fragment that leaves its array in one unrolled iteration is TX7001", () => {
    const fn = (trips: number): PrimFunc =>
      T.function("frag_steps", { Y: T.Tensor([32], "float32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const l = T.cuda.thread_idx("x");
        const S = T.alloc_shared([32, 16], "float16", { name: "S" });
        const x = T.alloc_local([16], "float16", { name: "x" });
        // ldmatrix .x4 .b16 writes 8 halves per thread: offsets 0, 4, 8 fit 16 elements, 12 not.
        for (const i of T.unroll(trips))
          T.ptx.ldmatrix(false, 4, ".b16", x, i.mul(4), S.ptr([l, 0]));
        Y.set([l], T.float32(x.get([0])));
      });
    const e = refused(fn(4));
    expect(e.code).toBe("TX7001");
    expect(e.text).toMatch(/spans 8 elements from 12 when i = 3, but "x" holds 16/);
    const ok = compileToPtx(fn(3), { arch: "sm_90" });
    assembleLater(ok.text, "sm_90", "frag_steps");
    expect(ok.text).not.toMatch(/\.local/);
  });

  test("an array in .local keeps its unchecked constant index in code a guard skips", () => {
    // No register names the element, so nothing changed: the access compiles, as before.
    const fn = T.function("local_dead", { A: T.Tensor([128], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const t = T.cuda.thread_idx("x");
      const r = T.alloc_local([4], "float32", { name: "r" });
      r.set([t.bitand(3)], A.get([t]));
      for (const i of T.unroll(2)) T.if_(t.gt(200), () => A.set([t], r.get([i.add(4)])));
    });
    const mod = compileToPtx(fn, { arch: "sm_90" });
    assembleLater(mod.text, "sm_90", "local_dead");
    expect(mod.text).toMatch(/\.local/);
  });

  test("random unrolled indices: refused exactly when some iteration leaves the array", () => {
    type Tree =
      | { kind: "i" }
      | { kind: "c"; v: number }
      | {
          kind: "op";
          op: "add" | "sub" | "mul" | "floordiv" | "floormod" | "shl" | "bitand" | "bitxor";
          a: Tree;
          b: Tree;
        };
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
      t: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.constant<Tree>({ kind: "i" }),
        fc.integer({ min: -4, max: 4 }).map((v): Tree => ({ kind: "c", v })),
        fc.record({
          kind: fc.constant("op" as const),
          op: fc.constantFrom("add", "sub", "mul", "floordiv", "floormod", "bitand", "bitxor"),
          a: tie("t"),
          b: tie("t"),
        }),
        // Shifts by a constant amount of 0..3 (interval arithmetic cannot place a shift).
        fc.record({
          kind: fc.constant("op" as const),
          op: fc.constant("shl" as const),
          a: tie("t"),
          b: fc.integer({ min: 0, max: 3 }).map((v): Tree => ({ kind: "c", v })),
        }),
      ),
    })).t;
    /** The index at iteration i as JavaScript computes it (int32), or undefined at a zero divisor. */
    const value = (x: Tree, i: number): number | undefined => {
      if (x.kind === "i") return i;
      if (x.kind === "c") return x.v;
      const a = value(x.a, i);
      const b = value(x.b, i);
      if (a === undefined || b === undefined) return undefined;
      switch (x.op) {
        case "add":
          return (a + b) | 0;
        case "sub":
          return (a - b) | 0;
        case "mul":
          return Math.imul(a, b);
        case "floordiv":
          return b === 0 ? undefined : Math.floor(a / b) | 0;
        case "floormod":
          return b === 0 ? undefined : (a - Math.floor(a / b) * b) | 0;
        case "shl":
          return a << b; // b is 0..3
        case "bitand":
          return a & b;
        case "bitxor":
          return a ^ b;
      }
    };
    const build = (x: Tree, i: PrimExpr): PrimExpr | number => {
      if (x.kind === "i") return i;
      if (x.kind === "c") return x.v;
      const a = build(x.a, i);
      const b = build(x.b, i);
      const lhs = typeof a === "number" ? T.int32(a) : a;
      return lhs[x.op](b);
    };
    let refusedCount = 0;
    fc.assert(
      fc.property(tree, (x) => {
        const inside = [0, 1, 2, 3].every((i) => {
          const v = value(x, i);
          return v !== undefined && v >= 0 && v < 4;
        });
        // Plus i - i: never a constant, which the builder would check itself (TX1005).
        const fn = readBack((i) => i.sub(i).add(build(x, i)));
        if (inside) {
          const mod = compileToPtx(fn, { arch: "sm_80" });
          assembleLater(mod.text, "sm_80", "read_back");
          expect(mod.text).not.toMatch(/\.local/);
        } else {
          refusedCount++;
          expect(refused(fn).code).toBe("TX2006");
        }
      }),
      { seed: 42, numRuns: 60 },
    );
    expect(refusedCount).toBeGreaterThan(5);
    expect(refusedCount).toBeLessThan(55);
  });
});
