"""Bug: counts one cached vector per KV head and layer, forgetting that both K and V are stored."""


def _layer_elements(config: dict) -> int:
    if config.get("kv_lora_rank") is not None:
        return config["kv_lora_rank"] + _required(config, "qk_rope_head_dim")
    heads = _required(config, "num_attention_heads")
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
    return kv_heads * head_dim
