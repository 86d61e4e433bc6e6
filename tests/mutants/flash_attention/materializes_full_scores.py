"""Bug: builds the full [Tq, Tk] score matrix: right values, but O(Tq * Tk) memory."""


def tiled_attention(q, k, v, causal=False, block_q=64, block_k=64):
    """Softmax attention from the whole score matrix at once."""
    _check_arguments(q, k, v, causal, block_q, block_k)
    tq, tk, d = q.shape[2], k.shape[2], q.shape[3]
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(d)  # s: [B, H, Tq, Tk]
    if causal:
        s = s.masked_fill(~_causal_mask(torch.arange(tq), torch.arange(tk), tq, tk), -math.inf)
    o = torch.softmax(s, dim=-1) @ v.float()
    return o.to(q.dtype), torch.logsumexp(s, dim=-1)
