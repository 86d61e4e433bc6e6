"""Checking a BlockAllocator: what its answers must look like, and a hypothesis state machine that drives it
through appends, forks and frees.

The machine keeps a simulated KV pool: each append writes a fresh token id at the slot the allocator returns
(after performing its copy-on-write copy). After every step, every live sequence read through its block table
must give back exactly its token history, and the blocks must be conserved. It never assumes which free block
the allocator hands out: it learns block ids from what the submission returns.
"""
import hypothesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test, initialize, precondition, rule

import grader.toys.paged_kv as toys
from grader.engine import SubmissionRaised, fail, tr

SEQ_IDS = (0, 1, 2)


def blocks_for(num_tokens: int, block_size: int) -> int:
    """Blocks a sequence of num_tokens occupies."""
    return -(-num_tokens // block_size)


def is_int(x) -> bool:
    """A plain int (bool excluded)."""
    return isinstance(x, int) and not isinstance(x, bool)


def as_slot(slot) -> tuple | None:
    """append's answer as (block, offset, copy) with copy None or (src, dst), all ints; None when malformed."""
    if not (isinstance(slot, (tuple, list)) and len(slot) == 3 and is_int(slot[0]) and is_int(slot[1])):
        return None
    copy = slot[2]
    if copy is None:
        return tuple(slot)
    if isinstance(copy, (tuple, list)) and len(copy) == 2 and all(map(is_int, copy)):
        return slot[0], slot[1], tuple(copy)
    return None


def as_table(table) -> list | None:
    """block_table's answer as a list of ints; None when malformed."""
    if isinstance(table, (tuple, list)) and all(map(is_int, table)):
        return list(table)
    return None


class AllocatorMachine(RuleBasedStateMachine):
    """Appends, forks and frees on the submission's BlockAllocator, mirrored in a simulated KV pool."""

    def __init__(self, sub, max_blocks: int, max_block_size: int):
        super().__init__()
        self.sub = sub
        self.max_blocks, self.max_block_size = max_blocks, max_block_size
        self.ops = []       # what ran so far, shown when the allocator breaks
        self.tokens = {}    # seq_id -> the token ids it holds, in order
        self.tables = {}    # seq_id -> its block table, as last read back
        self.free = 0       # num_free_blocks(), as last read back
        self.freed_shares = set()  # blocks a freed sequence shared with a live one
        self.next_token = 0

    def broken(self, problem: str, misconception: str | None = None):
        """Fail the check, showing the (shrunk) operations that led here."""
        ops = "\n  ".join(self.ops)
        fail(tr("{problem}\nafter these operations:\n  {ops}", problem=problem, ops=ops), misconception)

    def call(self, method: str, *args):
        """Run alloc.<method>(*args) in the child and log the call with its answer (or what it raised)."""
        shown = f"alloc.{method}({', '.join(map(repr, args))})"
        try:
            result = getattr(self.alloc, method)(*args)
        except SubmissionRaised as raised:
            self.ops.append(tr("{call} raised {type}", call=shown, type=raised.type_name))
            raise
        self.ops.append(f"{shown} -> {result!r}" if result is not None else shown)
        return result

    def read_state(self) -> dict:
        """Free blocks, block tables and lengths of all live sequences, read back from the allocator."""
        try:
            state = self.sub.make(toys.allocator_state, self.alloc, sorted(self.tokens))
        except SubmissionRaised as raised:
            self.broken(tr("reading back num_free_blocks(), block_table() and seq_len() of the live sequences {live} "
                           "raised {type}: {message}", live=sorted(self.tokens), type=raised.type_name,
                           message=raised.message))
        if not is_int(state["free"]):
            self.broken(tr("num_free_blocks() returned {free!r}, expected an int", free=state["free"]))
        return state

    def verify(self, state: dict):
        """Every live sequence reads back its tokens through its table; free + in use = total."""
        size = self.block_size
        for seq_id, tokens in self.tokens.items():
            table, length = as_table(state["tables"][seq_id]), state["lengths"][seq_id]
            if table is None or not all(0 <= b < self.num_blocks for b in table):
                self.broken(tr("block_table({seq_id}) returned {table!r}, expected a list of block ids in "
                               "[0, {blocks})", seq_id=seq_id, table=state["tables"][seq_id], blocks=self.num_blocks))
            if length != len(tokens):
                self.broken(tr("seq_len({seq_id}) returned {length!r}, expected {expected}", seq_id=seq_id,
                               length=length, expected=len(tokens)))
            if len(table) != blocks_for(len(tokens), size):
                self.broken(tr("block_table({seq_id}) = {table} lists {listed} blocks for {tokens} tokens; with "
                               "block_size {size} it needs {needed}", seq_id=seq_id, table=list(table),
                               listed=len(table), tokens=len(tokens), size=size,
                               needed=blocks_for(len(tokens), size)))
            read = [self.pool[table[i // size]][i % size] for i in range(len(tokens))]
            if read != tokens:
                self.broken(tr("sequence {seq_id} reads back {read} through block_table({seq_id}) = {table}, expected "
                               "its tokens {tokens} (the pool holds {pool})", seq_id=seq_id, read=read,
                               table=list(table), tokens=tokens, pool=self.pool))
        in_use = {b for table in state["tables"].values() for b in table}
        if state["free"] != self.num_blocks - len(in_use):
            self.broken(tr("num_free_blocks() returned {free!r}, but the live block tables use {in_use} of the "
                           "{blocks} blocks: free + in use must equal the total", free=state["free"],
                           in_use=len(in_use), blocks=self.num_blocks))
        self.tables = {seq_id: as_table(table) for seq_id, table in state["tables"].items()}
        self.free = state["free"]

    @initialize(data=st.data())
    def create(self, data):
        """A fresh allocator with every block free."""
        self.num_blocks = data.draw(st.integers(1, self.max_blocks), label="num_blocks")
        self.block_size = data.draw(st.integers(1, self.max_block_size), label="block_size")
        self.pool = [[None] * self.block_size for _ in range(self.num_blocks)]  # pool[block][offset] = token
        self.ops.append(f"alloc = BlockAllocator({self.num_blocks}, {self.block_size})")
        self.alloc = self.sub.BlockAllocator(self.num_blocks, self.block_size)
        self.verify(self.read_state())

    def sharers(self, seq_id) -> list:
        """The other live sequences whose tables hold seq_id's last block."""
        last = self.tables[seq_id][-1]
        return [other for other, table in self.tables.items() if other != seq_id and last in table]

    @rule(seq_id=st.sampled_from(SEQ_IDS))
    def append(self, seq_id):
        """Append one token; write it (after any copy) into the pool at the returned slot."""
        offset = len(self.tokens.get(seq_id, [])) % self.block_size
        sharers = self.sharers(seq_id) if offset else []
        needs_block = offset == 0 or bool(sharers)
        try:
            slot = self.call("append", seq_id)
        except SubmissionRaised as raised:
            if not (needs_block and self.free == 0):
                self.broken(tr("append({seq_id}) raised {type}: {message}, with {free} blocks free{stale}",
                               seq_id=seq_id, type=raised.type_name, message=raised.message, free=self.free,
                               stale=self.stale_share(seq_id)), self.stale_share_misconception(seq_id))
            if raised.type_name != "OutOfBlocks" or "RuntimeError" not in raised.type_names:
                self.broken(tr("append({seq_id}) with no free block raised {type}: {message}; expected OutOfBlocks, a "
                               "RuntimeError", seq_id=seq_id, type=raised.type_name, message=raised.message))
            self.verify_unchanged(seq_id)
            return
        self.write(seq_id, slot, offset, sharers)
        self.verify(self.read_state())

    def stale_share(self, seq_id) -> str:
        """A note when seq_id's last block was shared with a sequence that has been freed since."""
        if not self.stale_share_misconception(seq_id):
            return ""
        return tr("; its last block {block} was shared with a sequence freed since, so it is unshared now",
                  block=self.tables[seq_id][-1])

    def stale_share_misconception(self, seq_id) -> str | None:
        """leak_on_free when an unneeded copy or block comes from a share that a free left behind."""
        if seq_id in self.tables and self.tables[seq_id][-1] in self.freed_shares and not self.sharers(seq_id):
            return "leak_on_free"
        return None

    def write(self, seq_id, slot, offset: int, sharers: list):
        """Check the returned slot, perform its copy, and write the next token there."""
        checked = as_slot(slot)
        if checked is None:
            self.broken(tr("append({seq_id}) returned {slot!r}, expected (block, offset, copy) with copy None or "
                           "(src_block, dst_block)", seq_id=seq_id, slot=slot))
        block, got_offset, copy = checked
        if not (0 <= block < self.num_blocks and all(0 <= b < self.num_blocks for b in copy or ())):
            self.broken(tr("append({seq_id}) returned {slot!r}; block ids lie in [0, {blocks})", seq_id=seq_id,
                           slot=slot, blocks=self.num_blocks))
        if got_offset != offset:
            self.broken(tr("append({seq_id}) returned offset {got!r} for token {token} of the sequence; with "
                           "block_size {size} it is {offset}", seq_id=seq_id, got=got_offset,
                           token=len(self.tokens.get(seq_id, [])), size=self.block_size, offset=offset))
        if sharers and copy is None:
            self.broken(tr("append({seq_id}) returned {slot!r}, but its last block {block} is shared with sequence "
                           "{sharer}: it must be copied (copy-on-write) before the write, or that sequence changes "
                           "too", seq_id=seq_id, slot=slot, block=self.tables[seq_id][-1], sharer=sharers[0]),
                        "no_copy_on_write")
        if (offset == 0 or sharers) and self.free == 0:
            self.broken(tr("append({seq_id}) returned {slot!r} though it needs a new block and none is free; expected "
                           "OutOfBlocks", seq_id=seq_id, slot=slot))
        if copy is not None:
            if not sharers:
                self.broken(tr("append({seq_id}) returned copy={copy!r}, but there is nothing to copy: only a partly "
                               "filled last block shared with another sequence is copied{stale}", seq_id=seq_id,
                               copy=copy, stale=self.stale_share(seq_id)), self.stale_share_misconception(seq_id))
            src, dst = copy
            if src != self.tables[seq_id][-1]:
                self.broken(tr("append({seq_id}) returned copy={copy!r}, but the shared last block is {block}",
                               seq_id=seq_id, copy=copy, block=self.tables[seq_id][-1]))
            self.pool[dst] = list(self.pool[src])
        self.pool[block][offset] = self.next_token
        self.tokens[seq_id] = self.tokens.get(seq_id, []) + [self.next_token]
        self.next_token += 1

    def verify_unchanged(self, seq_id):
        """After a failed append nothing may have changed, and a new seq_id must still be unknown."""
        state = self.read_state()
        before = {"free": self.free, "tables": self.tables, "lengths": {s: len(t) for s, t in self.tokens.items()}}
        after = {"free": state["free"], "tables": {s: as_table(t) for s, t in state["tables"].items()},
                 "lengths": state["lengths"]}
        if after != before:
            self.broken(tr("append({seq_id}) raised OutOfBlocks but changed the allocator: before it {before}, after "
                           "it {after}", seq_id=seq_id, before=before, after=after), "partial_state_on_failure")
        if seq_id not in self.tokens:
            try:
                table = self.alloc.block_table(seq_id)
            except SubmissionRaised as raised:
                if "KeyError" not in raised.type_names:
                    self.broken(tr("block_table({seq_id}) raised {type}, expected KeyError for an unknown sequence",
                                   seq_id=seq_id, type=raised.type_name))
                return
            self.broken(tr("append({seq_id}) raised OutOfBlocks but still created sequence {seq_id} "
                           "(block_table({seq_id}) returned {table!r} instead of raising KeyError)", seq_id=seq_id,
                           table=table), "partial_state_on_failure")

    @precondition(lambda self: 0 < len(self.tokens) < len(SEQ_IDS))
    @rule(data=st.data())
    def fork(self, data):
        """Fork a live sequence into an unused id: the child shares every block, nothing is allocated."""
        parent = data.draw(st.sampled_from(sorted(self.tokens)), label="parent")
        child = data.draw(st.sampled_from([s for s in SEQ_IDS if s not in self.tokens]), label="child")
        try:
            self.call("fork", parent, child)
        except SubmissionRaised as raised:
            allocates = "OutOfBlocks" in raised.type_names
            said = dict(parent=parent, child=child, type=raised.type_name, message=raised.message)
            self.broken(tr("fork({parent}, {child}) raised {type}: {message} (a fork shares the parent's blocks and "
                           "allocates none)", **said) if allocates else
                        tr("fork({parent}, {child}) raised {type}: {message}", **said),
                        "fork_copies_blocks" if allocates else None)
        self.tokens[child] = list(self.tokens[parent])
        state = self.read_state()
        if state["free"] != self.free or state["tables"][child] != state["tables"][parent]:
            self.broken(tr("after fork({parent}, {child}) the child's table is {table!r} and {free!r} blocks are free; "
                           "expected the parent's table {parent_table!r} and still {expected} free (a fork shares, "
                           "never copies)", parent=parent, child=child, table=state["tables"][child],
                           free=state["free"], parent_table=state["tables"][parent], expected=self.free),
                        "fork_copies_blocks")
        self.verify(state)

    @precondition(lambda self: len(self.tokens) > 0)
    @rule(data=st.data())
    def free_sequence(self, data):
        """Free a live sequence: exactly the blocks no other sequence uses return to the pool."""
        seq_id = data.draw(st.sampled_from(sorted(self.tokens)), label="seq_id")
        still_used = {b for other, table in self.tables.items() if other != seq_id for b in table}
        released = sorted(set(self.tables[seq_id]) - still_used)
        self.freed_shares |= set(self.tables[seq_id]) & still_used
        try:
            self.call("free", seq_id)
        except SubmissionRaised as raised:
            self.broken(tr("free({seq_id}) raised {type}: {message}", seq_id=seq_id, type=raised.type_name,
                           message=raised.message))
        del self.tokens[seq_id]
        state = self.read_state()
        expected = self.free + len(released)
        if state["free"] < expected:
            self.broken(tr("free({seq_id}) left {free!r} blocks free, expected {expected}: blocks {released} are used "
                           "by no sequence any more and must return to the pool", seq_id=seq_id, free=state["free"],
                           expected=expected, released=released), "leak_on_free")
        if state["free"] > expected:
            self.broken(tr("free({seq_id}) left {free!r} blocks free, expected {expected}: only blocks {released} "
                           "became unused; the others are still in other sequences' tables", seq_id=seq_id,
                           free=state["free"], expected=expected, released=released))
        self.verify(state)


def run_allocator_machine(sub, seed: int, max_blocks: int, max_block_size: int, examples: int, steps: int):
    """Run the machine from `seed`; a broken allocator fails the check with the shrunk operation log.

    (run_state_machine_as_test takes no seed, and the engine seeds only @given checks, so seed its test here.)
    """
    test = get_state_machine_test(
        lambda: AllocatorMachine(sub, max_blocks, max_block_size),
        settings=settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                          report_multiple_bugs=False, suppress_health_check=list(HealthCheck)),
    )
    hypothesis.seed(seed)(test)()
