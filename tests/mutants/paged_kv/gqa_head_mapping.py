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
    out = torch.empty(num_seqs, num_heads, head_dim, dtype=compute)
    for s, length in enumerate(context_lens.tolist()):
        blocks = block_tables[s, :-(-length // block_size)].long()
        keys = k_cache[blocks].flatten(0, 1)[:length].repeat(1, group, 1).to(compute)
        values = v_cache[blocks].flatten(0, 1)[:length].repeat(1, group, 1).to(compute)
        scores = torch.einsum("hd,lhd->hl", q[s].to(compute), keys) * scale
        out[s] = torch.einsum("hl,lhd->hd", scores.softmax(dim=-1), values)
    return out.to(q.dtype)
