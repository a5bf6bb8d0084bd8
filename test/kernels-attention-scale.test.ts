// The softmax scale is a launch argument of attention()'s and attentionBackward()'s kernels: one
// kernel serves every positive scale (the default 1 / √headDim included), counted by the runtime's
// compile cache, not timed. On the simulator: a second and third positive scale compile nothing,
// the second gives the same bits as makeFlashAttention's build with that scale as a constant (the
// launch arguments round scale · log2 e once, as the constant does), and O, LSE and the gradients are
// within the float64 reference's bounds at each scale; negative scales share a second kernel
// (negativeScale: it masks to +inf and takes the running max from rowmin(S)), the same way; the
// builders' scaleAtLaunch kernels take the scalars last, and launchScale and the builders refuse
// what they cannot take (a scale of the other sign, negativeScale without scaleAtLaunch).
import { describe, expect, test } from "vitest";
import { attention, compile, sim, tensor, type DeviceTensor } from "tirx-ts";
import { launchScale, makeFlashAttention, makeFlashAttentionBackward } from "@tirx-ts/kernels";
import {
  attentionBackwardErrors,
  attentionError,
  attentionInputs,
  attentionReference,
  type AttentionCase,
} from "./util/attention-reference.js";
import { counted } from "./util/counted.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();
const host = (t: DeviceTensor) => t.toArray() as Float32Array;

// Grouped-query, causal, 100 queries on 77 keys (a partial tile and block): mask, rescale and the
// bottom-right alignment all depend on the scale's handling.
const base: AttentionCase = {
  batch: 1,
  heads: 2,
  kvHeads: 1,
  seqQ: 100,
  seqK: 77,
  headDim: 64,
  dtype: "bfloat16",
  causal: true,
};

/**
 * attention() at each of `scales` (of one sign; undefined: the default 1 / √headDim) on inputs
 * from `seed`: the first compiles at most the sign's kernel, the others nothing; O and LSE within
 * the float64 reference's bounds at each; at scale `bitsAt` the bits of makeFlashAttention's build
 * with that scale as a constant (scale · log2 e rounded once at the build, as launchScale rounds
 * it; checked at one scale: each build costs); and the first two scales' O differ (the scale
 * reaches the kernel).
 */
function checkForwardScales(scales: readonly (number | undefined)[], seed: number, bitsAt: number) {
  const { q, k, v } = attentionInputs(base, dev, seed);
  const outs: Float32Array[] = [];
  for (const [i, given] of scales.entries()) {
    const r = counted(() => attention(q, k, v, { causal: true, lse: true, scale: given }));
    if (i === 0) expect(r.compiled, `scale ${given}`).toBeLessThanOrEqual(1);
    else expect(r.compiled, `scale ${given}`).toBe(0);
    const scale = given ?? 1 / Math.sqrt(base.headDim);
    const c = { ...base, scale };
    const ref = attentionReference(c, host(q), host(k), host(v));
    const err = attentionError(c, ref, host(r.value.o), host(r.value.lse!));
    expect(err.o, `O at scale ${scale}`).toBeLessThanOrEqual(1);
    expect(err.lse, `LSE at scale ${scale}`).toBeLessThanOrEqual(1);
    outs.push(host(r.value.o));
    if (scale !== bitsAt) continue;
    const fixed = makeFlashAttention({ ...base, headDim: 64, scale, lse: true, dynamic: true });
    const o = tensor.zeros(q.shape, "bfloat16", dev);
    const lse = tensor.zeros([1, 2, 100], "float32", dev);
    compile(fixed)(q, k, v, o, 1, 100, 77, lse);
    expect(Array.from(host(r.value.o)), `O bits at scale ${scale}`).toEqual(Array.from(host(o)));
    expect(Array.from(host(r.value.lse!)), `LSE bits at scale ${scale}`).toEqual(
      Array.from(host(lse)),
    );
  }
  expect(Array.from(outs[0]!)).not.toEqual(Array.from(outs[1]!));
}

/**
 * attentionBackward() (causal, float16, 128 × 128) at each of `scales` (of one sign) on inputs
 * from `seed` and dO from seed + 1: the later scales compile nothing; dQ, dK and dV within the
 * bound of float64 gradients at each; the first two scales' dQ differ.
 */
function checkBackwardScales(scales: readonly number[], seed: number) {
  const c: AttentionCase = { ...base, heads: 1, seqQ: 128, seqK: 128, dtype: "float16" };
  const dqs: Float32Array[] = [];
  for (const [i, scale] of scales.entries()) {
    const r = counted(() =>
      attentionBackwardErrors({ ...c, scale }, dev, { seed, dOSeed: seed + 1 }),
    );
    if (i > 0) expect(r.compiled, `scale ${scale}`).toBe(0);
    for (const name of ["dq", "dk", "dv"] as const) {
      expect(r.value[name], `${name} at scale ${scale}: worst error / bound`).toBeLessThanOrEqual(
        1,
      );
    }
    dqs.push(host(r.value.grads.dq));
  }
  expect(Array.from(dqs[0]!)).not.toEqual(Array.from(dqs[1]!));
}

describe("attention(): one kernel for every positive scale and one for every negative scale", () => {
  test("scales 0.3, 0.05 and the default: the later two compile nothing; each within the float64 bounds, 0.05 the bits of the constant-scale build", () => {
    checkForwardScales([0.3, 0.05, undefined], 5, 0.05);
  });

  test("negative scales share a second kernel (−0.2917, −0.0433, −3.5: the later two compile nothing), each within the float64 bounds, −0.0433 the bits of the constant-scale build", () => {
    checkForwardScales([-0.2917, -0.0433, -3.5], 6, -0.0433);
  });
});

describe("attentionBackward(): one set of kernels for every scale of a sign", () => {
  test("scales 0.2 and 0.6, causal, float16: the second compiles nothing; dQ, dK and dV within the bound of float64 gradients at each", () => {
    checkBackwardScales([0.2, 0.6], 8);
  });

  test("scales −0.25 and −0.7, causal, float16: the second compiles nothing; dQ, dK and dV within the bound of float64 gradients at each", () => {
    checkBackwardScales([-0.25, -0.7], 10);
  });
});

describe("the builders' scaleAtLaunch", () => {
  test("the kernels take the float32 scalars last: forward scaleLog2; backward main scale, scaleLog2; postprocess scale (hd 64, 128 and 256, varlen)", () => {
    const names = (f: { params: readonly { name: string }[] }) => f.params.map((p) => p.name);
    const s = {
      batch: 1,
      heads: 2,
      seqQ: 128,
      seqK: 128,
      dtype: "float16",
      scaleAtLaunch: true,
    } as const;
    expect(names(makeFlashAttention({ ...s, headDim: 64, lse: true })).slice(-2)).toEqual([
      "LSE",
      "scaleLog2",
    ]);
    for (const headDim of [64, 128, 256] as const) {
      for (const varlen of [undefined, { maxSeqQ: 128, maxSeqK: 128 }]) {
        const b = makeFlashAttentionBackward({ ...s, headDim, ...(varlen ? { varlen } : {}) });
        expect(names(b.main).slice(-2), `hd ${headDim}`).toEqual(["scale", "scaleLog2"]);
        expect(names(b.postprocess).slice(-1), `hd ${headDim}`).toEqual(["scale"]);
        expect(names(b.preprocess)).not.toContain("scale");
      }
    }
  });

  test("TX9001: scaleAtLaunch with a scale, or not a boolean; negativeScale without scaleAtLaunch, or not a boolean; in the forward and the backward builders", () => {
    const s = { batch: 1, heads: 2, seqQ: 128, seqK: 128, headDim: 64, dtype: "float16" } as const;
    for (const make of [makeFlashAttention, makeFlashAttentionBackward] as const) {
      for (const [extra, message] of [
        [{ scaleAtLaunch: true, scale: 0.5 }, /give scale .* or scaleAtLaunch .*, not both/],
        [{ scaleAtLaunch: "yes" }, /scaleAtLaunch is a boolean, got "yes"/],
        [{ negativeScale: true }, /negativeScale is the sign of a launch-time scale/],
        [{ negativeScale: true, scale: -0.5 }, /negativeScale is the sign of a launch-time scale/],
        [{ scaleAtLaunch: true, negativeScale: 1 }, /negativeScale is a boolean, got 1/],
      ] as const) {
        const e = errorOf(() => make({ ...s, ...(extra as object) }));
        expect(e.code, e.message).toBe("TX9001");
        expect(e.message).toMatch(message);
      }
    }
  });

  test("launchScale rounds scale and scale · log2 e once to float32, and refuses a scale the kernels cannot take or of the other sign (TX9001)", () => {
    expect(launchScale(0.125, "attention")).toEqual({
      scale: 0.125,
      scaleLog2: Math.fround(0.125 * Math.LOG2E),
    });
    expect(launchScale(0.1, "x").scale).toBe(Math.fround(0.1));
    expect(launchScale(-0.125, "attention", true)).toEqual({
      scale: -0.125,
      scaleLog2: Math.fround(-0.125 * Math.LOG2E),
    });
    const e = errorOf(() => launchScale(0.5, "attention", true));
    expect(e.code).toBe("TX9001");
    expect(e.message).toMatch(/scaleAtLaunch and negativeScale takes a negative scale, got 0\.5/);
    for (const [bad, message] of [
      [-0.5, /takes a positive scale, got -0\.5; build with negativeScale/],
      [0, /scale · log2 e is 0 in float32/],
      [Number.NaN, /scale is a finite number, got NaN/],
      [1e300, /overflows float32/],
    ] as const) {
      const e = errorOf(() => launchScale(bad, "attention"));
      expect(e.code).toBe("TX9001");
      expect(e.message).toMatch(message);
    }
  });
});
