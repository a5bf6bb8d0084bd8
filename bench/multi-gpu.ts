// Multi-GPU benchmark plan (not runnable without several GPUs and NCCL; run with --dry-run it
// prints what it would run, which is what it does everywhere else today):
// - all-reduce of bfloat16, 256 KiB .. 4 MiB and 256 MiB per GPU: tirx-ts's in-kernel one-shot
//   and two-shot all-reduce (examples/multi_gpu/allreduce.ts, T.nvshmem on symmetric tensors,
//   the direct path: one VA range of per-GPU slices, runtime-cuda's SymmetricTensor) against
//   NCCL's ncclAllReduce (runtime-cuda's NcclComm) on the same GPUs;
// - all-gather + GEMM, M = N = K = 8192 (A sharded by rows over P GPUs, bfloat16): tirx-ts's
//   overlapped kernel (examples/multi_gpu/allgather_gemm.ts's design) against PyTorch's NCCL
//   all-gather then torch.matmul (bench/multi_gpu_peers.py in a python3 subprocess per rank,
//   torchrun-style env).
// Every process it starts gets MULTI_GPU_ENV (NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1,
// TORCH_SYMM_MEM_DISABLE_MULTICAST=1): the machines must not create multicast objects, and
// nothing here calls cuMulticastCreate.
// Usage: npx tsx bench/multi-gpu.ts [--gpus N] [--dry-run]
import { MULTI_GPU_ENV } from "@tirx-ts/runtime-cuda";

/** One timed case of the plan. */
export interface MultiGpuCase {
  readonly kind: "allreduce" | "allgather_gemm";
  /** Bytes per GPU (all-reduce), or the GEMM's M = N = K. */
  readonly size: number;
  readonly dtype: "bfloat16";
  /** What runs on each side. */
  readonly tirx: string;
  readonly peer: string;
}

/** Sizes of the all-reduce cases in bytes per GPU. */
export const ALLREDUCE_BYTES: readonly number[] = [
  256 << 10,
  512 << 10,
  1 << 20,
  2 << 20,
  4 << 20,
  256 << 20,
];

/** The plan for `gpus` GPUs. */
export function multiGpuPlan(gpus: number): MultiGpuCase[] {
  const cases: MultiGpuCase[] = ALLREDUCE_BYTES.map((bytes) => ({
    kind: "allreduce",
    size: bytes,
    dtype: "bfloat16",
    // One-shot below 1 MiB (latency), two-shot above (bandwidth), as NCCL's own choice of LL/ring.
    tirx: `${bytes < 1 << 20 ? "one_shot" : "two_shot"} all-reduce kernel on ${gpus} GPUs (symmetric staging, shards padded to the 2 MiB granularity)`,
    peer: `ncclAllReduce(sum) on ${gpus} GPUs, one process (ncclCommInitAll + group)`,
  }));
  cases.push({
    kind: "allgather_gemm",
    size: 8192,
    dtype: "bfloat16",
    tirx: `all-gather of A's row blocks (put_signal per 128-row tile) overlapped with the wgmma GEMM, M = N = K = 8192 on ${gpus} GPUs`,
    peer: `python3 bench/multi_gpu_peers.py: torch.distributed all_gather_into_tensor (NCCL) then torch.matmul, ${gpus} ranks`,
  });
  return cases;
}

/** The environment of every process the bench starts. */
export function benchEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ...MULTI_GPU_ENV };
}

function main(): void {
  const args = process.argv.slice(2);
  const g = args.indexOf("--gpus");
  const gpus = g >= 0 ? Number(args[g + 1]) : 8;
  Object.assign(process.env, MULTI_GPU_ENV);
  console.log(
    `multi-GPU bench plan for ${gpus} GPUs (environment: ${Object.entries(MULTI_GPU_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")})`,
  );
  for (const c of multiGpuPlan(gpus)) {
    const size = c.kind === "allreduce" ? `${c.size >> 10} KiB/GPU` : `M=N=K=${c.size}`;
    console.log(`  ${c.kind} ${c.dtype} ${size}\n    tirx-ts: ${c.tirx}\n    peer:    ${c.peer}`);
  }
  console.log(
    "not run: the GPU side of the tirx-ts kernels (launching one module per GPU on a SymmetricTensor) is not wired into compile() yet; this prints the plan only",
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();
