// 8-bit T.vectorized loops (test/kernels/byte-vectors.ts: `.u32` words in `.v2`/`.v4` accesses,
// `.v2.u8`, and single bytes where the alignment is not provable) on the GPU and on the simulated
// device: every output must agree byte for byte, on edge and pseudo-random inputs. The
// simulator's outputs are checked against a host computation in test/byte-vectors-sim.test.ts.
// Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import type { DType, PrimFunc } from "@tirx-ts/core";
import { compile, cuda, cudaAvailable, sim, tensor, type DeviceLike } from "tirx-ts";
import {
  BYTE_COPY_SHAPES,
  BYTE_DTYPES,
  byteCopy,
  byteCopyLength,
  byteInputs,
  byteRegisters,
  byteStaged,
  byteWiden,
  int32Inputs,
  maskedSelect,
} from "../kernels/byte-vectors.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/byte-vectors: skipped, no CUDA driver (${probe.reason})`);

interface Case {
  readonly name: string;
  readonly fn: PrimFunc;
  readonly inputs: readonly { data: number[]; dtype: DType }[];
  readonly outputs: readonly { n: number; dtype: DType }[];
}

/** Every kernel of test/kernels/byte-vectors.ts, with inputs from two seeds each. */
function cases(): Case[] {
  const out: Case[] = [];
  for (const seed of [1, 2]) {
    for (const dtype of BYTE_DTYPES) {
      for (const s of BYTE_COPY_SHAPES) {
        const n = byteCopyLength(s);
        out.push({
          name: `copy ${dtype} ${JSON.stringify(s)} seed ${seed}`,
          fn: byteCopy(dtype, s),
          inputs: [{ data: byteInputs(dtype, n, seed * 1000 + s.w + s.stride), dtype }],
          outputs: [{ n, dtype }],
        });
      }
      for (const w of [16, 8, 4, 2]) {
        out.push({
          name: `staged ${dtype} x${w} seed ${seed}`,
          fn: byteStaged(dtype, w),
          inputs: [{ data: byteInputs(dtype, 32 * w, seed * 2000 + w), dtype }],
          outputs: [{ n: 32 * w, dtype }],
        });
      }
      out.push({
        name: `registers ${dtype} seed ${seed}`,
        fn: byteRegisters(dtype),
        inputs: [{ data: byteInputs(dtype, 512, seed * 5000), dtype }],
        outputs: [{ n: 512, dtype }],
      });
      out.push({
        name: `widen ${dtype} seed ${seed}`,
        fn: byteWiden(dtype, 16),
        inputs: [
          { data: byteInputs(dtype, 512, seed * 3000), dtype },
          { data: int32Inputs(512, seed * 3001), dtype: "int32" },
        ],
        outputs: [
          { n: 512, dtype: "float32" },
          { n: 512, dtype },
        ],
      });
    }
    out.push({
      name: `masked select seed ${seed}`,
      fn: maskedSelect(),
      inputs: [
        { data: byteInputs("bool", 164, seed * 4000), dtype: "bool" },
        { data: int32Inputs(128, seed * 4001).map((x) => x / 4096), dtype: "float32" },
      ],
      outputs: [{ n: 128, dtype: "float32" }],
    });
  }
  return out;
}

/** The outputs' bytes of `c` run on `dev`. */
function runOn(c: Case, dev: DeviceLike): Uint8Array[] {
  const ins = c.inputs.map((x) =>
    tensor(x.data, { shape: [x.data.length], dtype: x.dtype, device: dev }),
  );
  const outs = c.outputs.map((o) => tensor.zeros([o.n], o.dtype, dev));
  compile(c.fn, { target: "cuda" })(...ins, ...outs);
  const bytes = outs.map((o) => o.toBytes());
  for (const t of [...ins, ...outs]) t.dispose();
  return bytes;
}

describe.skipIf(!probe.ok)("8-bit vector accesses: GPU and simulator agree byte for byte", () => {
  const all = probe.ok ? cases() : [];
  it("reports what it checks", () => {
    console.log(`byte vectors on ${cuda(0).name}: ${all.length} kernels × inputs`);
    expect(all.length).toBe(2 * (BYTE_DTYPES.length * (BYTE_COPY_SHAPES.length + 6) + 1));
  });

  it.each(all.map((c) => [c.name, c] as const))("%s", (_, c) => {
    const gpu = runOn(c, cuda(0));
    const simulated = runOn(c, sim());
    gpu.forEach((g, k) => {
      const s = simulated[k]!;
      const differ: string[] = [];
      for (let i = 0; i < g.length && differ.length < 5; i++)
        if (g[i] !== s[i]) differ.push(`byte ${i}: GPU ${g[i]}, simulator ${s[i]}`);
      expect(differ, `output ${k}`).toEqual([]);
      expect(g.length).toBe(s.length);
    });
  });
});
