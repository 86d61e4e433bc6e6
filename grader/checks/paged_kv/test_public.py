"""Public paged_kv checks: fixed allocator scenarios, a seeded allocator state machine, fixed attention cases
(inputs and answers stored in the goldens) and the reservation-waste worked examples."""
import torch

from grader.checks.paged_kv.allocator import as_slot, as_table, run_allocator_machine
from grader.checks.paged_kv.cases import (expect_attention, expect_refused, expected_outputs, paged_case,
                                          with_garbage)
from grader.engine import SubmissionRaised, check, expect_equal, expect_raises, fail, golden, reference, tr


def append(alloc, seq_id, setup: str) -> tuple:
    """alloc.append(seq_id), which must answer (block, offset, copy)."""
    slot = alloc.append(seq_id)
    checked = as_slot(slot)
    if checked is None:
        fail(tr("{setup}: append({seq_id}) returned {slot!r}; expected (block, offset, copy) with int block and "
                "offset, and copy None or (src_block, dst_block)", setup=setup, seq_id=seq_id, slot=slot))
    return checked


def appended(sub, num_blocks: int, block_size: int, appends: int):
    """The submission's BlockAllocator(num_blocks, block_size) after `appends` calls append(0)."""
    alloc = sub.BlockAllocator(num_blocks, block_size)
    for _ in range(appends):
        alloc.append(0)
    return alloc


def table(alloc, seq_id, setup: str) -> list:
    """alloc.block_table(seq_id), which must be a list of block ids."""
    answer = alloc.block_table(seq_id)
    checked = as_table(answer)
    if checked is None:
        fail(tr("{setup}: block_table({seq_id}) returned {answer!r}; expected a list of int block ids", setup=setup,
                seq_id=seq_id, answer=answer))
    return checked


def write(pool: dict, slot, token: int, block_size: int) -> None:
    """Simulate the KV write of `append`'s slot: the copy-on-write copy first, then the token."""
    block, offset, copy = slot
    if copy is not None:
        src, dst = copy
        for o in range(block_size):
            pool[dst, o] = pool.get((src, o))
    pool[block, offset] = token


def read_back(pool: dict, blocks: list, length: int, block_size: int) -> list:
    """A sequence's tokens read from the pool through its block table."""
    return [pool.get((blocks[i // block_size], i % block_size)) for i in range(length)]


def expect_out_of_blocks(alloc, seq_id, setup: str, shared: bool = False) -> None:
    """alloc.append(seq_id) must raise OutOfBlocks, a RuntimeError; `shared`: its last block needs a copy."""
    try:
        slot = alloc.append(seq_id)
    except SubmissionRaised as raised:
        if raised.type_name != "OutOfBlocks" or "RuntimeError" not in raised.type_names:
            fail(tr("{setup}, append({seq_id}) raised {type}: {message}; expected OutOfBlocks (the module's "
                    "RuntimeError subclass)", setup=setup, seq_id=seq_id, type=raised.type_name,
                    message=raised.message))
        return
    in_place = shared and as_slot(slot) is not None and slot[2] is None
    said = dict(setup=setup, seq_id=seq_id, slot=slot)
    fail(tr("{setup}, append({seq_id}) returned {slot!r} though every block is in use; expected OutOfBlocks (the "
            "shared last block must be copied, and there is no block to copy it to)", **said) if in_place else
         tr("{setup}, append({seq_id}) returned {slot!r} though every block is in use; expected OutOfBlocks", **said),
         "no_copy_on_write" if in_place else None)


def then(setup: str, call: str) -> str:
    """What a check called after `setup`, as its failure names it: 'BlockAllocator(4, 2), ...; block_table(0)'."""
    return tr("{setup}; {call}", setup=setup, call=call)


def and_then(setup: str, step: str) -> str:
    """`setup` with one more step: 'BlockAllocator(4, 2), ..., free(0)'."""
    return tr("{setup}, {step}", setup=setup, step=step)


# ---------------------------------------------------------------- BlockAllocator, fixed scenarios

@check("append_fills_blocks", points=1, hint="BlockAllocator.append",
       title="append fills a block slot by slot, then takes a new block; no copies")
def test_append_fills_blocks(sub):
    alloc = sub.BlockAllocator(4, 3)
    slots = [append(alloc, 0, tr("BlockAllocator(4, 3), seven append(0)")) for _ in range(7)]
    setup = tr("BlockAllocator(4, 3), then seven append(0) returned {slots}", slots=slots)
    if [s[1] for s in slots] != [0, 1, 2, 0, 1, 2, 0] or any(s[2] is not None for s in slots):
        fail(tr("{setup}; expected offsets 0, 1, 2, 0, 1, 2, 0 and copy=None for each", setup=setup))
    blocks = [s[0] for s in slots]
    first, second, third = blocks[0], blocks[3], blocks[6]
    if blocks != [first] * 3 + [second] * 3 + [third] or len({first, second, third}) != 3:
        fail(tr("{setup}; expected three slots of one block, three of a second and one of a third block",
                setup=setup))
    expect_equal(table(alloc, 0, setup), [first, second, third], then(setup, "block_table(0)"))
    expect_equal(alloc.seq_len(0), 7, then(setup, "seq_len(0)"))
    expect_equal(alloc.num_free_blocks(), 1, then(setup, "num_free_blocks()"))
    slot = append(alloc, 1, setup)
    if slot[0] in blocks or slot[1:] != (0, None):
        fail(tr("{setup}; then append(1) (a new sequence) returned {slot}: expected the last free block, offset 0, "
                "copy None", setup=setup, slot=slot))
    expect_equal(alloc.num_free_blocks(), 0, then(setup, tr("then append(1); num_free_blocks()")))


@check("fork_shares_blocks", points=1, hint="BlockAllocator.fork",
       title="fork gives the child the parent's blocks and allocates nothing")
def test_fork_shares_blocks(sub):
    setup = tr("BlockAllocator(4, 2), three append(0), fork(0, 1)")
    alloc = appended(sub, 4, 2, 3)
    parent = table(alloc, 0, setup)
    alloc.fork(0, 1)
    child, free = table(alloc, 1, setup), alloc.num_free_blocks()
    if child != parent or free != 2:
        fail(tr("{setup}: block_table(1) = {child!r} and num_free_blocks() = {free!r}; expected the parent's table "
                "{parent} and still 2 free blocks (a fork shares blocks, it never copies them)", setup=setup,
                child=child, free=free, parent=parent), "fork_copies_blocks")
    expect_equal(alloc.seq_len(1), 3, then(setup, "seq_len(1)"))
    expect_equal(table(alloc, 0, setup), parent, then(setup, "block_table(0)"))


@check("copy_on_write", points=2, hint="BlockAllocator.append",
       title="appending to a shared, partly filled block copies it first; a full or unshared block is not copied")
def test_copy_on_write(sub):
    # a forked block that is full is never written again: no copy, just a new block
    setup = tr("BlockAllocator(3, 2), two append(0), fork(0, 1)")
    full = sub.BlockAllocator(3, 2)
    full.append(0)
    full.append(0)
    full.fork(0, 1)
    slot = append(full, 1, setup)
    if slot[1:] != (0, None) or slot[0] in table(full, 0, setup):
        fail(tr("{setup}: the shared block is full, so append(1) needs a new block at offset 0 and no copy; it "
                "returned {slot}", setup=setup, slot=slot))

    size, pool = 2, {}
    setup = tr("BlockAllocator(4, 2), three append(0), fork(0, 1)")
    alloc = sub.BlockAllocator(4, size)
    for token in range(3):
        write(pool, append(alloc, 0, setup), token, size)
    first, shared = table(alloc, 0, setup)
    alloc.fork(0, 1)
    child = table(alloc, 1, setup)
    if child != [first, shared]:
        fail(tr("{setup}: block_table(1) = {child}, expected the parent's blocks {parent}", setup=setup, child=child,
                parent=[first, shared]), "fork_copies_blocks")
    slot = append(alloc, 1, setup)
    if slot[2] is None:
        fail(tr("{setup}: append(1) returned {slot}; the last block {shared} is half full and shared with sequence 0, "
                "so it must be copied (copy=({shared}, a free block)) before the write", setup=setup, slot=slot,
                shared=shared), "no_copy_on_write")
    if slot[1] != 1 or slot[2][0] != shared or slot[2][1] in (first, shared):
        fail(tr("{setup}: append(1) returned {slot}; expected offset 1 and copy=({shared}, a free block)", setup=setup,
                slot=slot, shared=shared))
    write(pool, slot, 3, size)
    slot = append(alloc, 0, and_then(setup, "append(1)"))
    if slot[2] is not None:
        fail(tr("{setup}, append(1): append(0) returned {slot}; block {shared} is no longer shared, so sequence 0 "
                "writes into it without a copy", setup=setup, slot=slot, shared=shared))
    write(pool, slot, 4, size)
    setup = and_then(setup, tr("append(1), append(0), writing each token at its slot"))
    for seq_id, tokens in ((0, [0, 1, 2, 4]), (1, [0, 1, 2, 3])):
        blocks = table(alloc, seq_id, setup)
        expect_equal(read_back(pool, blocks, 4, size), tokens,
                     tr("{setup}: sequence {seq_id} read through block_table({seq_id}) = {blocks}", setup=setup,
                        seq_id=seq_id, blocks=blocks))
    expect_equal(alloc.num_free_blocks(), 1, then(setup, "num_free_blocks()"))


@check("free_returns_blocks", points=1, hint="BlockAllocator.free",
       title="free returns exactly the blocks no other sequence uses")
def test_free_returns_blocks(sub):
    alloc = appended(sub, 4, 2, 3)
    alloc.fork(0, 1)
    alloc.append(1)        # copies the shared half-full block: 3 blocks in use, the first one shared
    steps = tr("BlockAllocator(4, 2), three append(0), fork(0, 1), append(1)")
    for seq_id, expected, why in ((0, 2, tr("the first block is still used by sequence 1")),
                                  (1, 4, tr("no sequence is left"))):
        alloc.free(seq_id)
        steps = and_then(steps, f"free({seq_id})")
        free = alloc.num_free_blocks()
        if free != expected:
            fail(tr("{steps}: num_free_blocks() = {free!r}, expected {expected} ({why})", steps=steps, free=free,
                    expected=expected, why=why),
                 "leak_on_free" if isinstance(free, int) and free < expected else None)


@check("out_of_blocks", points=2, hint="BlockAllocator.append",
       title="append raises OutOfBlocks when it needs a block and none is free, and then changes nothing")
def test_out_of_blocks(sub):
    setup = tr("BlockAllocator(2, 2), four append(0) (both blocks full)")
    alloc = appended(sub, 2, 2, 4)
    blocks = table(alloc, 0, setup)
    expect_out_of_blocks(alloc, 0, setup)
    expect_out_of_blocks(alloc, 1, and_then(setup, tr("append(0) raised")))
    setup = and_then(setup, tr("then append(0) and append(1) raised OutOfBlocks"))
    state = (alloc.seq_len(0), table(alloc, 0, setup), alloc.num_free_blocks())
    if state != (4, blocks, 0):
        fail(tr("{setup}: (seq_len(0), block_table(0), num_free_blocks()) = {state}; a failed append must leave them "
                "as they were: (4, {blocks}, 0)", setup=setup, state=state, blocks=blocks), "partial_state_on_failure")
    try:
        answer = alloc.block_table(1)
    except SubmissionRaised as raised:
        if "KeyError" not in raised.type_names:
            fail(tr("{setup}: block_table(1) raised {type}; expected KeyError (sequence 1 does not exist)", setup=setup,
                    type=raised.type_name))
    else:
        fail(tr("{setup}: block_table(1) returned {answer!r}; the failed append must not create sequence 1 (expected "
                "KeyError)", setup=setup, answer=answer), "partial_state_on_failure")

    # copy-on-write needs a block too: a failed copy must not touch the shared block or the length
    setup = tr("BlockAllocator(2, 2), three append(0), fork(0, 1) (the half-full last block is shared)")
    alloc = appended(sub, 2, 2, 3)
    alloc.fork(0, 1)
    blocks = table(alloc, 0, setup)
    expect_out_of_blocks(alloc, 1, setup, shared=True)
    state = (alloc.seq_len(1), table(alloc, 1, setup), alloc.num_free_blocks())
    if state != (3, blocks, 0):
        fail(tr("{setup}, append(1) raised OutOfBlocks: (seq_len(1), block_table(1), num_free_blocks()) = {state}, "
                "expected (3, {blocks}, 0) as before the failed append", setup=setup, state=state, blocks=blocks),
             "partial_state_on_failure")
    alloc.free(0)
    setup = and_then(setup, tr("append(1) failed, free(0)"))
    try:
        slot = append(alloc, 1, setup)
    except SubmissionRaised as raised:
        fail(tr("{setup}: append(1) raised {type}: {message}; sequence 1 alone holds both blocks now and writes into "
                "block {block} in place", setup=setup, type=raised.type_name, message=raised.message, block=blocks[1]),
             "leak_on_free" if "OutOfBlocks" in raised.type_names else None)
    if slot != (blocks[1], 1, None):
        fail(tr("{setup}: append(1) returned {slot}; sequence 1 alone holds block {block} now and writes its offset 1 "
                "in place: expected ({block}, 1, None)", setup=setup, slot=slot, block=blocks[1]))


@check("allocator_errors", points=1, hint="BlockAllocator",
       title="bad sizes raise ValueError, unknown sequences KeyError, an existing fork child ValueError")
def test_allocator_errors(sub):
    for args, name in (((4, 0), "block_size"), ((-1, 4), "num_blocks"), ((0, 4), "num_blocks")):
        message = expect_raises(ValueError, sub.BlockAllocator, *args)
        if name not in message:
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}",
                    call=f"BlockAllocator{args}", message=message, name=name))
    alloc = sub.BlockAllocator(4, 2)
    alloc.append(0)
    alloc.fork(0, 1)
    for method, args in (("block_table", (7,)), ("free", (7,)), ("fork", (7, 8))):
        expect_raises(KeyError, getattr(alloc, method), *args)
    for child in (0, 1):
        message = expect_raises(ValueError, alloc.fork, 0, child)
        if "child_id" not in message:
            fail(tr("fork(0, {child}) onto an existing sequence raised ValueError({message!r}); the message should "
                    "name 'child_id'", child=child, message=message))
    alloc.free(1)
    expect_raises(KeyError, alloc.block_table, 1)


@check("allocator_state_machine", points=3, hint="BlockAllocator",
       title="random appends, forks and frees: every sequence reads back its tokens, blocks are conserved")
def test_allocator_state_machine(sub, seed):
    run_allocator_machine(sub, seed, max_blocks=4, max_block_size=3, examples=15, steps=10)


# ---------------------------------------------------------------- paged_attention

def stored_case(key: str, garbage: bool = False, **spec) -> tuple[dict, dict]:
    """The fixed case `key` (inputs drawn once, then stored; `garbage`: unused slots and padding entries hold
    junk) and its golden outputs."""
    def compute() -> dict:
        gen = torch.Generator().manual_seed(sum(map(ord, key)))
        case = paged_case(gen, **spec)
        case = with_garbage(gen, case) if garbage else case
        return {"case": case, **expected_outputs(reference("paged_kv"), case)}
    stored = golden(key, compute)
    return stored["case"], {k: v for k, v in stored.items() if k != "case"}


def expect_stored_attention(sub, specs: dict, garbage: bool = False) -> None:
    """The submission's paged_attention on each stored case {key: spec} (see stored_case) matches its outputs."""
    for key, spec in specs.items():
        expect_attention(sub, *stored_case(key, garbage, **spec))


@check("attention_matches_dense", points=2, hint="paged_attention",
       title="paged_attention equals dense attention over each sequence's tokens (ragged, ending mid-block)")
def test_attention_matches_dense(sub):
    expect_stored_attention(sub, {
        "dense_ragged": dict(context_lens=[5, 8, 1], heads=2, kv_heads=2, head_dim=8, block_size=4,
                             dtype=torch.float32),
        "dense_scaled": dict(context_lens=[11, 3], heads=1, kv_heads=1, head_dim=4, block_size=3,
                             dtype=torch.float32, scale=0.7, table_dtype=torch.int64),
    })


@check("attention_gqa", points=2, hint="paged_attention",
       title="with grouped-query attention, query head h reads KV head h // (H // H_kv)")
def test_attention_gqa(sub):
    expect_stored_attention(sub, {
        "gqa_4_over_2": dict(context_lens=[6, 9], heads=4, kv_heads=2, head_dim=8, block_size=4,
                             dtype=torch.float32),
        "gqa_6_over_3": dict(context_lens=[7], heads=6, kv_heads=3, head_dim=4, block_size=2,
                             dtype=torch.float32),
    })


@check("attention_low_precision", points=2, hint="paged_attention",
       title="paged_attention on float16 and bfloat16 caches, within the dtype's tolerance")
def test_attention_low_precision(sub):
    expect_stored_attention(sub, {
        "float16": dict(context_lens=[5, 13], heads=4, kv_heads=2, head_dim=16, block_size=4, dtype=torch.float16),
        "bfloat16": dict(context_lens=[9, 2], heads=4, kv_heads=2, head_dim=16, block_size=4, dtype=torch.bfloat16),
    })


@check("attention_garbage_slots", points=1, hint="paged_attention",
       title="paged_attention reads only the used slots: NaN, inf or huge values elsewhere and padding ids -1, 0 or "
             "past the pool change nothing")
def test_attention_garbage_slots(sub):
    # a real pool is never cleared: slots nobody wrote hold whatever was there, and engines pad block tables with
    # ids that are no block of the sequence (0, -1, ...)
    expect_stored_attention(sub, {
        "garbage_gqa": dict(context_lens=[5, 8, 1], heads=4, kv_heads=2, head_dim=8, block_size=4,
                            dtype=torch.float32),
        "garbage_float16": dict(context_lens=[3, 10], heads=2, kv_heads=1, head_dim=8, block_size=3,
                                dtype=torch.float16, table_dtype=torch.int64),
    }, garbage=True)


@check("attention_bad_arguments", points=1, hint="paged_attention",
       title="paged_attention rejects 0 tokens of context (NaN otherwise), more than its block table holds, H % H_kv")
def test_attention_bad_arguments(sub):
    # two sequences of 3 tokens: each row of block_tables lists its block and one padding entry, so with blocks of
    # 4 slots a row addresses 8 tokens
    spec = dict(heads=2, kv_heads=2, head_dim=4, block_size=4, dtype=torch.float32)
    for lens, why in (([3, 0], tr("a sequence of 0 tokens has no score to softmax: 0/0 gives NaN")),
                      ([-1, 2], tr("a negative length")),
                      ([3, 9], tr("9 tokens do not fit the 2 blocks of 4 slots that a row of block_tables lists"))):
        case = paged_case(torch.Generator().manual_seed(1), context_lens=[3, 3], **spec)
        case["context_lens"] = torch.tensor(lens, dtype=torch.int32)
        expect_refused(sub, case, "context_lens", why)
    gqa = paged_case(torch.Generator().manual_seed(2), context_lens=[3], heads=3, kv_heads=2, head_dim=4,
                     block_size=4, dtype=torch.float32)
    expect_refused(sub, gqa, ("q", "k_cache"), tr("3 query heads cannot share 2 KV heads evenly"))


# ---------------------------------------------------------------- reservation_waste

GROWING = [[1, 6, 12], [2, 7, 13], [3, 8, 14], [4, 9, 15], [5, 10, 16]]  # three requests, one token per step


@check("reservation_growing_requests", points=1, hint="reservation_waste",
       title="reservation_waste for three requests growing one token per step (max_len 16, blocks of 4)")
def test_reservation_growing_requests(sub):
    expected = golden("growing_requests",
                      lambda: [reference("paged_kv").reservation_waste(lengths, 16, 4) for lengths in GROWING])
    for step, (lengths, answer) in enumerate(zip(GROWING, expected)):
        expect_equal(sub.reservation_waste(lengths, 16, 4), answer,
                     tr("step {step}: {call}", step=step,
                        call=f"reservation_waste({lengths}, max_len=16, block_size=4)"))


# request lengths of one batch; max-length reservation keeps 32% of the KV slots for tokens, inside the
# 20.4%-38.2% the vLLM paper (Kwon et al., 2023) measured for prior systems, paging keeps 99%
VLLM_LENGTHS = [412, 903, 77, 1310, 598, 215, 1024, 760]


@check("reservation_vllm_comparison", points=1, hint="reservation_waste",
       title="max-length reservation keeps 20-40% of the slots for tokens; paging wastes under a block per sequence")
def test_reservation_vllm_comparison(sub):
    answer = golden("vllm_comparison", lambda: reference("paged_kv").reservation_waste(VLLM_LENGTHS, 2048, 16))
    kept_max = answer["used"] / answer["reserved_max"]
    kept_paged = answer["used"] / answer["reserved_paged"]
    what = tr("{call} (max-length reservation keeps {kept_max:.1%} of the slots for tokens, as in the 20.4-38.2% "
              "vLLM measured for prior systems; paging keeps {kept_paged:.1%}, wasting {waste} slots, under one block "
              "of 16 per sequence)", call=f"reservation_waste({VLLM_LENGTHS}, max_len=2048, block_size=16)",
              kept_max=kept_max, kept_paged=kept_paged, waste=answer["waste_paged"])
    expect_equal(sub.reservation_waste(VLLM_LENGTHS, 2048, 16), answer, what)


@check("reservation_bad_arguments", points=1, hint="reservation_waste",
       title="reservation_waste rejects block_size < 1, max_len < 1 and lengths outside [0, max_len], naming them")
def test_reservation_bad_arguments(sub):
    for args, name in ((([3, 5], 16, 0), "block_size"), (([3, -1], 16, 4), "lengths"), (([3, 17], 16, 4), "lengths"),
                       (([], 0, 4), "max_len")):
        message = expect_raises(ValueError, sub.reservation_waste, *args)
        if name not in message:
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}",
                    call=f"reservation_waste{args}", message=message, name=name))
