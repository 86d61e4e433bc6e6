"""What each kv_cache misconception returns, so that a check names a bug only when the output shows it.

Each misconception is expressed as a change to the inputs of the reference (a config key dropped or replaced,
memory rescaled), never as a second copy of the formulas: the checks stay free of the answer.
"""

MLA_KEYS = ("kv_lora_rank", "qk_rope_head_dim")


def _without(config: dict, *keys: str) -> dict:
    """A copy of `config` lacking `keys`."""
    return {key: value for key, value in config.items() if key not in keys}


def misconception_values(ref, fn: str, config: dict, **kwargs) -> dict[str, int]:
    """{misconception id: what `ref.<fn>(config, **kwargs)` becomes under it}, for ids that change the answer.

    `ref` is the reference module (live in hidden checks, at golden-generation time in public ones).
    """
    call = getattr(ref, fn)
    right = call(config, **kwargs)
    wrong = {}
    if config.get("kv_lora_rank") is not None:
        # sized as a K/V pair per KV head with head_dim, as for any other model
        wrong["mla_as_mha"] = call(_without(config, *MLA_KEYS), **kwargs)
    else:
        wrong["uses_query_heads"] = call({**config, "num_key_value_heads": config["num_attention_heads"]}, **kwargs)
        if fn == "max_concurrent_sequences":
            # half the bytes per sequence: as if twice the memory were free
            doubled = {"gpu_bytes": 2 * kwargs["gpu_bytes"], "weight_bytes": 2 * kwargs["weight_bytes"],
                       "reserved_bytes": 2 * kwargs.get("reserved_bytes", 0)}
            wrong["missing_kv_factor"] = call(config, **{**kwargs, **doubled})
        else:
            assert right % 2 == 0, "K and V make every non-MLA size even"
            wrong["missing_kv_factor"] = right // 2
    if config.get("sliding_window") is not None and fn != "kv_bytes_per_token":
        wrong["ignores_sliding_window"] = call(_without(config, "sliding_window"), **kwargs)
    if fn == "max_concurrent_sequences":
        wrong["ignores_reserved_memory"] = call(config, **{**kwargs, "reserved_bytes": 0})
    return {mid: value for mid, value in wrong.items() if value != right}

