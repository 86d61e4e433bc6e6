"""Bug: counts one cached vector per KV head and layer, forgetting that both K and V are stored."""


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    if dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be >= 1, got {dtype_bytes}")
    layers = _required(config, "num_hidden_layers")
    if config.get("kv_lora_rank") is not None:
        per_layer = config["kv_lora_rank"] + _required(config, "qk_rope_head_dim")
    else:
        heads = _required(config, "num_attention_heads")
        kv_heads = config.get("num_key_value_heads") or heads
        head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
        per_layer = kv_heads * head_dim
    return layers * per_layer * dtype_bytes
