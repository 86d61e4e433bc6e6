"""Hidden kv_cache checks: random configs (GQA ratios, head_dim present or not, keys set to null, sliding windows
on every layer or by layer_types, unused windows, MLA) drawn from the seed and compared with the live reference."""
import torch

from grader.checks.kv_cache.expect import call_text, expect_count, expect_plan
from grader.checks.kv_cache.misconceptions import misconception_values
from grader.engine import check, expect_raises, fail, reference, tr

CASES = 25
OPTIONAL_KEYS = ("num_key_value_heads", "head_dim", "kv_lora_rank", "sliding_window", "layer_types",
                 "use_sliding_window")


def between(rng: torch.Generator, low: int, high: int) -> int:
    """A uniform integer in [low, high]."""
    return int(torch.randint(low, high + 1, (1,), generator=rng).item())


def pick(rng: torch.Generator, options: list):
    """A uniformly chosen element of `options`."""
    return options[between(rng, 0, len(options) - 1)]


def with_nulls(rng: torch.Generator, config: dict) -> dict:
    """`config` with some of the optional keys it lacks written as explicit nulls, as to_dict() does."""
    return {**config, **{key: None for key in OPTIONAL_KEYS if key not in config and pick(rng, [True, False])}}


def gqa_config(rng: torch.Generator) -> dict:
    """A random MHA/GQA/MQA config; head_dim sometimes given (and then unlike hidden_size // heads)."""
    kv_heads = pick(rng, [1, 2, 4, 8, 16])
    heads = kv_heads * pick(rng, [1, 2, 4, 8])
    head_dim = pick(rng, [32, 64, 80, 96, 128, 256])
    config = {"num_hidden_layers": between(rng, 1, 96), "num_attention_heads": heads}
    if kv_heads < heads or pick(rng, [True, False]):
        config["num_key_value_heads"] = kv_heads     # absent only when it equals the number of heads
    if pick(rng, [True, False]):
        config["head_dim"] = head_dim
        config["hidden_size"] = heads * pick(rng, [d for d in (48, 72, 112, 160) if d != head_dim])
    else:
        config["hidden_size"] = heads * head_dim
    return with_nulls(rng, config)


def mla_config(rng: torch.Generator) -> dict:
    """A random multi-head-latent-attention config, with the per-head keys a real one also carries."""
    heads = pick(rng, [16, 32, 64, 128])
    config = {"num_hidden_layers": between(rng, 1, 96), "num_attention_heads": heads,
              "num_key_value_heads": heads, "hidden_size": heads * pick(rng, [56, 64, 128]),
              "kv_lora_rank": pick(rng, [128, 256, 512, 1024]), "qk_rope_head_dim": pick(rng, [32, 64, 128]),
              "qk_nope_head_dim": pick(rng, [64, 128]), "v_head_dim": pick(rng, [64, 128])}
    if pick(rng, [True, False]):
        config["head_dim"] = pick(rng, [64, 192])
    return with_nulls(rng, config)


def layer_pattern(rng: torch.Generator, layers: int) -> list[str]:
    """layer_types of a hybrid model: local/global alternating, k local per global, or an irregular mix."""
    kind = pick(rng, ["alternate", "k_to_1", "mixed"])
    if kind == "alternate":
        start = pick(rng, [0, 1])
        return ["sliding_attention" if (i + start) % 2 == 0 else "full_attention" for i in range(layers)]
    if kind == "k_to_1":
        period = between(rng, 2, 8)
        return ["full_attention" if (i + 1) % period == 0 else "sliding_attention" for i in range(layers)]
    return [pick(rng, ["sliding_attention", "full_attention"]) for _ in range(layers)]


def windowed_config(rng: torch.Generator) -> dict:
    """A random GQA config with a sliding window on every layer, or shipped unused (use_sliding_window false)."""
    config = {**gqa_config(rng), "sliding_window": pick(rng, [256, 1024, 4096, 8192])}
    config["use_sliding_window"] = pick(rng, [True, False, None])
    return config


def hybrid_config(rng: torch.Generator) -> dict:
    """A random GQA config whose layer_types windows only some layers."""
    config = {**gqa_config(rng), "sliding_window": pick(rng, [128, 512, 1024, 4096])}
    config["layer_types"] = layer_pattern(rng, config["num_hidden_layers"])
    config["use_sliding_window"] = pick(rng, [True, None])
    return config


def any_config(rng: torch.Generator) -> dict:
    """A random config of any of the four kinds."""
    return pick(rng, [gqa_config, mla_config, windowed_config, hybrid_config])(rng)


def seq_len_around(rng: torch.Generator, window: int) -> int:
    """A sequence length below, at or above `window`."""
    return pick(rng, [between(rng, 1, window - 1), window, between(rng, window + 1, 8 * window)])


def around_window(rng: torch.Generator, config: dict) -> dict:
    """kv_cache_bytes's seq_len (below, at or above the config's window) and batch (1 to 32), drawn in that order."""
    return {"seq_len": seq_len_around(rng, config["sliding_window"]), "batch": between(rng, 1, 32)}


def expect_reference(sub, fn: str, config: dict, **kwargs) -> None:
    """The submission's `fn(config, **kwargs)` must equal the live reference's."""
    ref = reference("kv_cache")
    expected = getattr(ref, fn)(config, **kwargs)
    wrong = misconception_values(ref, fn, config, **kwargs)
    compare = expect_plan if fn == "memory_plan" else expect_count
    compare(getattr(sub, fn)(config, **kwargs), expected, call_text(fn, repr(config), **kwargs), wrong)


@check("random_gqa_bytes_per_token", points=14, hint="kv_bytes_per_token",
       title="kv_bytes_per_token on random MHA/GQA/MQA configs, with and without head_dim, some keys null")
def test_random_gqa_bytes_per_token(sub, rng):
    for _ in range(CASES):
        expect_reference(sub, "kv_bytes_per_token", gqa_config(rng), dtype_bytes=pick(rng, [1, 2, 4]))


@check("random_mla_bytes_per_token", points=14, hint="kv_bytes_per_token",
       title="kv_bytes_per_token on random MLA configs")
def test_random_mla_bytes_per_token(sub, rng):
    for _ in range(CASES):
        expect_reference(sub, "kv_bytes_per_token", mla_config(rng), dtype_bytes=pick(rng, [1, 2, 4]))


@check("random_cache_bytes", points=8, hint="kv_cache_bytes",
       title="kv_cache_bytes on random configs, lengths, batches and dtypes")
def test_random_cache_bytes(sub, rng):
    for _ in range(CASES):
        expect_reference(sub, "kv_cache_bytes", any_config(rng), seq_len=between(rng, 1, 200_000),
                         batch=between(rng, 1, 64), dtype_bytes=pick(rng, [1, 2, 4]))


@check("random_sliding_window", points=9, hint="kv_cache_bytes",
       title="kv_cache_bytes with windows on every layer or unused, below, at and above the sequence length")
def test_random_sliding_window(sub, rng):
    for _ in range(CASES):
        config = windowed_config(rng)
        expect_reference(sub, "kv_cache_bytes", config, **around_window(rng, config))


@check("random_hybrid_layers", points=9, hint="kv_cache_bytes",
       title="kv_cache_bytes of hybrid models: only the layers layer_types marks sliding_attention are windowed")
def test_random_hybrid_layers(sub, rng):
    for _ in range(CASES):
        config = hybrid_config(rng)
        expect_reference(sub, "kv_cache_bytes", config, **around_window(rng, config), dtype_bytes=pick(rng, [1, 2]))


@check("random_max_concurrent", points=19, hint="max_concurrent_sequences",
       title="max_concurrent_sequences on random GPUs, weights and reserved memory, including no room at all")
def test_random_max_concurrent(sub, rng):
    ref = reference("kv_cache")
    for _ in range(CASES):
        config = any_config(rng)
        seq_len = between(rng, 1, 32768)
        dtype_bytes = pick(rng, [1, 2])
        one_sequence = ref.kv_cache_bytes(config, seq_len, 1, dtype_bytes)
        weight_bytes = between(rng, 10**8, 2 * 10**11)
        reserved_bytes = pick(rng, [0, between(rng, 1, 2 * 10**10), between(rng, 1, 2 * 10**10)])
        # a whole number of caches, plus nothing, all but one byte of another, or a random remainder
        spare = pick(rng, [0, one_sequence - 1, between(rng, 0, one_sequence - 1)])
        room = pick(rng, [between(rng, 0, 300) * one_sequence + spare, -between(rng, 1, weight_bytes)])
        expect_reference(sub, "max_concurrent_sequences", config, gpu_bytes=weight_bytes + reserved_bytes + room,
                         weight_bytes=weight_bytes, seq_len=seq_len, dtype_bytes=dtype_bytes,
                         reserved_bytes=reserved_bytes)


@check("random_memory_plan", points=12, hint="memory_plan",
       title="memory_plan on random configs, batches and lengths, with and without the logits of every position")
def test_random_memory_plan(sub, rng):
    for _ in range(CASES):
        config = {**any_config(rng), "vocab_size": pick(rng, [32000, 50257, 128256, 151936, 256000])}
        expect_reference(sub, "memory_plan", config, weight_bytes=between(rng, 10**8, 2 * 10**11),
                         batch=between(rng, 1, 64), seq_len=between(rng, 1, 32768), dtype_bytes=pick(rng, [1, 2]),
                         all_logits=pick(rng, [True, False]))


def bad_call(rng: torch.Generator) -> tuple[str, str, dict, dict, tuple[dict, dict]]:
    """A random call with one bad argument: (argument the error must name, function, config, other kwargs, and the
    (config, kwargs) of the same call with that argument valid)."""
    config = {**any_config(rng), "vocab_size": 32000}
    memory = {"gpu_bytes": 80 * 2**30, "weight_bytes": 16 * 2**30}
    step = {"weight_bytes": 16 * 2**30, "batch": between(rng, 1, 8), "seq_len": between(rng, 1, 4096)}
    kind = pick(rng, ["seq_len", "seq_len_concurrent", "batch", "dtype_bytes", "missing_key", "plan"])
    if kind == "seq_len":
        return ("seq_len", "kv_cache_bytes", config, {"seq_len": -between(rng, 1, 10**6)},
                (config, {"seq_len": between(rng, 0, 4096)}))
    if kind == "seq_len_concurrent":
        return ("seq_len", "max_concurrent_sequences", config, {**memory, "seq_len": -between(rng, 0, 10**6)},
                (config, {**memory, "seq_len": between(rng, 1, 4096)}))
    if kind == "batch":
        seq_len = between(rng, 1, 4096)
        return ("batch", "kv_cache_bytes", config, {"seq_len": seq_len, "batch": -between(rng, 1, 64)},
                (config, {"seq_len": seq_len, "batch": between(rng, 0, 64)}))
    if kind == "dtype_bytes":
        fn, kwargs = pick(rng, [("kv_bytes_per_token", {}), ("kv_cache_bytes", {"seq_len": 128}),
                                ("max_concurrent_sequences", {**memory, "seq_len": 128}), ("memory_plan", step)])
        return ("dtype_bytes", fn, config, {**kwargs, "dtype_bytes": -between(rng, 0, 4)},
                (config, {**kwargs, "dtype_bytes": between(rng, 1, 4)}))
    if kind == "plan":
        argument = pick(rng, ["batch", "seq_len", "weight_bytes", "vocab_size"])
        if argument == "vocab_size":
            return argument, "memory_plan", without(rng, config, "vocab_size"), step, (config, step)
        low = -1 if argument == "weight_bytes" else 0
        return (argument, "memory_plan", config, {**step, argument: between(rng, low - 10**6, low)},
                (config, {**step, argument: between(rng, low + 1, 4096)}))
    # a key the computation cannot do without: layers always; hidden_size and heads when nothing replaces them
    needed = ["num_hidden_layers"]
    if config.get("kv_lora_rank") is None and config.get("head_dim") is None:
        needed.append("hidden_size")
        if config.get("num_key_value_heads") is None:
            needed.append("num_attention_heads")
    key = pick(rng, needed)
    return key, "kv_bytes_per_token", without(rng, config, key), {}, (config, {})


def without(rng: torch.Generator, config: dict, key: str) -> dict:
    """`config` lacking `key`: the key dropped, or set to null."""
    if pick(rng, [True, False]):
        return {**config, key: None}
    return {name: value for name, value in config.items() if name != key}


@check("random_bad_arguments", points=1, hint="kv_cache_bytes",
       title="negative seq_len or batch, seq_len < 1 where a length is needed, dtype_bytes < 1, bad memory_plan "
             "arguments and missing (or null) config keys raise ValueError naming them; the same calls made valid "
             "are answered")
def test_random_bad_arguments(sub, rng):
    for _ in range(CASES):
        argument, fn, config, kwargs, (valid_config, valid_kwargs) = bad_call(rng)
        message = expect_raises(ValueError, getattr(sub, fn), config, **kwargs)
        if argument not in message:
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}",
                    call=call_text(fn, repr(config), **kwargs), message=message, name=argument))
        expect_reference(sub, fn, valid_config, **valid_kwargs)  # the same call made valid: refusing all fails
