"""Hidden oracle for the kv_cache topic: KV-cache sizes counted layer by layer, in exact integer arithmetic.

Byte counts are integers, so this reference works in Python ints (exact at any size) rather than float64.
It deliberately spells the sizing out differently from the model answer: it lists, layer by layer, what one
token leaves in that layer's cache and how many tokens that layer keeps, sums those, and only then scales by
batch. A config key whose value is None (`null` in config.json) counts as absent.
"""

LOGIT_BYTES = 4  # logits are float32 whatever the cache dtype


def _config_value(config: dict, key: str) -> int:
    """The value of a key the sizing needs; a missing (or null) key is a bad argument that must be named."""
    value = config.get(key)
    if value is None:
        raise ValueError(f"config is missing the required key {key!r}")
    return value


def _positive_dtype_bytes(dtype_bytes: int) -> int:
    """dtype_bytes itself, after checking that an element takes at least one byte."""
    if dtype_bytes < 1:
        raise ValueError(f"dtype_bytes must be >= 1, got {dtype_bytes}")
    return dtype_bytes


def _uses_mla(config: dict) -> bool:
    """Multi-head latent attention (DeepSeek-V2/V3): the config names a KV latent rank."""
    return config.get("kv_lora_rank") is not None


def cached_elements_per_layer(config: dict) -> list[int]:
    """For each layer, the number of elements one token adds to that layer's cache."""
    num_layers = _config_value(config, "num_hidden_layers")
    if _uses_mla(config):
        latent = config["kv_lora_rank"]
        rope_key = _config_value(config, "qk_rope_head_dim")
        one_layer = latent + rope_key            # one latent vector; no per-head K and V
    else:
        query_heads = _config_value(config, "num_attention_heads")
        kv_heads = config.get("num_key_value_heads")
        if kv_heads is None:
            kv_heads = query_heads               # plain multi-head attention
        head_dim = config.get("head_dim")
        if head_dim is None:
            head_dim = _config_value(config, "hidden_size") // query_heads
        key_elements = kv_heads * head_dim
        value_elements = kv_heads * head_dim
        one_layer = key_elements + value_elements
    return [one_layer for _layer in range(num_layers)]


def windowed_layers(config: dict) -> list[bool]:
    """For each layer, whether it attends to (and caches) only the last `sliding_window` tokens."""
    num_layers = _config_value(config, "num_hidden_layers")
    if config.get("sliding_window") is None:
        return [False] * num_layers
    layer_types = config.get("layer_types")
    if layer_types is not None:
        # hybrid models (Gemma-2/3, gpt-oss) name each layer's attention
        if len(layer_types) != num_layers:
            raise ValueError(f"layer_types has {len(layer_types)} entries for {num_layers} layers")
        return [kind == "sliding_attention" for kind in layer_types]
    if config.get("use_sliding_window") is False:
        return [False] * num_layers             # Qwen2 ships a window it does not use
    return [True] * num_layers


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    """Bytes one token occupies in the cache, summed over all layers."""
    dtype_bytes = _positive_dtype_bytes(dtype_bytes)
    return sum(elements * dtype_bytes for elements in cached_elements_per_layer(config))


def tokens_kept_per_layer(config: dict, seq_len: int) -> list[int]:
    """For each layer, how many of a sequence's tokens stay cached: all of them, or the last `sliding_window`.

    The window counted is the one a query attends to, its own token included (Hugging Face's static sliding cache
    allocates as many slots; its dynamic one keeps sliding_window - 1 between steps)."""
    kept = []
    for windowed in windowed_layers(config):
        if windowed and config["sliding_window"] < seq_len:
            kept.append(config["sliding_window"])
        else:
            kept.append(seq_len)
    return kept


def kv_cache_bytes(config: dict, seq_len: int, batch: int = 1, dtype_bytes: int = 2) -> int:
    """Bytes of cache held by `batch` sequences of `seq_len` tokens each."""
    if seq_len < 0:
        raise ValueError(f"seq_len must be >= 0, got {seq_len}")
    if batch < 0:
        raise ValueError(f"batch must be >= 0, got {batch}")
    dtype_bytes = _positive_dtype_bytes(dtype_bytes)
    per_layer = zip(cached_elements_per_layer(config), tokens_kept_per_layer(config, seq_len))
    one_sequence = sum(elements * dtype_bytes * tokens for elements, tokens in per_layer)
    return batch * one_sequence


def max_concurrent_sequences(config: dict, gpu_bytes: int, weight_bytes: int, seq_len: int,
                             dtype_bytes: int = 2, reserved_bytes: int = 0) -> int:
    """How many whole sequences of `seq_len` tokens fit beside the weights and the reserved memory."""
    for name, value in (("gpu_bytes", gpu_bytes), ("weight_bytes", weight_bytes),
                        ("reserved_bytes", reserved_bytes)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if seq_len < 1:
        raise ValueError(f"seq_len must be >= 1, got {seq_len}")
    one_sequence = kv_cache_bytes(config, seq_len, 1, dtype_bytes)
    left_for_cache = gpu_bytes - weight_bytes - reserved_bytes
    if left_for_cache <= 0:
        return 0
    count, _unused = divmod(left_for_cache, one_sequence)
    return count


def memory_plan(config: dict, weight_bytes: int, batch: int, seq_len: int, dtype_bytes: int = 2,
                all_logits: bool = False) -> dict:
    """What one serving step over `batch` sequences of `seq_len` tokens holds: weights, cache, logits, total."""
    if weight_bytes < 0:
        raise ValueError(f"weight_bytes must be >= 0, got {weight_bytes}")
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    if seq_len < 1:
        raise ValueError(f"seq_len must be >= 1, got {seq_len}")
    vocab = _config_value(config, "vocab_size")
    positions_with_logits = seq_len if all_logits else 1    # every prompt position, or only the last one
    plan = {"weights": weight_bytes,
            "kv_cache": kv_cache_bytes(config, seq_len, batch, dtype_bytes),
            "logits": batch * positions_with_logits * vocab * LOGIT_BYTES}
    plan["total"] = plan["weights"] + plan["kv_cache"] + plan["logits"]
    return plan
