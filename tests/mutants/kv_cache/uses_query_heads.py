"""Bug: sizes K and V with num_attention_heads instead of num_key_value_heads (ignores GQA sharing)."""


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    if dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be >= 1, got {dtype_bytes}")
    layers = _required(config, "num_hidden_layers")
    if config.get("kv_lora_rank") is not None:
        per_layer = config["kv_lora_rank"] + _required(config, "qk_rope_head_dim")
    else:
        heads = _required(config, "num_attention_heads")
        head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
        per_layer = 2 * heads * head_dim
    return layers * per_layer * dtype_bytes
