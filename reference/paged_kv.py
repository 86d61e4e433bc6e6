"""Reference oracle for the paged_kv topic: a PagedAttention block allocator, paged decode attention, and the
memory a max-length reservation wastes compared with paging.

Written for clarity, not speed: the allocator derives reference counts by scanning the block tables instead of
keeping counters, and attention walks each sequence token by token through its block table in float64.
"""
import math

import torch


class OutOfBlocks(RuntimeError):
    """No free block is left for an append that needs one."""


class BlockAllocator:
    """Fixed-size KV blocks shared between sequences; a block is in use while any block table lists it."""

    def __init__(self, num_blocks, block_size):
        if num_blocks < 1:
            raise ValueError(f"num_blocks must be >= 1, got {num_blocks}")
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.tables = {}   # seq_id -> list of block ids, in token order
        self.lengths = {}  # seq_id -> number of tokens written

    def users(self, block):
        """How many sequences list `block` in their table (its reference count)."""
        return sum(table.count(block) for table in self.tables.values())

    def free_blocks(self):
        """The ids of blocks no sequence uses, lowest first."""
        used = {block for table in self.tables.values() for block in table}
        return [block for block in range(self.num_blocks) if block not in used]

    def append(self, seq_id):
        """Reserve the slot of `seq_id`'s next token: (block, offset, copy), copying a shared last block first."""
        table = self.tables.get(seq_id, [])
        length = self.lengths.get(seq_id, 0)
        offset = length % self.block_size
        starts_block = offset == 0
        last_shared = not starts_block and self.users(table[-1]) > 1
        free = self.free_blocks()
        if (starts_block or last_shared) and not free:
            raise OutOfBlocks(f"no free block for sequence {seq_id!r}")
        copy = None
        if starts_block:
            table = table + [free[0]]
        elif last_shared:
            copy = (table[-1], free[0])
            table = table[:-1] + [free[0]]
        self.tables[seq_id] = table
        self.lengths[seq_id] = length + 1
        return table[-1], offset, copy

    def fork(self, parent_id, child_id):
        """Let `child_id` share every block of `parent_id`; nothing is allocated."""
        if parent_id not in self.tables:
            raise KeyError(parent_id)
        if child_id in self.tables:
            raise ValueError(f"child_id {child_id!r} already exists")
        self.tables[child_id] = list(self.tables[parent_id])
        self.lengths[child_id] = self.lengths[parent_id]

    def free(self, seq_id):
        """Forget `seq_id`; blocks that no other table lists become free again."""
        if seq_id not in self.tables:
            raise KeyError(seq_id)
        del self.tables[seq_id]
        del self.lengths[seq_id]

    def block_table(self, seq_id):
        """The block ids of `seq_id`, in token order."""
        if seq_id not in self.tables:
            raise KeyError(seq_id)
        return list(self.tables[seq_id])

    def num_free_blocks(self):
        """How many blocks no sequence uses."""
        return len(self.free_blocks())

    def seq_len(self, seq_id):
        """How many tokens `seq_id` holds."""
        if seq_id not in self.lengths:
            raise KeyError(seq_id)
        return self.lengths[seq_id]


def paged_attention(q, k_cache, v_cache, block_tables, context_lens, scale, *, dtype=torch.float64):
    """Decode attention of one query per sequence over its paged KV cache, computed in `dtype`.

    float64 is the oracle; a low-precision `dtype` measures the rounding error that tolerances are built from.
    """
    num_seqs, num_heads, head_dim = q.shape
    _, block_size, num_kv_heads, _ = k_cache.shape
    if num_heads % num_kv_heads != 0:
        raise ValueError(f"q has {num_heads} heads, not a multiple of the {num_kv_heads} heads of k_cache")
    group = num_heads // num_kv_heads
    capacity = block_tables.shape[1] * block_size
    for length in context_lens.tolist():
        # a sequence attends to at least its own token (the softmax of no scores is 0/0), and to no more tokens
        # than its row of block_tables can address
        if not 1 <= length <= capacity:
            raise ValueError(f"context_lens must lie in [1, {capacity}], got {context_lens.tolist()}")
    out = torch.empty(num_seqs, num_heads, head_dim, dtype=dtype)
    for s in range(num_seqs):
        length = int(context_lens[s])
        blocks = [int(block_tables[s, t // block_size]) for t in range(length)]
        offsets = [t % block_size for t in range(length)]
        for h in range(num_heads):
            kv_head = h // group
            keys = torch.stack([k_cache[b, o, kv_head] for b, o in zip(blocks, offsets)]).to(dtype)    # [L, D]
            values = torch.stack([v_cache[b, o, kv_head] for b, o in zip(blocks, offsets)]).to(dtype)  # [L, D]
            scores = (keys * q[s, h].to(dtype)).sum(dim=-1) * scale                                     # [L]
            weights = torch.exp(scores - scores.max())
            out[s, h] = (weights[:, None] * values).sum(dim=0) / weights.sum()
    return out


def reservation_waste(lengths, max_len, block_size):
    """Token slots used, reserved and wasted when every sequence reserves max_len, versus whole blocks."""
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    if any(length < 0 or length > max_len for length in lengths):
        raise ValueError(f"lengths must lie in [0, max_len={max_len}], got {list(lengths)}")
    used = sum(lengths)
    reserved_max = len(lengths) * max_len
    reserved_paged = sum(math.ceil(length / block_size) * block_size for length in lengths)
    return {
        "used": used,
        "reserved_max": reserved_max,
        "reserved_paged": reserved_paged,
        "waste_max": reserved_max - used,
        "waste_paged": reserved_paged - used,
    }
