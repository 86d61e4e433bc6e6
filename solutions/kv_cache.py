"""KV-cache sizing: bytes per token, bytes for a batch, and how many sequences fit on a GPU (model answer)."""


def _required(config: dict, key: str) -> int:
    """config[key], or a ValueError naming the key when the config lacks it."""
    if config.get(key) is None:
        raise ValueError(f"config is missing {key!r}")
    return config[key]


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    """Bytes one token adds to the cache over all layers: K and V per KV head, or one MLA latent."""
    if dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be >= 1, got {dtype_bytes}")
    layers = _required(config, "num_hidden_layers")
    if config.get("kv_lora_rank") is not None:
        # MLA caches one compressed latent (shared by all heads) plus the decoupled RoPE key, not K and V.
        per_layer = config["kv_lora_rank"] + _required(config, "qk_rope_head_dim")
    else:
        heads = _required(config, "num_attention_heads")
        kv_heads = config.get("num_key_value_heads") or heads            # GQA/MQA share K/V across query heads
        head_dim = config.get("head_dim") or _required(config, "hidden_size") // heads
        per_layer = 2 * kv_heads * head_dim                                # one K and one V vector per KV head
    return layers * per_layer * dtype_bytes


def kv_cache_bytes(config: dict, seq_len: int, batch: int = 1, dtype_bytes: int = 2) -> int:
    """Cache bytes for `batch` sequences of `seq_len` tokens; a sliding window caps the tokens kept per sequence."""
    if seq_len < 0:
        raise ValueError(f"seq_len must be >= 0, got {seq_len}")
    if batch < 0:
        raise ValueError(f"batch must be >= 0, got {batch}")
    window = config.get("sliding_window")
    kept = seq_len if window is None else min(seq_len, window)
    return batch * kept * kv_bytes_per_token(config, dtype_bytes)


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
