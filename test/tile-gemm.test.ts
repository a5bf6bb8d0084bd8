// T.tile.warp.copy through ldmatrix, T.tile.copy_async (cp.async) and T.tile.warp.gemm
// (mma.sync) on the simulated device against exact math (small integers, so every float32 sum
// is exact), with the simulator's hazard checks on (it throws on the first report); their PTX
// uses ldmatrix / mma.sync / cp.async and is assembled by ptxas. Dispatch errors (TX2022) name
// the failed requirement and the nearest layout that works.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { runRoundTrip } from "./util/stmatrix-kernels.js";
import { intsFrom } from "./util/lcg.js";

const dev = sim();

/** Small integers in [-4, 4]: every product and sum of a few hundred is exact in float32. */
function ints(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, intsFrom(seed, -4, 4));
}

function ptxOf(fn: PrimFunc): string {
  const text = compileToPtx(fn, { arch: "sm_80" }).text;
  assembleLater(text, "sm_80", fn.name);
  return text;
}

type Swz = ReturnType<typeof T.SwizzleLayout> | undefined;

/**
 * A round trip global → shared (copy_async) → registers (warp.copy: ldmatrix) → global
 * (warp.copy) of an r × c float16 tile in `operand` fragments.
 */
function roundTrip(operand: "A" | "B", r: number, c: number, swizzle: Swz, name: string): PrimFunc {
  return T.function(
    name,
    { X: T.Tensor([r, c], "float16"), Y: T.Tensor([r, c], "float16") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const s = T.alloc_shared([r, c], "float16", swizzle ? { layout: swizzle } : {});
      const f = T.alloc_local([r, c], "float16", {
        layout: T.layout.mma_sync_tile_layout(operand, "m16n8k16", "float16", r, c),
      });
      T.tile.warp.copy_async(s, X);
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      T.tile.warp.copy(f, s);
      T.tile.warp.copy(Y, f);
    },
  );
}

function roundTripInts(fn: PrimFunc, r: number, c: number): void {
  const x = ints(r * c, r + c);
  expect(runRoundTrip(fn, r, c, x, dev)).toEqual(Array.from(x));
}

describe("T.tile.warp.copy: shared → mma fragments by ldmatrix", () => {
  it("A (32 × 32) plain and swizzled: ldmatrix.x4, bit for bit", () => {
    for (const [sw, tag] of [
      [undefined, "plain"],
      [T.SwizzleLayout(3, 2, 3), "swz"],
    ] as const) {
      const fn = roundTrip("A", 32, 32, sw, `ldm_a_${tag}`);
      const ptx = ptxOf(fn);
      expect(ptx).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
      expect(ptx).toMatch(/cp\.async\.cg\.shared\.global/);
      roundTripInts(fn, 32, 32);
    }
  });

  it("B (32 × 16, row-major K × N): ldmatrix.x4.trans, bit for bit; x2 for one n8 column", () => {
    const fn = roundTrip("B", 32, 16, T.SwizzleLayout(3, 1, 3), "ldm_b");
    const ptx = ptxOf(fn);
    expect(ptx).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16/);
    roundTripInts(fn, 32, 16);
    const narrow = roundTrip("B", 16, 8, undefined, "ldm_b_x2");
    expect(ptxOf(narrow)).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared\.b16/);
    roundTripInts(narrow, 16, 8);
    expect(explainTile(fn)[1]).toMatch(
      /T\.tile\.warp\.copy → ldmatrix x4\.trans ×2: .* 2 × 2 m16n8k16 B fragments/,
    );
  });

  it("a swizzle that splits a 16-byte ldmatrix row is TX2022 naming why and a swizzle that works", () => {
    const e = errorOf(() =>
      T.function("ldm_bad_swz", { Y: T.Tensor([16, 16], "float16") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const s = T.alloc_shared([16, 16], "float16", { layout: T.SwizzleLayout(2, 2, 3) });
        const f = T.alloc_local([16, 16], "float16", {
          layout: T.layout.mma_sync_tile_layout("A", "m16n8k16", "float16", 16, 16),
        });
        T.tile.warp.copy(f, s);
        T.tile.warp.copy(Y, f);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/keeps only 8 bytes together, so it splits every row/);
    expect(e.message).toMatch(
      /nearest that works: a swizzle that keeps 16-byte atoms, e\.g\. T\.SwizzleLayout\(3, 2, 5\)/,
    );
  });

  it("a shared tile whose rows are not 16-byte aligned (row pitch 36 × f16) is TX2022", () => {
    const e = errorOf(() =>
      T.function("ldm_bad_pitch", { Y: T.Tensor([16, 16], "float16") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const s = T.alloc_shared([16, 36], "float16");
        const f = T.alloc_local([16, 16], "float16", {
          layout: T.layout.mma_sync_tile_layout("A", "m16n8k16", "float16", 16, 16),
        });
        T.tile.warp.copy(f, s.sub(":", "0:16"));
        T.tile.warp.copy(Y, f);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/byte 72: an ldmatrix row must start 16-byte aligned/);
  });

  it("a transposed view that makes every matrix row strided is TX2022", () => {
    const e = errorOf(() =>
      T.function("ldm_bad_strided", { Y: T.Tensor([16, 16], "float16") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const s = T.alloc_shared([16, 32], "float16");
        const f = T.alloc_local([16, 16], "float16", {
          layout: T.layout.mma_sync_tile_layout("A", "m16n8k16", "float16", 16, 16),
        });
        // Every other column: neither rows nor columns are 8 contiguous elements.
        T.tile.warp.copy(f, s.rearrange("r (c two) -> r c two", { two: 2 }).sub(":", ":", 0));
        T.tile.warp.copy(Y, f);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/splits them/);
  });
});

/** C (m × n) = A (m × k) · B (k × n) by one warp: cp.async, ldmatrix, mma.sync, C stored. */
function warpGemm(m: number, n: number, k: number, dtype: "float16" | "bfloat16"): PrimFunc {
  return T.function(
    `warp_gemm_${dtype}`,
    { A: T.Tensor([m, k], dtype), B: T.Tensor([k, n], dtype), C: T.Tensor([m, n], "float32") },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const As = T.alloc_shared([m, k], dtype, { layout: T.SwizzleLayout(3, 2, 3) });
      const Bs = T.alloc_shared([k, n], dtype);
      const L = T.layout.mma_sync_tile_layout;
      const a = T.alloc_local([m, k], dtype, { layout: L("A", "m16n8k16", dtype, m, k) });
      const b = T.alloc_local([k, n], dtype, { layout: L("B", "m16n8k16", dtype, k, n) });
      const c = T.alloc_local([m, n], "float32", { layout: L("C", "m16n8k16", "float32", m, n) });
      T.tile.warp.copy_async(As, A);
      T.tile.warp.copy_async(Bs, B);
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      T.tile.warp.zero(c);
      T.tile.warp.copy(a, As);
      T.tile.warp.copy(b, Bs);
      T.tile.warp.gemm(c, a, b);
      T.tile.warp.gemm(c, a, b);
      T.tile.warp.copy(C, c);
    },
  );
}

describe("T.tile.warp.gemm: mma.sync over fragment tiles", () => {
  for (const dtype of ["float16", "bfloat16"] as const) {
    it(`${dtype}: C = 2 · A · B exactly (32 × 16 × 32), mma.sync in the PTX`, () => {
      const [m, n, k] = [32, 16, 32];
      const fn = warpGemm(m, n, k, dtype);
      const ptx = ptxOf(fn);
      const tok = dtype === "float16" ? "f16" : "bf16";
      expect(ptx).toMatch(
        new RegExp(`mma\\.sync\\.aligned\\.m16n8k16\\.row\\.col\\.f32\\.${tok}\\.${tok}\\.f32`),
      );
      expect(ptx).toMatch(/ldmatrix/);
      expect(ptx).toMatch(/cp\.async/);
      const a = ints(m * k, 3);
      const b = ints(k * n, 5);
      const kern = compile(fn, { target: "cuda" });
      const A = tensor(a, { shape: [m, k], dtype, device: dev });
      const B = tensor(b, { shape: [k, n], dtype, device: dev });
      const C = tensor.zeros([m, n], "float32", dev);
      kern(A, B, C);
      const want = new Float32Array(m * n);
      for (let r = 0; r < m; r++)
        for (let q = 0; q < n; q++) {
          let s = 0;
          for (let p = 0; p < k; p++) s += a[r * k + p]! * b[p * n + q]!;
          want[r * n + q] = 2 * s;
        }
      expect(Array.from(C.toArray() as Float32Array)).toEqual(Array.from(want));
      for (const t of [A, B, C]) t.dispose();
      const notes = explainTile(fn);
      expect(notes.find((l) => l.includes("warp.gemm"))).toMatch(
        /mma\.sync\.m16n8k16\.(f16|bf16)→f32 ×8 \(k 2 × m 2 × n 2 atoms\)/,
      );
      expect(notes[0]).toMatch(/cp\.async\.cg 16 B ×4 per thread \(128 chunks/);
    });
  }

  it("an operand not in a fragment layout is TX2022 naming the element and the nearest layout", () => {
    const e = errorOf(() =>
      T.function("gemm_bad", { C: T.Tensor([16, 8], "float32") }, ({ C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const L = T.layout.mma_sync_tile_layout;
        const a = T.alloc_local([16, 16], "float16", {
          layout: T.TileLayout(T.S([16, 2, 8], ["1@laneid", 8, 1])),
        });
        const b = T.alloc_local([16, 8], "float16", {
          layout: L("B", "m16n8k16", "float16", 16, 8),
        });
        const c = T.alloc_local([16, 8], "float32", {
          layout: L("C", "m16n8k16", "float32", 16, 8),
        });
        T.tile.warp.gemm(c, a, b);
        T.tile.warp.copy(C, c);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /A must be a grid of mma\.sync m16n8k16 A fragments: element \[0, 2\] of a is at lane 0 slot 2, but the m16n8k16 A fragment of its atom puts it at lane 1 slot 0/,
    );
    expect(e.message).toMatch(
      /nearest that works: T\.layout\.mma_sync_tile_layout\("A", "m16n8k16", "float16", 16, 16\) \(at /,
    );
  });

  it("dtypes without an mma.sync variant are TX2022 listing the variants", () => {
    const e = errorOf(() =>
      T.function("gemm_bad_dtype", { C: T.Tensor([16, 8], "float32") }, ({ C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([16, 16], "float16");
        const b = T.alloc_local([16, 8], "float16");
        // No mma.sync accumulates in bfloat16 (a float16 C has its own variant).
        const c = T.alloc_local([16, 8], "bfloat16");
        T.tile.warp.gemm(c, a, b);
        T.tile.warp.copy(C, c);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/no mma\.sync takes A float16, B float16 into C bfloat16/);
  });
});

describe("T.tile.copy_async dispatch", () => {
  it("a source whose rows are strided is TX2022 (a 16-byte chunk is not contiguous)", () => {
    const e = errorOf(() =>
      T.function("cpa_bad", { X: T.Tensor([16, 32], "float16") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const s = T.alloc_shared([16, 16], "float16");
        T.tile.warp.copy_async(s, X.rearrange("r (c two) -> r c two", { two: 2 }).sub(":", ":", 0));
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/the innermost dim is strided .* a 16-byte chunk is not contiguous/);
  });
});

describe("examples/tile/gemm_mma.ts", () => {
  it("issues the instructions of examples/gemm_mma.ts, as many of each; ptxas assembles it", async () => {
    const { gemm_mma: tile } = await import("../examples/tile/gemm_mma.js");
    const { gemm_mma: plain } = await import("../examples/gemm_mma.js");
    const count = (ptx: string, re: RegExp): number =>
      ptx.split("\n").filter((l) => re.test(l)).length;
    const a = ptxOf(tile);
    const b = compileToPtx(plain, { arch: "sm_80" }).text;
    for (const re of [
      /ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/,
      /ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16/,
      /mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32/,
      /cp\.async\.cg\.shared\.global/,
      /st\.global\.v2\.f32/,
    ]) {
      expect(count(a, re), String(re)).toBeGreaterThan(0);
      expect(count(a, re), String(re)).toBe(count(b, re));
    }
    expect(a).not.toMatch(/\.local/);
  });
});

describe("T.tile.warp.gemm dispatches on the dtypes: m16n8k8 (tf32), m16n8k32 (int8)", () => {
  const cases = [
    {
      dtype: "float32",
      cd: "float32",
      shape: "m16n8k8",
      k: 16,
      re: /m16n8k8\.row\.col\.f32\.tf32/,
    },
    { dtype: "int8", cd: "int32", shape: "m16n8k32", k: 32, re: /m16n8k32\.row\.col\.s32\.s8/ },
  ] as const;
  for (const c of cases) {
    it(`${c.dtype} → ${c.shape}, exact on small integers`, () => {
      const [m, n, k] = [16, 16, c.k];
      const L = T.layout.mma_sync_tile_layout;
      const fn = T.function(
        `warp_gemm_${c.shape}`,
        {
          A: T.Tensor([m, k], c.dtype),
          B: T.Tensor([k, n], c.dtype),
          C: T.Tensor([m, n], c.cd),
        },
        ({ A, B, C }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
          const a = T.alloc_local([m, k], c.dtype, { layout: L("A", c.shape, c.dtype, m, k) });
          const b = T.alloc_local([k, n], c.dtype, { layout: L("B", c.shape, c.dtype, k, n) });
          const acc = T.alloc_local([m, n], c.cd, { layout: L("C", c.shape, c.cd, m, n) });
          T.tile.warp.copy(a, A);
          T.tile.warp.copy(b, B);
          T.tile.warp.zero(acc);
          T.tile.warp.gemm(acc, a, b);
          T.tile.warp.copy(C, acc);
        },
      );
      expect(ptxOf(fn)).toMatch(c.re);
      const a = ints(m * k, 7);
      const b = ints(k * n, 9);
      const kern = compile(fn, { target: "cuda" });
      const A = tensor(a, { shape: [m, k], dtype: c.dtype, device: dev });
      const B = tensor(b, { shape: [k, n], dtype: c.dtype, device: dev });
      const C = tensor.zeros([m, n], c.cd, dev);
      kern(A, B, C);
      const want: number[] = [];
      for (let r = 0; r < m; r++)
        for (let q = 0; q < n; q++) {
          let s = 0;
          for (let p = 0; p < k; p++) s += a[r * k + p]! * b[p * n + q]!;
          want.push(s);
        }
      expect(Array.from(C.toArray() as ArrayLike<number>, Number)).toEqual(want);
      for (const t of [A, B, C]) t.dispose();
      expect(explainTile(fn).find((l) => l.includes("warp.gemm"))).toMatch(
        new RegExp(`mma\\.sync\\.${c.shape}`),
      );
    });
  }
});
