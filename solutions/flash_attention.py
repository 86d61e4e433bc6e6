"""Model answer for flash_attention: tiled attention with an online softmax (FlashAttention-2 order),
the memory and the HBM traffic it saves, and the same algorithm as a Triton kernel."""
import functools
import math

import torch


def _check_arguments(q, k, v, causal, block_q, block_k) -> None:
    """Raise ValueError, naming the argument, for inputs outside the contract."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            raise ValueError(f"{name} must be a tensor [B, H, T, D], got {getattr(t, 'shape', type(t).__name__)}")
    if k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"q {list(q.shape)}, k {list(k.shape)}, v {list(v.shape)} do not fit together")
    if causal and q.shape[2] > k.shape[2]:
        raise ValueError(f"causal needs Tq <= Tk, got q with Tq={q.shape[2]} and k with Tk={k.shape[2]}")
    if block_q < 1:
        raise ValueError(f"block_q must be >= 1, got {block_q}")
    if block_k < 1:
        raise ValueError(f"block_k must be >= 1, got {block_k}")


def _causal_mask(rows, cols, tq, tk):
    """[len(rows), len(cols)] bool: query i may see key j iff j <= i + (tk - tq) (bottom-right aligned, as
    FlashAttention >= 2.1 and torch's causal_lower_right; sdpa's is_causal=True is top-left)."""
    return cols[None, :] <= rows[:, None] + (tk - tq)


def _online_softmax_step(s, vb, m, l, acc):
    """Fold one score tile s [B, H, bq, bk] and its values vb into the running max m, sum l and output acc."""
    m_new = torch.maximum(m, s.amax(dim=-1))  # m_new: [B, H, bq]
    alpha = torch.exp(m - m_new)  # rescales the sums taken under the old max
    p = torch.exp(s - m_new[..., None])  # p: [B, H, bq, bk], every entry <= 1
    return m_new, alpha * l + p.sum(dim=-1), alpha[..., None] * acc + p @ vb


def _logsumexp(m, l):
    """Natural-log logsumexp of each row from its max m and l = sum(exp(s - m))."""
    return m + torch.log(l)


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    """Softmax attention computed one [block_q, block_k] score tile at a time; returns (o, lse)."""
    _check_arguments(q, k, v, causal, block_q, block_k)
    acc_dtype = torch.promote_types(q.dtype, torch.float32)
    tq, tk, d = q.shape[2], k.shape[2], q.shape[3]
    o = torch.empty_like(q)  # o: [B, H, Tq, D]
    lse = torch.empty(q.shape[:3], dtype=acc_dtype, device=q.device)  # lse: [B, H, Tq]

    for q0 in range(0, tq, block_q):
        qb = q[:, :, q0:q0 + block_q].to(acc_dtype) / math.sqrt(d)  # qb: [B, H, bq, D], pre-scaled
        rows = torch.arange(q0, q0 + qb.shape[2], device=q.device)
        m = torch.full(qb.shape[:3], -math.inf, dtype=acc_dtype)  # running row max: [B, H, bq]
        l = torch.zeros_like(m)  # running sum of exp(s - m): [B, H, bq]
        acc = torch.zeros_like(qb)  # running sum of exp(s - m) @ v: [B, H, bq, D]
        # With causal masking, keys after the tile's last row's last visible key are masked for every row.
        k_end = min(tk, q0 + len(rows) + tk - tq) if causal else tk

        for k0 in range(0, k_end, block_k):
            kb = k[:, :, k0:k0 + block_k].to(acc_dtype)  # kb: [B, H, bk, D]
            vb = v[:, :, k0:k0 + block_k].to(acc_dtype)  # vb: [B, H, bk, D]
            s = qb @ kb.transpose(-1, -2)  # s: [B, H, bq, bk]
            if causal:
                cols = torch.arange(k0, k0 + kb.shape[2], device=q.device)
                s = s.masked_fill(~_causal_mask(rows, cols, tq, tk), -math.inf)
            m, l, acc = _online_softmax_step(s, vb, m, l, acc)

        assert torch.isfinite(m).all(), "every query sees key 0, so every row has a finite max"
        o[:, :, q0:q0 + block_q] = (acc / l[..., None]).to(q.dtype)
        lse[:, :, q0:q0 + block_q] = _logsumexp(m, l)
    return o, lse


def _positive(**sizes) -> None:
    """Raise ValueError naming the first size below 1."""
    for name, value in sizes.items():
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


def attention_memory_bytes(tq, tk, d, block_q, block_k, dtype_bytes=4):
    """Intermediate storage per (batch, head): the full [tq, tk] scores versus one tile and one query block's
    float32 state (output accumulator [block_q, d], running max and sum [block_q] each)."""
    _positive(tq=tq, tk=tk, d=d, block_q=block_q, block_k=block_k, dtype_bytes=dtype_bytes)
    return {
        "naive_scores": tq * tk * dtype_bytes,
        "tiled_scores": block_q * block_k * dtype_bytes,
        "tiled_state": block_q * (d + 2) * 4,
    }


def attention_hbm_bytes(n, d, block_q, dtype_bytes=2):
    """HBM traffic of one head's forward pass: S, P and O each round-trip through HBM in the naive pass; the
    tiled pass reads Q once, K and V once per query block, and writes O and the float32 lse."""
    _positive(n=n, d=d, block_q=block_q, dtype_bytes=dtype_bytes)
    passes_over_kv = -(-n // block_q)
    return {
        "naive": 4 * n * (d + n) * dtype_bytes,  # QK->S: 2nd + n^2; S->P: 2n^2; PV->O: n^2 + 2nd
        "tiled": 2 * n * d * (1 + passes_over_kv) * dtype_bytes + 4 * n,
    }


@functools.cache
def _fwd_kernel():
    """The Triton forward kernel, defined on first use so that this module imports fast and without Triton."""
    import triton
    import triton.language as tl

    @triton.jit
    def _attention_fwd_kernel(Q, K, V, O, LSE, TQ, TK, D, scale,
                              CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                              BLOCK_D: tl.constexpr):
        """One program: BLOCK_M query rows of one (batch, head); contiguous [B*H, T, D] inputs."""
        start_m = tl.program_id(0) * BLOCK_M
        bh = tl.program_id(1)
        rows = start_m + tl.arange(0, BLOCK_M)  # [BLOCK_M]
        cols_d = tl.arange(0, BLOCK_D)  # [BLOCK_D]
        row_ok = rows < TQ
        d_ok = cols_d < D
        q = tl.load(Q + bh * TQ * D + rows[:, None] * D + cols_d[None, :],
                    mask=row_ok[:, None] & d_ok[None, :], other=0.0)  # q: [BLOCK_M, BLOCK_D]

        m = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
        last = rows + (TK - TQ)  # last key each query may see when causal
        if CAUSAL:
            end_n = tl.minimum(TK, start_m + BLOCK_M + TK - TQ)  # later keys are in every row's future
        else:
            end_n = TK
        for start_n in range(0, end_n, BLOCK_N):
            keys = start_n + tl.arange(0, BLOCK_N)  # [BLOCK_N]
            kv_mask = (keys < TK)[:, None] & d_ok[None, :]
            k = tl.load(K + bh * TK * D + keys[:, None] * D + cols_d[None, :], mask=kv_mask, other=0.0)
            v = tl.load(V + bh * TK * D + keys[:, None] * D + cols_d[None, :], mask=kv_mask, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale  # s: [BLOCK_M, BLOCK_N], float32
            visible = (keys < TK)[None, :]
            if CAUSAL:
                visible = visible & (keys[None, :] <= last[:, None])
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))  # finite: key 0 is in the first tile and visible to all rows
            alpha = tl.exp(m - m_new)
            p = tl.exp(s - m_new[:, None])
            l = alpha * l + tl.sum(p, 1)
            acc = alpha[:, None] * acc + tl.dot(p.to(v.dtype), v)
            m = m_new

        tl.store(O + bh * TQ * D + rows[:, None] * D + cols_d[None, :], (acc / l[:, None]).to(O.dtype.element_ty),
                 mask=row_ok[:, None] & d_ok[None, :])
        tl.store(LSE + bh * TQ + rows, m + tl.log(l), mask=row_ok)

    return _attention_fwd_kernel


def flash_attention_triton(q, k, v, causal=False):
    """tiled_attention's contract as one Triton kernel launch; returns (o, lse)."""
    import triton

    _check_arguments(q, k, v, causal, 1, 1)
    n_batch, n_heads, tq, d = q.shape
    tk = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)  # o: [B, H, Tq, D]
    lse = torch.empty(n_batch, n_heads, tq, dtype=torch.float32, device=q.device)  # lse: [B, H, Tq]
    block_m, block_n = 64, 64
    grid = (triton.cdiv(tq, block_m), n_batch * n_heads)
    _fwd_kernel()[grid](q, k, v, o, lse, tq, tk, d, 1.0 / math.sqrt(d), CAUSAL=causal,
                        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=max(16, triton.next_power_of_2(d)))
    return o, lse
