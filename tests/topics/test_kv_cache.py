"""Project tests for the kv_cache topic: the reference against caches built from real tensors and brute-force
counts, the config excerpts (and, with transformers installed, their derivation), the solution against the
reference, the stub, the hints and the mutants."""
import json
import re
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

from exercises import kv_cache as stub
from grader import hints
from grader.checks.kv_cache.expect import expect_plan
from grader.checks.kv_cache.misconceptions import mha_equivalent, misconception_values
from grader.engine import CheckFailure
from mutated import mutant
from reference import kv_cache as ref
from solutions import kv_cache as sol

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "grader" / "checks" / "kv_cache" / "configs"
MUTANTS = ROOT / "tests" / "mutants" / "kv_cache"
FUNCTIONS = ("kv_bytes_per_token", "kv_cache_bytes", "max_concurrent_sequences", "memory_plan")
MISCONCEPTIONS = {"uses_query_heads", "missing_kv_factor", "mla_as_mha", "ignores_sliding_window",
                  "ignores_reserved_memory", "window_on_every_layer", "forgets_all_position_logits"}
DTYPES = {1: torch.uint8, 2: torch.bfloat16, 4: torch.float32}
QUICK = settings(max_examples=40, deadline=None)
MODELS = {"meta-llama--Meta-Llama-3-8B", "meta-llama--Meta-Llama-3-70B", "mistralai--Mistral-7B-v0.1",
          "deepseek-ai--DeepSeek-V3", "google--gemma-2-9b-it", "google--gemma-3-1b-it", "openai--gpt-oss-20b",
          "Qwen--Qwen2.5-7B-Instruct"}


def hf_config(stem: str) -> dict:
    """A stored config excerpt."""
    return json.loads((CONFIGS / f"{stem}.json").read_text())


# --- small random configs -------------------------------------------------------------------------------

@st.composite
def gqa_configs(draw) -> dict:
    """MHA/GQA/MQA configs: head_dim given or derived, KV heads given or not, windows on every layer, by
    layer_types or unused, optional keys sometimes written as null."""
    kv_heads = draw(st.integers(1, 4))
    heads = kv_heads * draw(st.sampled_from([1, 2, 4]))
    layers = draw(st.integers(1, 4))
    config = {"num_hidden_layers": layers, "num_attention_heads": heads,
              "hidden_size": heads * draw(st.sampled_from([4, 8]))}
    if kv_heads < heads or draw(st.booleans()):
        config["num_key_value_heads"] = kv_heads
    if draw(st.booleans()):
        config["head_dim"] = draw(st.sampled_from([2, 6]))
    if draw(st.booleans()):
        config["sliding_window"] = draw(st.integers(1, 12))
        selector = draw(st.sampled_from(["none", "layer_types", "use_true", "use_false"]))
        if selector == "layer_types":
            config["layer_types"] = draw(st.lists(st.sampled_from(["sliding_attention", "full_attention"]),
                                                  min_size=layers, max_size=layers))
        elif selector != "none":
            config["use_sliding_window"] = selector == "use_true"
    for key in ("num_key_value_heads", "head_dim", "sliding_window", "layer_types", "kv_lora_rank"):
        if key not in config and draw(st.booleans()):
            config[key] = None
    return config


@st.composite
def mla_configs(draw) -> dict:
    """Multi-head latent attention configs (with the head keys real ones carry)."""
    heads = draw(st.sampled_from([2, 4]))
    return {"num_hidden_layers": draw(st.integers(1, 3)), "num_attention_heads": heads,
            "num_key_value_heads": heads, "hidden_size": 8 * heads,
            "kv_lora_rank": draw(st.integers(1, 16)), "qk_rope_head_dim": draw(st.sampled_from([2, 4])),
            "qk_nope_head_dim": draw(st.sampled_from([2, 6])), "v_head_dim": draw(st.sampled_from([2, 4]))}


configs = st.one_of(gqa_configs(), mla_configs())


def windowed(config: dict) -> list[bool]:
    """The contract's rule, written out once more: which layers keep only the last sliding_window tokens."""
    layers = config["num_hidden_layers"]
    if config.get("sliding_window") is None:
        return [False] * layers
    if config.get("layer_types") is not None:
        return [kind == "sliding_attention" for kind in config["layer_types"]]
    return [config.get("use_sliding_window") is not False] * layers


def decoded_cache_bytes(config: dict, seq_len: int, batch: int, dtype_bytes: int) -> int:
    """Decode `seq_len` tokens into real per-layer cache tensors, evicting beyond each windowed layer's window, and
    count bytes."""
    dtype = DTYPES[dtype_bytes]
    if config.get("kv_lora_rank") is not None:
        # DeepSeek MLA caches the compressed KV latent and the shared RoPE key: [B, T, rank], [B, T, rope]
        widths = [(config["kv_lora_rank"],), (config["qk_rope_head_dim"],)]
        time_dim = 1
    else:
        heads = config["num_attention_heads"]
        kv_heads = config.get("num_key_value_heads") or heads
        head_dim = config.get("head_dim") or config["hidden_size"] // heads
        widths = [(kv_heads, head_dim), (kv_heads, head_dim)]              # K and V: [B, H_kv, T, D]
        time_dim = 2
    layers = []
    for is_windowed in windowed(config):
        window = config["sliding_window"] if is_windowed else seq_len
        layer = []
        for width in widths:
            cache = torch.empty((batch, *width[:-1], 0, width[-1]), dtype=dtype)
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
    deepseek = hf_config("deepseek-ai--DeepSeek-V3")
    for module in (ref, sol):
        assert module.kv_bytes_per_token(hf_config("meta-llama--Meta-Llama-3-8B"), 2) == 131_072
        assert module.kv_bytes_per_token(deepseek, 2) == 70_272 == 61 * (512 + 64) * 2
    # as plain MHA: 61 layers x 128 heads x (192 + 128) x 2 bytes, 40,960 elements a layer, 71x the 576 of the latent
    as_mha = ref.kv_bytes_per_token(mha_equivalent(deepseek), 2)
    assert as_mha == 61 * 128 * (192 + 128) * 2 == 61 * 40_960 * 2 and 40_960 // 576 == 71
    assert mutant("kv_cache", "mla_as_mha").kv_bytes_per_token(deepseek, 2) == as_mha


def test_hybrid_models_by_hand():
    # gemma-3-1b: 26 layers, 1 KV head of 256 -> 2 x 256 x 2 = 1,024 bytes a token a layer; layers 5, 11, 17, 23
    # are global, the 22 others keep 512 tokens
    gemma3 = hf_config("google--gemma-3-1b-it")
    assert [i for i, kind in enumerate(gemma3["layer_types"]) if kind == "full_attention"] == [5, 11, 17, 23]
    assert ref.kv_cache_bytes(gemma3, 32768) == 4 * 32768 * 1024 + 22 * 512 * 1024
    # gpt-oss-20b: 8 KV heads of 64 -> 2,048 bytes a token a layer; 12 global layers, 12 of window 128
    gpt_oss = hf_config("openai--gpt-oss-20b")
    assert ref.kv_cache_bytes(gpt_oss, 131072) == 12 * 131072 * 2048 + 12 * 128 * 2048
    # gemma-2-9b: 8 KV heads of 256 -> 8,192 bytes; 21 global, 21 local layers of window 4096
    assert ref.kv_cache_bytes(hf_config("google--gemma-2-9b-it"), 8192) == 21 * 8192 * 8192 + 21 * 4096 * 8192
    # Qwen2.5-7B: the window is shipped unused (config.json) or null (to_dict); 28 x 2 x 4 x 128 x 2 = 57,344
    for stem in ("Qwen--Qwen2.5-7B-Instruct", "Qwen--Qwen2.5-7B-Instruct.config"):
        assert ref.kv_cache_bytes(hf_config(stem), 32768, 4) == 4 * 32768 * 57_344


def test_a_raw_gemma2_config_json_undercounts_its_cache_by_a_third():
    # what the stub, the hint and the notebook say: without layer_types (a raw config.json) every layer of
    # Gemma-2-9B is windowed; at its 8,192-token context the 21 global layers lose half their tokens
    loaded = hf_config("google--gemma-2-9b-it")
    raw = {key: value for key, value in loaded.items() if key != "layer_types"}
    assert loaded["max_position_embeddings"] == 8192 and len(loaded["layer_types"]) == 42
    assert ref.kv_cache_bytes(raw, 4096) == ref.kv_cache_bytes(loaded, 4096)       # within the window they agree
    assert 3 * ref.kv_cache_bytes(raw, 8192) == 2 * ref.kv_cache_bytes(loaded, 8192)


@pytest.mark.parametrize("seq_len", [3, 7, 8, 13])
def test_hugging_faces_sliding_caches_hold_the_window_or_one_token_less(seq_len):
    # what the stub and the notebook say (issue 26, point 9): a windowed query attends to sliding_window tokens,
    # its own included, and the exercise counts those; Hugging Face's static sliding layer allocates them, its
    # dynamic one keeps sliding_window - 1 between steps and attends to them plus the new token
    cache_utils = pytest.importorskip("transformers.cache_utils")
    window, heads, dim = 8, 2, 4
    config = {"num_hidden_layers": 1, "num_attention_heads": heads, "head_dim": dim, "sliding_window": window}
    dynamic = cache_utils.DynamicSlidingWindowLayer(sliding_window=window)
    static = cache_utils.StaticSlidingWindowLayer(max_cache_len=64, sliding_window=window)
    for _token in range(seq_len):
        new = torch.zeros(1, heads, 1, dim, dtype=torch.bfloat16)  # [B, H_kv, 1, D], 2 bytes an element
        attended, _ = dynamic.update(new, new)
        static.update(new, new)
    token_bytes = 2 * heads * dim * 2  # K and V of one token in one layer
    counted = ref.kv_cache_bytes(config, seq_len)
    assert attended.shape[-2] * token_bytes == counted                   # the window attended is what is counted
    held = dynamic.keys.nbytes + dynamic.values.nbytes
    assert held == counted - (token_bytes if seq_len >= window else 0)   # the dynamic layer keeps one token less
    if seq_len >= window:
        assert static.keys.nbytes + static.values.nbytes == counted      # the static layer allocates the window

def test_memory_plan_by_hand():
    llama = hf_config("meta-llama--Meta-Llama-3-8B")
    weights = 8_030_261_248 * 2
    plan = ref.memory_plan(llama, weights, 8, 8192, all_logits=True)
    # 8 x 8192 positions x 128,256 scores x 4 bytes; 8 x 8192 tokens x 131,072 bytes of cache
    assert plan == {"weights": weights, "kv_cache": 8_589_934_592, "logits": 33_621_540_864,
                    "total": weights + 8_589_934_592 + 33_621_540_864}
    assert ref.memory_plan(llama, weights, 1, 8192)["logits"] == 128_256 * 4


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


@QUICK
@given(config=configs, seq_len=st.integers(1, 6), batch=st.integers(1, 3), vocab=st.integers(1, 50),
       weights=st.integers(0, 10**6), all_logits=st.booleans())
def test_reference_plan_matches_real_logits(config, seq_len, batch, vocab, weights, all_logits):
    # the float32 logits a forward returns: [B, T, V] when every position keeps them, else [B, 1, V]
    logits = torch.empty((batch, seq_len if all_logits else 1, vocab), dtype=torch.float32)
    cache = decoded_cache_bytes(config, seq_len, batch, 2)
    plan = ref.memory_plan({**config, "vocab_size": vocab}, weights, batch, seq_len, 2, all_logits)
    assert plan == {"weights": weights, "kv_cache": cache, "logits": logits.nbytes,
                    "total": weights + cache + logits.nbytes}


# --- the config excerpts ----------------------------------------------------------------------------------

def test_config_excerpts_hold_the_published_values():
    expected = {
        "meta-llama--Meta-Llama-3-8B": {"num_hidden_layers": 32, "num_attention_heads": 32,
                                        "num_key_value_heads": 8, "hidden_size": 4096, "vocab_size": 128256},
        "meta-llama--Meta-Llama-3-70B": {"num_hidden_layers": 80, "num_attention_heads": 64,
                                         "num_key_value_heads": 8, "hidden_size": 8192},
        "mistralai--Mistral-7B-v0.1": {"num_hidden_layers": 32, "num_attention_heads": 32,
                                       "num_key_value_heads": 8, "hidden_size": 4096, "sliding_window": 4096},
        "deepseek-ai--DeepSeek-V3": {"num_hidden_layers": 61, "num_attention_heads": 128,
                                     "num_key_value_heads": 128, "hidden_size": 7168, "kv_lora_rank": 512,
                                     "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128},
        "google--gemma-2-9b-it": {"num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
                                  "head_dim": 256, "sliding_window": 4096,
                                  "layer_types": ["sliding_attention", "full_attention"] * 21},
        "google--gemma-3-1b-it": {"num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
                                  "head_dim": 256, "sliding_window": 512, "sliding_window_pattern": 6},
        "openai--gpt-oss-20b": {"num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
                                "head_dim": 64, "sliding_window": 128,
                                "layer_types": ["sliding_attention", "full_attention"] * 12},
        "Qwen--Qwen2.5-7B-Instruct": {"num_hidden_layers": 28, "num_attention_heads": 28,
                                      "num_key_value_heads": 4, "hidden_size": 3584, "sliding_window": None,
                                      "use_sliding_window": False},
        "Qwen--Qwen2.5-7B-Instruct.config": {"sliding_window": 131072, "use_sliding_window": False},
    }
    assert {path.stem for path in CONFIGS.glob("*.json")} == set(expected)
    for stem, values in expected.items():
        config = hf_config(stem)
        assert config["_name_or_path"] == stem.removesuffix(".config").replace("--", "/")
        assert {key: config[key] for key in values} == values
    assert "layer_types" not in hf_config("Qwen--Qwen2.5-7B-Instruct.config")
    readme = (CONFIGS / "README.md").read_text()
    assert all(f"`{path.name}`" in readme or path.name.endswith(".config.json") for path in CONFIGS.glob("*.json"))


# keys a config class derives that some models' config.json nevertheless writes, with the models that write them
DERIVED = ("layer_types", "head_dim", "sliding_window")
WRITTEN = {"google--gemma-2-9b-it": ("head_dim", "sliding_window"),
           "google--gemma-3-1b-it": ("head_dim", "sliding_window"),
           "openai--gpt-oss-20b": ("head_dim", "sliding_window", "layer_types"),
           "mistralai--Mistral-7B-v0.1": ("sliding_window",)}


def test_excerpts_are_what_transformers_makes_of_them():
    transformers = pytest.importorskip("transformers")
    qwen_hub = hf_config("Qwen--Qwen2.5-7B-Instruct.config")
    for stem in MODELS:
        stored = hf_config(stem)
        values = {k: v for k, v in stored.items() if k not in DERIVED + ("_name_or_path", "model_type", "dtype")}
        values.update({key: stored[key] for key in WRITTEN.get(stem, ())})
        if stem.startswith("Qwen"):
            values["sliding_window"] = qwen_hub["sliding_window"]   # 131072 in config.json, null once loaded
        made = transformers.AutoConfig.for_model(stored["model_type"], **values).to_dict()
        compared = set(stored) - {"_name_or_path", "dtype"}
        assert {k: made.get(k) for k in compared} == {k: stored[k] for k in compared}, stem


# --- the solution -----------------------------------------------------------------------------------------

@st.composite
def large_configs(draw) -> dict:
    """Configs at real-model scale, of every kind."""
    heads = draw(st.sampled_from([8, 32, 64, 128]))
    layers = draw(st.integers(1, 128))
    config = {"num_hidden_layers": layers, "num_attention_heads": heads,
              "hidden_size": heads * draw(st.sampled_from([64, 128])),
              "num_key_value_heads": heads // draw(st.sampled_from([1, 2, 8])), "vocab_size": 152064}
    extra = draw(st.sampled_from(["none", "head_dim", "window", "hybrid", "unused", "mla", "nulls"]))
    if extra == "head_dim":
        config["head_dim"] = 256
    if extra in ("window", "hybrid", "unused"):
        config["sliding_window"] = draw(st.sampled_from([128, 512, 4096]))
    if extra == "hybrid":
        period = draw(st.integers(2, 6))
        config["layer_types"] = ["full_attention" if (i + 1) % period == 0 else "sliding_attention"
                                 for i in range(layers)]
    if extra == "unused":
        config["use_sliding_window"] = False
    if extra == "mla":
        config.update(kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128)
    if extra == "nulls":
        config.update(num_key_value_heads=None, head_dim=None, sliding_window=None, layer_types=None)
    return config


@QUICK
@given(config=large_configs(), seq_len=st.integers(1, 200_000), batch=st.integers(1, 64),
       dtype_bytes=st.sampled_from([1, 2, 4]), gpu_bytes=st.integers(0, 10**12), weight_bytes=st.integers(0, 10**12),
       reserved_bytes=st.integers(0, 10**11), all_logits=st.booleans())
def test_solution_matches_reference(config, seq_len, batch, dtype_bytes, gpu_bytes, weight_bytes, reserved_bytes,
                                    all_logits):
    calls = [("kv_bytes_per_token", (config, dtype_bytes)),
             ("kv_cache_bytes", (config, seq_len, batch, dtype_bytes)),
             ("max_concurrent_sequences", (config, gpu_bytes, weight_bytes, seq_len, dtype_bytes, reserved_bytes)),
             ("memory_plan", (config, weight_bytes, batch, seq_len, dtype_bytes, all_logits))]
    for fn, args in calls:
        answer = getattr(sol, fn)(*args)
        assert answer == getattr(ref, fn)(*args)
        for value in answer.values() if isinstance(answer, dict) else [answer]:
            assert type(value) is int and value >= 0


LLAMA = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "vocab_size": 100}
MEMORY = {"gpu_bytes": 10**9, "weight_bytes": 10**8}
STEP = {"weight_bytes": 10**8, "batch": 2, "seq_len": 4}
BAD_CALLS = [
    ("seq_len", "kv_cache_bytes", LLAMA, {"seq_len": -1}),
    ("seq_len", "max_concurrent_sequences", LLAMA, {**MEMORY, "seq_len": -3}),
    ("seq_len", "max_concurrent_sequences", LLAMA, {**MEMORY, "seq_len": 0}),
    ("gpu_bytes", "max_concurrent_sequences", LLAMA, {**MEMORY, "gpu_bytes": -1, "seq_len": 4}),
    ("reserved_bytes", "max_concurrent_sequences", LLAMA, {**MEMORY, "seq_len": 4, "reserved_bytes": -1}),
    ("batch", "kv_cache_bytes", LLAMA, {"seq_len": 4, "batch": -1}),
    ("dtype_bytes", "kv_bytes_per_token", LLAMA, {"dtype_bytes": 0}),
    ("dtype_bytes", "kv_cache_bytes", LLAMA, {"seq_len": 4, "dtype_bytes": -2}),
    ("dtype_bytes", "max_concurrent_sequences", LLAMA, {**MEMORY, "seq_len": 4, "dtype_bytes": 0}),
    ("dtype_bytes", "memory_plan", LLAMA, {**STEP, "dtype_bytes": 0}),
    ("batch", "memory_plan", LLAMA, {**STEP, "batch": 0}),
    ("seq_len", "memory_plan", LLAMA, {**STEP, "seq_len": 0}),
    ("weight_bytes", "memory_plan", LLAMA, {**STEP, "weight_bytes": -1}),
    ("vocab_size", "memory_plan", {**LLAMA, "vocab_size": None}, STEP),
    ("num_hidden_layers", "kv_bytes_per_token", {"num_attention_heads": 4, "hidden_size": 64}, {}),
    ("num_attention_heads", "kv_bytes_per_token", {"num_hidden_layers": 2, "hidden_size": 64}, {}),
    ("hidden_size", "kv_bytes_per_token", {"num_hidden_layers": 2, "num_attention_heads": 4}, {}),
    ("hidden_size", "kv_bytes_per_token", {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": None}, {}),
    ("qk_rope_head_dim", "kv_bytes_per_token", {"num_hidden_layers": 2, "kv_lora_rank": 8}, {}),
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, config, kwargs", BAD_CALLS)
def test_bad_arguments_name_the_argument(module, argument, fn, config, kwargs):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(config, **kwargs)


def test_zero_lengths_and_batches_are_allowed_where_the_contract_says():
    for module in (ref, sol):
        assert module.kv_cache_bytes(LLAMA, 0, 3) == module.kv_cache_bytes(LLAMA, 5, 0) == 0


def test_absent_and_null_keys_default_as_the_contract_says():
    derived = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64}
    explicit = {**derived, "num_key_value_heads": 4, "head_dim": 16}
    nulls = {**derived, "num_key_value_heads": None, "head_dim": None, "kv_lora_rank": None}
    for module in (ref, sol):
        assert module.kv_bytes_per_token(derived) == module.kv_bytes_per_token(explicit) == 2 * 2 * 4 * 16 * 2
        assert module.kv_bytes_per_token(nulls) == module.kv_bytes_per_token(derived)


def test_expect_plan_names_the_entry_and_the_misconception():
    llama = hf_config("meta-llama--Meta-Llama-3-8B")
    kwargs = {"weight_bytes": 10**9, "batch": 8, "seq_len": 8192, "all_logits": True}
    expected = ref.memory_plan(llama, **kwargs)
    wrong = misconception_values(ref, "memory_plan", llama, **kwargs)
    with pytest.raises(CheckFailure) as failure:
        expect_plan(wrong["forgets_all_position_logits"], expected, "memory_plan(...)", wrong)
    assert failure.value.misconception == "forgets_all_position_logits" and "'logits'" in str(failure.value)
    with pytest.raises(CheckFailure):
        expect_plan({**expected, "logits": float(expected["logits"])}, expected, "memory_plan(...)", wrong)


# --- stub, hints, mutants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("kv_bytes_per_token", (LLAMA,)), ("kv_cache_bytes", (LLAMA, 4)),
                                      ("max_concurrent_sequences", (LLAMA, 10**9, 10**8, 4)),
                                      ("memory_plan", (LLAMA, 10**8, 2, 4))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_hints_do_not_repeat_the_docstring(fn):
    doc = words(getattr(stub, fn).__doc__ + (stub.__doc__ or ""))
    runs = {tuple(doc[i:i + 8]) for i in range(len(doc) - 7)}
    for level in (1, 2, 3):
        hint = words(hints.hint("kv_cache", fn, level))
        shared = [" ".join(hint[i:i + 8]) for i in range(len(hint) - 7) if tuple(hint[i:i + 8]) in runs]
        assert not shared, (fn, level, shared)


def test_hints_cover_every_function_and_misconception():
    assert set(hints.load("kv_cache")["functions"]) == set(FUNCTIONS)
    assert set(hints.misconception_ids("kv_cache")) == MISCONCEPTIONS == {p.stem for p in MUTANTS.glob("*.py")}
    assert '" in config' not in hints.hint("kv_cache", "kv_bytes_per_token", 3).replace("`key in config`", "")


SERVER = {"gpu_bytes": 8 * 141 * 10**9, "weight_bytes": 160 * 10**9, "seq_len": 32768, "reserved_bytes": 50 * 10**9}
REAL_CALLS = [(fn, stem, kwargs)
              for stem in sorted(MODELS | {"Qwen--Qwen2.5-7B-Instruct.config"})
              for fn, kwargs in (("kv_bytes_per_token", {"dtype_bytes": 2}),
                                 ("kv_cache_bytes", {"seq_len": 32768, "batch": 2}),
                                 ("max_concurrent_sequences", SERVER),
                                 ("memory_plan", {"weight_bytes": 10**9, "batch": 8, "seq_len": 32768,
                                                  "all_logits": True}))]


@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_mutant_output_is_what_its_misconception_predicts(misconception):
    module = mutant("kv_cache", misconception)
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


def test_notebook_closes_on_what_the_topic_does_not_do():
    from grader.learner.notebooks.build import build

    last = build("kv_cache").cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## What this does not do")
    # the chapter's completion standard: computation state, not memory; deleting it costs a recomputation, not a
    # capability; a hit is not remembering a user (and with prefix caching, full blocks stay until evicted)
    phrases = ("computation state, not memory", "costs a recomputation", "never a capability",
               "A cache hit is not the model remembering a user", "until memory pressure evicts them")
    assert all(phrase in " ".join(last.source.split()) for phrase in phrases)
