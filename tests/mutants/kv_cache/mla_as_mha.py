"""Bug: ignores kv_lora_rank/qk_rope_head_dim and sizes an MLA model as if it cached a K/V pair per head."""


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    if dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be >= 1, got {dtype_bytes}")
    layers = _required(config, "num_hidden_layers")
    heads = _required(config, "num_attention_heads")
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
    return layers * 2 * kv_heads * head_dim * dtype_bytes
