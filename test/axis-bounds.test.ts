// Each index of an element access stays within its axis (issue 20): an index past the end of its
// row whose flat offset stays inside the tensor (B[tid, 32] of a [128, 32] tensor is
// B[tid + 1, 0]) is TX2006 at the access's line, naming the axis, its extent and the index's
// range, for tensors, shared and local buffers, `sub` and `rearrange` views, symbolic axes and
// the indices `sub` fixes; guarded and in-range accesses are accepted, as are indices that read
// data (a gather), deliberate flat offsets (B.flat()) and vectorized ones.
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseScript, T, type PrimExpr } from "@tirx-ts/dsl";
import { isTirxError, structuralEqual, verify, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simZeros } from "@tirx-ts/runtime-sim";
import { errorOf } from "./util/error-of.js";
import { lineContaining } from "./util/markers.js";

/** The line of this file that holds `marker`. */
const lineOf = lineContaining(import.meta.url);

const launch = (block = 128) => T.cuda.LaunchConfig({ grid: 1, block });

/** The TX2006 `fn` is refused with, checked to be at the line marked `marker`. */
function refusedAt(fn: PrimFunc, marker: string) {
  const e = errorOf(() => verify(fn));
  expect(e.code).toBe("TX2006");
  expect(e.span?.line).toBe(lineOf(marker));
  return e;
}

describe("an index past its axis is TX2006 at the access", () => {
  test("the issue's kernel: B[tid, j + 1] at j = 31 (loop variables print as i), with the axis, its extent and the index's range", () => {
    const fn = T.function("row_past", { B: T.Tensor([128, 32], "float32") }, ({ B }) => {
      T.device_entry({ launch: launch() });
      const tid = T.cuda.thread_idx("x");
      for (const j of T.range(32)) B.set([tid, j.add(1)], T.float32(1)); // ISSUE
    });
    const e = refusedAt(fn, "// ISSUE");
    expect(e.text).toBe('axis 1 of "B" (extent 32): index i + 1 reaches 32 (its range is 1..32)');
    expect(e.notes[0]!.message).toContain("B.flat()");
  });

  test("where the flat offset stays inside the tensor (the silent case), and on a load", () => {
    const fn = T.function("row_past_inside", { B: T.Tensor([128, 32], "float32") }, ({ B }) => {
      T.device_entry({ launch: launch() });
      const tid = T.cuda.thread_idx("x");
      T.if_(tid.lt(127), () => {
        for (const j of T.range(32)) {
          B.set([tid, j], B.get([tid, j.add(1)])); // SILENT LOAD
        }
      });
    });
    expect(refusedAt(fn, "// SILENT LOAD").text).toContain("index i + 1 reaches 32");
  });

  test("a negative index: j - 1 at j = 0", () => {
    const fn = T.function("row_before", { B: T.Tensor([128, 32], "float32") }, ({ B }) => {
      T.device_entry({ launch: launch() });
      const tid = T.cuda.thread_idx("x");
      T.if_(tid.gt(0), () => {
        for (const j of T.range(32)) B.set([tid, j.sub(1)], T.float32(0)); // NEGATIVE
      });
    });
    const e = refusedAt(fn, "// NEGATIVE");
    expect(e.text).toBe('axis 1 of "B" (extent 32): index i - 1 reaches -1 (its range is -1..30)');
  });

  test("the middle axis of a 3-D tensor", () => {
    const fn = T.function("middle", { X: T.Tensor([4, 8, 16], "float32") }, ({ X }) => {
      T.device_entry({ launch: launch(16) });
      const k = T.cuda.thread_idx("x");
      for (const [i, j] of T.grid(4, 8)) X.set([i, j.add(1), k], T.float32(0)); // MIDDLE
    });
    expect(refusedAt(fn, "// MIDDLE").text).toMatch(/^axis 1 of "X" \(extent 8\): index .* \+ 1/);
  });

  test("a shared buffer and a local buffer", () => {
    const shared = T.function("shared_past", { O: T.Tensor([128], "float32") }, ({ O }) => {
      T.device_entry({ launch: launch() });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([4, 32], "float32", { name: "S" });
      const w = tid.floordiv(32);
      S.set([w, tid.floormod(32)], T.float32(1));
      T.cuda.cta_sync();
      O.set([tid], S.get([w, tid.floormod(32).add(2)])); // SHARED
    });
    expect(refusedAt(shared, "// SHARED").text).toContain('axis 1 of "S" (extent 32)');
    const local = T.function("local_past", { O: T.Tensor([128], "float32") }, ({ O }) => {
      T.device_entry({ launch: launch() });
      const acc = T.alloc_local([2, 4], "float32", { name: "acc" });
      for (const [i, j] of T.grid(2, 4)) acc.set([i, j.add(i)], T.float32(0)); // LOCAL
      O.set([T.cuda.thread_idx("x")], acc.get([0, 0]));
    });
    expect(refusedAt(local, "// LOCAL").text).toContain('axis 1 of "acc" (extent 4)');
  });

  test("a sub view: its own axis, and the runtime index sub fixed", () => {
    const row = T.function("sub_row", { B: T.Tensor([128, 32], "float32") }, ({ B }) => {
      T.device_entry({ launch: launch() });
      const tid = T.cuda.thread_idx("x");
      const r = B.sub(tid, ":");
      for (const j of T.range(32)) r.set([j.add(1).floormod(33)], T.float32(0)); // SUB VIEW
    });
    expect(refusedAt(row, "// SUB VIEW").text).toContain('axis 0 of a view of "B" (extent 32)');
    const fixed = T.function("sub_fixed", { X: T.Tensor([4, 8, 16], "float32") }, ({ X }) => {
      T.device_entry({ launch: launch(16) });
      const k = T.cuda.thread_idx("x");
      for (const [i, j] of T.grid(4, 8)) {
        const v = X.sub(i, j.add(1), ":");
        v.set([k], T.float32(0)); // SUB FIXED
      }
    });
    expect(refusedAt(fixed, "// SUB FIXED").text).toBe(
      'axis 1 of "X" (extent 8, fixed by sub): index i + 1 reaches 8 (its range is 1..8)',
    );
  });

  test("a rearranged view names the axis", () => {
    const fn = T.function("rearranged", { O: T.Tensor([128], "float32") }, ({ O }) => {
      T.device_entry({ launch: launch() });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([128], "float32", { name: "S" });
      const st = S.rearrange("(w t) -> w t", { t: 32 });
      st.set([tid.floordiv(32), tid.floormod(32)], T.float32(1));
      T.cuda.cta_sync();
      O.set([tid], st.get([tid.floordiv(32), tid.floormod(32).add(1)])); // REARRANGED
    });
    expect(refusedAt(fn, "// REARRANGED").text).toContain(
      'axis 1 (t) of a view of "S" (extent 32)',
    );
  });

  test("a symbolic axis without a guard; with one it is accepted", () => {
    const make = (guard: boolean) =>
      T.function("sym_axis", { n: T.int32, A: T.Tensor([4, "n"], "float32") }, ({ n, A }) => {
        T.device_entry({ launch: launch(64) });
        const t = T.cuda.thread_idx("x");
        const body = () => {
          for (const r of T.range(4)) A.set([r, t], T.float32(0)); // SYMBOLIC
        };
        if (guard) T.if_(t.lt(n), body);
        else body();
      });
    const e = refusedAt(make(false), "// SYMBOLIC");
    expect(e.text).toBe(
      'axis 1 of "A" (extent n): index threadIdx_x is not provably below n (its range is 0..63)',
    );
    expect(e.notes[0]!.message).toContain("T.if_(i.lt(n)");
    expect(() => verify(make(true))).not.toThrow();
  });

  test("an index the analysis cannot bound from bounded inputs", () => {
    const fn = T.function("xor_index", { B: T.Tensor([128, 32], "float32") }, ({ B }) => {
      T.device_entry({ launch: launch() });
      const tid = T.cuda.thread_idx("x");
      B.set([tid, tid.bitxor(5)], T.float32(0)); // XOR
    });
    expect(refusedAt(fn, "// XOR").text).toBe(
      'axis 1 of "B" (extent 32): index bitxor(threadIdx_x, 5) is not bounded below by 0 (its range is -∞..∞)',
    );
  });

  test("script mode: B[tid]![j + 1]", () => {
    const dir = fileURLToPath(new URL("./.printed/axis-bounds/", import.meta.url));
    mkdirSync(dir, { recursive: true });
    const file = `${dir}script_past.ts`;
    const text = [
      'import { script as T, type Tensor } from "tirx-ts";',
      'export const k = T.prim_func(function k(B: Tensor<[128, 32], "float32">) {',
      "  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });",
      '  const tid = T.cuda.thread_idx("x");',
      "  for (let j = 0; j < 32; j++) B[tid]![j + 1] = 0;",
      "});",
      "",
    ].join("\n");
    writeFileSync(file, text);
    const e = errorOf(() => verify(parseScript(text, file)[0]!));
    expect(e.code).toBe("TX2006");
    expect(e.span?.line).toBe(5);
    expect(e.text).toContain('axis 1 of "B" (extent 32)');
  });
});

describe("accesses within their axes are accepted", () => {
  test("guarded, in range, by data, by a flat offset, vectorized; they compile and run", () => {
    const fn = T.function(
      "within",
      {
        B: T.Tensor([128, 32], "float32"),
        E: T.Tensor([5, 24], "float32"),
        G: T.Tensor([128, 32], "float32"),
        idx: T.Tensor([128], "int32"),
        O: T.Tensor([128, 32], "float32"),
      },
      ({ B, E, G, idx, O }) => {
        T.device_entry({ launch: launch() });
        const tid = T.cuda.thread_idx("x");
        // The guard the note asks for.
        for (const j of T.range(32)) T.if_(j.lt(31), () => B.set([tid, j.add(1)], 1));
        // A deliberate flat offset is written on the flat view: row tid + 1, column 0.
        T.if_(tid.lt(127), () => B.flat().set([tid.mul(32).add(32)], 3));
        // A guard on a whole index bounds its quotient and remainder (the offset's proof too).
        const i = T.let_("i", tid.mul(3));
        T.if_(i.lt(120), () => E.set([i.floordiv(24), i.floormod(24)], 2));
        // A gather's column is data: left to the run, as the offset's unbounded ends are.
        O.set([tid, 31], G.get([tid, idx.get([tid])]));
        // Vector lanes of a row, then a row of a rearranged view.
        const S = T.alloc_shared([128, 32], "float32", { name: "S" });
        for (const c of T.range(8))
          for (const v of T.vectorized(4)) S.set([tid, c.mul(4).add(v)], 4);
        T.cuda.cta_sync();
        const rows = S.rearrange("(w t) c -> w t c", { t: 32 }).sub(tid.floordiv(32));
        O.set([tid, 0], rows.get([T.sub(31, tid.floormod(32)), 5]));
      },
    );
    expect(() => verify(fn)).not.toThrow();
    compileToPtx(fn, { arch: "sm_80" });
    const [B, O] = [simZeros([128, 32], "float32"), simZeros([128, 32], "float32")];
    const args = [B, simZeros([5, 24], "float32"), simZeros([128, 32], "float32")];
    const r = runSim(verify(fn), [...args, simZeros([128], "int32"), O], { hazards: "collect" });
    expect(r.reports.map(String)).toEqual([]);
    const b = B.toArray() as Float32Array;
    expect([b[0], b[1], b[31], b[32]]).toEqual([0, 1, 1, 3]); // row 1, column 0: the flat store
    expect((O.toArray() as Float32Array)[0]).toBe(4);
  });

  test("the author's index is left out of structural equality, as a span is", () => {
    const make = (flat: boolean) =>
      T.function("eq", { B: T.Tensor([4, 8], "float32") }, ({ B }) => {
        T.device_entry({ launch: launch(8) });
        const t = T.cuda.thread_idx("x");
        if (flat) B.flat().set([T.int32(1).mul(8).add(t)], 0);
        else B.set([1, t], 0);
      });
    expect(structuralEqual(make(false), make(true))).toBe(true);
  });
});

describe("random indices into a row (fast-check, seed 42)", () => {
  test("an index that leaves its axis in some iteration is always refused, naming the axis", () => {
    type Tree =
      | { kind: "j" }
      | { kind: "c"; v: number }
      | {
          kind: "op";
          op: "add" | "sub" | "mul" | "floordiv" | "floormod" | "min";
          a: Tree;
          b: Tree;
        };
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
      t: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.constant<Tree>({ kind: "j" }),
        fc.integer({ min: -3, max: 9 }).map((v): Tree => ({ kind: "c", v })),
        fc.record({
          kind: fc.constant("op" as const),
          op: fc.constantFrom("add", "sub", "mul", "floordiv", "floormod", "min"),
          a: tie("t"),
          b: tie("t"),
        }),
      ),
    })).t;
    /** The index at iteration j, or undefined at a zero divisor. */
    const value = (x: Tree, j: number): number | undefined => {
      if (x.kind === "j") return j;
      if (x.kind === "c") return x.v;
      const a = value(x.a, j);
      const b = value(x.b, j);
      if (a === undefined || b === undefined) return undefined;
      if (x.op === "add") return a + b;
      if (x.op === "sub") return a - b;
      if (x.op === "mul") return a * b;
      if (x.op === "min") return Math.min(a, b);
      if (b === 0) return undefined;
      return x.op === "floordiv" ? Math.floor(a / b) : a - Math.floor(a / b) * b;
    };
    const build = (x: Tree, j: PrimExpr): PrimExpr | number => {
      if (x.kind === "j") return j;
      if (x.kind === "c") return x.v;
      const a = build(x.a, j);
      const lhs = typeof a === "number" ? T.int32(a) : a;
      return lhs[x.op](build(x.b, j));
    };
    const outcomes = { refused: 0, accepted: 0 };
    fc.assert(
      fc.property(tree, (x) => {
        const leaves = [0, 1, 2, 3, 4, 5, 6, 7].some((j) => {
          const v = value(x, j);
          return v !== undefined && (v < 0 || v >= 8);
        });
        // Row 1 of 4 rows of 8: a column past the row stays inside the tensor for most values.
        const make = () =>
          T.function("fuzz_row", { B: T.Tensor([4, 8], "float32") }, ({ B }) => {
            T.device_entry({ launch: launch(1) });
            for (const j of T.range(8)) B.set([1, build(x, j)], 0);
          });
        let code = "verified";
        try {
          verify(make());
          outcomes.accepted++;
        } catch (e) {
          code = isTirxError(e) ? e.code : String(e);
          // A constant index (no j in it) is checked where it is built.
          if (code === "TX1005") return;
          expect(code).toBe("TX2006");
          expect((e as Error).message).toContain('axis 1 of "B" (extent 8)');
          outcomes.refused++;
        }
        if (leaves) expect(code).toBe("TX2006");
      }),
      { seed: 42, numRuns: 80 },
    );
    expect(outcomes.refused).toBeGreaterThan(5);
    expect(outcomes.accepted).toBeGreaterThan(5);
  });
});
