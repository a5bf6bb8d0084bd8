// The library call attention(q, k, v, opts) of @tirx-ts/kernels on the simulated device: O and
// LSE against a float64 reference (test/util/attention-reference.ts, the bounds of
// examples/flash_attention.ts) at the smallest sizes (seq 128, or 100 queries on 77 keys, not
// multiples of the tiles; head dim 64: one CTA per query head), causal and not, grouped-query; attentionBackward(q, k, v, o, dO, lse, opts): dQ, dK and
// dV against float64 gradients (examples/flash_attention_backward.ts's reference and bound) at
// the same size, causal, grouped-query; a packed variable-length batch (cuSeqlensQ, cuSeqlensK,
// maxSeqQ) against the reference per sequence; the tensor errors (TX9002) and option errors
// (TX9001) of both, and the configuration table's choice.
import { describe, expect, test } from "vitest";
import {
  attention,
  attentionBackward,
  sim,
  tensor,
  type AttentionBackwardOptions,
  type AttentionOptions,
  type DeviceTensor,
} from "tirx-ts";
import {
  ATTENTION_CONFIGS,
  SIM_ARCH,
  makeFlashAttention,
  pickAttentionConfig,
  type AttentionConfig,
  type FlashAttentionSizes,
} from "@tirx-ts/kernels";
import {
  attentionBackwardErrors,
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "./util/attention-reference.js";
import { deviceArch } from "@tirx-ts/runtime";
import type { TirxError } from "@tirx-ts/core";
import { errorOf } from "./util/error-of.js";
import { uniformFrom } from "./util/lcg.js";

const dev = sim();
const host = (t: DeviceTensor) => t.toArray() as Float32Array;

/** Int32 offsets [n] on the simulated device. */
const ints = (a: readonly number[]) =>
  tensor(Int32Array.from(a), { shape: [a.length], dtype: "int32", device: dev });

/**
 * Each case's call throws a TirxError of `code` (and `rule`, when given) whose message matches the
 * case's pattern, at the line of this file that made the call; the errors, in the cases' order.
 */
function expectErrors(
  cases: readonly (readonly [() => unknown, RegExp])[],
  code: "TX9001" | "TX9002",
  rule?: string,
): TirxError[] {
  return cases.map(([f, message]) => {
    const e = errorOf(f);
    expect(e.code, e.message).toBe(code);
    if (rule !== undefined) expect(e.rule).toBe(rule);
    expect(e.message).toMatch(message);
    expect(e.span?.file).toMatch(/kernels-attention\.test\.ts$/);
    return e;
  });
}

describe("attention() on the simulator against float64", () => {
  test("grouped-query (2 query heads on 1 KV head), no mask, with LSE, float16, lengths 100 and 77 (not multiples of 128)", () => {
    const c: AttentionCase = {
      batch: 1,
      heads: 2,
      kvHeads: 1,
      seqQ: 100,
      seqK: 77,
      headDim: 64,
      dtype: "float16",
    };
    const { q, k, v } = attentionInputs(c, dev);
    const { o, lse } = attention(q, k, v, { lse: true });
    expect([o.shape, o.dtype, o.device]).toEqual([[1, 100, 2, 64], "float16", dev]);
    expect([lse.shape, lse.dtype, lse.device]).toEqual([[1, 2, 100], "float32", dev]);
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
    // A window offset past the sequences means what it says: left 2^31 − 1 is unbounded, so this
    // window is causal (it wrapped around in int32 before: every row saw no key).
    const w = attention(q, k, v, { window: [2 ** 31 - 1, 0], scale: 0.3, lse: true });
    expect(Array.from(host(w.o))).toEqual(Array.from(host(out)));
    expect(Array.from(host(w.lse!))).toEqual(Array.from(host(r.lse!)));
  });
});

describe("attention() on a packed variable-length batch, on the simulator against float64", () => {
  test("3 sequences of 7, 121, 33 queries on 3, 121, 90 keys, causal, LSE, float16, into `out`: each sequence within the bounds, padding rows untouched", () => {
    // Sequence 0 (7 queries on 3 keys, bottom-right causal: query i sees keys j ≤ i − 4): rows
    // 0-3 see no key (O exactly 0, LSE −inf). 7 padding rows after the last sequence in Q and O,
    // 4 in K and V.
    const lensQ = [7, 121, 33];
    const lensK = [3, 121, 90];
    const [heads, kvHeads, D] = [1, 1, 64];
    const cum = (lens: number[]) => lens.reduce((a, n) => [...a, a[a.length - 1]! + n], [0]);
    const cuQ = cum(lensQ);
    const cuK = cum(lensK);
    const totalQ = cuQ[3]! + 7;
    const totalK = cuK[3]! + 4;
    const rnd = uniformFrom(5);
    const packed = (rows: number, h: number) =>
      tensor(Float32Array.from({ length: rows * h * D }, rnd), {
        shape: [rows, h, D],
        dtype: "float16",
        device: dev,
      });
    const q = packed(totalQ, heads);
    const k = packed(totalK, kvHeads);
    const v = packed(totalK, kvHeads);
    const MARK = 7;
    const out = tensor(new Float32Array(totalQ * heads * D).fill(MARK), {
      shape: [totalQ, heads, D],
      dtype: "float16",
      device: dev,
    });
    const r = attention(q, k, v, {
      cuSeqlensQ: ints(cuQ),
      cuSeqlensK: ints(cuK),
      maxSeqQ: 121,
      causal: true,
      lse: true,
      out,
    });
    expect(r.o).toBe(out);
    expect([r.lse.shape, r.lse.dtype, r.lse.device]).toEqual([[heads, totalQ], "float32", dev]);
    const [Q, K, V, O, L] = [q, k, v, out, r.lse].map(host) as Float32Array[];
    let empty = 0;
    for (let b = 0; b < 3; b++) {
      // Sequence b as a batch of one: the reference's causal is bottom-right aligned by its own
      // lengths, the varlen convention.
      const c: AttentionCase = {
        batch: 1,
        heads,
        kvHeads,
        seqQ: lensQ[b]!,
        seqK: lensK[b]!,
        headDim: D,
        dtype: "float16",
        causal: true,
      };
      const rows = (x: Float32Array, cu: number[], h: number) =>
        x.subarray(cu[b]! * h * D, cu[b + 1]! * h * D);
      const ref = attentionReference(
        c,
        rows(Q!, cuQ, heads),
        rows(K!, cuK, kvHeads),
        rows(V!, cuK, kvHeads),
      );
      // LSE [heads, totalQ]: sequence b's rows of each head, as the reference's [1, heads, lenQ].
      const lse = Float32Array.from({ length: heads * lensQ[b]! }, (_, e) => {
        const [h, i] = [Math.floor(e / lensQ[b]!), e % lensQ[b]!];
        return L![h * totalQ + cuQ[b]! + i]!;
      });
      empty += ref.lse.filter((x) => x === -Infinity).length;
      const err = attentionError(c, ref, rows(O!, cuQ, heads), lse);
      expect(
        err.o,
        `sequence ${b}: O's worst error as a fraction of the bound`,
      ).toBeLessThanOrEqual(1);
      expect(err.lse, `sequence ${b}: LSE's worst error`).toBeLessThanOrEqual(1);
    }
    expect(empty).toBe(heads * 4);
    // Rows of no sequence keep the marker.
    expect(O!.subarray(cuQ[3]! * heads * D).every((x) => x === MARK)).toBe(true);
  });
});

describe("attentionBackward() on the simulator against float64", () => {
  test("causal, grouped-query (2 query heads on 1 KV head), float16, dk written into `out`", () => {
    const c: AttentionCase = {
      batch: 1,
      heads: 2,
      kvHeads: 1,
      seqQ: 128,
      seqK: 128,
      headDim: 64,
      dtype: "float16",
      causal: true,
    };
    const dk = tensor.empty([1, 128, 1, 64], "float16", dev);
    // O and LSE from the float64 reference (O rounded to float16 as the forward's is; LSE to
    // float32), not a forward run on the simulator: the backward is what is tested. Every element
    // within gradientBound · max|ref| of its tensor (examples/flash_attention_backward.ts); causal
    // with seqQ = seqK: every row sees a key.
    const e = attentionBackwardErrors(c, dev, { out: { dk } });
    const g = e.grads;
    expect(g.dk).toBe(dk);
    expect([g.dq.shape, g.dq.dtype, g.dq.device]).toEqual([[1, 128, 2, 64], "float16", dev]);
    expect([g.dv.shape, g.dv.dtype, g.dv.device]).toEqual([[1, 128, 1, 64], "float16", dev]);
    for (const name of ["dq", "dk", "dv"] as const) {
      expect(e[name], `${name}: worst error as a fraction of the bound`).toBeLessThanOrEqual(1);
    }
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
    expectErrors(cases, "TX9002", "kernels/tensors");
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
      [
        () => attention(q, k, k, { scale: 1e300 }),
        /scale 1e\+300 overflows float32 once multiplied by log2 e/,
      ],
      [() => attention(d96, d96, d96), /head_dim is 64, 128 or 256, got 96/],
      [
        () => attention(t([1, 128, 3, 64]), t([1, 128, 2, 64]), t([1, 128, 2, 64])),
        /kvHeads must be a positive integer dividing heads \(3\), got 2/,
      ],
      [
        () => attention(q, k, k, { causal: true, window: [4, 0] }),
        /give causal or window, not both/,
      ],
      [
        () => attention(t([1, 0, 2, 64]), k, k),
        /seq_q and seq_k integers ≥ 1 \(a tensor map.s dims are at least 1\), got 0 and 128/,
      ],
    ];
    expectErrors(cases, "TX9001");
  });

  test("the builder refuses a window offset past 2^30 (int32 index arithmetic) with TX9001; attention() clamps it first", () => {
    const e = errorOf(() =>
      makeFlashAttention({
        batch: 1,
        heads: 1,
        seqQ: 128,
        seqK: 128,
        headDim: 64,
        dtype: "float16",
        window: [2 ** 31 - 1, 0],
      }),
    );
    expect(e.code).toBe("TX9001");
    expect(e.message).toMatch(/window offsets are at most 2\^30 in magnitude/);
  });

  test("TX5004: a Proxy of a tensor, or an object whose prototype is one, is no tensor (not a raw TypeError)", () => {
    for (const fake of [new Proxy(q, {}), Object.create(q) as DeviceTensor]) {
      const e = errorOf(() => attention(fake, k, k));
      expect(e.code, e.message).toBe("TX5004");
      expect(e.message).toMatch(/passes for a sim tensor is not one/);
    }
  });
});

describe("attention() errors of a packed variable-length batch", () => {
  const t = (shape: number[], dtype: "float16" | "bfloat16" | "float32" | "int32" = "float16") =>
    tensor.empty(shape, dtype, dev);
  const q = t([200, 2, 64]);
  const k = t([150, 1, 64]);
  const cuQ = ints([0, 120, 200]);
  const cuK = ints([0, 100, 150]);
  const varlen = { cuSeqlensQ: cuQ, cuSeqlensK: cuK, maxSeqQ: 120 };

  test("TX9002: rank-3 q, k, v only with the offsets; offsets int32 [batch + 1] of one batch, on q's device, in range; named, at the caller's line", () => {
    const cases: [() => unknown, RegExp][] = [
      [
        () => attention(q, k, k),
        /q must be \[batch, seqQ, heads, headDim\], got shape \[200, 2, 64\] \(a packed \[totalQ, heads, headDim\] batch takes cuSeqlensQ, cuSeqlensK and maxSeqQ\)/,
      ],
      [
        () => attention(t([1, 200, 2, 64]), k, k, varlen),
        /q must be \[totalQ, heads, headDim\] \(a packed batch: cuSeqlensQ given\), got shape \[1, 200, 2, 64\]/,
      ],
      [
        () => attention(q, t([1, 150, 1, 64]), k, varlen),
        /k must be \[totalK, kvHeads, headDim\] \(a packed batch: cuSeqlensK given\), got shape/,
      ],
      [
        () => attention(q, k, t([150, 1, 128]), varlen),
        /v's shape must be k's \[150, 1, 64\], got \[150, 1, 128\]/,
      ],
      [
        () => attention(q, k, k, { ...varlen, cuSeqlensQ: t([3], "float32") }),
        /cuSeqlensQ's dtype must be int32, got float32/,
      ],
      [
        () => attention(q, k, k, { ...varlen, cuSeqlensK: t([3, 1], "int32") }),
        /cuSeqlensK must be \[batch \+ 1\] int32 \(cumulative offsets\), got shape \[3, 1\]/,
      ],
      [
        () => attention(q, k, k, { ...varlen, cuSeqlensK: ints([0, 100, 120, 150]) }),
        /cuSeqlensK must be \[batch \+ 1\] with cuSeqlensQ's batch 2, got \[4\]/,
      ],
      [
        () => attention(q, k, k, { ...varlen, cuSeqlensQ: ints([0]) }),
        /cuSeqlensQ must be \[batch \+ 1\] with batch ≥ 1/,
      ],
      [
        () =>
          attention(q, k, k, {
            ...varlen,
            cuSeqlensQ: { ...cuQ, device: { kind: "cuda", name: "NVIDIA H200" } } as DeviceTensor,
          }),
        /cuSeqlensQ must be on q's device \(the simulated device\), got NVIDIA H200/,
      ],
      [
        () => attention(q, k, k, { ...varlen, out: t([200, 1, 64]) }),
        /out's shape must be q's \[200, 2, 64\], got \[200, 1, 64\]/,
      ],
      [
        () => attention(q, k, k, { ...varlen, cuSeqlensQ: ints([0, 120, 201]) }),
        /cuSeqlensQ must be non-decreasing offsets from 0 to at most totalQ \(200\), got \[0, 120, 201\]/,
      ],
      [
        () => attention(q, k, k, { ...varlen, cuSeqlensK: ints([0, 100, 90]) }),
        /cuSeqlensK must be non-decreasing offsets from 0 to at most totalK \(150\), got \[0, 100, 90\]/,
      ],
    ];
    for (const e of expectErrors(cases, "TX9002", "kernels/tensors")) {
      expect(e.text).toMatch(/^attention: /);
    }
  });

  test("TX9001: maxSeqQ missing, short or without offsets, one offset tensor alone, and the builder's (packed totals under 128, maxSeqQ past totalQ)", () => {
    const cases: [() => unknown, RegExp][] = [
      [
        () => attention(q, k, k, { cuSeqlensQ: cuQ, cuSeqlensK: cuK }),
        /attention: a packed variable-length batch \(cuSeqlensQ, cuSeqlensK\) needs maxSeqQ, the longest sequence's query rows \(FlashAttention's max_seqlen_q\)/,
      ],
      [
        () => attention(q, k, k, { cuSeqlensQ: cuQ, maxSeqQ: 120 }),
        /attention: cuSeqlensQ given without cuSeqlensK/,
      ],
      [() => attention(q, k, k, { cuSeqlensK: cuK }), /cuSeqlensK given without cuSeqlensQ/],
      [
        () =>
          attention(t([1, 128, 2, 64]), t([1, 128, 1, 64]), t([1, 128, 1, 64]), { maxSeqQ: 128 }),
        /maxSeqQ is for a packed variable-length batch: give it with cuSeqlensQ and cuSeqlensK/,
      ],
      [
        () => attention(q, k, k, { ...varlen, maxSeqQ: 100 }),
        /maxSeqQ \(100\) must be at least the longest sequence's query rows \(120, from cuSeqlensQ\)/,
      ],
      [
        () => attention(q, k, k, { ...varlen, maxSeqQ: 201 }),
        /flash_attention: varlen is \{ maxSeqQ \}, the longest sequence's query rows, an integer in 1 … seq_q \(200\)/,
      ],
      [
        () =>
          attention(t([100, 2, 64]), k, k, {
            cuSeqlensQ: ints([0, 60, 100]),
            cuSeqlensK: cuK,
            maxSeqQ: 60,
          }),
        /with varlen, seq_q and seq_k are the packed row counts of Q and K, integers ≥ 128/,
      ],
      [
        () => attention(q, k, k, { ...varlen, maxSeq: 120 } as unknown as AttentionOptions),
        /no option "maxSeq"; did you mean "maxSeqQ"\?/,
      ],
    ];
    expectErrors(cases, "TX9001");
  });

  test("attentionBackward of rank-3 tensors without the offsets: TX9002 naming them (test/flash-attention-backward-varlen.test.ts has its packed runs and errors)", () => {
    const e = errorOf(() => attentionBackward(q, k, k, q, q, t([2, 200], "float32")));
    expect(e.code).toBe("TX9002");
    expect(e.message).toMatch(
      /attentionBackward: q must be \[batch, seqQ, heads, headDim\], got shape \[200, 2, 64\] \(a packed \[totalQ, heads, headDim\] batch takes cuSeqlensQ, cuSeqlensK, maxSeqQ and maxSeqK\)/,
    );
    expect(e.span?.file).toMatch(/kernels-attention\.test\.ts$/);
    const q4 = t([1, 128, 2, 64]);
    const k3 = errorOf(() =>
      attentionBackward(q4, t([128, 1, 64]), t([128, 1, 64]), q4, q4, t([1, 2, 128], "float32")),
    );
    expect([k3.code, k3.message]).toEqual([
      "TX9002",
      expect.stringMatching(
        /k must be \[batch, seqK, kvHeads, headDim\], got shape \[128, 1, 64\]/,
      ),
    ]);
  });
});

describe("attentionBackward() errors", () => {
  const t = (shape: number[], dtype: "float16" | "bfloat16" | "float32" = "float16") =>
    tensor.empty(shape, dtype, dev);
  const q = t([1, 128, 2, 64]);
  const k = t([1, 128, 1, 64]);
  const lse = t([1, 2, 128], "float32");
  const bwd = (over: Partial<Record<"q" | "k" | "v" | "o" | "dO" | "lse", DeviceTensor>>) => () =>
    attentionBackward(
      over.q ?? q,
      over.k ?? k,
      over.v ?? k,
      over.o ?? q,
      over.dO ?? q,
      over.lse ?? lse,
    );

  test("TX9002: o, dO, lse or out tensors that disagree with q and k, named, at the caller's line", () => {
    const cases: [() => unknown, RegExp][] = [
      [
        bwd({ dO: t([1, 128, 1, 64]) }),
        /dO's shape must be q's \[1, 128, 2, 64\], got \[1, 128, 1, 64\]/,
      ],
      [
        bwd({ o: t([1, 128, 2, 64], "bfloat16") }),
        /o's dtype must be q's \(float16\), got bfloat16/,
      ],
      [
        bwd({ lse: t([1, 2, 128], "float16") }),
        /lse's dtype must be float32 \(the forward's lse output\), got float16/,
      ],
      [
        bwd({ lse: t([1, 128, 2], "float32") }),
        /lse must be \[batch, heads, seqQ\] = \[1, 2, 128\] \(the forward's lse output\), got \[1, 128, 2\]/,
      ],
      [
        bwd({ lse: t([1, 2, 128, 1], "float32") }),
        /lse must be \[batch, heads, seqQ\] float32, got shape/,
      ],
      [bwd({ v: t([1, 256, 1, 64]) }), /v's shape must be k's \[1, 128, 1, 64\]/],
      [
        () => attentionBackward(q, k, k, q, q, lse, { out: { dk: t([1, 128, 2, 64]) } }),
        /out\.dk's shape must be k's \[1, 128, 1, 64\], got \[1, 128, 2, 64\]/,
      ],
    ];
    for (const e of expectErrors(cases, "TX9002", "kernels/tensors")) {
      expect(e.message).toMatch(/attentionBackward: /);
    }
  });

  test("TX9001: options the call does not take, and the builder's own (a head dim other than 64, 128 and 256)", () => {
    const d96 = t([1, 128, 1, 96]);
    const cases: [() => unknown, RegExp][] = [
      [
        () => attentionBackward(d96, d96, d96, d96, d96, t([1, 1, 128], "float32")),
        /flash_attention backward: head_dim is 64, 128 or 256, got 96/,
      ],
      [
        () =>
          attentionBackward(q, k, k, q, q, lse, {
            lse: true,
          } as unknown as AttentionBackwardOptions),
        /no option "lse": the forward's lse output is the sixth argument/,
      ],
      [
        () =>
          attentionBackward(q, k, k, q, q, lse, {
            out: { dQ: q },
          } as unknown as AttentionBackwardOptions),
        /out has no key "dQ"; did you mean "dq"\?/,
      ],
      [
        () => attentionBackward(q, k, k, q, q, lse, { causal: true, window: [4, 0] }),
        /give causal or window, not both/,
      ],
    ];
    expectErrors(cases, "TX9001");
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
    expect(errorOf(() => pickAttentionConfig("backward", sizes(64), "sm_80")).code).toBe("TX9001");
  });

  test("forward on sm_90: head dim 64 takes 192 × 192 tiles from seq 2048, a persistent grid below for dense lengths of 128s (192 query rows without causal), else 192 query rows without causal; head dim 128 a persistent grid below 2048 keys without causal and 192-key blocks from seq 2048; head dim 256 80-key blocks", () => {
    const at = (
      hd: 64 | 128 | 256,
      seq: number,
      causal: boolean,
      more: Partial<FlashAttentionSizes> = {},
    ) =>
      pickAttentionConfig(
        "forward",
        { ...sizes(hd), seqQ: seq, seqK: seq, causal, ...more },
        "sm_90",
      ).tune;
    expect(at(64, 4096, false)).toEqual({ blockM: 192, blockN: 192 });
    expect(at(64, 16384, true)).toEqual({ blockM: 192, blockN: 192 });
    expect(at(64, 1024, false)).toEqual({ blockM: 192, ctas: 132 });
    expect(at(64, 1024, true)).toEqual({ ctas: 132 });
    // Lengths the static build does not take (not multiples of 128), a packed batch, a dynamic
    // build: no persistent grid (the builder refuses ctas there).
    expect(at(64, 1000, false)).toEqual({ blockM: 192 });
    expect(at(64, 1000, true)).toEqual({});
    expect(at(64, 1024, false, { varlen: { maxSeqQ: 512 } })).toEqual({ blockM: 192 });
    expect(at(64, 1024, false, { dynamic: true })).toEqual({ blockM: 192 });
    // Under a 192-row tile (a varlen build needs packed totals ≥ blockM): 128 rows.
    expect(at(64, 128, false, { varlen: { maxSeqQ: 100 } })).toEqual({});
    expect(at(128, 1024, false)).toEqual({ ctas: 132 });
    expect(at(128, 1024, true)).toEqual({});
    expect(at(128, 4096, false)).toEqual({ blockN: 192 });
    expect(at(128, 16384, true)).toEqual({ blockN: 192 });
    expect(at(128, 2048, true, { varlen: { maxSeqQ: 1000 } })).toEqual({ blockN: 192 });
    expect(at(128, 1000, true)).toEqual({});
    expect(at(256, 1024, true)).toEqual({ blockN: 80 });
    expect(at(256, 100, false, { dynamic: true })).toEqual({ blockN: 80 });
    // Each picked tuning builds (the builder takes its tiles and grid at those sizes).
    for (const [hd, seq, causal, more] of [
      [64, 4096, true, {}],
      [64, 1024, false, {}],
      [64, 1024, true, {}],
      [64, 1000, false, {}],
      [64, 1024, false, { varlen: { maxSeqQ: 512 } }],
      [128, 1024, false, {}],
      [128, 4096, true, {}],
      [128, 2048, false, { varlen: { maxSeqQ: 1000 } }],
      [256, 100, false, { dynamic: true }],
      [256, 1000, true, {}],
    ] as const) {
      const s = { ...sizes(hd), seqQ: seq, seqK: seq, causal, ...more };
      expect(() => makeFlashAttention({ ...s, ...at(hd, seq, causal, more) })).not.toThrow();
    }
  });

  test('one backward entry per head dim (64, 128, 256) on sm_90, backwardMma "rs" at 128 only; the simulator takes sm_90\'s', () => {
    for (const hd of [64, 128, 256] as const) {
      const gpu = pickAttentionConfig("backward", sizes(hd), "sm_90");
      expect(ATTENTION_CONFIGS).toContain(gpu);
      expect([gpu.pass, gpu.headDim, gpu.arch]).toEqual(["backward", hd, "sm_90"]);
      expect(pickAttentionConfig("backward", sizes(hd), undefined)).toBe(gpu);
      // "rs" measured faster at head dim 128 and slower at 64 (attention.ts's table); 256 has
      // one design.
      expect(gpu.tune.backwardMma).toBe(hd === 128 ? "rs" : undefined);
    }
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
    const general128 = ATTENTION_CONFIGS.find(
      (c) => c.pass === "forward" && c.headDim === 128 && c.when === undefined,
    );
    expect(general128).toBeDefined();
    const causal128 = { ...sizes(128), causal: true };
    expect(pickAttentionConfig("forward", causal128, "sm_90", table)).toBe(general128);
    const only64 = ATTENTION_CONFIGS.filter((c) => c.headDim === 64);
    expect(pickAttentionConfig("forward", sizes(128), "sm_90", only64)).toMatchObject({
      headDim: 128,
      tune: {},
    });
  });
});
