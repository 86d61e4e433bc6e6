"""Notebook content for paged_kv: block tables of three growing requests, a fork sharing blocks, and waste."""

CONCEPT = """
A serving engine does not know how long an answer will be. Reserving `max_len` slots per request wastes most of
the memory on slots that are never written. **Paged attention** (vLLM) cuts the KV cache into fixed-size
**blocks**, like pages of virtual memory: a request gets a new block only when its last one is full, and its
**block table** maps token positions to physical blocks anywhere in the pool. Waste is at most one partly
filled block per request.

Blocks are reference-counted, so **forking** a request (parallel sampling, beam search) shares all of the
parent's blocks without copying; the two tables diverge only when one of them writes into a shared, partly
filled block (copy-on-write) or needs a new block. Freeing a request returns the blocks nobody else uses. That is
the design of the PagedAttention paper (Kwon et al., 2023) and of vLLM's first block manager, and the one this
exercise builds. Current vLLM (its V1 engine) has no fork: the samples of one prompt are separate requests that
share the prompt's *full* blocks through prefix caching, which finds a block by a hash of every token up to its
end (the prompt_cache topic); a partly filled block is never shared, so nothing is copied on write.

Decode attention then reads each sequence's keys and values through its table, and only those: the rest of the
pool was never written for this sequence and holds whatever was there (NaN and inf included), and the padding
entries of a block table need not name a block at all.
"""

EXPERIMENTS = [
    ("""
### Three growing requests, then a fork

Three requests grow token by token in a pool of 16 blocks of 4 slots; then request 1 is forked into request 3,
which writes two tokens of its own. Each row is a request, each square a block of its table, labelled with the
physical block id; blocks shared by the fork are hatched. Where the reference is installed, its tables are drawn
beside yours: the block ids may differ, the sharing and the count of free blocks may not.
""", """
def grown(allocator):
    \"\"\"Three requests grown token by token, then request 1 forked into request 3, which writes two tokens.\"\"\"
    alloc = allocator(num_blocks=16, block_size=4)
    for step in range(11):
        for seq, every in ((0, 1), (1, 2), (2, 3)):
            if step % every == 0:
                alloc.append(seq)
    alloc.fork(1, 3)
    for _ in range(2):
        alloc.append(3)
    return alloc


def draw(ax, alloc, whose):
    tables = {seq: alloc.block_table(seq) for seq in range(4)}
    owners = {}
    for seq, table in tables.items():
        for block in table:
            owners.setdefault(block, set()).add(seq)
    for row, (seq, table) in enumerate(tables.items()):
        for col, block in enumerate(table):
            ax.add_patch(plt.Rectangle((col, -row - 0.9), 0.9, 0.8, facecolor=f"C{seq}", alpha=0.6,
                                       hatch="//" if len(owners[block]) > 1 else None, edgecolor="black"))
            ax.text(col + 0.45, -row - 0.5, str(block), ha="center", va="center",  # on white: clear of the hatching
                    bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor="none"))
        ax.text(-0.2, -row - 0.5, f"request {seq} ({alloc.seq_len(seq)} tokens)", ha="right", va="center")
    ax.set_xlim(-3.4, max(len(t) for t in tables.values()) + 0.2)
    ax.set_ylim(-len(tables) - 0.2, 0.2)
    ax.axis("off")
    ax.set_title(f"{whose} allocator leaves {alloc.num_free_blocks()} of 16 blocks free.", fontsize=10)


mine = impl.BlockAllocator is not getattr(ref, "BlockAllocator", None)
runs = [("Your" if mine else "The reference's", impl)] + ([("The reference's", ref)] if ref is not None and mine else [])
fig, axes = plt.subplots(1, len(runs), figsize=(5.5 * len(runs), 3.8), squeeze=False)
for ax, (whose, module) in zip(axes[0], runs):
    draw(ax, grown(module.BlockAllocator), whose)
fig.suptitle("The fork shares request 1's full block (hatched); its first write copies the partly filled one.")
plt.tight_layout()
plt.show()
"""),
    ("""
### What max-length reservation wastes

The lengths of the four requests above (11, 6, 4 and 8 tokens) under a 64-token max-length reservation and under
4-token blocks.
""", """
# the four requests above: 11 steps appending every 1, 2 and 3 steps, and the fork of request 1 writing 2 more
lengths = [len(range(0, 11, every)) for every in (1, 2, 3)]
lengths.append(lengths[1] + 2)
w = impl.reservation_waste(lengths, max_len=64, block_size=4)
mine = impl.reservation_waste is not getattr(ref, "reservation_waste", None)
whose = "yours" if mine else "reference"
fig, ax = plt.subplots(figsize=(6.5, 3.8))
ax.bar(["max-length", "paged"], [w["used"], w["used"]], label=f"used ({whose})", color="C2")
ax.bar(["max-length", "paged"], [w["waste_max"], w["waste_paged"]], bottom=[w["used"], w["used"]],
       label=f"reserved, unused ({whose})", color="lightgray")
if ref is not None and mine:
    theirs = ref.reservation_waste(lengths, max_len=64, block_size=4)
    ax.plot(["max-length", "paged"], [theirs["reserved_max"], theirs["reserved_paged"]], "kv", markersize=9,
            label="reserved (reference)")
ax.set_ylabel("token slots")
ax.legend()
ax.set_title(f"Reserving max_len leaves {w['waste_max'] / (w['used'] + w['waste_max']):.0%} of the slots unused, "
             f"paging {w['waste_paged'] / (w['used'] + w['waste_paged']):.0%}.", fontsize=10)
plt.tight_layout()
plt.show()
"""),
]

CLOSING = """
Paging manages memory; it does not change what the model computes. Attention over a sequence's blocks gives the
same answer as attention over one contiguous cache (up to rounding), so paging makes no answer truer, better or
more grounded: a wrong answer is produced as readily from paged memory as from contiguous memory. What it changes
is how many sequences fit at once, and with them how many requests a server can batch.

The ratios in these figures are space on toy examples, not throughput. Whether fitting more sequences makes a
server faster depends on things these exercises leave out: the attention kernel's speed over scattered blocks,
how the scheduler batches and preempts, the arrival of requests, and whether decoding is limited by memory
bandwidth or by compute. The vLLM paper's throughput gains were measured on real models, GPUs and traces; a
smaller waste_paged here is no measurement of speed.
"""
