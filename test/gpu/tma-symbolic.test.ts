// On a GPU: TMA over tensors of symbolic shape (the maps encoded at launch from the bound sizes)
// and makeFlashAttention's `dynamic` build. The kernels of test/util/tma-symbolic-kernels.ts at
// several runtime sizes, edge boxes included (zeros past the end on a load, nothing written past
// it on a store), against the host results, each launch of one compiled kernel, so the encoded
// maps follow the sizes (a size, then another, then the first again); a stride that is not a
// multiple of 16 bytes is TX4024 at the launching call. One dynamic FlashAttention build at
// three (batch, seq_q, seq_k) sizes against the float64 reference with checkFlashAttention's
// bounds, and the same bytes as the static build of each size; the dynamic builds (causal at head
// dim 128, non-causal at 256, KV blocks of 64) at lengths that are not tile multiples (a partial
// last query tile and KV block, seq_q 1, seq_q > seq_k), O and LSE filled with NaN first so that
// every row of every batch must be written, and attention() at such a length.
// Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, test } from "vitest";
import { compile, cuda, cudaAvailable, tensor, type DeviceTensor } from "tirx-ts";
import { TirxError } from "@tirx-ts/core";
import { attention, makeFlashAttention, type FlashAttentionSizes } from "@tirx-ts/kernels";
import {
  ramp,
  rawLoad,
  rawLoadExpected,
  tileCopy,
  tileCopyPaddedExpected,
} from "../util/tma-symbolic-kernels.js";
import {
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "../util/attention-reference.js";

const probe = cudaAvailable();
if (!probe.ok) {
  console.log(`test/gpu/tma-symbolic: skipped, no CUDA driver (${probe.reason})`);
}

const host = (t: DeviceTensor) => Array.from(t.toArray() as ArrayLike<number>);

describe.skipIf(!probe.ok)("TMA over tensors of symbolic shape on a GPU", () => {
  test("an explicit map of A [m, n] at several sizes and box positions (one compiled kernel)", () => {
    const dev = cuda(0);
    const run = compile(rawLoad, { target: "cuda" });
    for (const [m, n, r0, c0] of [
      [16, 32, 0, 0],
      [40, 36, 32, 20],
      [7, 4, 0, 0],
      [40, 36, 16, 0],
    ] as const) {
      const A = tensor(Float32Array.from(ramp(m * n)), {
        shape: [m, n],
        dtype: "float32",
        device: dev,
      });
      const B = tensor.zeros([16, 32], "float32", dev);
      run(m, n, r0, c0, A, B);
      expect(host(B)).toEqual(rawLoadExpected(m, n, r0, c0));
    }
    const bad = tensor.zeros([8, 6], "float32", dev);
    const e = (() => {
      try {
        run(8, 6, 0, 0, bad, tensor.zeros([16, 32], "float32", dev));
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(TirxError);
    expect((e as TirxError).code).toBe("TX4024");
  });

  test("copy_async tiles of A [b, s, 64]: load, clipped store, zero fill, three sizes in turn twice", () => {
    const dev = cuda(0);
    const run = compile(tileCopy, { target: "cuda" });
    const sizes = [
      [2, 64],
      [3, 40],
      [5, 1000],
    ] as const;
    const sets = sizes.map(([b, s]) => {
      const sp = Math.ceil(s / 32) * 32;
      const a = ramp(b * s * 64);
      const A = tensor(Float32Array.from(a), { shape: [b, s, 64], dtype: "float16", device: dev });
      return { b, s, sp, a, A };
    });
    // Each set twice, in turn: the second round's maps are the kept encodings (same tensors).
    for (const { b, s, sp, a, A } of [...sets, ...sets]) {
      const O = tensor.zeros([b, s, 64], "float16", dev);
      const P = tensor.zeros([b, sp, 64], "float16", dev);
      run(b, s, sp, A, O, P);
      expect(host(O)).toEqual(a);
      expect(host(P)).toEqual(tileCopyPaddedExpected(b, s, sp));
    }
  });

  test("one dynamic FlashAttention build at three sizes: within the bound, the static build's bytes", () => {
    const dev = cuda(0);
    const base: FlashAttentionSizes = {
      batch: 1,
      heads: 4,
      kvHeads: 2,
      seqQ: 128,
      seqK: 128,
      headDim: 128,
      dtype: "bfloat16",
      causal: true,
      lse: true,
    };
    const run = compile(makeFlashAttention({ ...base, dynamic: true }), { target: "cuda" });
    for (const [batch, seqQ, seqK] of [
      [1, 256, 640],
      [3, 512, 256],
      [1, 256, 640],
    ] as const) {
      const c: AttentionCase = { ...base, kvHeads: 2, batch, seqQ, seqK };
      const { q, k, v } = attentionInputs(c, dev, 3 + batch);
      const o = tensor.zeros([batch, seqQ, 4, 128], "bfloat16", dev);
      const lse = tensor.zeros([batch, 4, seqQ], "float32", dev);
      run(q, k, v, o, batch, seqQ, seqK, lse);
      const ref = attentionReference(c, host(q), host(k), host(v));
      const err = attentionError(c, ref, host(o), host(lse));
      expect(err.o).toBeLessThanOrEqual(1);
      expect(err.lse).toBeLessThanOrEqual(1);
      const so = tensor.zeros([batch, seqQ, 4, 128], "bfloat16", dev);
      const sl = tensor.zeros([batch, 4, seqQ], "float32", dev);
      compile(makeFlashAttention({ ...base, batch, seqQ, seqK }), { target: "cuda" })(
        q,
        k,
        v,
        so,
        sl,
      );
      expect(o.toBytes()).toEqual(so.toBytes());
      expect(lse.toBytes()).toEqual(sl.toBytes());
    }
  });

  test("the dynamic FlashAttention builds at lengths that are not tile multiples: within the bound, every row written", () => {
    const dev = cuda(0);
    const nan = (shape: number[], dtype: "bfloat16" | "float32") =>
      tensor(new Float32Array(shape.reduce((a, b) => a * b)).fill(Number.NaN), {
        shape,
        dtype,
        device: dev,
      });
    for (const [headDim, causal] of [
      [128, true],
      [256, false],
    ] as const) {
      const base: FlashAttentionSizes = {
        batch: 1,
        heads: 4,
        kvHeads: 2,
        seqQ: 128,
        seqK: 128,
        headDim,
        dtype: "bfloat16",
        causal,
        lse: true,
      };
      const run = compile(makeFlashAttention({ ...base, dynamic: true }), { target: "cuda" });
      for (const [batch, seqQ, seqK] of [
        [2, 1000, 77],
        [1, 129, 1031],
        [3, 1, 300],
        [2, 300, 1],
      ] as const) {
        const c: AttentionCase = { ...base, kvHeads: 2, batch, seqQ, seqK };
        const { q, k, v } = attentionInputs(c, dev, 3 + batch);
        const o = nan([batch, seqQ, 4, headDim], "bfloat16");
        const lse = nan([batch, 4, seqQ], "float32");
        run(q, k, v, o, batch, seqQ, seqK, lse);
        const ref = attentionReference(c, host(q), host(k), host(v));
        const err = attentionError(c, ref, host(o), host(lse));
        expect(err.o, `${headDim} ${batch} ${seqQ} ${seqK}`).toBeLessThanOrEqual(1);
        expect(err.lse, `${headDim} ${batch} ${seqQ} ${seqK}`).toBeLessThanOrEqual(1);
      }
    }
    const c: AttentionCase = {
      batch: 2,
      heads: 2,
      kvHeads: 1,
      seqQ: 333,
      seqK: 190,
      headDim: 64,
      dtype: "float16",
      causal: true,
    };
    const { q, k, v } = attentionInputs(c, dev, 17);
    const r = attention(q, k, v, { causal: true, lse: true });
    const ref = attentionReference(c, host(q), host(k), host(v));
    const err = attentionError(c, ref, host(r.o), host(r.lse));
    expect(err.o).toBeLessThanOrEqual(1);
    expect(err.lse).toBeLessThanOrEqual(1);
  });
});
