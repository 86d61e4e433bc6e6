"""KV-cache sizing: how much memory the cache of a transformer takes, and how many sequences fit on a GPU.

`config` is a model's Hugging Face `config.json` as a dict. The keys that matter:
  num_hidden_layers, num_attention_heads,
  num_key_value_heads  (absent -> equal to num_attention_heads),
  head_dim             (absent -> hidden_size // num_attention_heads),
  sliding_window       (optional: the model attends to, and caches, at most this many recent tokens),
  kv_lora_rank, qk_rope_head_dim  (optional, multi-head latent attention as in DeepSeek-V3: each layer caches
                       one latent of kv_lora_rank + qk_rope_head_dim elements per token, no K/V pair).
Every function returns a Python int (a count of bytes or of sequences).
"""


def kv_bytes_per_token(config: dict, dtype_bytes: int = 2) -> int:
    """Bytes that one token occupies in the KV cache, summed over all layers.

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

    A sliding-window model stores at most `sliding_window` tokens per sequence.

    Args:
        config: Hugging Face config dict.
        seq_len: tokens in each sequence.
        batch: number of sequences.
        dtype_bytes: bytes per cached element.
    Returns:
        int, the number of bytes.
    Raises:
        ValueError naming the argument: negative seq_len or batch, dtype_bytes < 1, a required config key missing.
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
        seq_len: tokens in each sequence.
        dtype_bytes: bytes per cached element.
        reserved_bytes: memory set aside for everything else.
    Returns:
        int, the number of sequences; never negative.
    Raises:
        ValueError naming the argument: negative seq_len, dtype_bytes < 1, a required config key missing.
    """
    raise NotImplementedError("TODO: implement max_concurrent_sequences (sequences that fit in the free memory)")
