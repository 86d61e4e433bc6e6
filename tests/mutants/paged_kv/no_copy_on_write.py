"""Bug: append() writes into the last block even while a forked sequence still shares it (no copy-on-write)."""


class BlockAllocator(BlockAllocator):
    def append(self, seq_id) -> tuple:
        length = self.lengths.get(seq_id, 0)
        offset = length % self.block_size
        if offset == 0 and not self.free_ids:
            raise OutOfBlocks(f"no free block left for sequence {seq_id!r}")
        table = self.tables.setdefault(seq_id, [])
        if offset == 0:
            table.append(self.take_block())
        self.lengths[seq_id] = length + 1
        return table[-1], offset, None
