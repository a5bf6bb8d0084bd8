// Launch examples/flash_attention.ts a few times at one shape, for a profiler:
//   ncu -k regex:flash_attention --set full tsx -C source bench/profile-attention.ts \
//     [--seq 4096] [--hd 64] [--dtype bfloat16] [--causal]
// Times nothing itself: bench/attention.ts gives the medians beside cuDNN.
import { parseArgs } from "node:util";
import { compile, device, tensor } from "tirx-ts";
import { makeFlashAttention } from "../examples/flash_attention.js";

const { values } = parseArgs({
  options: {
    seq: { type: "string", default: "4096" },
    hd: { type: "string", default: "64" },
    dtype: { type: "string", default: "bfloat16" },
    causal: { type: "boolean", default: false },
    iters: { type: "string", default: "3" },
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
const run = compile(
  makeFlashAttention({
    batch,
    heads,
    seqQ: seq,
    seqK: seq,
    headDim: hd,
    dtype,
    causal: values.causal,
  }),
  { target: "cuda", arch: "sm_90a" },
);
for (let i = 0; i < Number(values.iters); i++) run(q!, k!, v!, o);
console.log(
  `flash_attention ${shape.join("×")} ${dtype}${values.causal ? " causal" : ""}: ${values.iters} launches`,
);
