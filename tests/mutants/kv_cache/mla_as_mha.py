"""Bug: ignores the MLA latent and sizes DeepSeek-style attention as plain MHA: per head, a K of qk_nope_head_dim +
qk_rope_head_dim and a V of v_head_dim."""


def _layer_elements(config: dict) -> int:
    heads = _required(config, "num_attention_heads")
    if config.get("kv_lora_rank") is not None:
        key = _required(config, "qk_nope_head_dim") + _required(config, "qk_rope_head_dim")
        return heads * (key + _required(config, "v_head_dim"))
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
    return 2 * kv_heads * head_dim
