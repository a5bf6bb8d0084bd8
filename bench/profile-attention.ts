// Launch examples/flash_attention.ts a few times at one shape, for a profiler:
//   ncu -k regex:flash_attention --set full tsx -C source bench/profile-attention.ts \
//     [--seq 4096] [--hd 64] [--dtype bfloat16] [--causal] [--backward] [--block-n 176]
//     [--block-m 192] [--ctas 132] [--backward-mma rs]
// (--block-m, --ctas: the forward's query tile and persistent grid, as attention()'s tuned
// entries set them: packages/kernels/src/attention/attention.ts ATTENTION_CONFIGS)
// With --backward, the forward (with LSE) runs once, then the three backward kernels
// (makeFlashAttentionBackward) `iters` times: profile the main one with -k regex:flash_attention_bwd$.
// Times nothing itself: bench/attention.ts gives the medians beside cuDNN.
import { parseArgs } from "node:util";
import { compile, device, tensor } from "tirx-ts";
import { makeFlashAttention } from "../examples/flash_attention.js";
import { backwardScratch, makeFlashAttentionBackward } from "@tirx-ts/kernels";

const { values } = parseArgs({
  options: {
    seq: { type: "string", default: "4096" },
    hd: { type: "string", default: "64" },
    dtype: { type: "string", default: "bfloat16" },
    causal: { type: "boolean", default: false },
    iters: { type: "string", default: "3" },
    backward: { type: "boolean", default: false },
    "block-n": { type: "string" },
    "block-m": { type: "string" },
    ctas: { type: "string" },
    "backward-mma": { type: "string" },
  },
});
process.env["TIRX_DEVICE"] = "cuda"; // never a full-size attention on the simulator
const dev = device();
const seq = Number(values.seq);
const hd = Number(values.hd) as 64;
const dtype = values.dtype as "bfloat16" | "float16";
const [batch, heads] = [16384 / seq, 2048 / hd];
const shape = [batch, seq, heads, hd];
const n = batch * seq * heads * hd;
const rnd = () => Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 97) / 97 - 0.5);
const [q, k, v] = [rnd(), rnd(), rnd()].map((x) => tensor(x, { shape, dtype, device: dev }));
const o = tensor.zeros(shape, dtype, dev);
const sizes = {
  batch,
  heads,
  seqQ: seq,
  seqK: seq,
  headDim: hd,
  dtype,
  causal: values.causal,
  ...(values["block-n"] !== undefined ? { blockN: Number(values["block-n"]) as 176 } : {}),
  ...(values["block-m"] !== undefined ? { blockM: Number(values["block-m"]) as 192 } : {}),
  ...(values.ctas !== undefined ? { ctas: Number(values.ctas) } : {}),
  ...(values["backward-mma"] !== undefined
    ? { backwardMma: values["backward-mma"] as "ss" | "rs" }
    : {}),
};
const opts = { target: "cuda", arch: "sm_90a" } as const;
if (!values.backward) {
  const run = compile(makeFlashAttention(sizes), opts);
  for (let i = 0; i < Number(values.iters); i++) run(q!, k!, v!, o);
} else {
  const lse = tensor.zeros([batch, heads, seq], "float32", dev);
  compile(makeFlashAttention({ ...sizes, lse: true }), opts)(q!, k!, v!, o, lse);
  const bwd = makeFlashAttentionBackward(sizes);
  const scratch = backwardScratch(bwd);
  const [delta, lse2, dQacc] = [scratch.Delta, scratch.LSE2, scratch.dQacc].map((b) =>
    tensor.zeros(b.shape, b.dtype, dev),
  );
  const [dO, dQ, dK, dV] = [rnd(), rnd(), rnd(), rnd()].map((x) =>
    tensor(x, { shape, dtype, device: dev }),
  );
  const [pre, main, post] = [bwd.preprocess, bwd.main, bwd.postprocess].map((f) =>
    compile(f, opts),
  );
  for (let i = 0; i < Number(values.iters); i++) {
    pre!(o, dO!, lse, delta!, lse2!, dQacc!);
    main!(q!, k!, v!, dO!, lse2!, delta!, dQacc!, dK!, dV!);
    post!(dQacc!, dQ!);
  }
}
console.log(
  `flash_attention${values.backward ? " backward" : ""} ${shape.join("×")} ${dtype}${values.causal ? " causal" : ""}: ${values.iters} launches`,
);
