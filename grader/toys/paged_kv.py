"""Child-side helpers for the paged_kv checks."""


def allocator_state(alloc, seq_ids) -> dict:
    """Everything a check reads back from a BlockAllocator, in one round trip: free blocks, tables, lengths."""
    return {
        "free": alloc.num_free_blocks(),
        "tables": {seq_id: alloc.block_table(seq_id) for seq_id in seq_ids},
        "lengths": {seq_id: alloc.seq_len(seq_id) for seq_id in seq_ids},
    }
