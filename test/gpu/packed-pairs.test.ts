// Packed pairs end to end on the GPU: a kernel loads float16x2 / bfloat16x2 pairs through
// view_as over 16-bit float tensors, chains pack, cvt, fma, add, max and unpack, and stores pairs
// and lanes back through views; the GPU's output bytes must equal the simulator's, a NaN lane
// matching any NaN (PTX leaves NaN payloads unspecified). Each op alone, over edge and random lane
// codes, is in the ops differential (test/gpu/ops-differential.test.ts). Skipped, with the reason
// printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { T, compile, cuda, cudaAvailable, sim, tensor } from "tirx-ts";
import { prng } from "../diff/values.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/packed-pairs: skipped, no CUDA driver (${probe.reason})`);

const N = 4096;

/** Y[2i], Y[2i+1] = max(fma(a, b, c) + pack(a.hi, b.lo), b) per lane; Z[i] = its lane 1. */
function chain(lane: "float16" | "bfloat16") {
  const pair = lane === "float16" ? "float16x2" : "bfloat16x2";
  return T.function(
    `pairs_${lane}`,
    {
      A: T.Tensor([2 * N], lane),
      B: T.Tensor([2 * N], lane),
      F: T.Tensor([2 * N], "float32"),
      Y: T.Tensor([2 * N], lane),
      Z: T.Tensor([N], lane),
    },
    ({ A, B, F, Y, Z }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: N / 256, block: 256 }) });
      const i = T.let_("i", T.cuda.block_idx("x").mul(256).add(T.cuda.thread_idx("x")));
      const a = T.let_("a", A.view_as(pair).get([i]));
      const b = T.let_("b", B.view_as(pair).get([i]));
      const c = T.let_("c", T.ptx.x2.cvt(F.get([i.mul(2).add(1)]), F.get([i.mul(2)]), pair));
      const p = T.let_("p", T.ptx.pack(T.ptx.unpack(a, 1), T.ptx.unpack(b, 0)));
      const y = T.let_("y", T.ptx.x2.max(T.ptx.x2.add(T.ptx.x2.fma(a, b, c), p), b));
      Y.view_as(pair).set([i], y);
      Z.set([i], T.ptx.unpack(y, 1));
    },
  );
}

/** Random lane codes: every 16-bit pattern is a value of the format (NaNs, ±inf, subnormals). */
function codes(seed: number, n: number): Uint8Array {
  const rnd = prng(seed);
  return Uint8Array.from({ length: 2 * n }, () => Math.floor(rnd() * 256));
}

/** True when 16-bit codes `x` and `y` are equal or both NaN in `lane`'s format. */
function sameCode(x: number, y: number, lane: "float16" | "bfloat16"): boolean {
  const nan = (c: number): boolean =>
    lane === "float16"
      ? (c & 0x7c00) === 0x7c00 && (c & 0x3ff) !== 0
      : (c & 0x7f80) === 0x7f80 && (c & 0x7f) !== 0;
  return x === y || (nan(x) && nan(y));
}

describe.skipIf(!probe.ok)("packed pairs: GPU against the simulator", () => {
  it.each(["float16", "bfloat16"] as const)("%s pairs through views and a chain of ops", (lane) => {
    const fn = chain(lane);
    const a = codes(1, 2 * N);
    const b = codes(2, 2 * N);
    const rnd = prng(3);
    const f = Float32Array.from({ length: 2 * N }, () => (rnd() - 0.5) * 2 ** (rnd() * 40 - 20));
    const outs: Uint8Array[][] = [];
    for (const dev of [cuda(0), sim()]) {
      const ts = [
        tensor(a, { shape: [2 * N], dtype: lane, device: dev }),
        tensor(b, { shape: [2 * N], dtype: lane, device: dev }),
        tensor(f, { shape: [2 * N], dtype: "float32", device: dev }),
        tensor.zeros([2 * N], lane, dev),
        tensor.zeros([N], lane, dev),
      ] as const;
      compile(fn, { target: "cuda", arch: "sm_90" })(...ts);
      outs.push([ts[3].toBytes(), ts[4].toBytes()]);
      for (const t of ts) t.dispose();
    }
    const differ: string[] = [];
    for (const k of [0, 1]) {
      const g = new Uint16Array(outs[0]![k]!.buffer.slice(0));
      const s = new Uint16Array(outs[1]![k]!.buffer.slice(0));
      for (let i = 0; i < g.length && differ.length < 8; i++) {
        if (!sameCode(g[i]!, s[i]!, lane)) {
          differ.push(
            `${k === 0 ? "Y" : "Z"}[${i}]: GPU ${g[i]!.toString(16)}, simulator ${s[i]!.toString(16)}`,
          );
        }
      }
    }
    console.log(`packed pairs ${lane} on ${cuda(0).name}: ${differ.length} differences`);
    expect(differ, differ.join("\n")).toEqual([]);
  });
});
