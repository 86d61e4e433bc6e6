"""Project tests for the kv_cache topic: the reference against caches built from real tensors and a brute-force
count, the solution against the reference, the stub, the hints, the config excerpts and the mutants."""
import json
import types
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

from exercises import kv_cache as stub
from grader.checks.kv_cache.misconceptions import misconception_values
from reference import kv_cache as ref
from solutions import kv_cache as sol

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "grader" / "checks" / "kv_cache" / "configs"
MUTANTS = ROOT / "tests" / "mutants" / "kv_cache"
FUNCTIONS = ("kv_bytes_per_token", "kv_cache_bytes", "max_concurrent_sequences")
MISCONCEPTIONS = {"uses_query_heads", "missing_kv_factor", "mla_as_mha", "ignores_sliding_window",
                  "ignores_reserved_memory"}
DTYPES = {1: torch.uint8, 2: torch.bfloat16, 4: torch.float32}
QUICK = settings(max_examples=40, deadline=None)


def hf_config(stem: str) -> dict:
    """A stored config.json excerpt."""
    return json.loads((CONFIGS / f"{stem}.json").read_text())


# --- small random configs -------------------------------------------------------------------------------

@st.composite
def gqa_configs(draw) -> dict:
    """MHA/GQA/MQA configs, head_dim given or derived, num_key_value_heads given or not."""
    kv_heads = draw(st.integers(1, 4))
    heads = kv_heads * draw(st.sampled_from([1, 2, 4]))
    config = {"num_hidden_layers": draw(st.integers(1, 3)), "num_attention_heads": heads,
              "hidden_size": heads * draw(st.sampled_from([4, 8]))}
    if kv_heads < heads or draw(st.booleans()):
        config["num_key_value_heads"] = kv_heads
    if draw(st.booleans()):
        config["head_dim"] = draw(st.sampled_from([2, 6]))
    if draw(st.booleans()):
        config["sliding_window"] = draw(st.integers(1, 12))
    return config


@st.composite
def mla_configs(draw) -> dict:
    """Multi-head latent attention configs (with the head keys real ones carry)."""
    heads = draw(st.sampled_from([2, 4]))
    return {"num_hidden_layers": draw(st.integers(1, 3)), "num_attention_heads": heads,
            "num_key_value_heads": heads, "hidden_size": 8 * heads,
            "kv_lora_rank": draw(st.integers(1, 16)), "qk_rope_head_dim": draw(st.sampled_from([2, 4]))}


configs = st.one_of(gqa_configs(), mla_configs())


def decoded_cache_bytes(config: dict, seq_len: int, batch: int, dtype_bytes: int) -> int:
    """Decode `seq_len` tokens into real per-layer cache tensors, evicting beyond the window, and count bytes."""
    dtype = DTYPES[dtype_bytes]
    if "kv_lora_rank" in config:
        # DeepSeek MLA caches the compressed KV latent and the shared RoPE key: [B, T, rank], [B, T, rope]
        widths = [(config["kv_lora_rank"],), (config["qk_rope_head_dim"],)]
        time_dim = 1
    else:
        heads = config["num_attention_heads"]
        kv_heads = config.get("num_key_value_heads", heads)
        head_dim = config.get("head_dim", config["hidden_size"] // heads)
        widths = [(kv_heads, head_dim), (kv_heads, head_dim)]              # K and V: [B, H_kv, T, D]
        time_dim = 2
    window = config.get("sliding_window", seq_len)
    layers = []
    for _ in range(config["num_hidden_layers"]):
        layer = []
        for width in widths:
            shape = (batch, *width[:-1], 0, width[-1])
            cache = torch.empty(shape, dtype=dtype)
            for _token in range(seq_len):
                new = torch.empty((batch, *width[:-1], 1, width[-1]), dtype=dtype)
                cache = torch.cat([cache, new], dim=time_dim)
                cache = cache.narrow(time_dim, max(cache.shape[time_dim] - window, 0),
                                     min(cache.shape[time_dim], window))
            layer.append(cache)
        layers.append(layer)
    return sum(tensor.nbytes for layer in layers for tensor in layer)


# --- the reference against independent computations -------------------------------------------------------

def test_contract_numbers():
    for module in (ref, sol):
        assert module.kv_bytes_per_token(hf_config("meta-llama--Meta-Llama-3-8B"), 2) == 131_072
        assert module.kv_bytes_per_token(hf_config("deepseek-ai--DeepSeek-V3"), 2) == 70_272


def test_config_excerpts_hold_the_published_values():
    expected = {
        "meta-llama--Meta-Llama-3-8B": {"num_hidden_layers": 32, "num_attention_heads": 32,
                                        "num_key_value_heads": 8, "hidden_size": 4096},
        "meta-llama--Meta-Llama-3-70B": {"num_hidden_layers": 80, "num_attention_heads": 64,
                                         "num_key_value_heads": 8, "hidden_size": 8192},
        "mistralai--Mistral-7B-v0.1": {"num_hidden_layers": 32, "num_attention_heads": 32,
                                       "num_key_value_heads": 8, "hidden_size": 4096, "sliding_window": 4096},
        "deepseek-ai--DeepSeek-V3": {"num_hidden_layers": 61, "num_attention_heads": 128,
                                     "num_key_value_heads": 128, "hidden_size": 7168, "kv_lora_rank": 512,
                                     "qk_rope_head_dim": 64},
    }
    assert {path.stem for path in CONFIGS.glob("*.json")} == set(expected)
    for stem, values in expected.items():
        config = hf_config(stem)
        assert config["_name_or_path"] == stem.replace("--", "/")
        assert {key: config[key] for key in values} == values
        assert "head_dim" not in config          # all four derive it from hidden_size


@QUICK
@given(config=configs, seq_len=st.integers(1, 20), batch=st.integers(1, 3), dtype_bytes=st.sampled_from([1, 2, 4]))
def test_reference_matches_decoded_tensors(config, seq_len, batch, dtype_bytes):
    expected = decoded_cache_bytes(config, seq_len, batch, dtype_bytes)
    assert ref.kv_cache_bytes(config, seq_len, batch, dtype_bytes) == expected
    assert ref.kv_bytes_per_token(config, dtype_bytes) * batch == decoded_cache_bytes(config, 1, batch, dtype_bytes)


@QUICK
@given(config=configs, seq_len=st.integers(1, 12), weights=st.integers(0, 5000), reserved=st.integers(0, 5000),
       room=st.integers(-3000, 60_000))
def test_reference_matches_counting_sequences(config, seq_len, weights, reserved, room):
    gpu_bytes = max(weights + reserved + room, 0)
    one_sequence = decoded_cache_bytes(config, seq_len, 1, 2)
    count = 0
    while weights + reserved + (count + 1) * one_sequence <= gpu_bytes:
        count += 1
    assert ref.max_concurrent_sequences(config, gpu_bytes, weights, seq_len, 2, reserved) == count


# --- the solution -----------------------------------------------------------------------------------------

@st.composite
def large_configs(draw) -> dict:
    """Configs at real-model scale, of every kind."""
    heads = draw(st.sampled_from([8, 32, 64, 128]))
    config = {"num_hidden_layers": draw(st.integers(1, 128)), "num_attention_heads": heads,
              "hidden_size": heads * draw(st.sampled_from([64, 128])),
              "num_key_value_heads": heads // draw(st.sampled_from([1, 2, 8]))}
    extra = draw(st.sampled_from(["none", "head_dim", "window", "mla"]))
    if extra == "head_dim":
        config["head_dim"] = 256
    if extra == "window":
        config["sliding_window"] = draw(st.sampled_from([512, 4096]))
    if extra == "mla":
        config.update(kv_lora_rank=512, qk_rope_head_dim=64)
    return config


@QUICK
@given(config=large_configs(), seq_len=st.integers(1, 200_000), batch=st.integers(1, 64),
       dtype_bytes=st.sampled_from([1, 2, 4]), gpu_bytes=st.integers(0, 10**12), weight_bytes=st.integers(0, 10**12),
       reserved_bytes=st.integers(0, 10**11))
def test_solution_matches_reference(config, seq_len, batch, dtype_bytes, gpu_bytes, weight_bytes, reserved_bytes):
    calls = [("kv_bytes_per_token", (config, dtype_bytes)),
             ("kv_cache_bytes", (config, seq_len, batch, dtype_bytes)),
             ("max_concurrent_sequences", (config, gpu_bytes, weight_bytes, seq_len, dtype_bytes, reserved_bytes))]
    for fn, args in calls:
        answer = getattr(sol, fn)(*args)
        assert type(answer) is int
        assert answer == getattr(ref, fn)(*args) >= 0


LLAMA = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64}
MEMORY = {"gpu_bytes": 10**9, "weight_bytes": 10**8}
BAD_CALLS = [
    ("seq_len", "kv_cache_bytes", LLAMA, {"seq_len": -1}),
    ("seq_len", "max_concurrent_sequences", LLAMA, {**MEMORY, "seq_len": -3}),
    ("batch", "kv_cache_bytes", LLAMA, {"seq_len": 4, "batch": -1}),
    ("dtype_bytes", "kv_bytes_per_token", LLAMA, {"dtype_bytes": 0}),
    ("dtype_bytes", "kv_cache_bytes", LLAMA, {"seq_len": 4, "dtype_bytes": -2}),
    ("dtype_bytes", "max_concurrent_sequences", LLAMA, {**MEMORY, "seq_len": 4, "dtype_bytes": 0}),
    ("num_hidden_layers", "kv_bytes_per_token", {"num_attention_heads": 4, "hidden_size": 64}, {}),
    ("num_attention_heads", "kv_bytes_per_token", {"num_hidden_layers": 2, "hidden_size": 64}, {}),
    ("hidden_size", "kv_bytes_per_token", {"num_hidden_layers": 2, "num_attention_heads": 4}, {}),
    ("qk_rope_head_dim", "kv_bytes_per_token", {"num_hidden_layers": 2, "kv_lora_rank": 8}, {}),
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, config, kwargs", BAD_CALLS)
def test_bad_arguments_name_the_argument(module, argument, fn, config, kwargs):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(config, **kwargs)


def test_absent_keys_default_as_the_contract_says():
    derived = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64}
    explicit = {**derived, "num_key_value_heads": 4, "head_dim": 16}
    for module in (ref, sol):
        assert module.kv_bytes_per_token(derived) == module.kv_bytes_per_token(explicit) == 2 * 2 * 4 * 16 * 2


# --- stub, hints, mutants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("kv_bytes_per_token", (LLAMA,)), ("kv_cache_bytes", (LLAMA, 4)),
                                      ("max_concurrent_sequences", (LLAMA, 10**9, 10**8, 4))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)



def mutant(misconception: str) -> types.ModuleType:
    """The solution with the mutant appended, as the selftest builds it."""
    module = types.ModuleType(f"kv_cache_{misconception}")
    source = (ROOT / "solutions" / "kv_cache.py").read_text() + "\n" + (MUTANTS / f"{misconception}.py").read_text()
    exec(compile(source, str(MUTANTS / f"{misconception}.py"), "exec"), module.__dict__)
    return module


REAL_CALLS = [(fn, stem, kwargs)
              for stem in ("meta-llama--Meta-Llama-3-8B", "meta-llama--Meta-Llama-3-70B",
                           "mistralai--Mistral-7B-v0.1", "deepseek-ai--DeepSeek-V3")
              for fn, kwargs in (("kv_bytes_per_token", {"dtype_bytes": 2}),
                                 ("kv_cache_bytes", {"seq_len": 32768, "batch": 2}),
                                 ("max_concurrent_sequences", {"gpu_bytes": 8 * 141 * 10**9,
                                                               "weight_bytes": 160 * 10**9, "seq_len": 32768,
                                                               "reserved_bytes": 50 * 10**9}))]


@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_mutant_output_is_what_its_misconception_predicts(misconception):
    module = mutant(misconception)
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    differs = 0
    for fn, stem, kwargs in REAL_CALLS:
        config = hf_config(stem)
        got = getattr(module, fn)(config, **kwargs)
        predicted = misconception_values(ref, fn, config, **kwargs)
        if got != getattr(ref, fn)(config, **kwargs):
            differs += 1
            assert predicted.get(misconception) == got, (fn, stem)
            assert list(predicted.values()).count(got) == 1, "another misconception gives the same number"
    assert differs > 0
