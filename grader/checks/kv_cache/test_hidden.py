"""Hidden kv_cache checks: random configs (GQA ratios, head_dim present or not, sliding windows, MLA) drawn from
the seed and compared with the live reference."""
import torch

from grader.checks.kv_cache.expect import call_text, expect_count
from grader.checks.kv_cache.misconceptions import misconception_values
from grader.engine import check, expect_raises, fail, reference

CASES = 25


def between(rng: torch.Generator, low: int, high: int) -> int:
    """A uniform integer in [low, high]."""
    return int(torch.randint(low, high + 1, (1,), generator=rng).item())


def pick(rng: torch.Generator, options: list):
    """A uniformly chosen element of `options`."""
    return options[between(rng, 0, len(options) - 1)]


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
    return config


def mla_config(rng: torch.Generator) -> dict:
    """A random multi-head-latent-attention config, with the head keys a real one also carries."""
    heads = pick(rng, [16, 32, 64, 128])
    config = {"num_hidden_layers": between(rng, 1, 96), "num_attention_heads": heads,
              "num_key_value_heads": heads, "hidden_size": heads * pick(rng, [56, 64, 128]),
              "kv_lora_rank": pick(rng, [128, 256, 512, 1024]), "qk_rope_head_dim": pick(rng, [32, 64, 128])}
    if pick(rng, [True, False]):
        config["head_dim"] = pick(rng, [64, 192])
    return config


def windowed_config(rng: torch.Generator) -> dict:
    """A random GQA config with a sliding window."""
    return {**gqa_config(rng), "sliding_window": pick(rng, [256, 1024, 4096, 8192])}


def any_config(rng: torch.Generator) -> dict:
    """A random config of any of the three kinds."""
    return pick(rng, [gqa_config, mla_config, windowed_config])(rng)


def seq_len_around(rng: torch.Generator, window: int) -> int:
    """A sequence length below, at or above `window`."""
    return pick(rng, [between(rng, 1, window - 1), window, between(rng, window + 1, 8 * window)])


def expect_reference(sub, fn: str, config: dict, **kwargs) -> None:
    """The submission's `fn(config, **kwargs)` must equal the live reference's."""
    ref = reference("kv_cache")
    expected = getattr(ref, fn)(config, **kwargs)
    wrong = misconception_values(ref, fn, config, **kwargs)
    expect_count(getattr(sub, fn)(config, **kwargs), expected, call_text(fn, repr(config), **kwargs), wrong)


@check("random_gqa_bytes_per_token", points=13, hint="kv_bytes_per_token",
       title="kv_bytes_per_token on random MHA/GQA/MQA configs, with and without head_dim")
def test_random_gqa_bytes_per_token(sub, rng):
    for _ in range(CASES):
        expect_reference(sub, "kv_bytes_per_token", gqa_config(rng), dtype_bytes=pick(rng, [1, 2, 4]))


@check("random_mla_bytes_per_token", points=13, hint="kv_bytes_per_token",
       title="kv_bytes_per_token on random MLA configs")
def test_random_mla_bytes_per_token(sub, rng):
    for _ in range(CASES):
        expect_reference(sub, "kv_bytes_per_token", mla_config(rng), dtype_bytes=pick(rng, [1, 2, 4]))


@check("random_cache_bytes", points=9, hint="kv_cache_bytes",
       title="kv_cache_bytes on random configs, lengths, batches and dtypes")
def test_random_cache_bytes(sub, rng):
    for _ in range(CASES):
        expect_reference(sub, "kv_cache_bytes", any_config(rng), seq_len=between(rng, 1, 200_000),
                         batch=between(rng, 1, 64), dtype_bytes=pick(rng, [1, 2, 4]))


@check("random_sliding_window", points=9, hint="kv_cache_bytes",
       title="kv_cache_bytes with sliding windows below, at and above the sequence length")
def test_random_sliding_window(sub, rng):
    for _ in range(CASES):
        config = windowed_config(rng)
        expect_reference(sub, "kv_cache_bytes", config, seq_len=seq_len_around(rng, config["sliding_window"]),
                         batch=between(rng, 1, 32))


@check("random_max_concurrent", points=14, hint="max_concurrent_sequences",
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


def bad_call(rng: torch.Generator) -> tuple[str, str, dict, dict]:
    """A random call with one bad argument: (argument the error must name, function, config, other kwargs)."""
    config = any_config(rng)
    memory = {"gpu_bytes": 80 * 2**30, "weight_bytes": 16 * 2**30}
    kind = pick(rng, ["seq_len", "seq_len_concurrent", "batch", "dtype_bytes", "missing_key"])
    if kind == "seq_len":
        return "seq_len", "kv_cache_bytes", config, {"seq_len": -between(rng, 1, 10**6)}
    if kind == "seq_len_concurrent":
        return "seq_len", "max_concurrent_sequences", config, {**memory, "seq_len": -between(rng, 1, 10**6)}
    if kind == "batch":
        return "batch", "kv_cache_bytes", config, {"seq_len": between(rng, 1, 4096), "batch": -between(rng, 1, 64)}
    if kind == "dtype_bytes":
        fn, kwargs = pick(rng, [("kv_bytes_per_token", {}), ("kv_cache_bytes", {"seq_len": 128}),
                                ("max_concurrent_sequences", {**memory, "seq_len": 128})])
        return "dtype_bytes", fn, config, {**kwargs, "dtype_bytes": -between(rng, 0, 4)}
    # a key the computation cannot do without: layers always; hidden_size and heads when nothing replaces them
    needed = ["num_hidden_layers"]
    if "kv_lora_rank" not in config and "head_dim" not in config:
        needed.append("hidden_size")
        if "num_key_value_heads" not in config:
            needed.append("num_attention_heads")
    key = pick(rng, needed)
    return key, "kv_bytes_per_token", {name: value for name, value in config.items() if name != key}, {}


@check("random_bad_arguments", points=1, hint="kv_cache_bytes",
       title="negative seq_len or batch, dtype_bytes < 1 and missing config keys raise ValueError naming them")
def test_random_bad_arguments(sub, rng):
    for _ in range(CASES):
        argument, fn, config, kwargs = bad_call(rng)
        message = expect_raises(ValueError, getattr(sub, fn), config, **kwargs)
        if argument not in message:
            fail(f"{call_text(fn, repr(config), **kwargs)} raised ValueError({message!r}); "
                 f"the message should name {argument!r}")
