"""What each kv_cache misconception returns, so that a check names a bug only when the output shows it.

Each misconception is expressed as a change to the inputs of the reference (a config key dropped or replaced,
memory rescaled, a flag flipped), never as a second copy of the formulas: the checks stay free of the answer.
"""

MLA_KEYS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
WINDOW_SELECTORS = ("layer_types", "use_sliding_window")


def _without(config: dict, *keys: str) -> dict:
    """A copy of `config` lacking `keys`."""
    return {key: value for key, value in config.items() if key not in keys}


def mha_equivalent(config: dict) -> dict | None:
    """An MLA config as plain multi-head attention: every head caches a K of qk_nope + qk_rope elements and a V of
    v_head_dim, i.e. head_dim = (qk_nope + qk_rope + v_head_dim) / 2 for both; None if the keys are missing or the
    sum is odd (no integral head_dim says it)."""
    dims = [config.get(key) for key in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")]
    if None in dims or sum(dims) % 2:
        return None
    heads = config["num_attention_heads"]
    return {**_without(config, *MLA_KEYS), "num_key_value_heads": heads, "head_dim": sum(dims) // 2}


def misconception_values(ref, fn: str, config: dict, **kwargs) -> dict:
    """{misconception id: what `ref.<fn>(config, **kwargs)` becomes under it}, for ids that change the answer.

    `ref` is the reference module (live in hidden checks, at golden-generation time in public ones).
    """
    call = getattr(ref, fn)
    right = call(config, **kwargs)
    wrong = {}
    if config.get("kv_lora_rank") is not None:
        mha = mha_equivalent(config)
        if mha is not None:
            wrong["mla_as_mha"] = call(mha, **kwargs)
    else:
        wrong["uses_query_heads"] = call({**config, "num_key_value_heads": config["num_attention_heads"]}, **kwargs)
        if fn == "max_concurrent_sequences":
            # half the bytes per sequence: as if twice the memory were free
            doubled = {"gpu_bytes": 2 * kwargs["gpu_bytes"], "weight_bytes": 2 * kwargs["weight_bytes"],
                       "reserved_bytes": 2 * kwargs.get("reserved_bytes", 0)}
            wrong["missing_kv_factor"] = call(config, **{**kwargs, **doubled})
        elif fn == "memory_plan":
            wrong["missing_kv_factor"] = {**right, "kv_cache": right["kv_cache"] // 2,
                                          "total": right["total"] - right["kv_cache"] // 2}
        else:
            assert right % 2 == 0, "K and V make every non-MLA size even"
            wrong["missing_kv_factor"] = right // 2
    if config.get("sliding_window") is not None and fn != "kv_bytes_per_token":
        wrong["ignores_sliding_window"] = call(_without(config, "sliding_window"), **kwargs)
        wrong["window_on_every_layer"] = call(_without(config, *WINDOW_SELECTORS), **kwargs)
    if fn == "max_concurrent_sequences":
        wrong["ignores_reserved_memory"] = call(config, **{**kwargs, "reserved_bytes": 0})
    if fn == "memory_plan" and kwargs.get("all_logits"):
        wrong["forgets_all_position_logits"] = call(config, **{**kwargs, "all_logits": False})
    return {mid: value for mid, value in wrong.items() if value != right}
