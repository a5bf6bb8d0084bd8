"""Peers of bench/gemm-sweep.ts on the GPU: torch.matmul (bf16), torch._scaled_mm (float8 e4m3 x
e4m3 with per-tensor scales, bf16 out; "fp8" its default accumulation, "fp8-fast" with
use_fast_accum=True) and torch's unfused bias + GELU (F.gelu(torch.addmm(bias,
a, b.T), approximate="tanh")). Needs python3 with torch (and triton: the timing helpers are
bench/attention_peers.py's).

Usage: python3 bench/gemm_peers.py PLAN.json
  PLAN.json (written by bench/gemm-sweep.ts): {"cases": [{"kind", "m", "n", "k", "iters"}, ...],
  "seeds": {"a", "b", "bias"}, "scales": [scale_a, scale_b]}

Inputs, the same bits as the tirx-ts side (bench/gemm-sweep-cases.ts inputValue): element i of a
tensor with seed s is (((i mod 251) * 37 + s) mod 251) / 128 - 1 in bf16, (((i mod 13) * 5 + s)
mod 16) / 8 - 1 in float8_e4m3fn (both exact). A is [m, k], B is [n, k] (both K-major: a @ b.T).

Prints one JSON line per record: {"kind": "info", "gpu", "torch"}, then per case
{"kind": "result", "case", "variant", "median_us"} or {"kind": "result", "case", "variant",
"skipped": reason}.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_peers import emit, reason, time_us  # noqa: E402

PEER = {
    "bf16": "torch.matmul",
    "fp8": "torch._scaled_mm",
    "fp8-fast": "torch._scaled_mm use_fast_accum",
    "bias-gelu": "torch gelu(addmm)",
}


def values(shape, seed, fp8, dev):
    n = 1
    for x in shape:
        n *= x
    i = torch.arange(n, device=dev, dtype=torch.int64)
    if fp8:
        v = ((i % 13) * 5 + seed) % 16
        return (v.to(torch.float32) / 8 - 1).to(torch.float8_e4m3fn).reshape(shape)
    v = ((i % 251) * 37 + seed) % 251
    return (v.to(torch.float32) / 128 - 1).to(torch.bfloat16).reshape(shape)


def main():
    plan = json.load(open(sys.argv[1]))
    dev = torch.device("cuda")
    emit(kind="info", gpu=torch.cuda.get_device_name(dev), torch=torch.__version__)
    seeds = plan["seeds"]
    sa, sb = plan["scales"]
    # The GPU is warmed up first (clocks, caches), as bench/gemm-sweep.ts does on its side: the
    # first cases ran up to 1.7x slower without it (16 x 4096 x 4096: 44.2 us, 26.7 us warm).
    x = torch.empty(1 << 26, device=dev, dtype=torch.float32)
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:
        x.zero_()
        torch.cuda.synchronize()
    del x
    for ci, c in enumerate(plan["cases"]):
        kind, m, n, k = c["kind"], c["m"], c["n"], c["k"]
        if kind not in PEER:
            continue  # fp8-block: its peer is tirx-ts's per-tensor fp8, timed by gemm-sweep.ts
        variant = PEER[kind]
        try:
            fp8 = kind in ("fp8", "fp8-fast")
            a = values((m, k), seeds["a"], fp8, dev)
            b = values((n, k), seeds["b"], fp8, dev)
            if fp8:
                scale_a = torch.tensor(sa, device=dev, dtype=torch.float32)
                scale_b = torch.tensor(sb, device=dev, dtype=torch.float32)
                fast = kind == "fp8-fast"
                fn = lambda: torch._scaled_mm(  # noqa: E731
                    a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16,
                    use_fast_accum=fast)
            elif kind == "bias-gelu":
                bias = values((n,), seeds["bias"], False, dev)
                fn = lambda: F.gelu(torch.addmm(bias, a, b.t()), approximate="tanh")  # noqa: E731
            else:
                fn = lambda: torch.matmul(a, b.t())  # noqa: E731
            emit(kind="result", case=ci, variant=variant, median_us=time_us(fn, c["iters"]))
            del a, b
        except Exception as e:  # noqa: BLE001
            emit(kind="result", case=ci, variant=variant, skipped=reason(e))
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
