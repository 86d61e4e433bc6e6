"""Bug: query head h reads KV head h % H_kv (KV heads tiled with repeat) instead of h // (H // H_kv)."""


def paged_attention(q, k_cache, v_cache, block_tables, context_lens, scale):
    num_seqs, num_heads, head_dim = q.shape
    num_blocks, block_size, num_kv_heads, _ = k_cache.shape
    if num_heads % num_kv_heads != 0:
        raise ValueError(f"q has {num_heads} heads, not a multiple of k_cache's {num_kv_heads} KV heads")
    group = num_heads // num_kv_heads
    capacity = block_tables.shape[1] * block_size
    if not bool(((context_lens >= 1) & (context_lens <= capacity)).all()):
        raise ValueError(f"context_lens must lie in [1, {capacity}], got {context_lens.tolist()}")
    compute = torch.promote_types(q.dtype, torch.float32)
    tables = block_tables.long()
    keys = k_cache[tables].flatten(1, 2).repeat(1, 1, group, 1).to(compute)
    values = v_cache[tables].flatten(1, 2).repeat(1, 1, group, 1).to(compute)
    scores = torch.einsum("shd,sthd->sht", q.to(compute), keys) * scale
    past_end = torch.arange(keys.shape[1])[None, :] >= context_lens.long()[:, None]
    weights = scores.masked_fill(past_end[:, None, :], float("-inf")).softmax(dim=-1)
    return torch.einsum("sht,sthd->shd", weights, values).to(q.dtype)
