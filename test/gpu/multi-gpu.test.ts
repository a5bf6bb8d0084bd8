// Multi-GPU host side on real GPUs (skipped, with the reason printed, without a driver, with
// fewer than 2 GPUs or without NCCL): NCCL's all-reduce, all-gather and reduce-scatter on tirx
// tensors, one process driving every GPU (ncclCommInitAll + a group), against sums computed
// here; a symmetric tensor's slices mapped on every GPU (the direct path's memory): each PE's
// slice written on its GPU reads back through the one pointer. The process keeps NVLink SHARP
// off (MULTI_GPU_ENV: NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1,
// TORCH_SYMM_MEM_DISABLE_MULTICAST=1).
import { describe, expect, it } from "vitest";
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
} from "@tirx-ts/runtime-cuda";

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
