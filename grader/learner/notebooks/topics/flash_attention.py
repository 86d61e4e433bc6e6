"""Notebook content for flash_attention: the tiles visited, their memory, and blockwise against full scores."""

CONCEPT = """
Attention computes `softmax(Q K^T / sqrt(d)) V`. Done naively it writes the whole `T x T` score matrix to memory:
quadratic in the sequence length, and slow because it travels to and from HBM. **Flash attention** never forms
that matrix. It walks over **tiles**: a block of queries meets one block of keys at a time, and an **online
softmax** keeps, per query row, the running maximum, the running sum of exponentials and an output accumulator,
rescaling them when a new maximum appears. The result is exact (up to rounding), not an approximation.

With a causal mask, tiles entirely above the diagonal are skipped, nearly halving the work. When there are fewer
queries than keys (decoding with a cache), the queries are the *last* Tq positions and the mask is aligned
bottom-right: query i sees keys j <= i + (Tk - Tq). That is FlashAttention's convention since version 2.1 and
`torch.nn.attention.bias.causal_lower_right`'s, and this exercise's. PyTorch's
`scaled_dot_product_attention(..., is_causal=True)` aligns it top-left (j <= i), as FlashAttention 2.0 did; the
two agree only when Tq = Tk.

What sits in fast
on-chip memory (SRAM and registers) at a time is a Q tile, a K tile and a V tile, the score tile they make, and the
running state of the query block (max, sum and output accumulator). What goes through HBM: each Q block is read
once, K and V are read once per query block (every query block streams all of them), and O is written once. The
log-sum-exp of each row is written too, kept for the backward pass. That is FlashAttention-2's loop order; the
original FlashAttention (2022) loops the other way round, key/value blocks outside and query blocks inside, so it
reads K and V once and reads and writes the output, with its running max and sum, once per key block.
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
fig, ax = plt.subplots(figsize=(6.5, 5.5))
for i in range(T // bq):
    for j in range(T // bk):
        first_q, last_k = i * bq, j * bk
        visited = last_k <= first_q + bq - 1
        diagonal = visited and j * bk + bk - 1 > first_q
        ax.add_patch(plt.Rectangle((j, -i - 1), 0.95, 0.95, facecolor="C0" if visited else "white",
                                   hatch="//" if diagonal else None, edgecolor="black"))
m = impl.attention_memory_bytes(T, T, 32, bq, bk)
mine = impl.attention_memory_bytes is not getattr(ref, "attention_memory_bytes", None)
qkv_tiles = (bq + 2 * bk) * 32 * 4            # one Q tile, one K tile and one V tile, float32, d = 32
title = (f"Causal attention computes the blue tiles (striped: masked inside).\\n"
         f"In fast memory, by {'your' if mine else 'the reference'} attention_memory_bytes: Q, K, V tiles "
         f"{qkv_tiles // 1024} KiB,\\nscore tile {m['tiled_scores'] // 1024} KiB, state {m['tiled_state'] // 1024} KiB; "
         f"never stored: the {m['naive_scores'] // 1024} KiB T x T scores.")
if ref is not None and mine:
    theirs = ref.attention_memory_bytes(T, T, 32, bq, bk)
    title += (f"\\nThe reference's: score tile {theirs['tiled_scores'] // 1024} KiB, state "
              f"{theirs['tiled_state'] // 1024} KiB, T x T scores {theirs['naive_scores'] // 1024} KiB.")
ax.set_xlim(0, T // bk)
ax.set_ylim(-T // bq, 0)
ax.set(xlabel="key tile", ylabel="query tile")
ax.set_title(title, fontsize=10)
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
mine = impl.attention_memory_bytes is not getattr(ref, "attention_memory_bytes", None)
whose = "yours" if mine else "reference"


def naive_and_tiled(module):
    mem = [module.attention_memory_bytes(n, n, 128, 64, 64) for n in lengths]
    return ([m["naive_scores"] / 2**20 for m in mem], [(m["tiled_scores"] + m["tiled_state"]) / 2**20 for m in mem])


naive, tiled = naive_and_tiled(impl)
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(lengths, naive, "-o", label=f"naive: T x T scores ({whose})")
ax.plot(lengths, tiled, "-s", label=f"tiled: one tile + state ({whose})")
if ref is not None and mine:
    for n, curve in enumerate(naive_and_tiled(ref)):
        ax.plot(lengths, curve, "k.", label="reference" if n == 0 else None)
ax.set(xscale="log", yscale="log", xlabel="sequence length T", ylabel="MiB",
       title="The scores grow with T squared; a tile and its state stay the same.")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
"""),
    ("""
### What moves through HBM, and what the count leaves out

`attention_hbm_bytes` for one head at T = 8192, d = 128, 2-byte elements, against the query block size. The naive
pass moves 545 MB, most of it the two T x T matrices, each written and read once. The tiled count is 2,152 MB at
block_q = 16, 3.9 times the naive pass; 1,078 MB at 32; 541 MB at 64, just below it; 273 MB at 128, half of it.
Both do the same 4·T²·d = 34.4 GFLOP.

Read the small blocks with care. The count is FlashAttention-2's loop order (every query block streams all of K and
V) in the FlashAttention paper's IO model, where every read reaches HBM. It leaves out the GPU's L2 cache: many
query blocks of one head run at the same time on different multiprocessors and read the same K and V tiles, and one
head's K and V take 4 MiB here, well inside the 50 MB L2 of an H100, so those re-reads can be served from L2
without reaching HBM. Real kernels also choose their query block from the on-chip memory, 64 to 128 rows at d =
128, not 16. The model shows the trend (fewer, larger query blocks re-read K and V less often); at the small end
its figure is a bound that a GPU's L2 can cut far down, not a measurement.
""", """
blocks = [16, 32, 64, 128, 256]
hbm = [impl.attention_hbm_bytes(8192, 128, b) for b in blocks]
mine = impl.attention_hbm_bytes is not getattr(ref, "attention_hbm_bytes", None)
whose = "yours" if mine else "reference"
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(blocks, [h["tiled"] / 1e6 for h in hbm], "-o", label=f"tiled, IO model without L2 ({whose})")
ax.axhline(hbm[0]["naive"] / 1e6, color="C3", linestyle="--", label=f"naive: S and P through HBM ({whose})")
if ref is not None and mine:
    theirs = [ref.attention_hbm_bytes(8192, 128, b) for b in blocks]
    ax.plot(blocks, [h["tiled"] / 1e6 for h in theirs], "k.", label="reference")
    ax.plot(blocks, [h["naive"] / 1e6 for h in theirs], "k.")
ax.set(xscale="log", yscale="log", xlabel="block_q", ylabel="MB moved through HBM")
ax.set_title("Larger query blocks re-read K and V less often (one head, T = 8192, d = 128, bf16).", fontsize=10)
ax.set_xticks(blocks, [str(b) for b in blocks])
ax.legend()
ax.grid(alpha=0.3)
plt.show()
for b, h in zip(blocks, hbm):
    print(f"block_q = {b:3d}: tiled {h['tiled'] / 1e6:7.0f} MB, {h['tiled'] / h['naive']:.2f} x the naive pass")
"""),
]

CLOSING = """
Keep three things apart: the algorithm's complexity, its IO, and the experience of a whole request. The complexity
does not change: FlashAttention does the same multiply-adds as the naive pass, 4·T²·d per head, still quadratic
in the sequence length. Its IO changes: no T x T matrix goes through HBM, and that is where its speed comes from
when attention waits on memory. And FlashAttention does not make a model understand arbitrarily long input. It
lets attention run over a long context without running out of memory; how well the model uses that context is
set by its training (the lengths it saw, its position encoding), which no kernel changes.

The experience of a request is a third thing. Everything else in a model's forward pass is untouched: the
projections, the MLP (most of the weights a decode step reads), the normalisations and the sampling run exactly as
before, and the KV cache is as large as it was (this topic saves the scores, never the keys and values). So the
speed-up of a whole request is the attention share of its time made smaller, not the kernel's own speed-up; at
short contexts attention is a small share and the gain is small. Outside the model nothing changes at all:
queueing, network, tool calls and the time an agent waits for them are where much of an agent's latency goes, and
no attention kernel shortens them.
"""
