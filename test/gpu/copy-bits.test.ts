// Copies move bits on the GPU and on the simulated device alike: a kernel that copies float
// elements global → shared → global (a Store of a bare load of its own dtype, so ld / st and no
// arithmetic) must leave NaN payloads, signaling NaNs, -0 and denormals as they were, bit for bit,
// on both. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { compile, cuda, cudaAvailable, sim, tensor } from "tirx-ts";
import type { DType, PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/copy-bits: skipped, no CUDA driver (${probe.reason})`);

/** A copy A → shared → B of `n` elements by 2 CTAs of 128 threads, element by element. */
function stagedCopy(dtype: DType, n: number): PrimFunc {
  return T.function(
    `copy_bits_${dtype}`,
    { A: T.Tensor([n], dtype), B: T.Tensor([n], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const s = T.alloc_shared([n / 2], dtype);
      for (const j of T.range(n / 256)) {
        s.set(
          [tid.add(j.mul(128))],
          A.get([
            cta
              .mul(n / 2)
              .add(tid)
              .add(j.mul(128)),
          ]),
        );
      }
      T.cuda.cta_sync();
      for (const j of T.range(n / 256)) {
        B.set(
          [
            cta
              .mul(n / 2)
              .add(tid)
              .add(j.mul(128)),
          ],
          s.get([tid.add(j.mul(128))]),
        );
      }
    },
  );
}

const WORDS: Record<string, number[]> = {
  // signaling NaN, quiet NaNs with payloads (both signs), -0, -inf, the smallest denormal.
  float32: [0x7f800001, 0x7fc01234, 0xffc00001, 0x80000000, 0xff800000, 0x00000001],
  float16: [0x7c01, 0x7e55, 0xfe01, 0x8000, 0xfc00, 0x0001],
  bfloat16: [0x7f81, 0x7fc5, 0xffc1, 0x8000, 0xff80, 0x0001],
};

describe.skipIf(!probe.ok)("copies move bits: GPU and simulator", () => {
  it.each(Object.keys(WORDS))("%s", (dtype) => {
    const n = 1024;
    const words = WORDS[dtype]!;
    const bits = dtype === "float32" ? new Uint32Array(n) : new Uint16Array(n);
    for (let i = 0; i < n; i++) bits[i] = words[i % words.length]!;
    const bytes = new Uint8Array(bits.buffer);
    const fn = stagedCopy(dtype as DType, n);
    const out: Uint8Array[] = [];
    for (const dev of [cuda(0), sim()]) {
      const a = tensor(bytes, { shape: [n], dtype: dtype as DType, device: dev });
      const b = tensor.zeros([n], dtype as DType, dev);
      compile(fn, { target: "cuda" })(a, b);
      out.push(b.toBytes());
      a.dispose();
      b.dispose();
    }
    const [gpu, simulated] = out;
    const same = (x: Uint8Array): number => x.reduce((c, v, i) => c + (v === bytes[i] ? 1 : 0), 0);
    console.log(
      `copy_bits ${dtype} on ${cuda(0).name}: ${same(gpu!)}/${n * bits.BYTES_PER_ELEMENT} bytes kept on the GPU, ${same(simulated!)} on the simulator`,
    );
    expect(Buffer.from(gpu!).equals(Buffer.from(bytes))).toBe(true);
    expect(Buffer.from(simulated!).equals(Buffer.from(bytes))).toBe(true);
  });
});
