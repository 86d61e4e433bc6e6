"""FlashAttention-2 in Triton: a forward and a backward kernel pair behind a `torch.autograd.Function`.

Layout [B, H, T, D]; scale 1/sqrt(D); causal masking is bottom-right aligned (query i sees keys
j <= i + Tk - Tq), as when decoding with a cache. The forward returns the output and the natural-log
logsumexp of each score row, which is all the backward needs to recompute the probabilities tile by tile.

The kernels work in base 2: scores are multiplied by log2(e)/sqrt(D) once, so every exponential is an
`exp2`, and the stored lse is converted back to natural log. Accumulators are float32; probabilities are
rounded to the input dtype before they meet V (tensor-core inputs), as in FlashAttention-2.

On CPU they run under TRITON_INTERPRET=1 (set before this module is imported), except for bfloat16:
the interpreter does not support bfloat16 `tl.dot` (triton-lang/triton#11584).
"""
import math

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # log2(e): exp(x) = exp2(x * LOG2E)
LN2 = 0.6931471805599453  # ln(2): ln(x) = log2(x) * LN2
BLOCK_M = 64  # query rows per program
BLOCK_N = 64  # key rows per inner step


@triton.jit
def _fwd_kernel(Q, K, V, O, LSE,
                stride_qb, stride_qh, stride_qt, stride_kb, stride_kh, stride_kt,
                stride_vb, stride_vh, stride_vt, stride_ob, stride_oh, stride_ot,
                H, TQ, TK, HEAD_DIM, qk_scale,
                CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    """One program: BLOCK_M query rows of one (batch, head), streaming over key tiles."""
    # Step 1: locate this program's query rows and load its q tile once.
    start_m = tl.program_id(0) * BLOCK_M
    b = tl.program_id(1) // H
    h = tl.program_id(1) % H
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    m_ok = offs_m < TQ
    d_ok = offs_d < HEAD_DIM
    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qt + offs_d[None, :]
    q = tl.load(q_ptrs, mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]

    # Step 2: running max (base 2), running sum and output accumulator, all float32.
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)

    # Step 3: key tiles; with causal masking, stop after the last key the last row of the tile may see.
    shift = TK - TQ
    hi = TK
    if CAUSAL:
        hi = tl.minimum(TK, start_m + BLOCK_M + shift)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_ok = offs_n < TK
        kv_mask = n_ok[:, None] & d_ok[None, :]
        k = tl.load(K + b * stride_kb + h * stride_kh + offs_n[:, None] * stride_kt + offs_d[None, :],
                    mask=kv_mask, other=0.0)  # [BLOCK_N, BLOCK_D]
        v = tl.load(V + b * stride_vb + h * stride_vh + offs_n[:, None] * stride_vt + offs_d[None, :],
                    mask=kv_mask, other=0.0)  # [BLOCK_N, BLOCK_D]
        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_M, BLOCK_N], log2 units
        visible = n_ok[None, :]
        if CAUSAL:
            visible = visible & (offs_n[None, :] <= offs_m[:, None] + shift)
        s = tl.where(visible, s, float("-inf"))
        # Online softmax: the first tile holds key 0, visible to every row, so m_new is finite.
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)  # rescales what was accumulated under the old max
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    # Step 4: normalise and store o, and lse in natural log.
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_ot + offs_d[None, :]
    tl.store(o_ptrs, (acc / l_i[:, None]).to(O.dtype.element_ty), mask=m_ok[:, None] & d_ok[None, :])
    tl.store(LSE + (b * H + h) * TQ + offs_m, (m_i + tl.log2(l_i)) * LN2, mask=m_ok)


@triton.jit
def _bwd_dkdv_kernel(Q, K, V, DO, LSE, DELTA, DK, DV,
                     stride_qb, stride_qh, stride_qt, stride_kb, stride_kh, stride_kt,
                     H, TQ, TK, HEAD_DIM, qk_scale, sm_scale,
                     CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    """One program: dk and dv for BLOCK_N keys of one (batch, head), streaming over query tiles."""
    start_n = tl.program_id(0) * BLOCK_N
    b = tl.program_id(1) // H
    h = tl.program_id(1) % H
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    n_ok = offs_n < TK
    d_ok = offs_d < HEAD_DIM
    kv_mask = n_ok[:, None] & d_ok[None, :]
    k_off = b * stride_kb + h * stride_kh + offs_n[:, None] * stride_kt + offs_d[None, :]
    k = tl.load(K + k_off, mask=kv_mask, other=0.0)  # [BLOCK_N, BLOCK_D]
    v = tl.load(V + k_off, mask=kv_mask, other=0.0)  # [BLOCK_N, BLOCK_D]
    dk = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)

    # With causal masking, queries before start_n - shift see none of these keys.
    shift = TK - TQ
    lo = 0
    if CAUSAL:
        lo = tl.maximum(0, start_n - shift) // BLOCK_M * BLOCK_M
    for start_m in range(lo, TQ, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        m_ok = offs_m < TQ
        q_off = b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qt + offs_d[None, :]
        q = tl.load(Q + q_off, mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]
        do = tl.load(DO + q_off, mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]
        lse2 = tl.load(LSE + (b * H + h) * TQ + offs_m, mask=m_ok, other=0.0) * LOG2E
        delta = tl.load(DELTA + (b * H + h) * TQ + offs_m, mask=m_ok, other=0.0)
        # Recompute the probabilities of this tile from the saved logsumexp.
        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_M, BLOCK_N], log2 units
        visible = m_ok[:, None] & n_ok[None, :]
        if CAUSAL:
            visible = visible & (offs_n[None, :] <= offs_m[:, None] + shift)
        p = tl.where(visible, tl.exp2(s - lse2[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        dp = tl.dot(do, tl.trans(v))  # [BLOCK_M, BLOCK_N]
        ds = p * (dp - delta[:, None])  # softmax backward: dS = P * (dP - rowsum(dO * O))
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q)

    tl.store(DK + k_off, (dk * sm_scale).to(DK.dtype.element_ty), mask=kv_mask)
    tl.store(DV + k_off, dv.to(DV.dtype.element_ty), mask=kv_mask)


@triton.jit
def _bwd_dq_kernel(Q, K, V, DO, LSE, DELTA, DQ,
                   stride_qb, stride_qh, stride_qt, stride_kb, stride_kh, stride_kt,
                   H, TQ, TK, HEAD_DIM, qk_scale, sm_scale,
                   CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    """One program: dq for BLOCK_M queries of one (batch, head), streaming over key tiles."""
    start_m = tl.program_id(0) * BLOCK_M
    b = tl.program_id(1) // H
    h = tl.program_id(1) % H
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    m_ok = offs_m < TQ
    d_ok = offs_d < HEAD_DIM
    q_off = b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qt + offs_d[None, :]
    q = tl.load(Q + q_off, mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]
    do = tl.load(DO + q_off, mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_M, BLOCK_D]
    lse2 = tl.load(LSE + (b * H + h) * TQ + offs_m, mask=m_ok, other=0.0) * LOG2E
    delta = tl.load(DELTA + (b * H + h) * TQ + offs_m, mask=m_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)

    shift = TK - TQ
    hi = TK
    if CAUSAL:
        hi = tl.minimum(TK, start_m + BLOCK_M + shift)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_ok = offs_n < TK
        k_off = b * stride_kb + h * stride_kh + offs_n[:, None] * stride_kt + offs_d[None, :]
        k = tl.load(K + k_off, mask=n_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_N, BLOCK_D]
        v = tl.load(V + k_off, mask=n_ok[:, None] & d_ok[None, :], other=0.0)  # [BLOCK_N, BLOCK_D]
        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_M, BLOCK_N], log2 units
        visible = m_ok[:, None] & n_ok[None, :]
        if CAUSAL:
            visible = visible & (offs_n[None, :] <= offs_m[:, None] + shift)
        p = tl.where(visible, tl.exp2(s - lse2[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)

    tl.store(DQ + q_off, (dq * sm_scale).to(DQ.dtype.element_ty), mask=m_ok[:, None] & d_ok[None, :])


def _block_d(d: int) -> int:
    """The head-dim tile: a power of two, at least 16 (the smallest `tl.dot` operand)."""
    return max(16, triton.next_power_of_2(d))


class FlashAttention(torch.autograd.Function):
    """o, lse = FlashAttention.apply(q, k, v, causal); differentiable in q, k and v through o."""

    @staticmethod
    def forward(ctx, q, k, v, causal):
        """Launch one program per (query tile, batch*head); saves what the backward recomputes from."""
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        n_batch, n_heads, tq, d = q.shape
        tk = k.shape[2]
        assert k.shape == v.shape == (n_batch, n_heads, tk, d)
        o = torch.empty_like(q)  # o: [B, H, Tq, D]
        lse = torch.empty(n_batch, n_heads, tq, dtype=torch.float32, device=q.device)  # lse: [B, H, Tq]
        grid = (triton.cdiv(tq, BLOCK_M), n_batch * n_heads)
        _fwd_kernel[grid](q, k, v, o, lse, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
                          n_heads, tq, tk, d, LOG2E / math.sqrt(d),
                          CAUSAL=causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=_block_d(d))
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, do, _dlse):
        """dq from one kernel over query tiles, dk and dv from one over key tiles: no atomics needed."""
        q, k, v, o, lse = ctx.saved_tensors
        do = do.contiguous()
        n_batch, n_heads, tq, d = q.shape
        tk = k.shape[2]
        delta = (o.float() * do.float()).sum(-1)  # delta: [B, H, Tq], rowsum(dO * O)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        # All [B, H, T, D] tensors here are contiguous: do, dq and o share q's strides, v, dk and dv share k's.
        args = (*q.stride()[:3], *k.stride()[:3], n_heads, tq, tk, d, LOG2E / math.sqrt(d), 1.0 / math.sqrt(d))
        consts = dict(CAUSAL=ctx.causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=_block_d(d))
        _bwd_dkdv_kernel[(triton.cdiv(tk, BLOCK_N), n_batch * n_heads)](
            q, k, v, do, lse, delta, dk, dv, *args, **consts)
        _bwd_dq_kernel[(triton.cdiv(tq, BLOCK_M), n_batch * n_heads)](
            q, k, v, do, lse, delta, dq, *args, **consts)
        return dq, dk, dv, None


def flash_attention(q, k, v, causal=False):
    """(o, lse) for q [B, H, Tq, D] and k, v [B, H, Tk, D]; o is differentiable."""
    return FlashAttention.apply(q, k, v, causal)
