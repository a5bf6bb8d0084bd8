// The library call attention(q, k, v, opts) of @tirx-ts/kernels on the simulated device: O and
// LSE against a float64 reference (test/util/attention-reference.ts, the bounds of
// examples/flash_attention.ts) at the smallest size (seq 128, head dim 64: one CTA per query
// head), causal and not, grouped-query; the tensor errors (TX9002) and option errors (TX9001),
// and the configuration table's choice.
import { describe, expect, test } from "vitest";
import { attention, sim, tensor, type AttentionOptions, type DeviceTensor } from "tirx-ts";
import {
  ATTENTION_CONFIGS,
  SIM_ARCH,
  pickAttentionConfig,
  type AttentionConfig,
  type FlashAttentionSizes,
} from "@tirx-ts/kernels";
import {
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "./util/attention-reference.js";
import { deviceArch } from "@tirx-ts/runtime";
import { errorOf } from "./util/error-of.js";

const dev = sim();
const host = (t: DeviceTensor) => t.toArray() as Float32Array;

describe("attention() on the simulator against float64", () => {
  test("grouped-query (2 query heads on 1 KV head), no mask, with LSE, float16", () => {
    const c: AttentionCase = {
      batch: 1,
      heads: 2,
      kvHeads: 1,
      seqQ: 128,
      seqK: 128,
      headDim: 64,
      dtype: "float16",
    };
    const { q, k, v } = attentionInputs(c, dev);
    const { o, lse } = attention(q, k, v, { lse: true });
    expect([o.shape, o.dtype, o.device]).toEqual([[1, 128, 2, 64], "float16", dev]);
    expect([lse.shape, lse.dtype, lse.device]).toEqual([[1, 2, 128], "float32", dev]);
    const ref = attentionReference(c, host(q), host(k), host(v));
    const err = attentionError(c, ref, host(o), host(lse));
    expect(err.o).toBeLessThanOrEqual(1);
    expect(err.lse).toBeLessThanOrEqual(1);
  });

  test("causal, with LSE, bfloat16, a given scale, O written into `out`", () => {
    const c: AttentionCase = {
      batch: 1,
      heads: 1,
      kvHeads: 1,
      seqQ: 128,
      seqK: 128,
      headDim: 64,
      dtype: "bfloat16",
      causal: true,
      scale: 0.3,
    };
    const { q, k, v } = attentionInputs(c, dev, 11);
    const out = tensor.zeros([1, 128, 1, 64], "bfloat16", dev);
    const r = attention(q, k, v, { causal: true, scale: 0.3, lse: true, out });
    expect(r.o).toBe(out);
    const ref = attentionReference(c, host(q), host(k), host(v));
    const err = attentionError(c, ref, host(out), host(r.lse));
    expect(err.o).toBeLessThanOrEqual(1);
    expect(err.lse).toBeLessThanOrEqual(1);
    // Row 0 sees key 0 only: O's row is V's row 0, exactly.
    expect(Array.from(host(out).subarray(0, 64))).toEqual(Array.from(host(v).subarray(0, 64)));
  });
});

describe("attention() errors", () => {
  const t = (shape: number[], dtype: "float16" | "bfloat16" | "float32" = "float16") =>
    tensor.empty(shape, dtype, dev);
  const q = t([1, 128, 2, 64]);
  const k = t([1, 128, 1, 64]);

  test("TX9002: tensors that disagree in rank, dtype, shape or device, named with what was expected, at the caller's line", () => {
    const cases: [() => unknown, RegExp][] = [
      [
        () => attention(t([128, 2, 64]), k, k),
        /q must be \[batch, seqQ, heads, headDim\], got shape \[128, 2, 64\]/,
      ],
      [
        () => attention(t([1, 128, 2, 64], "float32"), k, k),
        /q's dtype must be float16 or bfloat16, got float32/,
      ],
      [
        () => attention(q, t([1, 128, 1, 64], "bfloat16"), k),
        /k's dtype must be q's \(float16\), got bfloat16/,
      ],
      [
        () => attention(q, t([1, 128, 1, 128]), k),
        /q's batch 1 and head dim 64, got \[1, 128, 1, 128\]/,
      ],
      [
        () => attention(q, t([2, 128, 1, 64]), k),
        /q's batch 1 and head dim 64, got \[2, 128, 1, 64\]/,
      ],
      [
        () => attention(q, k, t([1, 256, 1, 64])),
        /v's shape must be k's \[1, 128, 1, 64\], got \[1, 256, 1, 64\]/,
      ],
      [
        () => attention(q, k, k, { out: t([1, 128, 1, 64]) }),
        /out's shape must be q's \[1, 128, 2, 64\]/,
      ],
      [
        () => attention(q, k, k, { out: t([1, 128, 2, 64], "bfloat16") }),
        /out's dtype must be q's/,
      ],
      [
        () => attention(q, 3 as unknown as DeviceTensor, k),
        /k must be a device tensor \[batch, seqK, kvHeads, headDim\], got 3/,
      ],
      [
        () =>
          attention(q, { ...k, device: { kind: "cuda", name: "NVIDIA H200" } } as DeviceTensor, k),
        /k must be on q's device \(the simulated device\), got NVIDIA H200/,
      ],
    ];
    for (const [f, message] of cases) {
      const e = errorOf(f);
      expect(e.code, e.message).toBe("TX9002");
      expect(e.rule).toBe("kernels/tensors");
      expect(e.message).toMatch(message);
      // At the line that called attention().
      expect(e.span?.file).toMatch(/kernels-attention\.test\.ts$/);
    }
  });

  test("TX9001: options the call does not take, and the builder's own (head dim, heads, mask)", () => {
    const d96 = t([1, 128, 1, 96]);
    const cases: [() => unknown, RegExp][] = [
      [
        () => attention(q, k, k, { casual: true } as unknown as AttentionOptions),
        /no option "casual"; did you mean "causal"\?/,
      ],
      [
        () => attention(q, k, k, { causal: 1 } as unknown as AttentionOptions),
        /causal is a boolean, got 1/,
      ],
      [() => attention(q, k, k, { scale: Number.NaN }), /scale is a finite number, got NaN/],
      [() => attention(d96, d96, d96), /head_dim is 64, 128 or 256, got 96/],
      [
        () => attention(t([1, 128, 3, 64]), t([1, 128, 2, 64]), t([1, 128, 2, 64])),
        /kvHeads must be a positive integer dividing heads \(3\), got 2/,
      ],
      [
        () => attention(q, k, k, { causal: true, window: [4, 0] }),
        /give causal or window, not both/,
      ],
      [() => attention(t([1, 64, 2, 64]), k, k), /positive multiples of 128/],
    ];
    for (const [f, message] of cases) {
      const e = errorOf(f);
      expect(e.code, e.message).toBe("TX9001");
      expect(e.message).toMatch(message);
      // At the line that called attention().
      expect(e.span?.file).toMatch(/kernels-attention\.test\.ts$/);
    }
  });
});

describe("the configuration table", () => {
  const sizes = (headDim: 64 | 128 | 256): FlashAttentionSizes => ({
    batch: 1,
    heads: 1,
    seqQ: 128,
    seqK: 128,
    headDim,
    dtype: "float16",
  });

  test("one forward entry per head dim on sm_90; the simulator takes sm_90's", () => {
    for (const hd of [64, 128, 256] as const) {
      const gpu = pickAttentionConfig("forward", sizes(hd), "sm_90");
      expect(ATTENTION_CONFIGS).toContain(gpu);
      expect([gpu.pass, gpu.headDim, gpu.arch]).toEqual(["forward", hd, "sm_90"]);
      expect(pickAttentionConfig("forward", sizes(hd), undefined)).toBe(gpu);
    }
    expect(SIM_ARCH).toBe("sm_90");
  });

  test("the simulator has no target (it takes SIM_ARCH's rows); tensors on a look-alike device are TX9002", () => {
    expect(deviceArch(dev)).toBeUndefined();
    const fake = { kind: "cuda", name: "NVIDIA H200" } as const;
    expect(errorOf(() => deviceArch(fake)).code).toBe("TX5012");
    const [q, k] = [
      [1, 128, 1, 64],
      [1, 128, 1, 64],
    ].map((shape) => ({ ...tensor.empty(shape, "float16", dev), device: fake }) as DeviceTensor);
    const e = errorOf(() => attention(q!, k!, k!));
    expect(e.code).toBe("TX9002");
    expect(e.message).toMatch(/q's device is not one/);
  });

  test("a GPU with no entry for the pass is TX9001 naming the targets there are", () => {
    const e = errorOf(() => pickAttentionConfig("forward", sizes(64), "sm_80"));
    expect(e.code).toBe("TX9001");
    expect(e.message).toMatch(/no configuration for a GPU of target sm_80 \(written for sm_90\)/);
    expect(errorOf(() => pickAttentionConfig("backward", sizes(64), "sm_90")).code).toBe("TX9001");
  });

  test("the first entry whose `when` holds wins; a head dim without one gets the builder's defaults", () => {
    const tuned: AttentionConfig = {
      pass: "forward",
      headDim: 128,
      arch: "sm_90",
      when: (s) => s.seqK >= 4096,
      tune: { ctas: 132 },
      note: "long sequences",
    };
    const table = [tuned, ...ATTENTION_CONFIGS];
    const long = { ...sizes(128), seqQ: 4096, seqK: 4096 };
    expect(pickAttentionConfig("forward", long, "sm_90", table)).toBe(tuned);
    expect(pickAttentionConfig("forward", sizes(128), "sm_90", table)).toBe(ATTENTION_CONFIGS[1]);
    const only64 = ATTENTION_CONFIGS.filter((c) => c.headDim === 64);
    expect(pickAttentionConfig("forward", sizes(128), "sm_90", only64)).toMatchObject({
      headDim: 128,
      tune: {},
    });
  });
});
