"""PagedAttention: a block allocator with copy-on-write forks, paged decode attention, and reservation waste."""
from collections import deque

import torch


class OutOfBlocks(RuntimeError):
    """No free KV block is left for an append that needs one."""


class BlockAllocator:
    """Hands out fixed-size KV blocks to sequences and shares them across forks by reference counting."""

    def __init__(self, num_blocks: int, block_size: int):
        if num_blocks < 1:
            raise ValueError(f"num_blocks must be >= 1, got {num_blocks}")
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        self.block_size = block_size
        self.free_ids = deque(range(num_blocks))
        self.ref_counts = [0] * num_blocks
        self.tables: dict = {}   # seq_id -> list[int] of block ids
        self.lengths: dict = {}  # seq_id -> tokens written

    def can_append(self, seq_id) -> bool:
        """Whether `append(seq_id)` finds the block it needs (none, or one free one)."""
        offset = self.lengths.get(seq_id, 0) % self.block_size
        needs_block = offset == 0 or self.ref_counts[self.tables[seq_id][-1]] > 1
        return not needs_block or len(self.free_ids) > 0

    def take_block(self) -> int:
        """Pop a free block and give it its first user."""
        block = self.free_ids.popleft()
        assert self.ref_counts[block] == 0, f"free block {block} is still referenced"
        self.ref_counts[block] = 1
        return block

    def append(self, seq_id) -> tuple:
        """Reserve the slot for `seq_id`'s next token: (block, offset, copy), with copy-on-write of a shared block."""
        if not self.can_append(seq_id):
            raise OutOfBlocks(f"no free block left for sequence {seq_id!r}")
        table = self.tables.setdefault(seq_id, [])
        length = self.lengths.get(seq_id, 0)
        offset = length % self.block_size
        copy = None
        if offset == 0:                          # first token, or the last block is full
            table.append(self.take_block())
        elif self.ref_counts[table[-1]] > 1:     # shared partial block: copy before writing
            src, dst = table[-1], self.take_block()
            self.ref_counts[src] -= 1
            table[-1] = dst
            copy = (src, dst)
        self.lengths[seq_id] = length + 1
        assert len(table) == -(-self.lengths[seq_id] // self.block_size)
        return table[-1], offset, copy

    def fork(self, parent_id, child_id) -> None:
        """Give `child_id` the parent's blocks by reference; allocates nothing."""
        parent = self.tables[parent_id]
        if child_id in self.tables:
            raise ValueError(f"child_id {child_id!r} already exists")
        for block in parent:
            self.ref_counts[block] += 1
        self.tables[child_id] = list(parent)
        self.lengths[child_id] = self.lengths[parent_id]

    def free(self, seq_id) -> None:
        """Drop `seq_id`; each block whose last user it was returns to the free pool."""
        for block in self.tables.pop(seq_id):
            self.ref_counts[block] -= 1
            assert self.ref_counts[block] >= 0
            if self.ref_counts[block] == 0:
                self.free_ids.append(block)
        del self.lengths[seq_id]

    def block_table(self, seq_id) -> list:
        """The block ids holding `seq_id`'s tokens, in order."""
        return list(self.tables[seq_id])

    def num_free_blocks(self) -> int:
        """Blocks that no sequence uses."""
        return len(self.free_ids)

    def seq_len(self, seq_id) -> int:
        """Tokens written to `seq_id`."""
        return self.lengths[seq_id]


def paged_attention(q, k_cache, v_cache, block_tables, context_lens, scale):
    """Decode attention of one query per sequence over the KV slots its block table lists, and no other.

    Unwritten slots of a real pool hold garbage (NaN, inf) and block tables are padded with ids that may be no
    block at all, so each sequence selects its own slots before the softmax: a weight of 0 does not erase a NaN.
    """
    num_seqs, num_heads, head_dim = q.shape                      # q: [S, H, D]
    num_blocks, block_size, num_kv_heads, _ = k_cache.shape      # k_cache, v_cache: [N, B, H_kv, D]
    if num_heads % num_kv_heads != 0:
        raise ValueError(f"q has {num_heads} heads, not a multiple of k_cache's {num_kv_heads} KV heads")
    group = num_heads // num_kv_heads
    capacity = block_tables.shape[1] * block_size                # slots one row of block_tables can address
    if not bool(((context_lens >= 1) & (context_lens <= capacity)).all()):   # 0 tokens: softmax over nothing, NaN
        raise ValueError(f"context_lens must lie in [1, {capacity}], got {context_lens.tolist()}")
    compute = torch.promote_types(q.dtype, torch.float32)
    out = torch.empty(num_seqs, num_heads, head_dim, dtype=compute)
    for s, length in enumerate(context_lens.tolist()):
        blocks = block_tables[s, :-(-length // block_size)].long()              # blocks: [n], the used entries
        keys = k_cache[blocks].flatten(0, 1)[:length]                           # keys: [L, H_kv, D], used slots
        values = v_cache[blocks].flatten(0, 1)[:length]                         # values: [L, H_kv, D]
        keys = keys.repeat_interleave(group, dim=1).to(compute)                 # keys: [L, H, D], h reads h // group
        values = values.repeat_interleave(group, dim=1).to(compute)            # values: [L, H, D]
        scores = torch.einsum("hd,lhd->hl", q[s].to(compute), keys) * scale     # scores: [H, L]
        out[s] = torch.einsum("hl,lhd->hd", scores.softmax(dim=-1), values)     # out[s]: [H, D]
    return out.to(q.dtype)


def reservation_waste(lengths, max_len, block_size) -> dict:
    """Token slots used, reserved and wasted by max-length reservation versus paging in whole blocks."""
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    if any(n < 0 or n > max_len for n in lengths):
        raise ValueError(f"lengths must lie in [0, max_len={max_len}], got {list(lengths)}")
    used = sum(lengths)
    reserved_max = len(lengths) * max_len
    reserved_paged = sum(-(-n // block_size) * block_size for n in lengths)  # whole blocks per sequence
    return {"used": used, "reserved_max": reserved_max, "reserved_paged": reserved_paged,
            "waste_max": reserved_max - used, "waste_paged": reserved_paged - used}
