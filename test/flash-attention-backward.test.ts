// examples/flash_attention_backward.ts: the backward kernels (preprocess, main, postprocess) on the
// simulator against float64 gradients (the example's own size runs in test/examples.test.ts;
// here head dim 128, and bfloat16 GQA with a window hiding every key from some rows and every
// query from some keys: those gradient rows exactly 0), option errors, their PTX assembles for
// sm_90a (dQ by bulk reductions); and T.tile.copy's `reduce: "add"` (red.add of a register tile
// into memory).
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { T, compile, explainTile, sim, tensor, type FlashAttentionSizes } from "tirx-ts";
import {
  checkFlashAttentionBackward,
  makeFlashAttentionBackward,
} from "../examples/flash_attention_backward.js";
import { assembleLater } from "./util/ptxas-deferred.js";

describe("flash_attention backward", () => {
  it("a negative scale (−0.2) with causal masking: masked logits are +inf before the scaling, so c · S is −inf there; within the bound", () => {
    for (const backwardMma of ["ss", "rs"] as const) {
      const r = checkFlashAttentionBackward(sim(), {
        batch: 1,
        heads: 1,
        seqQ: 128,
        seqK: 128,
        headDim: 64,
        dtype: "float16",
        causal: true,
        scale: -0.2,
        ...(backwardMma === "rs" ? { backwardMma } : {}),
      } as never);
      expect(r.ok, r.summary).toBe(true);
    }
  });

  it("bfloat16, GQA (2 heads on 1 KV head), window [148, -138] on 128 queries and 256 keys (bottom-right aligned): within the bound; unseen rows exactly 0", () => {
    // Bottom-right aligned (seq_k − seq_q = 128): query i sees keys i − 20 … i − 10. Queries 0-9
    // see none, keys 118-255 no query (the second key tile runs no step); the first tile's query
    // block crosses both edges of its windows.
    const r = checkFlashAttentionBackward(sim(), {
      batch: 1,
      heads: 2,
      kvHeads: 1,
      seqQ: 128,
      seqK: 256,
      headDim: 64,
      dtype: "bfloat16",
      window: [148, -138],
    });
    expect(r.ok, r.summary).toBe(true);
    // dQ: 2 heads × 10 rows; dK and dV: 138 keys each (one KV head), 64 elements per row.
    expect(r.summary).toContain(`${(2 * 10 + 2 * 138) * 64} elements of unseen rows exactly 0`);
  });

  it('head dim 128 (the consumers split dQ\'s columns), causal, bfloat16, backwardMma "rs" (Pᵀ and dSᵀ as register A operands; "ss" at hd 128 runs in the varlen tests): within the bound (the staging blocks reused: the varlen rs case)', () => {
    const r = checkFlashAttentionBackward(sim(), {
      batch: 1,
      heads: 1,
      seqQ: 128,
      seqK: 128,
      headDim: 128,
      dtype: "bfloat16",
      causal: true,
      backwardMma: "rs",
    });
    expect(r.ok, r.summary).toBe(true);
  });

  it("causal over 2 (batch, head) pairs × 2 key tiles: the CTAs dealt longest first (key tile 0 of every pair, then 1) compute every tile once, within the bound", () => {
    const r = checkFlashAttentionBackward(sim(), {
      batch: 2,
      heads: 1,
      seqQ: 256,
      seqK: 256,
      headDim: 64,
      dtype: "bfloat16",
      causal: true,
    });
    expect(r.ok, r.summary).toBe(true);
  });

  it("option errors name what is offered", () => {
    const base = {
      batch: 1,
      heads: 2,
      seqQ: 128,
      seqK: 128,
      headDim: 64,
      dtype: "float16",
    } as const;
    expect(() => makeFlashAttentionBackward({ ...base, headDim: 96 as 64 })).toThrow(
      /TX9001.*head_dim is 64, 128 or 256, got 96/,
    );
    expect(() => makeFlashAttentionBackward({ ...base, seqK: 192 })).toThrow(
      /positive multiples of 128, got 128 and 192/,
    );
    expect(() => makeFlashAttentionBackward({ ...base, kvHeads: 3 })).toThrow(
      /kvHeads must be a positive integer dividing heads \(2\), got 3/,
    );
    expect(() => makeFlashAttentionBackward({ ...base, causal: true, window: [4, 0] })).toThrow(
      /give causal or window, not both/,
    );
    for (const headDim of [64, 256] as const) {
      expect(() =>
        makeFlashAttentionBackward({ ...base, headDim, backwardMma: "sr" as "ss" }),
      ).toThrow(/TX9001.*backwardMma is "ss" or "rs", got "sr"/);
    }
  });

  it("assembles for sm_90a: head dims 64 (causal) and 128, GQA + window", () => {
    // Both head dims' dQ paths (RS at 64, the column split at 128), causal, GQA and a window.
    const base = { batch: 2, heads: 8, seqQ: 1024, seqK: 1024, dtype: "float16" } as const;
    const sizes: FlashAttentionSizes[] = [
      { ...base, headDim: 64, causal: true },
      { ...base, headDim: 128 },
      { ...base, kvHeads: 2, seqK: 512, headDim: 128, dtype: "bfloat16", window: [256, 0] },
      { ...base, headDim: 64, causal: true, backwardMma: "rs" },
      { ...base, headDim: 128, backwardMma: "rs" },
    ];
    for (const s of sizes) {
      const k = makeFlashAttentionBackward(s);
      const main = compileToPtx(k.main, { arch: "sm_90a" }).text;
      expect(main).toMatch(/wgmma\.mma_async.*\.f32\.(b?f16)\.\1 \{/);
      expect(main).toMatch(/cp\.reduce\.async\.bulk\.global\.shared::cta\.bulk_group\.add\.f32/);
      // wgmmas with A from registers ("}, {%r"): "rs" has dV's and dK's (4 K-steps each, 8 at
      // hd 128; at hd 64 dQ's are shared-memory reads then), "ss" only dQ's at hd 64.
      const rsCount = main.split("\n").filter((l) => /wgmma\.mma_async.*\}, \{%r/.test(l)).length;
      expect(rsCount).toBe(s.backwardMma === "rs" ? 8 : s.headDim === 64 ? 4 : 0);
      // The dQ block staged in the wgmma fragment order (fragment.ts FRAG_BLOCK): each thread's
      // 32 slots as eight 16-byte stores, no 8-byte float32 stores (a row-major block's, which
      // took eight-way bank conflicts).
      expect(main.match(/st\.shared\.v4\.f32/g)?.length).toBe(8);
      expect(main).not.toMatch(/st\.shared\.v2\.f32/);
      const name = `bwd hd${s.headDim} ${JSON.stringify(s.window ?? s.causal)}`;
      assembleLater(main, "sm_90a", name);
      assembleLater(compileToPtx(k.preprocess, { arch: "sm_90a" }).text, "sm_90a", `${name} pre`);
      assembleLater(compileToPtx(k.postprocess, { arch: "sm_90a" }).text, "sm_90a", `${name} post`);
    }
  });

  it('dense pre- and postprocessing move 16-byte vectors; "ss" issues each dQ reduction a step late', () => {
    const ops = (ptx: string) => {
      const n: Record<string, number> = {};
      for (const m of ptx.matchAll(/^\s*((?:ld|st)\.global[\w.]*|stmatrix[\w.]*|cp\.[\w.:]+)/gm)) {
        n[m[1]!] = (n[m[1]!] ?? 0) + 1;
      }
      return n;
    };
    for (const headDim of [64, 128, 256] as const) {
      const k = makeFlashAttentionBackward({
        batch: 2,
        heads: 4,
        seqQ: 1024,
        seqK: 1024,
        headDim,
        dtype: "bfloat16",
      });
      // Preprocessing: a warp's 8 rows of O and dO as 16-byte vectors (hd / 32 a thread each),
      // the block's accumulator (64 · hd float32) zeroed by 256 threads' 16-byte stores, and the
      // only scalar accesses the LSE row's load and store and Δ's stores (hd 256: two 16-byte
      // stores of a warp's 8 rows).
      const pre = ops(compileToPtx(k.preprocess, { arch: "sm_90a" }).text);
      expect(pre["ld.global.v4.b32"]).toBe(2 * (headDim / 32));
      expect(pre["st.global.v4.f32"]).toBe(headDim / 16 + (headDim === 256 ? 2 : 0));
      expect(pre["ld.global.f32"]).toBe(1);
      expect(pre["st.global.f32"]).toBe(1 + (headDim === 256 ? 0 : (8 * headDim) / 256));
      // Postprocessing: the block read as the wgmma accumulator tile (eight 16-byte loads a
      // thread), written by stmatrix and one TMA store; no stores to global memory from registers.
      expect(ops(compileToPtx(k.postprocess, { arch: "sm_90a" }).text)).toEqual({
        "ld.global.v4.f32": 8,
        "stmatrix.sync.aligned.m8n8.x4.shared.b16": 4,
        "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group": 1,
        "cp.async.bulk.commit_group": 1,
        "cp.async.bulk.wait_group": 1,
      });
      if (headDim === 256) continue;
      // The main kernel: one reduction in the loop (the previous step's block) and one after it
      // (the last step's).
      const main = compileToPtx(k.main, { arch: "sm_90a" }).text;
      expect(main.match(/cp\.reduce\.async\.bulk\.global/g)?.length).toBe(2);
    }
  });
});

describe("T.tile.copy reduce", () => {
  // Four CTAs each add their warp's [32] float32 tile into Y: Y = Σ over CTAs.
  const kernel = T.function(
    "reduce_add",
    { X: T.Tensor([4, 32], "float32"), Y: T.Tensor([32], "float32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 4, block: 32 }) });
      const l = T.TileLayout(T.S([32], ["1@laneid"]));
      const r = T.alloc_local([32], "float32", { name: "r", layout: l });
      T.tile.warp.copy(r, X.sub(T.cuda.block_idx("x")));
      T.tile.warp.copy(Y, r, { reduce: "add" });
    },
  );

  it('{ reduce: "add" } adds each element once per CTA with red.global.add', () => {
    const dev = sim();
    const x = Float32Array.from({ length: 128 }, (_, i) => (i % 7) - 3 + i / 4);
    const X = tensor(x, { shape: [4, 32], dtype: "float32", device: dev });
    const y0 = Float32Array.from({ length: 32 }, (_, i) => i);
    const Y = tensor(y0, { shape: [32], dtype: "float32", device: dev });
    compile(kernel, { target: "cuda" })(X, Y);
    const want = y0.map((v, i) =>
      [0, 1, 2, 3].reduce((a, c) => Math.fround(a + x[c * 32 + i]!), v),
    );
    // Every partial is a multiple of 1/4 below 2^20: the float32 sums are exact in any order.
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(want));
    expect(explainTile(kernel)[1]).toMatch(/red\.global\.add\.float32 ×1 per thread/);
    const ptx = compileToPtx(kernel, { arch: "sm_90a" }).text;
    expect(ptx).toMatch(/red\.global\.add\.f32 \[%rd\d+\], %f\d+;/);
    assembleLater(ptx, "sm_90a", "reduce add");
  });

  it("refuses a load, a dtype red.add lacks, and a dispatch option", () => {
    const l = T.TileLayout(T.S([32], ["1@laneid"]));
    const build = (body: (X: never, r: never) => void, dtype: "float32" | "float16" = "float32") =>
      T.function("bad", { X: T.Tensor([32], dtype) }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const r = T.alloc_local([32], dtype, { name: "r", layout: l });
        body(X as never, r as never);
      });
    expect(() => build((X, r) => T.tile.warp.copy(r, X, { reduce: "add" }))).toThrow(
      /TX2022.*adds registers into memory; this copy loads/,
    );
    expect(() => build((X, r) => T.tile.warp.copy(X, r, { reduce: "add" }), "float16")).toThrow(
      /TX2022.*needs a dtype red\.add takes \(float32, int32, uint32, uint64\); r is float16/,
    );
    expect(() =>
      build((X, r) => T.tile.warp.copy(X, r, { reduce: "add", dispatch: "vector" })),
    ).toThrow(/TX2022.*takes no dispatch option/);
    expect(() => build((X, r) => T.tile.warp.copy(X, r, { reduce: "max" }))).toThrow(
      /TX2022.*reduce must be "add", got "max"/,
    );
  });
});

describe("flash_attention backward: P and dS stored by stmatrix", () => {
  it('hd 128, "ss": the 16-bit P and dS tiles go to their 128B-swizzled shared tiles by stmatrix.x4 (4 a warp each); assembles for sm_90a', () => {
    const k = makeFlashAttentionBackward({
      ...{ batch: 2, heads: 8, seqQ: 1024, seqK: 1024, dtype: "bfloat16" as const },
      ...{ headDim: 128, backwardMma: "ss" as const },
    });
    const lines = explainTile(k.main).filter((l) => /T\.tile\.wg\.copy → stmatrix/.test(l));
    expect(lines.map((l) => l.replace(/^.*→ /, ""))).toEqual([
      "stmatrix x4 ×4 per warp: P16 is 64 × 64 wgmma D fragments (each warp's 16 rows of a 64-row block as m16n8k16 C fragments) and sP (Swizzle<3, 4, 3> on bytes) keeps each 16-byte row contiguous (sm_90)",
      "stmatrix x4 ×4 per warp: dS16 is 64 × 64 wgmma D fragments (each warp's 16 rows of a 64-row block as m16n8k16 C fragments) and sdS (Swizzle<3, 4, 3> on bytes) keeps each 16-byte row contiguous (sm_90)",
    ]);
    const main = compileToPtx(k.main, { arch: "sm_90a" }).text;
    expect(
      main.match(
        /stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 \[%r\d+\], \{%r\d+, %r\d+, %r\d+, %r\d+\};/g,
      ),
    ).toHaveLength(8);
    assembleLater(main, "sm_90a", "bwd hd128 ss stmatrix");
  });
});
