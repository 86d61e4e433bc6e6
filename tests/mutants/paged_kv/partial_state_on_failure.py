"""Bug: append() registers the sequence and counts the token before finding out that no block is free."""


class BlockAllocator(BlockAllocator):
    def append(self, seq_id) -> tuple:
        table = self.tables.setdefault(seq_id, [])
        length = self.lengths.get(seq_id, 0)
        self.lengths[seq_id] = length + 1
        offset = length % self.block_size
        copy = None
        if offset == 0 or self.ref_counts[table[-1]] > 1:
            if not self.free_ids:
                raise OutOfBlocks(f"no free block left for sequence {seq_id!r}")
            block = self.take_block()
            if offset == 0:
                table.append(block)
            else:
                copy = (table[-1], block)
                self.ref_counts[table[-1]] -= 1
                table[-1] = block
        return table[-1], offset, copy
