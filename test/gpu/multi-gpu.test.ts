// Multi-GPU host side on real GPUs (skipped, with the reason printed, without a driver, with
// fewer than 2 GPUs or without NCCL): NCCL's all-reduce, all-gather and reduce-scatter on tirx
// tensors, one process driving every GPU (ncclCommInitAll + a group), against sums computed
// here; a symmetric tensor's slices mapped on every GPU (the direct path's memory): each PE's
// slice written on its GPU reads back through the one pointer; T.nvshmem kernels launched on 2
// GPUs with compile(fn).launchAll: both examples of examples/multi_gpu/ (one-shot and two-shot
// all-reduce, all-gather + GEMM) against the host's exact results, and barrier_all's counter
// barrier over 8 CTAs in 4 rounds, launched twice (the counters persist). The process keeps
// NVLink SHARP off (MULTI_GPU_ENV: NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1,
// TORCH_SYMM_MEM_DISABLE_MULTICAST=1).
import { describe, expect, it } from "vitest";
import { compile } from "@tirx-ts/runtime";
import {
  cuda,
  cudaAvailable,
  cudaTensor,
  cudaZeros,
  driver,
  NcclComm,
  nccl,
  ncclEnvironment,
  SymmetricTensor,
  symmetricGranularity,
  symmetricShard,
} from "@tirx-ts/runtime-cuda";
import { checkAllreduceOnGpus } from "../../examples/multi_gpu/allreduce.js";
import { checkAllgatherGemmOnGpus } from "../../examples/multi_gpu/allgather_gemm.js";
import { exchangeMismatches, makeBarrierExchange } from "../util/barrier-exchange.js";

ncclEnvironment();

/** Why the file skips, or undefined when it runs. */
function skipReason(): string | undefined {
  const a = cudaAvailable();
  if (!a.ok) return a.reason;
  const n = driver().deviceCount();
  if (n < 2) return `${n} GPU (2 or more needed)`;
  try {
    nccl();
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}

const reason = skipReason();
if (reason) console.log(`test/gpu/multi-gpu: skipped, ${reason}`);
const P = reason ? 0 : Math.min(driver().deviceCount(), 4);
const devices = Array.from({ length: P }, (_, i) => i);

/** Rank r's element i: small integers, exact in float32 sums. */
const x = (r: number, i: number): number => ((r * 13 + i * 5) % 17) - 8;

describe.skipIf(reason !== undefined)("NCCL collectives on tirx tensors", () => {
  it("all-reduce, all-gather and reduce-scatter of float32 match the host's sums", () => {
    const n = 4096;
    const comms = NcclComm.initAll(devices);
    try {
      const send = devices.map((d) =>
        cudaTensor(
          Array.from({ length: n }, (_, i) => x(d, i)),
          { shape: [n], dtype: "float32", device: cuda(d) },
        ),
      );
      const sum = devices.map((d) => cudaZeros([n], "float32", cuda(d)));
      const gathered = devices.map((d) => cudaZeros([P * n], "float32", cuda(d)));
      const scattered = devices.map((d) => cudaZeros([n / P], "float32", cuda(d)));
      NcclComm.group(() => comms.forEach((c, r) => c.allReduce(send[r]!, sum[r]!, "sum")));
      NcclComm.group(() => comms.forEach((c, r) => c.allGather(send[r]!, gathered[r]!)));
      NcclComm.group(() =>
        comms.forEach((c, r) => c.reduceScatter(send[r]!, scattered[r]!, "sum")),
      );
      devices.forEach((d) => cuda(d).synchronize());
      const want = Array.from({ length: n }, (_, i) => devices.reduce((s, r) => s + x(r, i), 0));
      for (const r of devices) {
        expect(Array.from(sum[r]!.toArray() as ArrayLike<number>)).toEqual(want);
        expect(Array.from(gathered[r]!.toArray() as ArrayLike<number>)).toEqual(
          devices.flatMap((q) => Array.from({ length: n }, (_, i) => x(q, i))),
        );
        expect(Array.from(scattered[r]!.toArray() as ArrayLike<number>)).toEqual(
          want.slice((r * n) / P, ((r + 1) * n) / P),
        );
      }
    } finally {
      for (const c of comms) c.destroy();
    }
  });
});

describe.skipIf(reason !== undefined)("symmetric tensors (the direct path's memory)", () => {
  it("each PE's slice, written on its GPU, reads back through the one pointer on every GPU", () => {
    cuda(0).activate();
    const g = Math.max(...devices.map((d) => symmetricGranularity(d)));
    const shard = g / 4; // float32 elements of one granule
    const sym = SymmetricTensor.allocate(devices, [shard], "float32");
    try {
      for (const q of devices) {
        const v = Float32Array.from({ length: shard }, (_, i) => x(q, i));
        driver().memcpyHtoD(sym.slicePtr(q), new Uint8Array(v.buffer));
      }
      for (const q of devices) {
        const back = new Uint8Array(shard * 4);
        driver().memcpyDtoH(back, sym.slicePtr(q));
        expect(Array.from(new Float32Array(back.buffer))).toEqual(
          Array.from({ length: shard }, (_, i) => x(q, i)),
        );
      }
    } finally {
      sym.dispose();
    }
  });
});

describe.skipIf(reason !== undefined)("T.nvshmem kernels on 2 GPUs (compile(fn).launchAll)", () => {
  it.each([
    ["one_shot", "bfloat16"],
    ["one_shot", "float32"],
    ["two_shot", "bfloat16"],
    ["two_shot", "float32"],
  ] as const)(
    "examples/multi_gpu/allreduce %s %s: every PE's sum equals the host's",
    (kind, dtype) => {
      const r = checkAllreduceOnGpus(kind, { pes: 2, n: 4096, dtype }, [0, 1]);
      expect(r.ok, r.summary).toBe(true);
    },
  );

  it("examples/multi_gpu/allgather_gemm: every PE's C equals the host's product", () => {
    const r = checkAllgatherGemmOnGpus({ pes: 2, mp: 64, k: 64, n: 64 }, [0, 1]);
    expect(r.ok, r.summary).toBe(true);
  });

  it("barrier_all over 8 CTAs in 4 rounds orders each PE's stores before the other's reads, twice", () => {
    const g = Math.max(symmetricGranularity(0), symmetricGranularity(1));
    const shard = symmetricShard([4 * 8 * 128], "float32", g)[0]!;
    const s = { pes: 2, ctas: 8, threads: 128, rounds: 4, shard };
    const f = compile(makeBarrierExchange(s));
    const X = SymmetricTensor.allocate([0, 1], [shard], "float32").zero();
    const Out = SymmetricTensor.allocate([0, 1], [shard], "float32").zero();
    try {
      for (let launch = 0; launch < 2; launch++) {
        f.launchAll([0, 1], X, Out);
        for (const p of [0, 1]) {
          const got = Out.slice(p, 0, [4 * 8 * 128]).toArray() as ArrayLike<number>;
          expect(exchangeMismatches(s, p, got), `launch ${launch}, PE ${p}`).toBe(0);
        }
        Out.zero();
      }
    } finally {
      X.dispose();
      Out.dispose();
    }
  });
});
