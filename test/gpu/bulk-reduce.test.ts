// Real-GPU run of the bulk reduction (PTX ISA, cp.reduce.async.bulk.global.shared::cta.bulk_group):
// four CTAs each reduce a shared tile into one global buffer. Values are chosen so that every
// order of the sums is exact, so the GPU (whose order among CTAs is unspecified) must give the
// host reference exactly, as the simulator does. Skipped (with the reason printed) where there is
// no driver.
import { describe, expect, it } from "vitest";
import { verify, type DType } from "@tirx-ts/core";
import { cuda, cudaAvailable, cudaTensor } from "@tirx-ts/runtime-cuda";
import { runSim, simTensor } from "@tirx-ts/runtime-sim";
import { compile } from "tirx-ts";
import { CTAS, N, bulkReduceKernel } from "../kernels/bulk-reduce.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/bulk-reduce: skipped, ${available.reason}`);

interface Case {
  op: string;
  dtype: DType;
  input: number[];
  init: number[];
  want: (init: number, column: number[]) => number;
}

const CASES: Case[] = [
  {
    op: "add.f32",
    dtype: "float32",
    input: Array.from({ length: CTAS * N }, (_, i) => ((i * 37) % 23) - 11 + (i % 3) * 0.5),
    init: Array.from({ length: N }, (_, i) => (i % 7) - 3),
    want: (v, col) => col.reduce((s, x) => s + x, v),
  },
  {
    op: "max.s32",
    dtype: "int32",
    input: Array.from({ length: CTAS * N }, (_, i) => ((i * 7919) % 2001) - 1000),
    init: Array.from({ length: N }, (_, i) => (i % 5) * 100 - 200),
    want: (v, col) => Math.max(v, ...col),
  },
  {
    op: "add.noftz.bf16",
    dtype: "bfloat16",
    // Integers below 2^8 in magnitude, sums too: exact in bfloat16 in any order.
    input: Array.from({ length: CTAS * N }, (_, i) => ((i * 13) % 31) - 15),
    init: Array.from({ length: N }, (_, i) => (i % 9) - 4),
    want: (v, col) => col.reduce((s, x) => s + x, v),
  },
];

describe.skipIf(!available.ok)("cp.reduce.async.bulk on the GPU", () => {
  for (const c of CASES) {
    it(`${c.op}: ${CTAS} CTAs reduce into one buffer, the GPU's sums equal the simulator's and the reference`, () => {
      const eb = c.dtype === "bfloat16" ? 2 : 4;
      const fn = bulkReduceKernel({ op: c.op, dtype: c.dtype, chunkBytes: N * eb });
      const want = c.init.map((v, i) =>
        c.want(
          v,
          Array.from({ length: CTAS }, (_, k) => c.input[k * N + i]!),
        ),
      );
      const s = [
        simTensor(c.input, { shape: [CTAS, N], dtype: c.dtype }),
        simTensor(c.init, { shape: [N], dtype: c.dtype }),
        simTensor(new Array<number>(CTAS).fill(0), { shape: [CTAS], dtype: c.dtype }),
      ];
      expect(runSim(verify(fn), s).reports).toEqual([]);
      expect(Array.from(s[1]!.toArray() as ArrayLike<number>)).toEqual(want);
      const dev = cuda(0);
      const run = compile(fn, { target: "cuda" });
      expect(run.ptx).toContain(`cp.reduce.async.bulk.global.shared::cta.bulk_group.${c.op}`);
      using In = cudaTensor(c.input, { shape: [CTAS, N], dtype: c.dtype, device: dev });
      using Out = cudaTensor(c.init, { shape: [N], dtype: c.dtype, device: dev });
      using Probe = cudaTensor(new Array<number>(CTAS).fill(0), {
        shape: [CTAS],
        dtype: c.dtype,
        device: dev,
      });
      run(In, Out, Probe);
      expect(Array.from(Out.toArray() as ArrayLike<number>)).toEqual(want);
    });
  }
});
