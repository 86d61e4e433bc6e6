"""Notebook content for flash_attention: the tiles visited, their memory, and blockwise against full scores."""

CONCEPT = """
Attention computes `softmax(Q K^T / sqrt(d)) V`. Done naively it writes the whole `T x T` score matrix to memory:
quadratic in the sequence length, and slow because it travels to and from HBM. **Flash attention** never forms
that matrix. It walks over **tiles**: a block of queries meets one block of keys at a time, and an **online
softmax** keeps, per query row, the running maximum, the running sum of exponentials and an output accumulator,
rescaling them when a new maximum appears. The result is exact (up to rounding), not an approximation.

With a causal mask, tiles entirely above the diagonal are skipped, nearly halving the work. What sits in fast
on-chip memory (SRAM and registers) at a time is a Q tile, a K tile and a V tile, the score tile they make, and the
running state of the query block (max, sum and output accumulator). What goes through HBM: each Q block is read
once, K and V are read once per query block (every query block streams all of them), and O is written once. The
log-sum-exp of each row is written too, kept for the backward pass.
"""

EXPERIMENTS = [
    ("""
### The tiles visited

Causal attention over 256 queries and keys in 64 x 64 tiles: a blue tile is computed, a white one skipped, a
striped one straddles the diagonal and needs the mask (the grid follows the causal rule; the memory in the title
comes from `attention_memory_bytes`). Then the blockwise accumulation of `tiled_attention` is compared with the
full T x T computation.
""", """
import math
import torch

T, bq, bk = 256, 64, 64
fig, ax = plt.subplots(figsize=(5, 5))
for i in range(T // bq):
    for j in range(T // bk):
        first_q, last_k = i * bq, j * bk
        visited = last_k <= first_q + bq - 1
        diagonal = visited and j * bk + bk - 1 > first_q
        ax.add_patch(plt.Rectangle((j, -i - 1), 0.95, 0.95, facecolor="C0" if visited else "white",
                                   hatch="//" if diagonal else None, edgecolor="black"))
m = impl.attention_memory_bytes(T, T, 32, bq, bk)
qkv_tiles = (bq + 2 * bk) * 32 * 4            # one Q tile, one K tile and one V tile, float32, d = 32
ax.set_xlim(0, T // bk)
ax.set_ylim(-T // bq, 0)
ax.set(xlabel="key tile", ylabel="query tile",
       title=f"causal: tiles computed (striped: masked inside)\\nin fast memory: Q, K, V tiles {qkv_tiles // 1024} KiB,"
             f"\\nscore tile {m['tiled_scores'] // 1024} KiB, state {m['tiled_state'] // 1024} KiB;\\n"
             f"never stored: the {m['naive_scores'] // 1024} KiB T x T scores")
ax.set_xticks([])
ax.set_yticks([])
plt.show()

torch.manual_seed(0)
q, k, v = (torch.randn(1, 1, T, 32) for _ in range(3))
o, lse = impl.tiled_attention(q, k, v, causal=True, block_q=bq, block_k=bk)
scores = (q @ k.transpose(-1, -2)) / math.sqrt(32)
scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
full = torch.softmax(scores, -1) @ v
print(f"largest difference from the full T x T computation: {(o - full).abs().max().item():.2e}")
"""),
    ("""
### Their memory

Bytes of the full score matrix against one score tile plus the running state, per (batch, head), as the
sequence grows (d = 128, 64 x 64 tiles, float32). The Q, K and V tiles on chip beside them (96 KiB here) do not
grow with the sequence either.
""", """
lengths = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
mem = [impl.attention_memory_bytes(n, n, 128, 64, 64) for n in lengths]
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(lengths, [m["naive_scores"] / 2**20 for m in mem], "-o", label="naive: T x T scores")
ax.plot(lengths, [(m["tiled_scores"] + m["tiled_state"]) / 2**20 for m in mem], "-s", label="tiled: one tile + state")
ax.set(xscale="log", yscale="log", xlabel="sequence length T", ylabel="MiB", title="intermediate memory")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
"""),
]

CLOSING = """
FlashAttention changes one operation: attention computes the same result with far less memory traffic and no
T x T matrix. Everything else in a model's forward pass is untouched: the projections, the MLP (most of the
weights a decode step reads), the normalisations and the sampling run exactly as before, and the
KV cache is as large as it was (this topic saves the scores, never the keys and values). So the speed-up of a
whole request is the attention share of its time made smaller, not the kernel's own speed-up; at short contexts
attention is a small share and the gain is small. Outside the model nothing changes at all: queueing, network,
tool calls and the time an agent waits for them are where much of an agent's latency goes, and no attention
kernel shortens them.
"""
