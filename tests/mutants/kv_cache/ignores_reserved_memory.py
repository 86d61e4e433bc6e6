"""Bug: gives the KV cache everything except the weights, forgetting the reserved memory."""


def max_concurrent_sequences(config: dict, gpu_bytes: int, weight_bytes: int, seq_len: int,
                             dtype_bytes: int = 2, reserved_bytes: int = 0) -> int:
    if seq_len < 1:
        raise ValueError(f"seq_len must be >= 1, got {seq_len}")
    per_sequence = kv_cache_bytes(config, seq_len, batch=1, dtype_bytes=dtype_bytes)
    return max((gpu_bytes - weight_bytes) // per_sequence, 0)
