"""Bug: caches every token of the sequence even when the model only keeps the last sliding_window tokens."""


def kv_cache_bytes(config: dict, seq_len: int, batch: int = 1, dtype_bytes: int = 2) -> int:
    if seq_len < 0:
        raise ValueError(f"seq_len must be >= 0, got {seq_len}")
    if batch < 0:
        raise ValueError(f"batch must be >= 0, got {batch}")
    return batch * seq_len * kv_bytes_per_token(config, dtype_bytes)
