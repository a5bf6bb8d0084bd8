// Guards on a strided loop index (T.range(tid, n, 128): a runtime start and a step, so the index
// is tid + 128·j, not a loop variable) bound the accesses built from it: the guard narrows tid
// and j (refineRanges), and its fact on tid + 128·j reaches an index through floordiv by a
// constant and floordiv(x, c)·c + floormod(x, c) (symbolic.ts). Where a guard is present but does
// not prove the access, TX2006's note names that guard and what is missing, never asking for it
// again. Accepted kernels run on the simulator and are compared with the host's expected writes.
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor, type PrimFunc } from "tirx-ts";
import { isTirxError, verify } from "@tirx-ts/core";
import type { PrimExpr, TileView } from "@tirx-ts/dsl";

const dev = sim();

/** 128 threads striding over n elements of O (shape `shape`), storing i + 1 at `at(O, i)`. */
function strided(
  shape: number[],
  n: number,
  guard: number,
  at: (O: TileView, i: PrimExpr, v: PrimExpr) => void,
): PrimFunc {
  return T.function("strided", { O: T.Tensor(shape, "float32") }, ({ O }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    for (const i of T.range(tid, n, 128))
      T.if_(i.lt(guard), () => at(O, i, i.add(1).cast("float32")));
  });
}

/** Run `fn` on a zeroed O of `shape`; O's elements. */
function run(fn: PrimFunc, shape: number[]): Float32Array {
  const o = tensor.zeros(shape, "float32", dev);
  compile(fn)(o);
  const got = o.toArray() as Float32Array;
  o.dispose();
  return got;
}

/** The host's O: element i holds i + 1 for i < n. */
const expected = (size: number, n: number): Float32Array =>
  Float32Array.from({ length: size }, (_, i) => (i < n ? i + 1 : 0));

const split = (c: number) => (O: TileView, i: PrimExpr, v: PrimExpr) =>
  O.set([T.floordiv(i, c), T.floormod(i, c)], v);

function refusal(fn: PrimFunc): { code: string; notes: string } {
  try {
    verify(fn);
  } catch (e) {
    if (!isTirxError(e)) throw e;
    return { code: e.code, notes: (e.notes ?? []).map((x) => x.message).join("\n") };
  }
  return { code: "none", notes: "" };
}

describe("a guard on a strided loop index proves the access", () => {
  it("T.range(tid, 120, 128), i < 120, O[i / 24, i % 24] of [5, 24]", () => {
    expect(Array.from(run(strided([5, 24], 120, 120, split(24)), [5, 24]))).toEqual(
      Array.from(expected(120, 120)),
    );
  });

  it("T.range(tid, 1000, 128), i < 1000, O[i / 24, i % 24] of [42, 24] (several trips)", () => {
    expect(Array.from(run(strided([42, 24], 1000, 1000, split(24)), [42, 24]))).toEqual(
      Array.from(expected(1008, 1000)),
    );
  });

  it("T.range(tid, 1000, 128), i < 1000, O[(i / 24)·24 + i % 24] of [1000]", () => {
    const flat = (O: TileView, i: PrimExpr, v: PrimExpr) =>
      O.set([T.floordiv(i, 24).mul(24).add(T.floormod(i, 24))], v);
    expect(Array.from(run(strided([1000], 1000, 1000, flat), [1000]))).toEqual(
      Array.from(expected(1000, 1000)),
    );
  });
});

describe("a guard that is present but does not prove the access", () => {
  it("too loose: the note names it and asks to tighten it", () => {
    const r = refusal(strided([5, 24], 240, 150, split(24)));
    expect(r.code).toBe("TX2006");
    expect(r.notes).toMatch(/already bounds .* ≤ 149 here/);
    expect(r.notes).toMatch(/tighten that guard to .* < 120/);
    expect(r.notes).not.toMatch(/guard the access, e\.g\./);
  });

  it("an index the analysis does not follow: the note says so", () => {
    const r = refusal(strided([1000], 1000, 1000, (O, i, v) => O.set([T.max(i, 0).add(0)], v)));
    expect(r.code).toBe("TX2006");
    expect(r.notes).toMatch(/already bounds .* ≤ 999 here, but the offset/);
    expect(r.notes).not.toMatch(/guard the access, e\.g\./);
  });
});

describe("the note names the bound's variables as the kernel does", () => {
  it("a guard i < n on the README's vector add with A[i + 1]: '≤ n - 1', not an internal name", () => {
    const fn = T.function(
      "vadd",
      { n: T.int32, A: T.Tensor(["n"], "float32"), C: T.Tensor(["n"], "float32") },
      ({ n, A, C }) => {
        T.device_entry({
          launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 256)], block: 256 }),
        });
        const i = T.cuda.block_idx("x").mul(256).add(T.cuda.thread_idx("x"));
        T.if_(i.lt(n), () => C.set([i], A.get([i.add(1)])));
      },
    );
    const r = refusal(fn);
    expect(r.code).toBe("TX2006");
    expect(r.notes).toMatch(/already bounds .* ≤ n - 1 here/);
    expect(r.notes).not.toMatch(/\bv\d+\b/);
  });
});
