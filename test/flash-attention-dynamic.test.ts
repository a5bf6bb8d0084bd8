// makeFlashAttention's `dynamic` build: batch, seq_q and seq_k are kernel parameters (the
// tensors' symbolic dims), so one build runs at several sizes on the simulator, each against
// the float64 reference, at lengths that are not tile multiples (a partial last query tile and KV
// block; causal, bottom-right aligned with the runtime shift seq_k − seq_q, rows that see no key,
// LSE; and non-causal), every row written; its grid ⌈seq_q / 128⌉ is computed at launch; a static
// build's PTX has none of the runtime arithmetic; the option errors; the PTX assembles for sm_90a.
import { describe, expect, it } from "vitest";
import { compile, sim, tensor, type DeviceTensor } from "tirx-ts";
import { launchGrid, type TirxError } from "@tirx-ts/core";
import { makeFlashAttention, type FlashAttentionSizes } from "@tirx-ts/kernels";
import {
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "./util/attention-reference.js";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();
const host = (t: DeviceTensor) => t.toArray() as Float32Array;

/** One build for every size: causal, LSE, one head, head dim 64, float16. */
const SIZES: FlashAttentionSizes = {
  batch: 1,
  heads: 1,
  seqQ: 128,
  seqK: 128,
  headDim: 64,
  dtype: "float16",
  causal: true,
  lse: true,
  dynamic: true,
};

describe("flash_attention forward, dynamic sizes", () => {
  const fn = makeFlashAttention(SIZES);
  const run = compile(fn, { target: "cuda", arch: "sm_90a" });
  const runNonCausal = () =>
    compile(makeFlashAttention({ ...SIZES, causal: false }), { target: "cuda", arch: "sm_90a" });

  // Lengths that are not multiples of the tiles: a partial last query tile (its rows past seq_q
  // not stored) and KV block (keys past seq_k masked); causal with seq_q > seq_k (rows that see
  // no key) over two batches, whose tiles read the next batch's rows, and non-causal with two
  // query tiles and two KV blocks (its own build). O and LSE start as NaN: every row of every
  // batch must be written.
  for (const [batch, seqQ, seqK, causal] of [
    [2, 100, 77, true],
    [1, 130, 200, false],
  ] as const) {
    it(`one build at batch ${batch}, seq_q ${seqQ}, seq_k ${seqK}${causal ? ", causal" : ""}: within the bound of float64`, () => {
      const c: AttentionCase = { ...SIZES, batch, seqQ, seqK, causal, kvHeads: 1 };
      const { q, k, v } = attentionInputs(c, dev, 5 + batch);
      const nan = (shape: number[], dtype: "float16" | "float32") =>
        tensor(new Float32Array(shape.reduce((a, b) => a * b)).fill(NaN), {
          shape,
          dtype,
          device: dev,
        });
      const o = nan([batch, seqQ, 1, 64], "float16");
      const lse = nan([batch, 1, seqQ], "float32");
      (causal ? run : runNonCausal())(q, k, v, o, batch, seqQ, seqK, lse);
      const ref = attentionReference(c, host(q), host(k), host(v));
      const err = attentionError(c, ref, host(o), host(lse));
      expect(err.o).toBeLessThanOrEqual(1);
      expect(err.lse).toBeLessThanOrEqual(1);
    });
  }

  it("the grid is computed at launch: [⌈seq_q / 128⌉, heads, batch]", () => {
    const t = (shape: number[]) => ({ shape, dtype: "float16", device: dev }) as never;
    const args = [t([3, 385, 1, 64]), t([3, 256, 1, 64]), t([3, 256, 1, 64]), t([3, 385, 1, 64])];
    // The verified function of `run` (compile's), not a second verification of the build.
    const grid = launchGrid(fn, run.verified.entry.launch, [...args, 3, 385, 256, t([3, 1, 385])]);
    expect(grid).toEqual([4, 1, 3]);
  });

  it("PTX: the dynamic build assembles, its sizes scalars after O; a static build takes only tensors", () => {
    // compile's module of the build: the PTX compileToPtx gives for sm_90a, emitted once.
    const text = run.module.text;
    assembleLater(text, "sm_90a", "flash_attention_dynamic");
    const params = (t: string) => t.split("\n").filter((l) => /\.param \./.test(l)).length;
    expect(params(text)).toBe(5 + 3 + 4); // Q, K, V, O, LSE; batch, seqQ, seqK; Q's, K's, V's, O's maps
    const { dynamic: _, ...rest } = SIZES;
    const kinds = (f: typeof fn) => f.params.map((p) => p.kind).join(" ");
    expect(kinds(fn)).toBe("buffer buffer buffer buffer scalar scalar scalar buffer");
    expect(kinds(makeFlashAttention(rest))).toBe("buffer buffer buffer buffer buffer");
  });

  it("option errors: dynamic is a boolean, and not with varlen (TX9001)", () => {
    const e1 = errorOf(() => makeFlashAttention({ ...SIZES, dynamic: 1 as never }));
    expect([e1.code, e1.message]).toEqual([
      "TX9001",
      expect.stringMatching(/dynamic is a boolean/),
    ]);
    const e2: TirxError = errorOf(() => makeFlashAttention({ ...SIZES, varlen: { maxSeqQ: 128 } }));
    expect(e2.code).toBe("TX9001");
    expect(e2.message).toMatch(/dynamic and varlen/);
  });
});
