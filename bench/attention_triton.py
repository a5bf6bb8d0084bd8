"""FlashAttention-2-style attention in Triton, the Triton peer of bench/attention.ts.

Layout: Q, O [batch, seqQ, heads, hd] and K, V [batch, seqK, heads, hd] (bshd, last dim
contiguous, any other strides); seqQ == seqK; 16-bit in and out, float32 accumulation; causal
masking is top-left (query i sees keys j <= i), as torch SDPA's is_causal when seqQ == seqK.

Forward (FlashAttention-2, Dao 2023, Algorithm 1): one program per (BLOCK_M query rows, batch·head);
it streams K/V blocks of BLOCK_N rows, keeps the running row max m and row sum l in float32,
rescales the float32 accumulator by exp2(m_old - m_new) and adds P·V with P rounded to the input
dtype. Exponentials are base 2 with log2(e) folded into the scale. Causal: the blocks left of the
diagonal run unmasked, the diagonal block(s) masked, nothing right of them. It also writes
LSE = m + log2(l) (base 2, per row, float32 [batch·heads, seq]) for the backward.

Backward (FlashAttention-2, Algorithm 2, split into two kernels so no atomics are needed):
  preprocess: D_i = sum_k dO_ik · O_ik (float32 [batch·heads, seq]);
  dK/dV: one program per BLOCK_N1 key rows, looping over query blocks:
         Pᵀ = exp2(K·Qᵀ·scale·log2e - LSE), dV += Pᵀ·dO, dPᵀ = V·dOᵀ, dSᵀ = Pᵀ∘(dPᵀ - D),
         dK += dSᵀ·Q, finally dK *= scale;
  dQ:    one program per BLOCK_M2 query rows, looping over key blocks:
         dQ += dS·K with dS as above, finally dQ *= scale.
Sequence lengths must be multiples of the block sizes (128 covers every configuration here).
"""

import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_ks, stride_vs, lo, hi, offs_m, offs_n,
               qk_scale, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_ptrs + start_n * stride_ks)
        qk = tl.dot(q, tl.trans(k))
        if MASK:
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(keep, 0.0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + start_n * stride_vs)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _fwd_kernel(Q, K, V, O, LSE, qk_scale,
                stride_qb, stride_qs, stride_qh,
                stride_kb, stride_ks, stride_kh,
                stride_vb, stride_vs, stride_vh,
                stride_ob, stride_os, stride_oh,
                H, SEQ,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :])
    k_ptrs = K + b * stride_kb + h * stride_kh + offs_n[:, None] * stride_ks + offs_d[None, :]
    v_ptrs = V + b * stride_vb + h * stride_vh + offs_n[:, None] * stride_vs + offs_d[None, :]
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:
        # left of the diagonal: unmasked; the diagonal block: masked (BLOCK_M % BLOCK_N == 0)
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_ks, stride_vs,
                                   0, start_m * BLOCK_M, offs_m, offs_n, qk_scale, BLOCK_N, False)
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_ks, stride_vs,
                                   start_m * BLOCK_M, (start_m + 1) * BLOCK_M, offs_m, offs_n,
                                   qk_scale, BLOCK_N, True)
    else:
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_ks, stride_vs,
                                   0, SEQ, offs_m, offs_n, qk_scale, BLOCK_N, False)
    acc = acc / l_i[:, None]
    tl.store(LSE + bh * SEQ + offs_m, m_i + tl.math.log2(l_i))
    tl.store(O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :],
             acc.to(O.dtype.element_ty))


# (BLOCK_M, BLOCK_N, num_warps, num_stages) tried per head dim; the harness keeps the fastest.
FWD_CONFIGS = {
    64: ((128, 64, 4, 3), (128, 128, 8, 3)),
    128: ((128, 64, 8, 3), (128, 128, 8, 2)),
    256: ((64, 64, 4, 2), (128, 64, 8, 2)),
}


def attention_fwd(q, k, v, o, lse, causal, scale, cfg):
    """O = softmax(scale·Q·Kᵀ)·V into `o`, LSE (base 2) into `lse` (float32 [b·h, seq])."""
    b, s, h, d = q.shape
    bm, bn, warps, stages = cfg
    assert s % bm == 0 and bm % bn == 0 and k.shape[1] == s and d in (64, 128, 256)
    assert q.stride(3) == k.stride(3) == v.stride(3) == o.stride(3) == 1
    _fwd_kernel[(s // bm, b * h)](
        q, k, v, o, lse, scale * LOG2E,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        o.stride(0), o.stride(1), o.stride(2),
        h, s,
        HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=stages)


@triton.jit
def _bwd_preprocess(O, DO, DELTA, stride_b, stride_s, stride_h, H, SEQ,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    off = b * stride_b + h * stride_h + offs_m[:, None] * stride_s + offs_d[None, :]
    o = tl.load(O + off).to(tl.float32)
    do = tl.load(DO + off).to(tl.float32)
    tl.store(DELTA + bh * SEQ + offs_m, tl.sum(o * do, 1))


@triton.jit
def _dkdv_inner(dk, dv, k, v, q_ptrs, do_ptrs, stride_s, LSE, DELTA, lo, hi, offs_n, qk_scale,
                BLOCK_M1: tl.constexpr, MASK: tl.constexpr):
    offs_m0 = tl.arange(0, BLOCK_M1)
    for start_m in range(lo, hi, BLOCK_M1):
        start_m = tl.multiple_of(start_m, BLOCK_M1)
        offs_m = start_m + offs_m0
        q = tl.load(q_ptrs + start_m * stride_s)
        lse = tl.load(LSE + offs_m)
        pT = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])
        if MASK:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        do = tl.load(do_ptrs + start_m * stride_s)
        dv = tl.dot(pT.to(do.dtype), do, dv)
        delta = tl.load(DELTA + offs_m)
        dpT = tl.dot(v, tl.trans(do))
        dsT = pT * (dpT - delta[None, :])
        dk = tl.dot(dsT.to(q.dtype), q, dk)
    return dk, dv


@triton.jit
def _bwd_dkdv_kernel(Q, K, V, DO, DK, DV, LSE, DELTA, qk_scale, sm_scale,
                     stride_b, stride_s, stride_h, H, SEQ,
                     HEAD_DIM: tl.constexpr, BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr,
                     CAUSAL: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N1
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    base = b * stride_b + h * stride_h
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_d = tl.arange(0, HEAD_DIM)
    kv_off = base + offs_n[:, None] * stride_s + offs_d[None, :]
    k = tl.load(K + kv_off)
    v = tl.load(V + kv_off)
    q_ptrs = Q + base + tl.arange(0, BLOCK_M1)[:, None] * stride_s + offs_d[None, :]
    do_ptrs = DO + base + tl.arange(0, BLOCK_M1)[:, None] * stride_s + offs_d[None, :]
    lse_ptr = LSE + bh * SEQ
    delta_ptr = DELTA + bh * SEQ
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], tl.float32)
    if CAUSAL:
        # query rows start_n .. start_n + BLOCK_N1 straddle the diagonal; later ones see all keys
        dk, dv = _dkdv_inner(dk, dv, k, v, q_ptrs, do_ptrs, stride_s, lse_ptr, delta_ptr,
                             start_n, start_n + BLOCK_N1, offs_n, qk_scale, BLOCK_M1, True)
        dk, dv = _dkdv_inner(dk, dv, k, v, q_ptrs, do_ptrs, stride_s, lse_ptr, delta_ptr,
                             start_n + BLOCK_N1, SEQ, offs_n, qk_scale, BLOCK_M1, False)
    else:
        dk, dv = _dkdv_inner(dk, dv, k, v, q_ptrs, do_ptrs, stride_s, lse_ptr, delta_ptr,
                             0, SEQ, offs_n, qk_scale, BLOCK_M1, False)
    tl.store(DV + kv_off, dv.to(DV.dtype.element_ty))
    tl.store(DK + kv_off, (dk * sm_scale).to(DK.dtype.element_ty))


@triton.jit
def _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_s, lo, hi, offs_m, qk_scale,
              BLOCK_N2: tl.constexpr, MASK: tl.constexpr):
    offs_n0 = tl.arange(0, BLOCK_N2)
    for start_n in range(lo, hi, BLOCK_N2):
        start_n = tl.multiple_of(start_n, BLOCK_N2)
        k = tl.load(k_ptrs + start_n * stride_s)
        v = tl.load(v_ptrs + start_n * stride_s)
        p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])
        if MASK:
            p = tl.where(offs_m[:, None] >= (start_n + offs_n0)[None, :], p, 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    return dq


@triton.jit
def _bwd_dq_kernel(Q, K, V, DO, DQ, LSE, DELTA, qk_scale, sm_scale,
                   stride_b, stride_s, stride_h, H, SEQ,
                   HEAD_DIM: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
                   CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M2
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    base = b * stride_b + h * stride_h
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_d = tl.arange(0, HEAD_DIM)
    q_off = base + offs_m[:, None] * stride_s + offs_d[None, :]
    q = tl.load(Q + q_off)
    do = tl.load(DO + q_off)
    lse = tl.load(LSE + bh * SEQ + offs_m)
    delta = tl.load(DELTA + bh * SEQ + offs_m)
    k_ptrs = K + base + tl.arange(0, BLOCK_N2)[:, None] * stride_s + offs_d[None, :]
    v_ptrs = V + base + tl.arange(0, BLOCK_N2)[:, None] * stride_s + offs_d[None, :]
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], tl.float32)
    if CAUSAL:
        dq = _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_s, 0, start_m, offs_m,
                       qk_scale, BLOCK_N2, False)
        dq = _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_s, start_m,
                       start_m + BLOCK_M2, offs_m, qk_scale, BLOCK_N2, True)
    else:
        dq = _dq_inner(dq, q, do, lse, delta, k_ptrs, v_ptrs, stride_s, 0, SEQ, offs_m,
                       qk_scale, BLOCK_N2, False)
    tl.store(DQ + q_off, (dq * sm_scale).to(DQ.dtype.element_ty))


# (BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2, num_warps, num_stages): Triton tutorial 06's choice.
BWD_CONFIG = (32, 128, 128, 32, 4, 5)


def attention_bwd(q, k, v, o, do, lse, dq, dk, dv, delta, causal, scale, cfg=BWD_CONFIG):
    """dQ, dK, dV of O = softmax(scale·Q·Kᵀ)·V for the output gradient `do`, given the forward's
    `o` and `lse`. All 16-bit tensors share one bshd layout (same strides); `delta` is float32
    [b·h, seq] scratch."""
    b, s, h, d = q.shape
    m1, n1, m2, n2, warps, stages = cfg
    assert s % n1 == 0 and n1 % m1 == 0 and s % m2 == 0 and m2 % n2 == 0
    for t in (k, v, o, do, dq, dk, dv):
        assert t.shape == q.shape and t.stride() == q.stride()
    sb, ss, sh = q.stride(0), q.stride(1), q.stride(2)
    _bwd_preprocess[(s // 128, b * h)](o, do, delta, sb, ss, sh, h, s, HEAD_DIM=d, BLOCK_M=128)
    _bwd_dkdv_kernel[(s // n1, b * h)](
        q, k, v, do, dk, dv, lse, delta, scale * LOG2E, scale, sb, ss, sh, h, s,
        HEAD_DIM=d, BLOCK_M1=m1, BLOCK_N1=n1, CAUSAL=causal, num_warps=warps, num_stages=stages)
    _bwd_dq_kernel[(s // m2, b * h)](
        q, k, v, do, dq, lse, delta, scale * LOG2E, scale, sb, ss, sh, h, s,
        HEAD_DIM=d, BLOCK_M2=m2, BLOCK_N2=n2, CAUSAL=causal, num_warps=warps, num_stages=stages)
