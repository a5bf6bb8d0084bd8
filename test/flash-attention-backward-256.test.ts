// The FlashAttention backward at head dim 256 (packages/kernels/src/attention/backward-wide.ts's
// main kernel between backward.ts's pre- and postprocessing) on the simulator, with no hazard
// report: dQ, dK and dV against float64 gradients (examples/flash_attention_backward.ts's
// referenceGradients, within its gradientBound, the hd 64/128 tests' bound) from O and LSE of
// test/util/attention-reference.ts's float64 forward (not a forward run: the backward is what is
// tested) at seq 128: causal with GQA (2 query heads on 1 KV head) through attentionBackward, and
// no mask; a packed varlen batch (checkFlashAttentionBackwardVarlen) with a window bounded on both
// sides that hides every key from some queries and every query from some keys (those gradient
// rows exactly 0), a sequence with no queries, the scratch tensors starting as NaN; and ptxas -v
// on its PTX: no spills. Each step of the kernel is about a quarter of a second of simulation on
// a 2-core machine, so the cases are few and small; the GPU cases are in
// test/gpu/flash-attention-backward.test.ts and test/gpu/kernels-attention.test.ts.
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import {
  backwardScratch,
  compile,
  sim,
  tensor,
  type DeviceTensor,
  type FlashAttentionSizes,
} from "tirx-ts";
import {
  checkFlashAttentionBackwardVarlen,
  makeFlashAttentionBackward,
} from "../examples/flash_attention_backward.js";
import {
  attentionBackwardErrors,
  type AttentionCase,
  type BackwardInputs,
} from "./util/attention-reference.js";
import { ptxasUsage } from "./util/flash-attention-sim.js";
import { findPtxas } from "./util/ptxas.js";

const dev = sim();

/**
 * The backward of case `c` at head dim 256 on the simulator (its three kernels, or
 * attentionBackward with `library`) against float64 gradients (attentionBackwardErrors): each
 * tensor's worst error as a fraction of its bound (at most 1 passes), and the count of elements
 * of rows that see no key (dQ) or no query (dK, dV), which must be exactly 0 (Infinity when one
 * is not).
 */
function backward256(
  c: AttentionCase,
  library = false,
): { dq: number; dk: number; dv: number; unseen: number } {
  const made: DeviceTensor[] = [];
  const kernelsRun = ({ q, k, v, dO, o, lse }: BackwardInputs) => {
    const s: FlashAttentionSizes = {
      ...c,
      headDim: 256,
      ...(c.causal ? { causal: true } : {}),
      ...(c.window ? { window: c.window } : {}),
    };
    const kernels = makeFlashAttentionBackward(s);
    const shapes = backwardScratch(kernels);
    const [delta, lse2, dQacc] = [shapes.Delta, shapes.LSE2, shapes.dQacc].map((x) =>
      tensor.zeros([...x.shape], x.dtype, dev),
    ) as unknown as [DeviceTensor, DeviceTensor, DeviceTensor];
    const g = {
      dq: tensor.zeros(q.shape, c.dtype, dev),
      dk: tensor.zeros(k.shape, c.dtype, dev),
      dv: tensor.zeros(k.shape, c.dtype, dev),
    };
    const cuda = { target: "cuda" } as const;
    compile(kernels.preprocess, cuda)(o, dO, lse, delta, lse2, dQacc);
    compile(kernels.main, cuda)(q, k, v, dO, lse2, delta, dQacc, g.dk, g.dv);
    compile(kernels.postprocess, cuda)(dQacc, g.dq);
    made.push(delta, lse2, dQacc);
    return g;
  };
  const r = attentionBackwardErrors(c, dev, library ? {} : { run: kernelsRun });
  for (const t of [...Object.values(r.inputs), ...Object.values(r.grads), ...made]) t.dispose();
  return { dq: r.dq, dk: r.dk, dv: r.dv, unseen: r.unseen };
}

/** Each tensor's worst error within the bound (a fraction ≤ 1). */
const within = (w: { dq: number; dk: number; dv: number }) =>
  expect(
    [w.dq, w.dk, w.dv].every((x) => x <= 1),
    JSON.stringify(w),
  ).toBe(true);

const BASE: AttentionCase = {
  batch: 1,
  heads: 2,
  kvHeads: 2,
  seqQ: 128,
  seqK: 128,
  headDim: 256,
  dtype: "float16",
};

describe("flash_attention backward, head dim 256", () => {
  it("attentionBackward: causal, GQA (2 query heads on 1 KV head), float16: within the bound", () => {
    within(backward256({ ...BASE, kvHeads: 1, causal: true }, true));
  });

  it("no mask, bfloat16: within the bound", () => {
    within(backward256({ ...BASE, heads: 1, kvHeads: 1, dtype: "bfloat16" }));
  });

  it("varlen: [70, 0, 58] queries on [90, 30, 40] keys, window [20, -10] (bottom-right per sequence), bfloat16: within the bound; unseen rows exactly 0", () => {
    // Query i of a sequence sees keys i + lenK − lenQ − 20 … i + lenK − lenQ − 10. Sequence 0
    // (shift 20): every query sees keys, keys 80-89 no query; its second key tile holds its keys
    // 64-89, then sequences 1's and 2's (masked). Sequence 1 has no queries (dK = dV = 0, its one
    // key tile runs no step). Sequence 2 (shift −18): queries 0-27 see no key, keys 30-39 no
    // query; its second key tile exits at once.
    const r = checkFlashAttentionBackwardVarlen(
      dev,
      {
        batch: 3,
        heads: 1,
        seqQ: 128,
        seqK: 160,
        headDim: 256,
        dtype: "bfloat16",
        window: [20, -10],
        varlen: { maxSeqQ: 70, maxSeqK: 90 },
      },
      [70, 0, 58],
      [90, 30, 40],
    );
    expect(r.ok, r.summary).toBe(true);
    // dQ: sequence 2's 28 rows; dK and dV: sequence 0's 10 keys, 1's 30 and 2's 10.
    expect(r.summary).toContain(`${(28 + 2 * 50) * 256} elements of unseen rows exactly 0`);
  });

  const ptxas = findPtxas();
  it.skipIf(ptxas === undefined)(
    "ptxas -v (sm_90a): no spills, dense causal GQA and varlen with a window; 168 registers at launch (384 threads), setmaxnreg 24 / 240",
    () => {
      const sizes: FlashAttentionSizes[] = [
        { ...BASE, headDim: 256, heads: 8, seqQ: 1024, seqK: 1024, causal: true },
        {
          batch: 3,
          heads: 4,
          kvHeads: 2,
          seqQ: 1000,
          seqK: 1200,
          headDim: 256,
          dtype: "bfloat16",
          window: [100, 20],
          varlen: { maxSeqQ: 500, maxSeqK: 600 },
        },
      ];
      for (const s of sizes) {
        const ptx = compileToPtx(makeFlashAttentionBackward(s).main, { arch: "sm_90a" }).text;
        expect(ptx).toMatch(/setmaxnreg\.dec\.sync\.aligned\.u32 24;/);
        expect(ptx).toMatch(/setmaxnreg\.inc\.sync\.aligned\.u32 240;/);
        expect(ptx).toMatch(/cp\.reduce\.async\.bulk\.global\.shared::cta\.bulk_group\.add\.f32/);
        expect(ptxasUsage(ptxas!, ptx), JSON.stringify(s)).toEqual({
          registers: 168,
          spillStores: 0,
          spillLoads: 0,
        });
      }
    },
  );
});
