"""Hidden reference for the flash_attention topic.

- `attention`: exact attention in float64 from the full score matrix, the oracle every check compares with;
  `scaled_scores` is that matrix (the checks also model the misconceptions from it).
- `tiled_attention`: the contract's tiled algorithm written for clarity, in FlashAttention-1 order (outer loop
  over key tiles, inner loop over query tiles, running statistics kept for every query). It follows the input
  dtype like a submission must, so its own low-precision error calibrates the checks' tolerances.
- `attention_memory_bytes`, `attention_hbm_bytes`: the storage and the HBM traffic of the two algorithms.
- `flash_attention_triton`: the Triton FlashAttention-2 kernels of `reference/kernels/flash_attention.py`.
"""
import math

import torch


def check_arguments(q, k, v, causal, block_q=1, block_k=1) -> None:
    """Raise ValueError, naming the argument, for inputs outside the contract."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            raise ValueError(f"{name} must be a 4-d tensor [B, H, T, D], got {getattr(t, 'shape', type(t))}")
    if k.shape != v.shape:
        raise ValueError(f"k and v must have the same shape, got {list(k.shape)} and {list(v.shape)}")
    if q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"q and k must agree in B, H and D, got {list(q.shape)} and {list(k.shape)}")
    if causal and q.shape[2] > k.shape[2]:
        raise ValueError(f"causal=True needs Tq <= Tk (every query sees a key), got Tq={q.shape[2]}, Tk={k.shape[2]}")
    for name, block in (("block_q", block_q), ("block_k", block_k)):
        if not isinstance(block, int) or block < 1:
            raise ValueError(f"{name} must be a positive int, got {block!r}")


def causal_mask(queries: torch.Tensor, keys: torch.Tensor, shift: int) -> torch.Tensor:
    """[len(queries), len(keys)] bool, True where query i may attend key j: j <= i + shift, shift = Tk - Tq.

    Bottom-right aligned, as FlashAttention >= 2.1 and torch's causal_lower_right; scaled_dot_product_attention's
    is_causal=True is top-left (shift 0)."""
    return keys[None, :] <= queries[:, None] + shift


def scaled_scores(q, k, causal=False):
    """[B, H, Tq, Tk] float64 scores q k^T / sqrt(D), -inf where the causal mask hides a key."""
    scores = q.double() @ k.double().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        tq, tk = q.shape[2], k.shape[2]
        scores = scores.masked_fill(~causal_mask(torch.arange(tq), torch.arange(tk), tk - tq), -math.inf)
    return scores


def attention(q, k, v, causal=False):
    """Exact (o, lse) in float64 from the full score matrix: the oracle."""
    check_arguments(q, k, v, causal)
    scores = scaled_scores(q, k, causal)  # [B, H, Tq, Tk]
    lse = torch.logsumexp(scores, dim=-1)  # [B, H, Tq]
    o = torch.exp(scores - lse[..., None]) @ v.double()  # [B, H, Tq, D]
    return o, lse


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    """(o, lse) from [block_q, block_k] score tiles and per-query running max and sum."""
    check_arguments(q, k, v, causal, block_q, block_k)
    acc = torch.promote_types(q.dtype, torch.float32)  # accumulation dtype
    n_batch, n_heads, tq, d = q.shape
    tk = k.shape[2]
    shift = tk - tq  # query i sees keys j <= i + shift when causal
    row_max = torch.full((n_batch, n_heads, tq), -math.inf, dtype=acc)
    row_sum = torch.zeros(n_batch, n_heads, tq, dtype=acc)
    out = torch.zeros(n_batch, n_heads, tq, d, dtype=acc)

    for k0 in range(0, tk, block_k):
        k1 = min(k0 + block_k, tk)
        k_tile = k[:, :, k0:k1].to(acc)
        v_tile = v[:, :, k0:k1]
        for q0 in range(0, tq, block_q):
            q1 = min(q0 + block_q, tq)
            if causal and k0 > q1 - 1 + shift:
                continue  # every key of this tile is in the future of every query of this tile
            scores = q[:, :, q0:q1].to(acc) @ k_tile.transpose(-1, -2) / math.sqrt(d)  # [B, H, bq, bk]
            if causal:
                visible = causal_mask(torch.arange(q0, q1), torch.arange(k0, k1), shift)
                scores = scores.masked_fill(~visible, -math.inf)

            old_max = row_max[:, :, q0:q1]
            new_max = torch.maximum(old_max, scores.amax(dim=-1))
            # Key 0 is visible to every query and comes in the first key tile, so the max is finite here.
            assert torch.isfinite(new_max).all()
            probs = torch.exp(scores - new_max[..., None])
            correction = torch.exp(old_max - new_max)  # what was summed under the old max, rescaled
            row_sum[:, :, q0:q1] = correction * row_sum[:, :, q0:q1] + probs.sum(dim=-1)
            # Round the probabilities to the input dtype before the PV product, as FlashAttention kernels do
            # for their tensor-core inputs; products and the sum stay in the accumulation dtype.
            pv = probs.to(v.dtype).to(acc) @ v_tile.to(acc)
            out[:, :, q0:q1] = correction[..., None] * out[:, :, q0:q1] + pv
            row_max[:, :, q0:q1] = new_max

    o = (out / row_sum[..., None]).to(q.dtype)
    lse = row_max + torch.log(row_sum)
    return o, lse


def require_sizes(**sizes) -> None:
    """Raise ValueError naming the first size that is not a positive int."""
    for name, value in sizes.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def attention_memory_bytes(tq, tk, d, block_q, block_k, dtype_bytes=4):
    """Intermediate storage of one (batch, head): the full [tq, tk] score matrix of naive attention versus one
    [block_q, block_k] score tile and one query block's float32 running state of the tiled algorithm."""
    require_sizes(tq=tq, tk=tk, d=d, block_q=block_q, block_k=block_k, dtype_bytes=dtype_bytes)
    accumulator = block_q * d  # the output rows of one query block, summed over key tiles
    running_max_and_sum = 2 * block_q  # m and l: one pair per query row
    return {
        "naive_scores": tq * tk * dtype_bytes,
        "tiled_scores": block_q * block_k * dtype_bytes,
        "tiled_state": (accumulator + running_max_and_sum) * 4,  # float32 whatever the input dtype
    }


def attention_hbm_bytes(n, d, block_q, dtype_bytes=2):
    """HBM bytes of one head's forward pass (n queries and keys): three kernels that each read their inputs
    from HBM and write their output back, against one tiled kernel that keeps scores on chip.

    The tiled count is FlashAttention-2's loop order (query blocks outside) in the paper's IO model: every read
    of K and V reaches HBM, none is served by L2."""
    require_sizes(n=n, d=d, block_q=block_q, dtype_bytes=dtype_bytes)
    matrix = n * d  # elements of Q, K, V or O
    scores = n * n  # elements of S or P
    scores_kernel = 2 * matrix + scores  # read Q and K, write S = Q K^T
    softmax_kernel = 2 * scores  # read S, write P = softmax(S)
    output_kernel = scores + 2 * matrix  # read P and V, write O = P V
    naive = (scores_kernel + softmax_kernel + output_kernel) * dtype_bytes

    query_blocks = math.ceil(n / block_q)
    q_once_and_o_once = 2 * matrix
    k_and_v_per_query_block = query_blocks * 2 * matrix
    lse = 4 * n  # one float32 per query, kept for the backward pass
    tiled = (q_once_and_o_once + k_and_v_per_query_block) * dtype_bytes + lse
    return {"naive": naive, "tiled": tiled}


def flash_attention_triton(q, k, v, causal=False):
    """(o, lse) from the reference Triton FlashAttention-2 forward kernel."""
    from reference.kernels.flash_attention import flash_attention

    check_arguments(q, k, v, causal)
    return flash_attention(q, k, v, causal)
