"""KV-cache sizing: bytes per token, bytes for a batch, sequences that fit on a GPU, a serving step's memory
(model answer)."""


def _required(config: dict, key: str) -> int:
    """config[key], or a ValueError naming the key when the config lacks it (a null value counts as lacking)."""
    if config.get(key) is None:
        raise ValueError(f"config is missing {key!r}")
    return config[key]


def _check_dtype_bytes(dtype_bytes: int) -> None:
    if dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be >= 1, got {dtype_bytes}")


def _layer_elements(config: dict) -> int:
    """Elements one token adds to one layer's cache: K and V per KV head, or one MLA latent."""
    if config.get("kv_lora_rank") is not None:
        # MLA caches one compressed latent (shared by all heads) plus the decoupled RoPE key, not K and V.
        return config["kv_lora_rank"] + _required(config, "qk_rope_head_dim")
    heads = _required(config, "num_attention_heads")
    kv_heads = config.get("num_key_value_heads") or heads            # GQA/MQA share K/V across query heads
    head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
    return 2 * kv_heads * head_dim                                     # one K and one V vector per KV head


def _sliding_layers(config: dict) -> int:
    """How many layers attend only to the last sliding_window tokens."""
    layers = _required(config, "num_hidden_layers")
    if config.get("sliding_window") is None:
        return 0
    if config.get("layer_types") is not None:                          # hybrid: local and global layers
        if len(config["layer_types"]) != layers:
            raise ValueError(f"layer_types has {len(config['layer_types'])} entries for {layers} layers")
        return config["layer_types"].count("sliding_attention")
    return 0 if config.get("use_sliding_window") is False else layers


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    """Bytes one token adds to the cache over all layers."""
    _check_dtype_bytes(dtype_bytes)
    return _required(config, "num_hidden_layers") * _layer_elements(config) * dtype_bytes


def kv_cache_bytes(config: dict, seq_len: int, batch: int = 1, dtype_bytes: int = 2) -> int:
    """Cache bytes for `batch` sequences of `seq_len` tokens; windowed layers keep at most sliding_window tokens
    (the attended window, the new token's included: Hugging Face's dynamic cache keeps one less between steps)."""
    if seq_len < 0:
        raise ValueError(f"seq_len must be >= 0, got {seq_len}")
    if batch < 0:
        raise ValueError(f"batch must be >= 0, got {batch}")
    per_layer_token = kv_bytes_per_token(config, dtype_bytes) // config["num_hidden_layers"]
    sliding = _sliding_layers(config)
    full = config["num_hidden_layers"] - sliding
    window_tokens = min(seq_len, config["sliding_window"]) if sliding else 0
    return batch * per_layer_token * (full * seq_len + sliding * window_tokens)


def max_concurrent_sequences(config: dict, gpu_bytes: int, weight_bytes: int, seq_len: int,
                             dtype_bytes: int = 2, reserved_bytes: int = 0) -> int:
    """How many `seq_len`-token sequences fit in the memory left after weights and reserved memory (>= 0)."""
    for name, value in {"gpu_bytes": gpu_bytes, "weight_bytes": weight_bytes,
                        "reserved_bytes": reserved_bytes}.items():
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if seq_len < 1:
        raise ValueError(f"seq_len must be >= 1, got {seq_len}")
    per_sequence = kv_cache_bytes(config, seq_len, batch=1, dtype_bytes=dtype_bytes)
    assert per_sequence > 0, "a non-empty sequence always occupies cache"
    free = gpu_bytes - weight_bytes - reserved_bytes
    return max(free // per_sequence, 0)


def memory_plan(config: dict, weight_bytes: int, batch: int, seq_len: int, dtype_bytes: int = 2,
                all_logits: bool = False) -> dict:
    """Bytes a serving step holds: weights, the batch's KV cache, float32 logits, and their total."""
    if weight_bytes < 0:
        raise ValueError(f"weight_bytes must be >= 0, got {weight_bytes}")
    for name, value in {"batch": batch, "seq_len": seq_len}.items():
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    rows = batch * seq_len if all_logits else batch          # a logits row per kept position, 4 bytes a score
    plan = {"weights": weight_bytes, "kv_cache": kv_cache_bytes(config, seq_len, batch, dtype_bytes),
            "logits": rows * _required(config, "vocab_size") * 4}
    plan["total"] = sum(plan.values())
    return plan
