"""Bug: counts one row of logits per sequence even when the forward keeps the logits of every prompt position."""


def memory_plan(config: dict, weight_bytes: int, batch: int, seq_len: int, dtype_bytes: int = 2,
                all_logits: bool = False) -> dict:
    if weight_bytes < 0:
        raise ValueError(f"weight_bytes must be >= 0, got {weight_bytes}")
    for name, value in {"batch": batch, "seq_len": seq_len}.items():
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    plan = {"weights": weight_bytes, "kv_cache": kv_cache_bytes(config, seq_len, batch, dtype_bytes),
            "logits": batch * _required(config, "vocab_size") * 4}
    plan["total"] = sum(plan.values())
    return plan
