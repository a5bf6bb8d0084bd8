"""Peer of bench/multi-gpu.ts's all-gather + GEMM case: PyTorch's NCCL all-gather of A's row
blocks, then torch.matmul, M = N = K = 8192 bfloat16, timed with CUDA events (median of iters
after 3 warm-ups). One process per rank (torchrun); NVLink SHARP stays off: the environment sets
NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 before torch loads.

Usage: torchrun --nproc-per-node N bench/multi_gpu_peers.py [--size 8192] [--iters 20]
Prints one JSON line on rank 0: {"kind": "allgather_gemm", "ranks", "size", "ms"}.
"""
import json
import os
import sys

os.environ.update({"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1",
                   "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"})

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def main() -> None:
    args = sys.argv[1:]
    size = int(args[args.index("--size") + 1]) if "--size" in args else 8192
    iters = int(args[args.index("--iters") + 1]) if "--iters" in args else 20
    dist.init_process_group("nccl")
    rank, ranks = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    g = torch.Generator(device="cuda").manual_seed(1234 + rank)
    a = torch.randn(size // ranks, size, generator=g, device="cuda").to(torch.bfloat16)
    b = torch.randn(size, size, generator=g, device="cuda").to(torch.bfloat16)
    full = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)

    def step() -> torch.Tensor:
        dist.all_gather_into_tensor(full, a)
        return torch.matmul(full, b)

    for _ in range(3):
        step()
    times = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    if rank == 0:
        print(json.dumps({"kind": "allgather_gemm", "ranks": ranks, "size": size,
                          "ms": times[len(times) // 2]}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
