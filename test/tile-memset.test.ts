// T.tile.memset (TIRx Tx.tile.memset): a shared or global view filled with a scalar by the
// scope's threads with vector stores of up to 16 bytes, scalar stores only for a row tail the
// view's shape forces. On the simulated device (hazard checks on: a race between the threads'
// stores would throw) against the expected fill computed here; elements outside the view keep
// their sentinel. PTX excerpt, ptxas, TX2022.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();

function ptxOf(fn: PrimFunc): string {
  const text = compileToPtx(fn, { arch: "sm_80" }).text;
  assembleLater(text, "sm_80", fn.name);
  return text;
}

type Scope = "thread" | "warp" | "wg" | "cta";
const memsetAt = (scope: Scope) => (scope === "thread" ? T.tile.memset : T.tile[scope].memset);

/**
 * A [rows, cols] float32 global tensor whose view [:, c0:c1] is set to `value` at `scope` by a
 * CTA of `block` threads (for thread / warp / wg scope only thread 0 / warp 0 / warpgroup 0
 * calls, so no two callers share the view).
 */
function globalFill(
  name: string,
  scope: Scope,
  block: number,
  rows: number,
  cols: number,
  c0: number,
  c1: number,
  value: number,
): PrimFunc {
  return T.function(name, { Y: T.Tensor([rows, cols], "float32") }, ({ Y }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
    const tid = T.cuda.thread_idx("x");
    const size = { thread: 1, warp: 32, wg: 128, cta: block }[scope];
    const body = () => memsetAt(scope)(Y.sub(":", T.slice(c0, c1)), value);
    if (size === block) body();
    else T.if_(tid.lt(size), body);
  });
}

function checkGlobal(
  fn: PrimFunc,
  rows: number,
  cols: number,
  c0: number,
  c1: number,
  value: number,
): void {
  const sentinel = -7;
  const y = tensor(new Float32Array(rows * cols).fill(sentinel), {
    shape: [rows, cols],
    dtype: "float32",
    device: dev,
  });
  compile(fn, { target: "cuda" })(y);
  const want = Array.from({ length: rows * cols }, (_, i) =>
    i % cols >= c0 && i % cols < c1 ? value : sentinel,
  );
  expect(Array.from(y.toArray() as Float32Array)).toEqual(want);
  y.dispose();
}

describe("T.tile.memset: a global view", () => {
  it("aligned rows at cta scope: st.global.v4.f32 shared by 64 threads", () => {
    const fn = globalFill("ms_g_cta", "cta", 64, 6, 32, 0, 32, 2.5);
    const ptx = ptxOf(fn);
    const line = ptx
      .split("\n")
      .find((l) => /^\s*st\.global\.v4/.test(l))!
      .trim()
      .replace(/%\w+/g, "%r");
    expect(line).toMatchInlineSnapshot(`"st.global.v4.f32 [%r], {%r, %r, %r, %r};"`);
    expect(explainTile(fn)[0]!.replace(/^\S+ /, "")).toMatchInlineSnapshot(
      `"T.tile.cta.memset → st.global vectors of 16 B (4 × float32) ×≤1 per thread over 64 threads: rows of 192 contiguous elements of Y [6, 32]"`,
    );
    checkGlobal(fn, 6, 32, 0, 32, 2.5);
  });

  it("ragged rows (18 of 20) at wg scope: 16-byte vectors and a scalar tail the shape forces", () => {
    const fn = globalFill("ms_g_wg", "wg", 128, 5, 20, 0, 18, -1.25);
    expect(explainTile(fn)[0]).toMatch(
      /st\.global vectors of 16 B \(4 × float32\) ×≤1 per thread \+ scalar tail of 2 per row \(18 is not a multiple of 4\) over 128 threads/,
    );
    ptxOf(fn);
    checkGlobal(fn, 5, 20, 0, 18, -1.25);
  });

  it("a view starting at element 2: 8-byte vectors (alignment), at warp and thread scope", () => {
    for (const scope of ["warp", "thread"] as const) {
      const fn = globalFill(`ms_g_${scope}`, scope, 64, 3, 20, 2, 16, 3);
      expect(explainTile(fn)[0]).toMatch(/st\.global vectors of 8 B \(2 × float32\)/);
      ptxOf(fn);
      checkGlobal(fn, 3, 20, 2, 16, 3);
    }
  });
});

describe("T.tile.memset: a view at a runtime offset", () => {
  // CTA c fills row c (of 32 or 33 float32) of Y [4, w]: the offset c · w is a multiple of 4
  // elements at w = 32 (vector stores), only of 1 at w = 33 (scalar stores).
  const rowFill = (w: number) =>
    T.function(`ms_rt_${w}`, { Y: T.Tensor([4, w], "float32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 4, block: 32 }) });
      T.tile.cta.memset(Y.sub(T.cuda.block_idx("x")), 7);
    });

  it("a multiple of 4 elements (blockIdx.x · 32): 16-byte vectors; not one (· 33): scalar stores", () => {
    const v = rowFill(32);
    expect(explainTile(v)[0]).toMatch(
      /st\.global vectors of 16 B \(4 × float32\) ×≤1 per thread over 32 threads/,
    );
    expect(ptxOf(v)).toMatch(/st\.global\.v4\.f32/);
    const s = rowFill(33);
    expect(explainTile(s)[0]).toMatch(
      /scalar st\.global .* the view's runtime offset is not provably a multiple of 2 elements/,
    );
    expect(ptxOf(s)).not.toMatch(/st\.global\.v\d/);
    for (const [fn, w] of [
      [v, 32],
      [s, 33],
    ] as const) {
      const Y = tensor(new Float32Array(4 * w), { shape: [4, w], dtype: "float32", device: dev });
      compile(fn, { target: "cuda" })(Y);
      expect(Array.from(Y.toArray() as Float32Array)).toEqual(new Array(4 * w).fill(7));
    }
  });
});

describe("T.tile.memset: a shared view", () => {
  /** memset a [16, cols] float16 shared tile at `scope`, then thread 0 copies it out. */
  function sharedFill(name: string, scope: Scope, cols: number, value: number): PrimFunc {
    return T.function(name, { Y: T.Tensor([16, cols], "float16") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const s = T.alloc_shared([16, cols], "float16");
      const tid = T.cuda.thread_idx("x");
      const size = { thread: 1, warp: 32, wg: 128, cta: 128 }[scope];
      const body = () => memsetAt(scope)(s, value);
      if (size === 128) body();
      else T.if_(tid.lt(size), body);
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        for (const i of T.serial(0, 16))
          for (const j of T.serial(0, cols)) Y.set([i, j], s.get([i, j]));
      });
    });
  }

  it("every scope, aligned (16 × 64 f16: 8 halves per store) and ragged (16 × 12)", () => {
    for (const scope of ["thread", "warp", "wg", "cta"] as const) {
      for (const cols of [64, 12]) {
        const fn = sharedFill(`ms_s_${scope}_${cols}`, scope, cols, 1.5);
        if (cols === 64) {
          expect(explainTile(fn)[0]).toMatch(/st\.shared vectors of 16 B \(8 × float16\)/);
        } else {
          // 16 rows of 12 are one contiguous run of 192 halves: still 16-byte vectors.
          expect(explainTile(fn)[0]).toMatch(/st\.shared vectors of 16 B .*rows of 192 contiguous/);
        }
        if (scope === "cta") ptxOf(fn);
        const y = tensor.zeros([16, cols], "float16", dev);
        compile(fn, { target: "cuda" })(y);
        expect(Array.from(y.toArray() as Float32Array)).toEqual(
          Array.from({ length: 16 * cols }, () => 1.5),
        );
        y.dispose();
      }
    }
  });
});

describe("T.tile.memset: dispatch errors", () => {
  it("a register tile dst is TX2022 suggesting T.tile.fill", () => {
    const e = errorOf(() =>
      T.function("ms_reg", { Y: T.Tensor([32], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const r = T.alloc_local([32], "float32", {
          layout: T.TileLayout(T.S([32], ["1@laneid"])),
        });
        T.tile.warp.memset(r, 0);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /T\.tile\.warp\.memset: memset fills a shared or global view; r .* is a register tile; nearest that works: T\.tile\.warp\.fill\(r, value\)/,
    );
  });

  it("a register tile value is TX2022 (memset takes a scalar)", () => {
    const e = errorOf(() =>
      T.function("ms_val", { Y: T.Tensor([32], "float32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const r = T.alloc_local([32], "float32", {
          layout: T.TileLayout(T.S([32], ["1@laneid"])),
        });
        T.tile.warp.memset(Y, r);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /memset's value is one scalar for every element; r is a register tile/,
    );
  });
});
