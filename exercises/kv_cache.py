"""KV-cache sizing: how much memory the cache of a transformer takes, how many sequences fit on a GPU, and what
else a serving step holds.

`config` is a model's Hugging Face config as a dict, as `AutoConfig.from_pretrained(...).to_dict()` returns it
(not the raw config.json: transformers fills keys it lacks, such as Gemma-2's layer_types; read as written, a raw
Gemma-2 config.json windows every layer and its cache at 8,192 tokens comes out a third too small).
A key whose value is None (`null` in JSON) counts as absent. The keys that matter:
  num_hidden_layers, num_attention_heads,
  num_key_value_heads  (absent -> equal to num_attention_heads),
  head_dim             (absent -> hidden_size // num_attention_heads),
  kv_lora_rank, qk_rope_head_dim  (optional, multi-head latent attention as in DeepSeek-V3: each layer caches
                       one latent of kv_lora_rank + qk_rope_head_dim elements per token, no K/V pair; at
                       inference the K and V up-projections are absorbed into the query and output projections,
                       so attention reads the latent itself; the per-head keys qk_nope_head_dim and v_head_dim
                       describe attention, not the cache),
  sliding_window       (optional: a windowed layer's query attends to at most this many recent tokens, its
                       own included; this exercise counts those sliding_window tokens as the layer's cache, as
                       Hugging Face's StaticSlidingWindowLayer allocates them. Its DynamicSlidingWindowLayer
                       keeps one token less, sliding_window - 1, between steps (each step adds the new token's
                       key and value), and vLLM V1 frees what falls outside the next token's window, whole blocks
                       at a time: a convention of one token per layer, not a different model),
  layer_types          (optional, one entry per layer: exactly the layers marked "sliding_attention" are
                       windowed; Gemma-2/3 and gpt-oss alternate local and global layers),
  use_sliding_window   (optional: without layer_types, every layer is windowed when sliding_window is set,
                       unless use_sliding_window is False, as in Qwen2),
  vocab_size           (memory_plan only).
Every function returns Python ints (counts of bytes or of sequences).
"""


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    """Bytes that one token occupies in the KV cache, summed over all layers (windows do not matter here).

    Args:
        config: Hugging Face config dict (see the module docstring).
        dtype_bytes: bytes per cached element (2 for bf16/fp16, 1 for fp8, 4 for fp32).
    Returns:
        int, the number of bytes. Example: Llama-3-8B in bf16 gives 131,072.
    Raises:
        ValueError naming the argument: dtype_bytes < 1, or a key the computation needs is missing from config.
    """
    raise NotImplementedError("TODO: implement kv_bytes_per_token (cache bytes per token, all layers)")


def kv_cache_bytes(config: dict, seq_len: int, batch: int = 1, dtype_bytes: int = 2) -> int:
    """Bytes of KV cache held by `batch` sequences of `seq_len` tokens each.

    A windowed layer keeps at most `sliding_window` tokens of each sequence (the window this exercise counts, the
    new token's own included); every other layer keeps all of them.

    Args:
        config: Hugging Face config dict.
        seq_len: tokens in each sequence (0 allowed).
        batch: number of sequences (0 allowed).
        dtype_bytes: bytes per cached element.
    Returns:
        int, the number of bytes.
    Raises:
        ValueError naming the argument: seq_len < 0, batch < 0, dtype_bytes < 1, a required config key missing.
    """
    raise NotImplementedError("TODO: implement kv_cache_bytes (cache bytes for a batch of sequences)")


def max_concurrent_sequences(config: dict, gpu_bytes: int, weight_bytes: int, seq_len: int,
                             dtype_bytes: int = 2, reserved_bytes: int = 0) -> int:
    """How many sequences of `seq_len` tokens can keep their KV cache on one GPU at the same time.

    The cache gets what is left of `gpu_bytes` after the weights and `reserved_bytes` (activations,
    temporaries, allocator slack); only whole sequences count.

    Args:
        config: Hugging Face config dict.
        gpu_bytes: total GPU memory in bytes.
        weight_bytes: memory taken by the model weights.
        seq_len: tokens in each sequence, at least 1.
        dtype_bytes: bytes per cached element.
        reserved_bytes: memory set aside for everything else.
    Returns:
        int, the number of sequences; 0 when nothing is left, never negative.
    Raises:
        ValueError naming the argument: seq_len < 1; gpu_bytes, weight_bytes or reserved_bytes < 0;
        dtype_bytes < 1; a required config key missing.
    """
    raise NotImplementedError("TODO: implement max_concurrent_sequences (sequences that fit in the free memory)")


def memory_plan(config: dict, weight_bytes: int, batch: int, seq_len: int, dtype_bytes: int = 2,
                all_logits: bool = False) -> dict:
    """What one forward step over `batch` sequences of `seq_len` tokens holds on the GPU, in bytes.

    Logits are float32 (4 bytes a score), one row of `vocab_size` scores per sequence, or one row per position of
    every sequence when `all_logits` is True (a forward that keeps the logits of every prompt position).

    Args:
        config: Hugging Face config dict (needs vocab_size).
        weight_bytes: memory taken by the model weights.
        batch: number of sequences, at least 1.
        seq_len: tokens in each sequence, at least 1.
        dtype_bytes: bytes per cached element.
        all_logits: whether every position keeps its logits.
    Returns:
        dict of ints: {"weights": ..., "kv_cache": ... (as kv_cache_bytes), "logits": ..., "total": the sum}.
    Raises:
        ValueError naming the argument: weight_bytes < 0, batch < 1, seq_len < 1, dtype_bytes < 1, a required
        config key missing.
    """
    raise NotImplementedError("TODO: implement memory_plan (weights, cache and logits of one serving step)")
