"""Bug: sizes K and V with num_attention_heads instead of num_key_value_heads (ignores GQA sharing)."""


def _layer_elements(config: dict) -> int:
    if config.get("kv_lora_rank") is not None:
        return config["kv_lora_rank"] + _required(config, "qk_rope_head_dim")
    heads = _required(config, "num_attention_heads")
    head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
    return 2 * heads * head_dim
