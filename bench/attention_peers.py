"""Peers of bench/attention.ts on the GPU: torch SDPA with the cuDNN backend, torch SDPA with the
flash backend, and the Triton FlashAttention-2 kernels of bench/attention_triton.py, forward and
backward. Needs python3 with torch and triton (written against torch 2.11, triton 3.6).

Usage: python3 bench/attention_peers.py PLAN.json [--dump DIR] [--no-time]
  PLAN.json (written by bench/attention.ts): {"seed", "cases": [{"dtype", "batch", "heads", "seq",
  "hd", "causal", "backward", "iters", "fwd_bound", "bwd_bound"}, ...]}
  --dump DIR: also write the inputs and the float32 reference rows there for the tirx-ts side
  --no-time:  only generate (and dump) inputs and references, time nothing

Inputs: Q, K, V, dO are normal(0, 1) float32 from a torch.Generator seeded with `seed` (on the
GPU), rounded to the case's dtype, laid out [batch, seq, heads, hd] contiguous (bshd); a case
reads the first batch·seq·heads·hd elements of each, so every case of one dtype and token count
shares one set of bits. The softmax scale is 1/sqrt(hd) (SDPA's default); causal masking is
top-left (seqQ == seqK).

Checks, before timing, against float32 references (torch SDPA, math backend, float32 matmuls
without TF32) on sampled rows: up to 3 (batch, head) pairs × ~17 sequence positions.
  forward:  per sampled row, max |o - ref| / max |ref| over the row ≤ fwd_bound
  backward: per gradient (dQ, dK, dV), max |g - ref| over the sampled rows / max |ref| over them
            ≤ bwd_bound (the reference backward runs on the whole (batch, head) slice)
Times: medians of `iters` CUDA-event-timed calls (one event pair per call) after 3 warm-ups and
warm-up calls for 0.3 s of wall time,
like timeLaunches of @tirx-ts/runtime-cuda. Backward times cover only the backward
(torch.autograd.grad on a retained graph; for Triton, its three kernels).

Prints one JSON line per record (other lines are informational):
  {"kind": "info", "gpu", "torch", "triton", "cudnn"}
  {"kind": "inputs", "dtype", "elements", "q", "k", "v", "do"}  (with --dump: raw 16-bit files)
  {"kind": "ref", <case>, "count", "index", "rows"}               (with --dump: int32 [count, 3]
      (batch, seq position, head) and float32 [count, hd] files)
  {"kind": "gref", <case>, "rows"}  (with --dump, backward cases: float32 [3, count, hd], the
      dQ, dK and dV references at the same rows)
  {"kind": "result", <case>, "variant", "median_us", "err" (null when not finite), "bound", "ok"} or
  {"kind": "result", <case>, "variant", "skipped": reason}
where <case> is "case" (the index in the plan), "dtype", "hd", "seq", "causal", and results have
"pass" ("forward" | "backward").
"""

import json
import time
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import attention_triton as at  # noqa: E402

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def emit(**kw):
    print(json.dumps(kw), flush=True)


WARM_S = 0.3


def time_us(fn, iters, warmup=3):
    # At least `warmup` calls, and calls for WARM_S of wall time: the GPU's clocks drop while it
    # idles (inputs made on the CPU, another process's build), and a few calls do not bring them
    # back (bench/attention.ts warms its kernels the same way).
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    end = time.perf_counter() + WARM_S
    while time.perf_counter() < end:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(iters)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) * 1e3 for s, e in ev)
    m = len(t) // 2
    return t[m] if len(t) % 2 else (t[m - 1] + t[m]) / 2


def reason(e):
    text = str(e).strip().split("\n")[0] or type(e).__name__
    return f"{type(e).__name__}: {text}"[:240]


def sample(b, h, s, seed):
    """The sampled (batch, head) pairs and sequence positions of a case."""
    pairs = sorted({(0, 0), (b - 1, h - 1), (b // 2, h // 2)})
    fixed = {0, 1, 2, 63, 64, 127, 128, s // 2 - 1, s // 2, s - 129, s - 128, s - 2, s - 1}
    g = torch.Generator().manual_seed(seed)
    rand = torch.randint(0, s, (4,), generator=g).tolist()
    rows = sorted(r for r in fixed.union(rand) if 0 <= r < s)
    return pairs, rows


def fwd_reference(q, k, v, pairs, rows, causal):
    """float32 O at (b, rows, h) for each pair: [len(pairs) · len(rows), hd]."""
    dev = q.device
    r = torch.tensor(rows, device=dev)
    out = []
    with sdpa_kernel([SDPBackend.MATH]):
        for b, h in pairs:
            qs = q[b, r, h, :].float()[None, None]
            ks = k[b, :, h, :].float()[None, None]
            vs = v[b, :, h, :].float()[None, None]
            mask = None
            if causal:
                mask = (torch.arange(k.shape[1], device=dev)[None, :] <= r[:, None])[None, None]
            out.append(F.scaled_dot_product_attention(qs, ks, vs, attn_mask=mask)[0, 0])
    return torch.cat(out)


def bwd_reference(q, k, v, do, pairs, rows, causal):
    """float32 (dQ, dK, dV) at (b, rows, h) for each pair, each [len(pairs) · len(rows), hd]."""
    r = torch.tensor(rows, device=q.device)
    grads = ([], [], [])
    with sdpa_kernel([SDPBackend.MATH]):
        for b, h in pairs:
            xs = [t[b, :, h, :].float().requires_grad_() for t in (q, k, v)]
            o = F.scaled_dot_product_attention(*(x[None, None] for x in xs), is_causal=causal)
            gs = torch.autograd.grad(o, xs, do[b, :, h, :].float()[None, None])
            for acc, g in zip(grads, gs):
                acc.append(g[r])
            del o, gs, xs
    return tuple(torch.cat(g) for g in grads)


def at_rows(t, pairs, rows):
    """Rows (b, rows, h) of a bshd tensor, in the order of the references, as float32."""
    r = torch.tensor(rows, device=t.device)
    return torch.cat([t[b, r, h, :].float() for b, h in pairs])


def fwd_err(got, ref):
    return ((got - ref).abs().amax(1) / ref.abs().amax(1)).max().item()


def bwd_err(got, ref):
    return max(((g - x).abs().max() / x.abs().max()).item() for g, x in zip(got, ref))


def main():
    args = sys.argv[1:]
    plan = json.load(open(args[0]))
    dump = args[args.index("--dump") + 1] if "--dump" in args else None
    timing = "--no-time" not in args
    dev = torch.device("cuda")
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    emit(kind="info", gpu=torch.cuda.get_device_name(dev), torch=torch.__version__,
         triton=at.triton.__version__, cudnn=torch.backends.cudnn.version())

    base = {}  # elements -> float32 [4, elements]: Q, K, V, dO
    inputs = {}  # (dtype, elements) -> the four 16-bit tensors

    def tensors(dtype, n):
        if n not in base:
            g = torch.Generator(device=dev).manual_seed(plan["seed"])
            base[n] = torch.randn((4, n), generator=g, device=dev, dtype=torch.float32)
        if (dtype, n) not in inputs:
            inputs[(dtype, n)] = [base[n][i].to(DTYPES[dtype]) for i in range(4)]
            if dump:
                files = {}
                for name, t in zip(("q", "k", "v", "do"), inputs[(dtype, n)]):
                    files[name] = os.path.join(dump, f"{name}-{dtype}-{n}.bin")
                    t.view(torch.int16).cpu().numpy().tofile(files[name])
                emit(kind="inputs", dtype=dtype, elements=n, **files)
        return inputs[(dtype, n)]

    for ci, c in enumerate(plan["cases"]):
        b, h, s, d, dtype, causal = c["batch"], c["heads"], c["seq"], c["hd"], c["dtype"], c["causal"]
        n = b * s * h * d
        q, k, v, do = (t.view(b, s, h, d) for t in tensors(dtype, n))
        scale = d ** -0.5
        pairs, rows = sample(b, h, s, plan["seed"] + ci)
        ref = fwd_reference(q, k, v, pairs, rows, causal)
        key = dict(case=ci, dtype=dtype, hd=d, seq=s, causal=causal)
        if dump:
            stem = os.path.join(dump, f"ref-{ci}")
            idx = torch.tensor([[bb, r, hh] for bb, hh in pairs for r in rows], dtype=torch.int32)
            idx.numpy().tofile(stem + "-index.bin")
            ref.cpu().numpy().tofile(stem + "-rows.bin")
            emit(kind="ref", **key, count=idx.shape[0], index=stem + "-index.bin",
                 rows=stem + "-rows.bin")
        gref = None
        if c["backward"]:
            try:
                gref = bwd_reference(q, k, v, do, pairs, rows, causal)
            except Exception as e:
                gref = e
            if dump and not isinstance(gref, Exception):
                torch.stack(gref).cpu().numpy().tofile(stem + "-grad.bin")
                emit(kind="gref", **key, rows=stem + "-grad.bin")
        if not timing:
            continue
        iters = c["iters"]

        def result(pass_, variant, fn_us=None, err=None, bound=None, skipped=None):
            rec = dict(kind="result", **key, variant=variant)
            rec["pass"] = pass_
            if skipped is not None:
                rec["skipped"] = skipped
            else:
                # JSON has no NaN: a non-finite error (an unwritten or overflowed output) is null
                rec.update(median_us=fn_us, err=err if math.isfinite(err) else None, bound=bound,
                           ok=bool(err <= bound))
            emit(**rec)

        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        fb = c["fwd_bound"]
        backends = (("torch SDPA cuDNN", SDPBackend.CUDNN_ATTENTION),
                    ("torch SDPA flash", SDPBackend.FLASH_ATTENTION))
        for name, backend in backends:
            try:
                with sdpa_kernel([backend]):
                    o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal).transpose(1, 2)
                    err = fwd_err(at_rows(o, pairs, rows), ref)
                    del o
                    us = time_us(lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal),
                                 iters)
                result("forward", name, us, err, fb)
            except Exception as e:  # a backend that refuses the case (or fails) is reported, not fatal
                result("forward", name, skipped=reason(e))
        o = torch.empty_like(q)
        lse = torch.empty((b * h, s), device=dev, dtype=torch.float32)
        best = None
        notes = []
        for cfg in at.FWD_CONFIGS.get(d, ()):
            try:
                at.attention_fwd(q, k, v, o, lse, causal, scale, cfg)
                err = fwd_err(at_rows(o, pairs, rows), ref)
                us = time_us(lambda: at.attention_fwd(q, k, v, o, lse, causal, scale, cfg), iters)
                if best is None or us < best[0]:
                    best = (us, err, cfg)
            except Exception as e:
                notes.append(f"{cfg}: {reason(e)}")
        if best:
            us, err, cfg = best
            result("forward", f"Triton FA2 (BM,BN,warps,stages={cfg})", us, err, fb)
        else:
            result("forward", "Triton FA2", skipped="; ".join(notes) or f"no config for hd {d}")

        if not c["backward"]:
            continue
        if isinstance(gref, Exception):
            for name in ("torch SDPA cuDNN", "torch SDPA flash", "Triton FA2"):
                result("backward", name, skipped=f"reference failed: {reason(gref)}")
            continue
        bb = c["bwd_bound"]
        dot = do.transpose(1, 2)
        for name, backend in backends:
            try:
                xs = [x.detach().requires_grad_() for x in (q, k, v)]
                with sdpa_kernel([backend]):
                    out = F.scaled_dot_product_attention(*(x.transpose(1, 2) for x in xs),
                                                         is_causal=causal)
                gs = torch.autograd.grad(out, xs, dot, retain_graph=True)
                err = bwd_err([at_rows(g, pairs, rows) for g in gs], gref)
                del gs
                us = time_us(lambda: torch.autograd.grad(out, xs, dot, retain_graph=True), iters)
                del out, xs
                result("backward", name, us, err, bb)
            except Exception as e:
                result("backward", name, skipped=reason(e))
        try:
            cfg = best[2] if best else at.FWD_CONFIGS[d][0]
            at.attention_fwd(q, k, v, o, lse, causal, scale, cfg)
            dq, dk, dv = (torch.empty_like(q) for _ in range(3))
            delta = torch.empty_like(lse)
            at.attention_bwd(q, k, v, o, do, lse, dq, dk, dv, delta, causal, scale)
            err = bwd_err([at_rows(g, pairs, rows) for g in (dq, dk, dv)], gref)
            us = time_us(
                lambda: at.attention_bwd(q, k, v, o, do, lse, dq, dk, dv, delta, causal, scale),
                iters)
            result("backward", f"Triton FA2 (M1,N1,M2,N2,warps,stages={at.BWD_CONFIG})", us, err, bb)
            del dq, dk, dv, delta
        except Exception as e:
            result("backward", "Triton FA2", skipped=reason(e))
        del o, lse
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
