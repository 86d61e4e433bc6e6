"""Bug: fork() gives the child fresh blocks of its own instead of sharing the parent's blocks."""


class BlockAllocator(BlockAllocator):
    def fork(self, parent_id, child_id) -> None:
        parent = self.tables[parent_id]
        if child_id in self.tables:
            raise ValueError(f"child_id {child_id!r} already exists")
        if len(self.free_ids) < len(parent):
            raise OutOfBlocks(f"no free blocks left to fork sequence {parent_id!r}")
        self.tables[child_id] = [self.take_block() for _ in parent]
        self.lengths[child_id] = self.lengths[parent_id]
