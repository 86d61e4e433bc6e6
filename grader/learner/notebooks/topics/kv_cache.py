"""Notebook content for kv_cache: memory per sequence and concurrency against context length."""

CONCEPT = """
During decoding every layer keeps the **keys and values** of all earlier tokens, so that a new token attends to
them without recomputing them: the KV cache. Per token it holds `2 (K and V) x layers x kv_heads x head_dim x
bytes per element`. Grouped-query attention (fewer KV heads than query heads) shrinks it, a sliding window caps
how many tokens a layer keeps, and multi-head latent attention (DeepSeek-V3) caches one small latent instead of a
K/V pair. MLA does not rebuild K and V from that latent at inference either: the K and V up-projections are
absorbed into the query and output projections (DeepSeek-V2, 2024), so decoding attends to the latent itself.

How many tokens a window keeps is a convention of one token. A windowed query attends to at most `sliding_window`
tokens, its own included, and this exercise counts those `sliding_window` tokens as the layer's cache (Hugging
Face's `StaticSlidingWindowLayer` allocates that many slots). Hugging Face's `DynamicSlidingWindowLayer` keeps
`sliding_window - 1` between steps and adds the new token's key and value during the step; vLLM V1 likewise frees
what falls outside the next token's window, in whole blocks.

The cache, not the weights, usually decides how many requests a GPU can serve at once: after the weights and
some reserved memory, the rest is divided into whole sequences. Doubling the context halves the concurrency.
Read the numbers from a model's Hugging Face config as transformers loads it (`AutoConfig.from_pretrained`), the
way a serving engine does, not from the raw `config.json`: the library fills keys the file lacks. A raw Gemma-2
`config.json` has no `layer_types`; read as written it windows all 42 layers of Gemma-2-9B, whose cache at its
8,192-token context then comes out a third too small (21 of its layers keep every token).
"""

EXPERIMENTS = [
    ("""
### Memory per sequence and concurrency

A Llama-3-8B-like config (32 layers, 8 KV heads of 128) in bf16 on an 80 GB GPU with 16 GB of weights and 4 GB
reserved: the KV cache of one sequence grows linearly with its context, and the number of sequences that fit
falls as its inverse. The dashed line is the same model with full multi-head attention (32 KV heads). Where the
reference is installed and the functions are yours, its values are drawn as black dots.
""", """
config = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}
mha = {**config, "num_key_value_heads": 32}
lengths = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
GB = 10**9


def per_sequence_gb(module, cfg):
    return [module.kv_cache_bytes(cfg, n) / GB for n in lengths]


def fitting(module, cfg):
    return [module.max_concurrent_sequences(cfg, 80 * GB, 16 * GB, n, reserved_bytes=4 * GB) for n in lengths]


fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
for ax, draw, name in ((left, per_sequence_gb, "kv_cache_bytes"), (right, fitting, "max_concurrent_sequences")):
    mine = getattr(impl, name) is not getattr(ref, name, None)
    for cfg, style, heads in ((config, "-o", "GQA, 8 KV heads"), (mha, "--s", "MHA, 32 KV heads")):
        ax.plot(lengths, draw(impl, cfg), style, label=f"{heads} ({'yours' if mine else 'reference'})")
        if ref is not None and mine:
            ax.plot(lengths, draw(ref, cfg), "k.", label="reference" if cfg is config else None)
left.set(xscale="log", yscale="log", xlabel="context length (tokens)", ylabel="KV cache of one sequence (GB)",
         title="One sequence's cache grows with its context.")
right.set(xscale="log", yscale="log", xlabel="context length (tokens)", ylabel="sequences that fit",
          title="On an 80 GB GPU, longer contexts fit fewer sequences.")
for ax in (left, right):
    ax.legend()
    ax.grid(alpha=0.3)
plt.tight_layout()
plt.show()
print("bytes per token:", impl.kv_bytes_per_token(config))
"""),
]

CLOSING = """
A KV cache is computation state, not memory or knowledge. It holds the keys and values that attention over this
sequence's tokens already computed, so that the next token need not compute them again; it is a function of the
tokens in the context and of the weights, nothing else. Deleting a cache costs a recomputation (a prefill over the
same tokens gives the same keys and values back), never a capability: what the model can do lives in its
parameters, which no cache operation touches.

A cache hit is not the model remembering a user. When a sequence ends its blocks are released, but an engine with
prefix caching (vLLM V1's default, SGLang's radix cache) keeps the full ones in its pool, found by a hash of their
tokens, until memory pressure evicts them; a later request whose prompt starts with the same tokens reuses them
instead of computing them again. That saves time on a repeated prefix. It carries nothing the later request did
not send again in its own prompt, it is gone after the next eviction, and it does not let the model learn from a
conversation or recall what an earlier request said.

Sizing the cache tells you how many tokens of context fit on the hardware, not how much of that context the model
will use well, and a longer context bought with a smaller cache (a window, fewer KV heads) is a property of the
model's architecture, not a saving the serving engine can apply to any model.
"""
