"""Public kv_cache checks: real model configs (configs/*.json) and small fixed cases; answers from the goldens."""
import json
from pathlib import Path

from grader.checks.kv_cache.expect import call_text, expect_count, expect_plan
from grader.checks.kv_cache.misconceptions import misconception_values
from grader.engine import check, expect_raises, fail, golden, reference, tr, type_name

CONFIGS = Path(__file__).with_name("configs")


def hf_config(hub_id: str, form: str = "") -> dict:
    """The stored config excerpt of a Hugging Face model: `AutoConfig...to_dict()`, or config.json (form ".config")."""
    return json.loads((CONFIGS / f"{hub_id.replace('/', '--')}{form}.json").read_text())


LLAMA3_8B = hf_config("meta-llama/Meta-Llama-3-8B")
LLAMA3_70B = hf_config("meta-llama/Meta-Llama-3-70B")
MISTRAL_7B = hf_config("mistralai/Mistral-7B-v0.1")
DEEPSEEK_V3 = hf_config("deepseek-ai/DeepSeek-V3")
GEMMA2_9B = hf_config("google/gemma-2-9b-it")
GEMMA3_1B = hf_config("google/gemma-3-1b-it")
GPT_OSS_20B = hf_config("openai/gpt-oss-20b")
QWEN25_7B = hf_config("Qwen/Qwen2.5-7B-Instruct")
QWEN25_7B_HUB = hf_config("Qwen/Qwen2.5-7B-Instruct", ".config")
REAL_MODELS = {"Llama-3-8B": LLAMA3_8B, "Llama-3-70B": LLAMA3_70B, "Mistral-7B-v0.1": MISTRAL_7B,
               "DeepSeek-V3": DEEPSEEK_V3, "gemma-2-9b": GEMMA2_9B, "gemma-3-1b": GEMMA3_1B,
               "gpt-oss-20b": GPT_OSS_20B, "Qwen2.5-7B": QWEN25_7B}

GIB = 2**30
GPU_80GIB = 80 * GIB            # round sizes of a GPU's memory, not one product's figure
GPU_24GIB = 24 * GIB
# weights in bf16: parameter counts (embeddings, attention, MLP, norms, untied LM head) times 2 bytes
LLAMA3_8B_WEIGHTS = 8_030_261_248 * 2
LLAMA3_70B_WEIGHTS = 70_553_706_496 * 2
MISTRAL_7B_WEIGHTS = 7_241_732_096 * 2
# DeepSeek-V3 on 8 GPUs of 141 GB (NVIDIA H200 product page, checked 2026-11-30) with its 671B parameters in FP8
# (one byte each; the DeepSeek-V3 model card, checked 2026-11-30)
EIGHT_H200 = 8 * 141 * 10**9
DEEPSEEK_V3_WEIGHTS = 671 * 10**9
# gpt-oss-20b "runs within 16 GB of memory" (OpenAI's gpt-oss announcement, 2025-08-05): taken as its weights
GPT_OSS_20B_WEIGHTS = 16 * 10**9


def stored(key: str, fn: str, config: dict, **kwargs) -> dict:
    """The golden answer to `fn(config, **kwargs)` and what each misconception would return instead."""
    def compute() -> dict:
        ref = reference("kv_cache")
        return {"expected": getattr(ref, fn)(config, **kwargs),
                "wrong": misconception_values(ref, fn, config, **kwargs)}
    return golden(key, compute)


def expect_answer(sub, key: str, fn: str, label: str, config: dict, **kwargs):
    """Call the submission's `fn(config, **kwargs)` and compare it with the golden `key`; returns the answer."""
    case = stored(key, fn, config, **kwargs)
    compare = expect_plan if fn == "memory_plan" else expect_count
    compare(getattr(sub, fn)(config, **kwargs), case["expected"], call_text(fn, label, **kwargs), case["wrong"])
    return case["expected"]


def expect_cache_bytes(sub, name: str, label: str, config: dict, seq_len: int, batch: int) -> None:
    """kv_cache_bytes(config, seq_len=seq_len, batch=batch) against the golden cache.{name}.{seq_len}x{batch}."""
    expect_answer(sub, f"cache.{name}.{seq_len}x{batch}", "kv_cache_bytes", label, config, seq_len=seq_len,
                  batch=batch)


def expect_names(sub, argument: str, fn: str, label: str, config: dict, **kwargs) -> None:
    """`fn(config, **kwargs)` must raise a ValueError whose message names `argument`."""
    what = call_text(fn, label, **kwargs)
    message = expect_raises(ValueError, getattr(sub, fn), config, **kwargs)
    if argument not in message:
        fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}", call=what, message=message,
                name=argument))


# --- kv_bytes_per_token -------------------------------------------------------------------------------------

@check("gqa_bytes_per_token", points=2, hint="kv_bytes_per_token",
       title="kv_bytes_per_token of Llama-3-8B (131,072 in bf16), Llama-3-70B, Mistral-7B, Qwen2.5-7B, Gemma-2/3, "
             "gpt-oss-20b")
def test_gqa_bytes_per_token(sub):
    for name in ("Llama-3-8B", "Llama-3-70B", "Mistral-7B-v0.1", "Qwen2.5-7B", "gemma-2-9b", "gemma-3-1b",
                 "gpt-oss-20b"):
        expect_answer(sub, f"per_token.{name}", "kv_bytes_per_token", f"{name} config", REAL_MODELS[name],
                      dtype_bytes=2)


@check("mla_bytes_per_token", points=2, hint="kv_bytes_per_token",
       title="kv_bytes_per_token of DeepSeek-V3: one 576-element latent per layer (70,272 in bf16), not the 40,960 "
             "elements of per-head K (192) and V (128)")
def test_mla_bytes_per_token(sub):
    expect_answer(sub, "per_token.DeepSeek-V3", "kv_bytes_per_token", "DeepSeek-V3 config", DEEPSEEK_V3,
                  dtype_bytes=2)


@check("head_dim_default", points=1, hint="kv_bytes_per_token",
       title="without head_dim, the head size is hidden_size // num_attention_heads")
def test_head_dim_default(sub):
    config = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 64}
    expect_answer(sub, "per_token.no_head_dim", "kv_bytes_per_token", repr(config), config)


@check("head_dim_explicit", points=1, hint="kv_bytes_per_token",
       title="a head_dim key is used even when it differs from hidden_size // num_attention_heads")
def test_head_dim_explicit(sub):
    config = {"num_hidden_layers": 3, "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 256,
              "head_dim": 64}
    expect_answer(sub, "per_token.head_dim", "kv_bytes_per_token", repr(config), config)


@check("kv_heads_default", points=1, hint="kv_bytes_per_token",
       title="without num_key_value_heads, every attention head has its own K/V (multi-head attention)")
def test_kv_heads_default(sub):
    config = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64}
    expect_answer(sub, "per_token.no_kv_heads", "kv_bytes_per_token", repr(config), config)


@check("null_keys_are_absent", points=1, hint="kv_bytes_per_token",
       title="a key set to null (None) counts as absent: num_key_value_heads, head_dim, kv_lora_rank, sliding_window")
def test_null_keys_are_absent(sub):
    # as to_dict() writes configs that lack a feature (Qwen2.5's "sliding_window": null)
    config = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": None, "hidden_size": 64,
              "head_dim": None, "kv_lora_rank": None, "sliding_window": None, "layer_types": None}
    expect_answer(sub, "per_token.nulls", "kv_bytes_per_token", repr(config), config)
    expect_cache_bytes(sub, "nulls", repr(config), config, 40, 3)


@check("dtype_bytes", points=1, hint="kv_bytes_per_token",
       title="kv_bytes_per_token scales with dtype_bytes (fp8 = 1, fp32 = 4)")
def test_dtype_bytes(sub):
    bf16 = stored("per_token.Llama-3-8B", "kv_bytes_per_token", LLAMA3_8B, dtype_bytes=2)["expected"]
    for dtype_bytes in (1, 4):
        what = call_text("kv_bytes_per_token", "Llama-3-8B config", dtype_bytes=dtype_bytes)
        if sub.kv_bytes_per_token(LLAMA3_8B, dtype_bytes=dtype_bytes) == bf16:
            fail(tr("{what} returned the bf16 size {size}: dtype_bytes is ignored", what=what, size=bf16))
        expect_answer(sub, f"per_token.Llama-3-8B.dtype{dtype_bytes}", "kv_bytes_per_token",
                      "Llama-3-8B config", LLAMA3_8B, dtype_bytes=dtype_bytes)


@check("returns_int", points=1, hint="kv_bytes_per_token",
       title="every count is an int (not a float or a tensor), also inside memory_plan's dict")
def test_returns_int(sub):
    calls = (("kv_bytes_per_token", {}), ("kv_cache_bytes", {"seq_len": 100, "batch": 2}),
             ("max_concurrent_sequences", {"gpu_bytes": GPU_80GIB, "weight_bytes": LLAMA3_8B_WEIGHTS,
                                           "seq_len": 8192}),
             ("memory_plan", {"weight_bytes": LLAMA3_8B_WEIGHTS, "batch": 2, "seq_len": 100}))
    for fn, kwargs in calls:
        result = getattr(sub, fn)(LLAMA3_8B, **kwargs)
        values = result.values() if isinstance(result, dict) else [result]
        for value in values:
            if type(value) is not int:
                fail(tr("{what} returned {type} {value!r}; byte and sequence counts must be Python ints",
                        what=call_text(fn, 'Llama-3-8B config', **kwargs), type=type_name(value), value=value))


@check("bad_dtype_bytes", points=1, hint="kv_bytes_per_token",
       title="dtype_bytes < 1 raises ValueError naming dtype_bytes")
def test_bad_dtype_bytes(sub):
    expect_names(sub, "dtype_bytes", "kv_bytes_per_token", "Llama-3-8B config", LLAMA3_8B, dtype_bytes=0)
    expect_names(sub, "dtype_bytes", "kv_cache_bytes", "Llama-3-8B config", LLAMA3_8B, seq_len=10,
                 dtype_bytes=-2)
    expect_names(sub, "dtype_bytes", "max_concurrent_sequences", "DeepSeek-V3 config", DEEPSEEK_V3,
                 gpu_bytes=EIGHT_H200, weight_bytes=DEEPSEEK_V3_WEIGHTS, seq_len=4096, dtype_bytes=0)


@check("missing_config_keys", points=1, hint="kv_bytes_per_token",
       title="a config without a key the sizing needs (absent or null) raises ValueError naming that key")
def test_missing_config_keys(sub):
    complete = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64}
    for key in complete:
        config = {name: value for name, value in complete.items() if name != key}
        expect_names(sub, key, "kv_bytes_per_token", repr(config), config)
    nulled = {**complete, "hidden_size": None}
    expect_names(sub, "hidden_size", "kv_bytes_per_token", repr(nulled), nulled)
    mla = {name: value for name, value in DEEPSEEK_V3.items() if name != "num_hidden_layers"}
    expect_names(sub, "num_hidden_layers", "kv_cache_bytes", tr("DeepSeek-V3 config without num_hidden_layers"),
                 mla, seq_len=10)


# --- kv_cache_bytes -----------------------------------------------------------------------------------------

@check("cache_bytes_batch", points=2, hint="kv_cache_bytes",
       title="kv_cache_bytes grows with seq_len and batch (Llama-3-8B, Llama-3-70B)")
def test_cache_bytes_batch(sub):
    expect_cache_bytes(sub, "Llama-3-8B", "Llama-3-8B config", LLAMA3_8B, 8192, 4)
    expect_answer(sub, "cache.Llama-3-70B.3000x1.fp8", "kv_cache_bytes", "Llama-3-70B config", LLAMA3_70B,
                  seq_len=3000, batch=1, dtype_bytes=1)


@check("sliding_window_caps", points=2, hint="kv_cache_bytes",
       title="a sliding-window model (Mistral-7B, window 4096) caches at most sliding_window tokens per sequence")
def test_sliding_window_caps(sub):
    for seq_len, batch in ((32768, 2), (4097, 1), (4096, 3)):
        expect_cache_bytes(sub, "Mistral", "Mistral-7B-v0.1 config", MISTRAL_7B, seq_len, batch)


@check("sliding_window_short_sequence", points=1, hint="kv_cache_bytes",
       title="a sequence shorter than the sliding window caches all of its tokens")
def test_sliding_window_short_sequence(sub):
    expect_cache_bytes(sub, "Mistral", "Mistral-7B-v0.1 config", MISTRAL_7B, 1000, 3)


@check("hybrid_layer_types", points=2, hint="kv_cache_bytes",
       title="hybrid models window only their sliding_attention layers: Gemma-2 (1 in 2), Gemma-3 (5 in 6), "
             "gpt-oss (1 in 2)")
def test_hybrid_layer_types(sub):
    # gemma-3-1b at 32768: 4 global layers keep 32768 tokens, 22 local ones 512, where a window on every layer
    # would keep 512 everywhere (26 x 512) and no window 26 x 32768
    for name, config, seq_len, batch in (("gemma-2-9b", GEMMA2_9B, 8192, 1), ("gemma-3-1b", GEMMA3_1B, 32768, 2),
                                         ("gpt-oss-20b", GPT_OSS_20B, 131072, 1)):
        expect_cache_bytes(sub, name, f"{name} config", config, seq_len, batch)


@check("window_not_used", points=1, hint="kv_cache_bytes",
       title="use_sliding_window: false keeps every token (Qwen2), and a null sliding_window means no window")
def test_window_not_used(sub):
    config = {"num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 512,
              "sliding_window": 1024, "use_sliding_window": False}
    expect_cache_bytes(sub, "unused_window", repr(config), config, 4096, 2)
    expect_cache_bytes(sub, "Qwen2.5.config_json", "Qwen2.5-7B config.json", QWEN25_7B_HUB, 32768, 4)
    expect_cache_bytes(sub, "Qwen2.5", "Qwen2.5-7B config", QWEN25_7B, 32768, 4)


@check("mla_cache_bytes", points=1, hint="kv_cache_bytes",
       title="kv_cache_bytes of DeepSeek-V3 at its full 163,840-token context")
def test_mla_cache_bytes(sub):
    expect_cache_bytes(sub, "DeepSeek-V3", "DeepSeek-V3 config", DEEPSEEK_V3, 163840, 2)


@check("bad_seq_len", points=1, hint="kv_cache_bytes",
       title="a negative seq_len raises ValueError naming seq_len")
def test_bad_seq_len(sub):
    expect_names(sub, "seq_len", "kv_cache_bytes", "Llama-3-8B config", LLAMA3_8B, seq_len=-1)
    expect_names(sub, "seq_len", "max_concurrent_sequences", "Llama-3-8B config", LLAMA3_8B,
                 gpu_bytes=GPU_80GIB, weight_bytes=LLAMA3_8B_WEIGHTS, seq_len=-8192)


@check("bad_batch", points=1, hint="kv_cache_bytes",
       title="a negative batch raises ValueError naming batch")
def test_bad_batch(sub):
    expect_names(sub, "batch", "kv_cache_bytes", "Llama-3-8B config", LLAMA3_8B, seq_len=10, batch=-2)


# --- max_concurrent_sequences -------------------------------------------------------------------------------

@check("concurrent_reserved_memory", points=2, hint="max_concurrent_sequences",
       title="max_concurrent_sequences leaves room for weights and reserved memory (Llama-3-8B, 80 GiB)")
def test_concurrent_reserved_memory(sub):
    label = "Llama-3-8B config"
    expect_answer(sub, "concurrent.Llama-3-8B", "max_concurrent_sequences", label, LLAMA3_8B,
                  gpu_bytes=GPU_80GIB, weight_bytes=LLAMA3_8B_WEIGHTS, seq_len=8192)
    expect_answer(sub, "concurrent.Llama-3-8B.reserved", "max_concurrent_sequences", label, LLAMA3_8B,
                  gpu_bytes=GPU_80GIB, weight_bytes=LLAMA3_8B_WEIGHTS, seq_len=8192, reserved_bytes=8 * GIB)


@check("concurrent_whole_sequences", points=1, hint="max_concurrent_sequences",
       title="only whole sequences count: exactly k caches fit, one byte less fits k - 1")
def test_concurrent_whole_sequences(sub):
    one_sequence = stored("cache.Llama-3-8B.8192x1", "kv_cache_bytes", LLAMA3_8B, seq_len=8192)["expected"]
    reserved = 3 * GIB
    for spare in (0, -1):
        gpu_bytes = LLAMA3_8B_WEIGHTS + reserved + 5 * one_sequence + spare
        expect_answer(sub, f"concurrent.Llama-3-8B.exact{spare}", "max_concurrent_sequences", "Llama-3-8B config",
                      LLAMA3_8B, gpu_bytes=gpu_bytes, weight_bytes=LLAMA3_8B_WEIGHTS, seq_len=8192,
                      reserved_bytes=reserved)


@check("concurrent_never_negative", points=1, hint="max_concurrent_sequences",
       title="max_concurrent_sequences is 0, never negative, when weights and reserved memory fill the GPU")
def test_concurrent_never_negative(sub):
    # bf16 Llama-3-70B weights alone exceed an 80 GiB GPU
    expect_answer(sub, "concurrent.Llama-3-70B.too_big", "max_concurrent_sequences", "Llama-3-70B config",
                  LLAMA3_70B, gpu_bytes=GPU_80GIB, weight_bytes=LLAMA3_70B_WEIGHTS, seq_len=8192)
    # weights fit on two GPUs, but the reserved memory takes the rest
    expect_answer(sub, "concurrent.Llama-3-70B.reserved", "max_concurrent_sequences", "Llama-3-70B config",
                  LLAMA3_70B, gpu_bytes=2 * GPU_80GIB, weight_bytes=LLAMA3_70B_WEIGHTS, seq_len=8192,
                  reserved_bytes=40 * GIB)


@check("concurrent_zero_length", points=1, hint="max_concurrent_sequences",
       title="seq_len = 0 raises ValueError naming seq_len: an empty sequence needs no cache, so no count fits")
def test_concurrent_zero_length(sub):
    expect_names(sub, "seq_len", "max_concurrent_sequences", "Llama-3-8B config", LLAMA3_8B,
                 gpu_bytes=GPU_80GIB, weight_bytes=LLAMA3_8B_WEIGHTS, seq_len=0)


@check("concurrent_sliding_window", points=1, hint="max_concurrent_sequences",
       title="max_concurrent_sequences sizes windowed layers by the window: Mistral-7B (24 GiB), gpt-oss-20b (80 GiB)")
def test_concurrent_sliding_window(sub):
    expect_answer(sub, "concurrent.Mistral", "max_concurrent_sequences", "Mistral-7B-v0.1 config", MISTRAL_7B,
                  gpu_bytes=GPU_24GIB, weight_bytes=MISTRAL_7B_WEIGHTS, seq_len=32768, reserved_bytes=2 * GIB)
    expect_answer(sub, "concurrent.gpt-oss-20b", "max_concurrent_sequences", "gpt-oss-20b config", GPT_OSS_20B,
                  gpu_bytes=GPU_80GIB, weight_bytes=GPT_OSS_20B_WEIGHTS, seq_len=131072, reserved_bytes=6 * GIB)


@check("concurrent_mla", points=1, hint="max_concurrent_sequences",
       title="max_concurrent_sequences for DeepSeek-V3 at 128K context on 8 x 141 GB")
def test_concurrent_mla(sub):
    expect_answer(sub, "concurrent.DeepSeek-V3", "max_concurrent_sequences", "DeepSeek-V3 config", DEEPSEEK_V3,
                  gpu_bytes=EIGHT_H200, weight_bytes=DEEPSEEK_V3_WEIGHTS, seq_len=131072,
                  reserved_bytes=60 * 10**9)


# --- memory_plan --------------------------------------------------------------------------------------------

@check("plan_one_against_eight", points=2, hint="memory_plan",
       title="memory_plan of Llama-3-8B, one against eight 8192-token sequences: weights stay, the cache grows 8x")
def test_plan_one_against_eight(sub):
    for batch in (1, 8):
        expect_answer(sub, f"plan.Llama-3-8B.{batch}x8192", "memory_plan", "Llama-3-8B config", LLAMA3_8B,
                      weight_bytes=LLAMA3_8B_WEIGHTS, batch=batch, seq_len=8192)


@check("plan_all_position_logits", points=2, hint="memory_plan",
       title="memory_plan with all_logits: float32 logits of every prompt position dwarf the cache (Llama-3-8B, "
             "8 x 8192 tokens: 33.6 GB of logits against 8.6 GB of cache)")
def test_plan_all_position_logits(sub):
    # 8 sequences x 8192 positions x 128,256 scores x 4 bytes = 33,621,540,864 bytes of logits; the cache is
    # 8 x 8192 tokens x 131,072 bytes = 8,589,934,592
    for batch in (1, 8):
        expect_answer(sub, f"plan.Llama-3-8B.{batch}x8192.all_logits", "memory_plan", "Llama-3-8B config",
                      LLAMA3_8B, weight_bytes=LLAMA3_8B_WEIGHTS, batch=batch, seq_len=8192, all_logits=True)


@check("plan_bad_arguments", points=1, hint="memory_plan",
       title="memory_plan raises ValueError naming batch < 1, seq_len < 1, weight_bytes < 0 or a missing vocab_size")
def test_plan_bad_arguments(sub):
    label = "Llama-3-8B config"
    expect_names(sub, "batch", "memory_plan", label, LLAMA3_8B, weight_bytes=LLAMA3_8B_WEIGHTS, batch=0,
                 seq_len=8192)
    expect_names(sub, "seq_len", "memory_plan", label, LLAMA3_8B, weight_bytes=LLAMA3_8B_WEIGHTS, batch=1,
                 seq_len=0)
    expect_names(sub, "weight_bytes", "memory_plan", label, LLAMA3_8B, weight_bytes=-1, batch=1, seq_len=8192)
    no_vocab = {key: value for key, value in LLAMA3_8B.items() if key != "vocab_size"}
    expect_names(sub, "vocab_size", "memory_plan", tr("Llama-3-8B config without vocab_size"), no_vocab,
                 weight_bytes=LLAMA3_8B_WEIGHTS, batch=1, seq_len=8192)
