"""Bug: free() returns only the blocks the sequence used alone and never drops its share of shared blocks."""


class BlockAllocator(BlockAllocator):
    def free(self, seq_id) -> None:
        for block in self.tables.pop(seq_id):
            if self.ref_counts[block] == 1:
                self.ref_counts[block] = 0
                self.free_ids.append(block)
        del self.lengths[seq_id]
