// The FlashAttention backward of packed variable-length batches (makeFlashAttentionBackward's
// `varlen: { maxSeqQ, maxSeqK }`, and attentionBackward's cuSeqlensQ, cuSeqlensK, maxSeqQ,
// maxSeqK) on the simulator against float64 gradients per sequence
// (examples/flash_attention_backward.ts's checkFlashAttentionBackwardVarlen: odd lengths, a
// sequence with no queries, one with no keys, padding rows after the last sequence left alone,
// the kernels' scratch tensors starting as NaN), with no hazard report; the builder's option
// errors and attentionBackward's of a packed batch; its PTX (the sequence's offsets read once,
// the CTA past its sequence's key tiles exiting before any barrier) assembles for sm_90a.
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import {
  attentionBackward,
  sim,
  tensor,
  type AttentionBackwardOptions,
  type FlashAttentionSizes,
  type TirxError,
} from "tirx-ts";
import {
  checkFlashAttentionBackwardVarlen,
  makeFlashAttentionBackward,
} from "../examples/flash_attention_backward.js";
import { showValue } from "@tirx-ts/core";
import { errorOf } from "./util/error-of.js";
import { assembleLater } from "./util/ptxas-deferred.js";

/** Three sequences of 130, 0 and 70 queries on 90, 60 and 128 keys, packed with padding rows. */
const BASE: FlashAttentionSizes = {
  batch: 3,
  heads: 1,
  seqQ: 208,
  seqK: 280,
  headDim: 64,
  dtype: "float16",
  varlen: { maxSeqQ: 130, maxSeqK: 128 },
};

/**
 * Each case's error: its `code`, `rule` (when given), a message matching the case's, at this
 * file's line that called the library (attentionBackward places its errors at the caller).
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
    expect(e.span?.file).toMatch(/flash-attention-backward-varlen\.test\.ts$/);
    return e;
  });
}

describe("flash_attention backward, varlen", () => {
  it("attentionBackward: [130, 0, 70] queries on [90, 60, 128] keys, float16, no mask: within the bound; keys of the query-less sequence exactly 0", () => {
    // maxSeqK 200: a second key tile per sequence, past every sequence's end (each such CTA
    // exits at once). Sequence 0's key tile reads sequence 1's keys (masked), sequence 2's query
    // blocks run past the tensor's end (TMA fills zeros, LSE₂ = +inf there).
    const r = checkFlashAttentionBackwardVarlen(
      sim(),
      { ...BASE, varlen: { maxSeqQ: 130, maxSeqK: 200 } },
      [130, 0, 70],
      [90, 60, 128],
      { library: true },
    );
    expect(r.ok, r.summary).toBe(true);
    // Sequence 1's 60 keys see no query: its dK and dV rows.
    expect(r.summary).toContain(`${60 * 64 * 2} elements of unseen rows exactly 0`);
    expect(r.summary).toContain("200 dQ rows, 278 dK and dV rows compared");
  });

  it('causal (bottom-right per sequence), GQA 2 heads on 1, bfloat16, a sequence with no keys, backwardMma "rs" (its step loop crosses the heads of the group): dQ of rows that see none exactly 0', () => {
    // Sequence 0 (130 queries on 90 keys): query i sees keys j ≤ i − 40, rows 0-39 none;
    // sequence 3 (5 queries, no keys) has no key tile: its dQ rows are the preprocessing's zeros.
    const r = checkFlashAttentionBackwardVarlen(
      sim(),
      {
        ...BASE,
        batch: 4,
        heads: 2,
        kvHeads: 1,
        dtype: "bfloat16",
        causal: true,
        backwardMma: "rs",
      },
      [130, 0, 70, 5],
      [90, 60, 128, 0],
    );
    expect(r.ok, r.summary).toBe(true);
    // dQ: 2 heads × (40 + 5) rows; dK and dV: sequence 1's 60 keys.
    expect(r.summary).toContain(`${(2 * 45 + 2 * 60) * 64} elements of unseen rows exactly 0`);
  });

  it("option errors: a malformed varlen, packed totals under one tile, causal with varlen allowed", () => {
    const err = (varlen: unknown) =>
      `flash_attention backward: varlen is { maxSeqQ, maxSeqK }, the longest sequence's query and key rows, integers in 1 … seq_q (208) and 1 … seq_k (280), got ${showValue(varlen)}`;
    for (const varlen of [
      { maxSeqQ: 130 },
      { maxSeqQ: 0, maxSeqK: 1 },
      { maxSeqQ: 1, maxSeqK: 281 },
    ]) {
      expect(() =>
        makeFlashAttentionBackward({ ...BASE, varlen: varlen as { maxSeqQ: number } }),
      ).toThrow(err(varlen));
    }
    expect(() =>
      makeFlashAttentionBackward({ ...BASE, seqQ: 100, varlen: { maxSeqQ: 60, maxSeqK: 60 } }),
    ).toThrow(
      "flash_attention backward: with varlen, seq_q and seq_k are the packed row counts of Q and K, integers ≥ 128 (a tile's TMA box fits in the tensor: pad the packed tensors), got 100 and 280",
    );
    // Causal with seq_q ≠ seq_k is refused without varlen only (varlen aligns it per sequence).
    expect(() => makeFlashAttentionBackward({ ...BASE, causal: true })).not.toThrow();
    expect(() =>
      makeFlashAttentionBackward({
        ...BASE,
        varlen: undefined,
        seqQ: 256,
        seqK: 384,
        causal: true,
      }),
    ).toThrow(/causal needs seq_q = seq_k here; give window: \[-1, 0\] instead/);
  });

  it("attentionBackward's errors of a packed batch: TX9001 for the options, TX9002 for the tensors", () => {
    const dev = sim();
    const t = (shape: number[], dtype: "float16" | "float32" | "int32" = "float16") =>
      tensor.empty(shape, dtype, dev);
    const ints = (a: number[]) =>
      tensor(Int32Array.from(a), { shape: [a.length], dtype: "int32", device: dev });
    const q = t([200, 2, 64]);
    const k = t([150, 1, 64]);
    const lse = t([2, 200], "float32");
    const varlen = {
      cuSeqlensQ: ints([0, 120, 200]),
      cuSeqlensK: ints([0, 100, 150]),
      maxSeqQ: 120,
      maxSeqK: 100,
    };
    const bwd =
      (o: AttentionBackwardOptions, l = lse) =>
      () =>
        attentionBackward(q, k, k, q, q, l, o);
    expectErrors(
      [
        [
          bwd({ ...varlen, maxSeqK: undefined }),
          /attentionBackward: a packed variable-length batch \(cuSeqlensQ, cuSeqlensK\) needs maxSeqQ and maxSeqK, the longest sequence's query and key rows \(FlashAttention's max_seqlen_q and max_seqlen_k\)/,
        ],
        [
          bwd({ ...varlen, cuSeqlensK: undefined }),
          /attentionBackward: cuSeqlensQ given without cuSeqlensK: .* and maxSeqQ and maxSeqK/,
        ],
        [
          bwd({ ...varlen, maxSeqK: 99 }),
          /attentionBackward: maxSeqK \(99\) must be at least the longest sequence's key rows \(100, from cuSeqlensK\)/,
        ],
        [
          bwd({ ...varlen, maxSeqK: 151 }),
          /flash_attention backward: varlen is \{ maxSeqQ, maxSeqK \}.*got \{ maxSeqQ: 120, maxSeqK: 151 \}/,
        ],
      ],
      "TX9001",
    );
    const cases: [() => unknown, RegExp][] = [
      [
        bwd(varlen, t([1, 2, 200], "float32")),
        /attentionBackward: lse must be \[heads, totalQ\] float32, got shape \[1, 2, 200\]/,
      ],
      [
        bwd(varlen, t([2, 201], "float32")),
        /lse must be \[heads, totalQ\] = \[2, 200\] \(the forward's lse output\), got \[2, 201\]/,
      ],
      [
        bwd({ ...varlen, out: { dk: t([150, 2, 64]) } }),
        /out\.dk's shape must be k's \[150, 1, 64\], got \[150, 2, 64\]/,
      ],
      [
        bwd({ ...varlen, cuSeqlensK: ints([0, 100, 151]) }),
        /attentionBackward: cuSeqlensK must be non-decreasing offsets from 0 to at most totalK \(150\), got \[0, 100, 151\]/,
      ],
    ];
    for (const e of expectErrors(cases, "TX9002", "kernels/tensors")) {
      expect(e.message).toMatch(/attentionBackward: /);
    }
  });

  it("PTX: the offsets read once, a CTA past its sequence's key tiles exits; assembles for sm_90a", () => {
    const sizes: FlashAttentionSizes[] = [
      { ...BASE, heads: 2, kvHeads: 1, dtype: "bfloat16", causal: true },
      { ...BASE, heads: 4, kvHeads: 2, headDim: 128, window: [20, 3] },
    ];
    for (const s of sizes) {
      const k = makeFlashAttentionBackward(s);
      const main = compileToPtx(k.main, { arch: "sm_90a" }).text;
      const name = `bwd varlen hd${s.headDim} ${JSON.stringify(s.window ?? s.causal)}`;
      if (s.causal) {
        // cuSeqlensQ[b], [b + 1]; the first 64-row block of the sequence's scratch rows
        // ⌊q0 / 64⌋ + b; cuSeqlensK[b], [b + 1]; shift lenK − lenQ, ⌈lenQ / 64⌉ query blocks,
        // ⌈lenK / 128⌉ key tiles, and the exit of a CTA past them.
        const start = main.indexOf("\tmad.wide.s32 %rd31");
        const excerpt = main.slice(start, main.indexOf("\tshr.s32 %r18", start));
        expect(excerpt.replace(/\t\/\/ .*\n/g, "")).toMatchInlineSnapshot(`
          "	mad.wide.s32 %rd31, %r4, 4, %rd20;
          	ld.global.s32 %r5, [%rd31];
          	ld.global.s32 %r6, [%rd31+4];
          	sub.s32 %r7, %r6, %r5;
          	shr.s32 %r8, %r5, 6;
          	add.s32 %r9, %r8, %r4;
          	mad.wide.s32 %rd32, %r4, 4, %rd22;
          	ld.global.s32 %r10, [%rd32];
          	ld.global.s32 %r11, [%rd32+4];
          	sub.s32 %r12, %r11, %r10;
          	sub.s32 %r13, %r12, %r7;
          	add.s32 %r14, %r7, 63;
          	shr.s32 %r15, %r14, 6;
          	add.s32 %r16, %r12, 127;
          	shr.s32 %r17, %r16, 7;
          	setp.lt.s32 %p1, %r2, %r17;
          	@!%p1 bra $L__endif1;
          "
        `);
      }
      expect(main).toMatch(/cp\.reduce\.async\.bulk\.global\.shared::cta\.bulk_group\.add\.f32/);
      assembleLater(main, "sm_90a", name);
      assembleLater(compileToPtx(k.preprocess, { arch: "sm_90a" }).text, "sm_90a", `${name} pre`);
      assembleLater(compileToPtx(k.postprocess, { arch: "sm_90a" }).text, "sm_90a", `${name} post`);
    }
  });
});
