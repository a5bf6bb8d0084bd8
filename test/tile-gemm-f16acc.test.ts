// The float16 accumulator of mma.sync at the tile layer. The PTX ISA's .f16 C/D of m16n8k16
// (two .f16x2 registers, c0 c1 and c2 c3) puts each c_i where the .f32 C/D has it ("Matrix
// Fragments for mma.m16n8k16 with floating point type"), so:
// - T.layout.mma_sync_tile_layout / mma_sync_operand_layout take "C" of m16n8k16 in float16 (the
//   float32 C's layout), as does `tirx layout --builtin mma_sync:C:m16n8k16:float16`; a bfloat16
//   C stays TX1026, saying no mma.sync accumulates in bfloat16, and the message lists every dtype
//   the operand takes;
// - T.tile.warp.gemm of float16 A, B into a float16 C issues
//   mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 (ptxas assembles it), and on the simulator
//   C += A · B lies within MMA_F16_BOUND of float64 host math per instruction at 16 × 8 × 16,
//   32 × 16 × 32 and 48 × 24 × 48 (3 × 3 × 3 atoms);
// - FlashAttention's P·V chain: a float32 C cast to a float16 C-layout tile, permuted (register
//   moves) into the A layout, feeds a second gemm;
// - a bfloat16 C is TX2022 from the gemm too, saying why.
import { describe, expect, it } from "vitest";
import { MMA_F16_BOUND, showTileLayout } from "@tirx-ts/core";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { builtinLayout } from "../packages/tirx-ts/src/tile-picture.js";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { f16AccGemm, judgeF16Acc, runF16AccGemm } from "./util/f16acc-kernels.js";
import { intsFrom } from "./util/lcg.js";

const dev = sim();
const MMA_F16 = /mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16/;

function ptxOf(fn: PrimFunc): string {
  const text = compileToPtx(fn, { arch: "sm_80" }).text;
  assembleLater(text, "sm_80", fn.name);
  return text;
}

describe("mma_sync layouts of a float16 C", () => {
  it("C of m16n8k16 in float16 is the float32 C's layout (atom and tiles)", () => {
    const L = T.layout;
    expect(showTileLayout(L.mma_sync_operand_layout("C", "m16n8k16", "float16"))).toBe(
      "S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]",
    );
    for (const [r, c] of [
      [16, 8],
      [16, 16],
      [32, 16],
      [48, 24],
    ] as const) {
      expect(showTileLayout(L.mma_sync_tile_layout("C", "m16n8k16", "float16", r, c))).toBe(
        showTileLayout(L.mma_sync_tile_layout("C", "m16n8k16", "float32", r, c)),
      );
    }
  });

  it("`tirx layout --builtin mma_sync:C:m16n8k16:float16` builds it", () => {
    const b = builtinLayout("mma_sync:C:m16n8k16:float16");
    expect(b.dtype).toBe("float16");
    expect(b.shape).toEqual([16, 8]);
    expect(showTileLayout(b.layout)).toBe("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]");
  });

  it("a bfloat16 C is TX1026 listing every accepted dtype and saying there is no bf16 accumulator", () => {
    const e = errorOf(() => T.layout.mma_sync_tile_layout("C", "m16n8k16", "bfloat16", 16, 16));
    expect(e.code).toBe("TX1026");
    expect(e.message).toMatch(
      /operand C of m16n8k16 holds float32 or float16, not bfloat16 \(mma\.sync has no bfloat16 accumulator/,
    );
    // The tf32 shape's C is float32 only; the integer shape's int32 only.
    expect(
      errorOf(() => T.layout.mma_sync_operand_layout("C", "m16n8k8", "float16")).message,
    ).toMatch(/operand C of m16n8k8 holds float32, not float16/);
    expect(
      errorOf(() => T.layout.mma_sync_operand_layout("C", "m16n8k32", "float32")).message,
    ).toMatch(/operand C of m16n8k32 holds int32, not float32/);
  });
});

describe("T.tile.warp.gemm into a float16 C: mma.sync ... .f16.f16.f16.f16", () => {
  it("16 × 8 × 16: one instruction; PTX carries C as two packed .b32 registers; ptxas", () => {
    const fn = f16AccGemm(16, 8, 16);
    const ptx = ptxOf(fn);
    const lines = ptx.split("\n").filter((l) => MMA_F16.test(l));
    expect(lines).toHaveLength(1);
    // D and C: the same two 32-bit registers (c0 c1, c2 c3), A four, B two.
    expect(lines[0]).toMatch(
      /f16\.f16\.f16\.f16\s+\{(%r\d+), (%r\d+)\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, \{%r\d+, %r\d+\}, \{\1, \2\}/,
    );
    expect(ptx).not.toMatch(/\.local/);
    expect(explainTile(fn).find((l) => l.includes("warp.gemm"))).toMatch(
      /mma\.sync\.m16n8k16\.f16→f16 ×1 \(k 1 × m 1 × n 1 atoms\)/,
    );
  });

  for (const [m, n, k, seed] of [
    [16, 8, 16, 11],
    [32, 16, 32, 23],
    [48, 24, 48, 37],
  ] as const) {
    it(`${m} × ${n} × ${k}: C += A · B within MMA_F16_BOUND of float64 per instruction`, () => {
      const fn = f16AccGemm(m, n, k);
      const ptx = ptxOf(fn);
      const count = ptx.split("\n").filter((l) => MMA_F16.test(l)).length;
      expect(count).toBe((m / 16) * (n / 8) * (k / 16));
      const run = runF16AccGemm(fn, m, n, k, dev, seed);
      const v = judgeF16Acc(run, m, n, k);
      expect(v.bad, v.bad.join("\n")).toEqual([]);
      expect(v.checked).toBe(m * n);
      // The simulator rounds each instruction's exact sum once, far inside the bound.
      expect(v.worst).toBeLessThan(1);
      expect(v.exact).toBeGreaterThan(0);
    });
  }

  it("the bound is MMA_F16_BOUND (2^-10 relative, half a float16 ulp)", () => {
    expect(MMA_F16_BOUND.rel).toBe(2 ** -10);
    expect(MMA_F16_BOUND.ulp).toBe(0.5);
  });

  it("the float32 layout on a float16 C tile (the old workaround) still dispatches", () => {
    const fn = T.function(
      "gemm_f16acc_old_layout",
      { C: T.Tensor([16, 8], "float16") },
      ({ C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const L = T.layout.mma_sync_tile_layout;
        const a = T.alloc_local([16, 16], "float16", {
          layout: L("A", "m16n8k16", "float16", 16, 16),
        });
        const b = T.alloc_local([16, 8], "float16", {
          layout: L("B", "m16n8k16", "float16", 16, 8),
        });
        const c = T.alloc_local([16, 8], "float16", {
          layout: L("C", "m16n8k16", "float32", 16, 8),
        });
        T.tile.warp.fill(a, 1);
        T.tile.warp.fill(b, 1);
        T.tile.warp.zero(c);
        T.tile.warp.gemm(c, a, b);
        T.tile.warp.copy(C, c);
      },
    );
    expect(ptxOf(fn)).toMatch(MMA_F16);
    const C = tensor.zeros([16, 8], "float16", dev);
    compile(fn, { target: "cuda" })(C);
    expect(Array.from(C.toArray() as ArrayLike<number>)).toEqual(new Array(128).fill(16));
    C.dispose();
  });

  it("a bfloat16 C is TX2022: no mma.sync accumulates in bfloat16", () => {
    const e = errorOf(() =>
      T.function("gemm_bf16acc", { C: T.Tensor([16, 8], "float32") }, ({ C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const L = T.layout.mma_sync_tile_layout;
        const a = T.alloc_local([16, 16], "bfloat16", {
          layout: L("A", "m16n8k16", "bfloat16", 16, 16),
        });
        const b = T.alloc_local([16, 8], "bfloat16", {
          layout: L("B", "m16n8k16", "bfloat16", 16, 8),
        });
        const c = T.alloc_local([16, 8], "bfloat16", {
          layout: L("C", "m16n8k16", "float32", 16, 8),
        });
        T.tile.warp.gemm(c, a, b);
        T.tile.warp.copy(C, c);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /no mma\.sync takes A bfloat16, B bfloat16 into C bfloat16 \(mma\.sync has no bfloat16 accumulator/,
    );
    // The variants it lists include the float16 accumulator.
    expect(e.message).toMatch(/m16n8k16: float16 · float16 → float16/);
  });
});

/** Small integers in [-1, 1]: |S| = |Q·K| ≤ 16 and |O| = |P·V| ≤ 512, all exact in float16. */
function ints(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, intsFrom(seed, -1, 1));
}

describe("FlashAttention's P·V chain: float32 C → cast → float16 C tile → A fragment → gemm", () => {
  /** S = Q · K (float32 C), P = float16(S) in the C layout, P → A layout, O = P · V (float16 C). */
  const chain = (): PrimFunc =>
    T.function(
      "pv_chain_f16",
      {
        Q: T.Tensor([16, 16], "float16"),
        K: T.Tensor([16, 32], "float16"),
        V: T.Tensor([32, 8], "float16"),
        O: T.Tensor([16, 8], "float16"),
      },
      ({ Q, K, V, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const L = T.layout.mma_sync_tile_layout;
        const q = T.alloc_local([16, 16], "float16", {
          layout: L("A", "m16n8k16", "float16", 16, 16),
        });
        const kt = T.alloc_local([16, 32], "float16", {
          layout: L("B", "m16n8k16", "float16", 16, 32),
        });
        const v = T.alloc_local([32, 8], "float16", {
          layout: L("B", "m16n8k16", "float16", 32, 8),
        });
        const s = T.alloc_local([16, 32], "float32", {
          layout: L("C", "m16n8k16", "float32", 16, 32),
        });
        const p = T.alloc_local([16, 32], "float16", {
          layout: L("C", "m16n8k16", "float16", 16, 32),
        });
        const pa = T.alloc_local([16, 32], "float16", {
          layout: L("A", "m16n8k16", "float16", 16, 32),
        });
        const o = T.alloc_local([16, 8], "float16", {
          layout: L("C", "m16n8k16", "float16", 16, 8),
        });
        T.tile.warp.copy(q, Q);
        T.tile.warp.copy(kt, K);
        T.tile.warp.copy(v, V);
        T.tile.warp.zero(s);
        T.tile.warp.zero(o);
        T.tile.warp.gemm(s, q, kt);
        T.tile.warp.cast(p, s);
        T.tile.warp.permute_layout(pa, p);
        T.tile.warp.gemm(o, pa, v);
        T.tile.warp.copy(O, o);
      },
    );

  it("is accepted with the float16 C layout, permutes in registers, and matches host math", () => {
    const fn = chain();
    const notes = explainTile(fn);
    expect(notes.find((l) => l.includes("permute_layout"))).toMatch(/in-thread register moves/);
    const gemms = notes.filter((l) => l.includes("warp.gemm"));
    expect(gemms[0]).toMatch(/mma\.sync\.m16n8k16\.f16→f32 ×4/);
    expect(gemms[1]).toMatch(/mma\.sync\.m16n8k16\.f16→f16 ×2/);
    const ptx = ptxOf(fn);
    expect(ptx).toMatch(MMA_F16);
    expect(ptx).toMatch(/mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32/);
    expect(ptx).not.toMatch(/\.local/);

    const q = ints(16 * 16, 3);
    const k = ints(16 * 32, 5);
    const v = ints(32 * 8, 7);
    const Q = tensor(q, { shape: [16, 16], dtype: "float16", device: dev });
    const K = tensor(k, { shape: [16, 32], dtype: "float16", device: dev });
    const V = tensor(v, { shape: [32, 8], dtype: "float16", device: dev });
    const O = tensor.zeros([16, 8], "float16", dev);
    compile(fn, { target: "cuda" })(Q, K, V, O);
    // P = Q·K exactly (integers ≤ 16, exact in float16), then the second gemm judged as any
    // float16-accumulator gemm: C = 0, within MMA_F16_BOUND per instruction.
    const pm = new Float32Array(16 * 32);
    for (let r = 0; r < 16; r++)
      for (let c = 0; c < 32; c++) {
        let x = 0;
        for (let j = 0; j < 16; j++) x += q[r * 16 + j]! * k[j * 32 + c]!;
        pm[r * 32 + c] = x;
      }
    const got = Float32Array.from(O.toArray() as ArrayLike<number>);
    const verdict = judgeF16Acc({ a: pm, b: v, c0: new Float32Array(16 * 8), got }, 16, 8, 32);
    expect(verdict.bad, verdict.bad.join("\n")).toEqual([]);
    // Integer sums ≤ 2048 are exact in float16: the simulator gives the exact product.
    expect(verdict.exact).toBe(16 * 8);
    for (const t of [Q, K, V, O]) t.dispose();
  });
});
