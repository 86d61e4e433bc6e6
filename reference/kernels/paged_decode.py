"""Paged decode attention as a Triton kernel: one program per (sequence, query head).

Each program walks its sequence's block table one KV block at a time and keeps an online softmax (running max
`m`, running denominator `l`, rescaled accumulator `acc`), so it never holds more than one block of scores.
The math is that of `reference.paged_kv.paged_attention`; accumulation is float32 whatever the input dtype.
Runs on a GPU, or on CPU tensors under TRITON_INTERPRET=1 (set before this module is imported).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def paged_decode_kernel(
    q_ptr, k_ptr, v_ptr, tables_ptr, lens_ptr, out_ptr, scale,
    stride_qs, stride_qh,
    stride_kb, stride_kt, stride_kh,
    stride_ts,
    stride_os, stride_oh,
    GROUP: tl.constexpr, BLOCK_SIZE: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    kv_head = head // GROUP                      # GQA: query heads [g*GROUP, (g+1)*GROUP) read KV head g

    # The query row, padded to a power of two; padded lanes are 0 and contribute nothing to q . k.
    d = tl.arange(0, BLOCK_D)
    d_ok = d < HEAD_DIM
    q = tl.load(q_ptr + seq * stride_qs + head * stride_qh + d, mask=d_ok, other=0.0).to(tl.float32)

    context_len = tl.load(lens_ptr + seq)
    t = tl.arange(0, BLOCK_T)                    # slot offsets inside one KV block
    m = tl.full((), float("-inf"), tl.float32)   # running max of the scores
    l = tl.zeros((), tl.float32)                 # running sum of exp(score - m)
    acc = tl.zeros((BLOCK_D,), tl.float32)       # running sum of exp(score - m) * v

    for i in range(0, tl.cdiv(context_len, BLOCK_SIZE)):
        # 1. Look up the physical block that holds tokens [i*BLOCK_SIZE, (i+1)*BLOCK_SIZE).
        block = tl.load(tables_ptr + seq * stride_ts + i).to(tl.int64)
        valid = (t < BLOCK_SIZE) & (i * BLOCK_SIZE + t < context_len)   # the context may end mid-block
        offs = block * stride_kb + t[:, None] * stride_kt + kv_head * stride_kh + d[None, :]
        mask = valid[:, None] & d_ok[None, :]
        k = tl.load(k_ptr + offs, mask=mask, other=0.0).to(tl.float32)   # k: [BLOCK_T, BLOCK_D]
        v = tl.load(v_ptr + offs, mask=mask, other=0.0).to(tl.float32)   # v: [BLOCK_T, BLOCK_D]

        # 2. Scores of this block; slots past the context get -inf so they weigh exactly 0.
        scores = tl.sum(k * q[None, :], axis=1) * scale                   # scores: [BLOCK_T]
        scores = tl.where(valid, scores, float("-inf"))

        # 3. Online softmax: rescale what was accumulated under the old max, then add this block.
        m_new = tl.maximum(m, tl.max(scores, axis=0))
        alpha = tl.exp(m - m_new)
        p = tl.exp(scores - m_new)                                        # p: [BLOCK_T]
        l = l * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m = m_new

    out = acc / l
    tl.store(out_ptr + seq * stride_os + head * stride_oh + d, out.to(out_ptr.dtype.element_ty), mask=d_ok)


def paged_decode_attention(q, k_cache, v_cache, block_tables, context_lens, scale):
    """Launch the kernel: q [S, H, D], caches [N, B, H_kv, D], block_tables [S, M], context_lens [S] -> [S, H, D]."""
    num_seqs, num_heads, head_dim = q.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    assert num_heads % num_kv_heads == 0, "query heads must be a multiple of KV heads"
    assert k_cache.shape == v_cache.shape and k_cache.stride() == v_cache.stride()
    assert k_cache.stride(-1) == 1 and q.stride(-1) == 1, "the head dimension must be contiguous"
    assert int(context_lens.min()) >= 1, "every sequence needs at least one cached token"
    block_tables = block_tables.contiguous()
    out = torch.empty_like(q)
    paged_decode_kernel[(num_seqs, num_heads)](
        q, k_cache, v_cache, block_tables, context_lens.contiguous(), out, float(scale),
        q.stride(0), q.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        block_tables.stride(0),
        out.stride(0), out.stride(1),
        GROUP=num_heads // num_kv_heads, BLOCK_SIZE=block_size, HEAD_DIM=head_dim,
        BLOCK_T=triton.next_power_of_2(block_size), BLOCK_D=triton.next_power_of_2(head_dim),
    )
    return out
