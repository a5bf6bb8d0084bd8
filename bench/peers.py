"""Peer baselines for bench/compute.ts, on the GPU: torch.matmul, a Triton fused row softmax and a
Triton matmul. Needs python3 with torch and triton (written against torch 2.11, triton 3.6).

Prints one JSON line per measurement (other lines are informational):
  {"bench", "variant", "median_us", "flops" | "traffic_bytes", "tflops" | "gbps", "max_err"}
Times are medians from triton.testing.do_bench (return_mode="median"; it flushes L2 between
calls). Every output is first compared with torch: max_err is the relative Frobenius error for
matmuls (against torch.matmul in float32) and the max absolute error for softmax (against
torch.softmax in float32).
Usage: python3 bench/peers.py
       python3 bench/peers.py --hopper 4096,8192   (bench/hopper.ts: C = A·Bᵀ, 16-bit in and out)
"""

import json

import torch
import triton
import triton.language as tl


def emit(**kw):
    print(json.dumps(kw), flush=True)


def bench_us(fn):
    return triton.testing.do_bench(fn, return_mode="median") * 1e3


# ---- softmax: one program per row, the whole row in registers (Triton tutorial 02's design) ----
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * n_cols + cols, y.to(tl.float16), mask=mask)


def triton_softmax(x, y):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    softmax_kernel[(rows,)](x, y, cols, BLOCK=block, num_warps=8 if block >= 4096 else 4)


# ---- grouped tile order (Triton tutorial 03's design): GROUP rows of output tiles per sweep ----
@triton.jit
def grouped_tile(pid, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    """The (row, column) of output tile `pid`, walking GROUP tile rows column by column."""
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP * grid_n
    first_m = (pid // per_group) * GROUP
    group_m = min(grid_m - first_m, GROUP)
    return first_m + (pid % per_group) % group_m, (pid % per_group) // group_m


# ---- matmul: fp16 in, fp32 accumulate and out; grouped tile order (Triton tutorial 03's design) ----
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BM, BN, GROUP)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * K + rk[None, :]
    b = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0),
                      tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0))
        a += BK
        b += BK * N
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)


def triton_matmul(a, b, c):
    M, K = a.shape
    _, N = b.shape
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    matmul_kernel[grid](a, b, c, M, N, K, BM=128, BN=128, BK=64, GROUP=8, num_warps=8, num_stages=3)


def rel_frobenius(got, ref):
    return (torch.linalg.norm(got.float() - ref) / torch.linalg.norm(ref)).item()


def main():
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(7)
    print(f"peers: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, triton {triton.__version__}")

    for n in (2048, 4096):
        a = torch.rand((n, n), generator=gen, device=dev, dtype=torch.float32).mul_(2).sub_(1).half()
        b = torch.rand((n, n), generator=gen, device=dev, dtype=torch.float32).mul_(2).sub_(1).half()
        ref = a.float() @ b.float()
        err = rel_frobenius(torch.matmul(a, b), ref)
        us = bench_us(lambda: torch.matmul(a, b))
        flops = 2 * n * n * n
        emit(bench="gemm", variant=f"torch.matmul fp16 (fp16 out) {n}³", median_us=us, flops=flops,
             tflops=flops / us / 1e6, max_err=err)
        if n == 2048:
            c = torch.empty((n, n), device=dev, dtype=torch.float32)
            triton_matmul(a, b, c)
            err = rel_frobenius(c, ref)
            us = bench_us(lambda: triton_matmul(a, b, c))
            emit(bench="gemm", variant=f"Triton matmul fp16 (fp32 out) {n}³", median_us=us, flops=flops,
                 tflops=flops / us / 1e6, max_err=err)

    rows, cols = 8192, 8192
    x = (torch.rand((rows, cols), generator=gen, device=dev, dtype=torch.float32) * 16 - 8).half()
    y = torch.empty_like(x)
    triton_softmax(x, y)
    err = (y.float() - torch.softmax(x.float(), dim=1)).abs().max().item()
    us = bench_us(lambda: triton_softmax(x, y))
    traffic = 2 * 2 * rows * cols
    emit(bench="softmax", variant="Triton fused softmax", median_us=us, traffic_bytes=traffic,
         gbps=traffic / us / 1e3, max_err=err)
    us = bench_us(lambda: torch.softmax(x, dim=1))
    emit(bench="softmax", variant="torch.softmax fp16", median_us=us, traffic_bytes=traffic,
         gbps=traffic / us / 1e3)


# ---- Hopper GEMM peers (bench/hopper.ts): C = A·Bᵀ with A (M × K), B (N × K) row-major, f16/bf16 out ----
@triton.jit
def matmul_nt_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BM, BN, GROUP)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * K + rk[None, :]
    b = b_ptr + rn[None, :] * K + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK
        b += BK
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


def triton_matmul_nt(a, b, c, bm, bn, bk, warps, stages):
    M, K = a.shape
    N = b.shape[0]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_nt_kernel[grid](a, b, c, M, N, K, BM=bm, BN=bn, BK=bk, GROUP=8, num_warps=warps,
                           num_stages=stages)


def hopper(sizes):
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(7)
    print(f"peers: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, triton {triton.__version__}")
    for n in sizes:
        for dt, name in ((torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
            a = torch.rand((n, n), generator=gen, device=dev, dtype=torch.float32).mul_(2).sub_(1).to(dt)
            b = torch.rand((n, n), generator=gen, device=dev, dtype=torch.float32).mul_(2).sub_(1).to(dt)
            ref = a.float() @ b.float().T
            flops = 2 * n * n * n
            err = rel_frobenius(torch.matmul(a, b.T), ref)
            us = bench_us(lambda: torch.matmul(a, b.T))
            emit(bench="gemm_hopper", variant="torch.matmul (A·Bᵀ)", dtype=name, size=n, median_us=us,
                 flops=flops, tflops=flops / us / 1e6, max_err=err)
            c = torch.empty((n, n), device=dev, dtype=dt)
            best = None
            for cfg in ((128, 256, 64, 8, 3), (128, 128, 64, 8, 4)):
                triton_matmul_nt(a, b, c, *cfg)
                e = rel_frobenius(c, ref)
                t = bench_us(lambda: triton_matmul_nt(a, b, c, *cfg))
                if best is None or t < best[0]:
                    best = (t, e, cfg)
            t, e, cfg = best
            emit(bench="gemm_hopper", variant=f"Triton matmul (BM,BN,BK,warps,stages={cfg})", dtype=name,
                 size=n, median_us=t, flops=flops, tflops=flops / t / 1e6, max_err=e)


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--hopper":
        hopper([int(x) for x in sys.argv[2].split(",")])
    else:
        main()
