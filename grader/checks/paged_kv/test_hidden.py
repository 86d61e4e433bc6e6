"""Hidden paged_kv checks: a larger seeded allocator state machine, random attention cases and random
reservation-waste batches, compared with the live reference."""
import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checks.paged_kv.allocator import run_allocator_machine
from grader.checks.paged_kv.cases import (expect_attention, expect_refused, expected_outputs, paged_case,
                                          with_garbage)
from grader.engine import check, expect_equal, reference, tr


@check("allocator_state_machine_random", points=26, hint="BlockAllocator",
       title="random appends, forks and frees on larger pools: sequences read back their tokens, blocks are conserved")
def test_allocator_state_machine_random(sub, seed):
    run_allocator_machine(sub, seed, max_blocks=6, max_block_size=4, examples=25, steps=16)


@st.composite
def attention_specs(draw) -> dict:
    """Shapes, dtypes and scale of one paged_attention case."""
    kv_heads = draw(st.integers(1, 3))
    head_dim = draw(st.sampled_from([4, 8, 16]))
    return {
        "context_lens": draw(st.lists(st.integers(1, 14), min_size=1, max_size=3)),
        "heads": kv_heads * draw(st.integers(1, 3)),
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "block_size": draw(st.integers(1, 5)),
        "dtype": draw(st.sampled_from([torch.float32, torch.float16, torch.bfloat16])),
        "scale": draw(st.floats(0.25, 1.5)) / math.sqrt(head_dim),   # around the usual 1 / sqrt(D)
        "table_dtype": draw(st.sampled_from([torch.int32, torch.int64])),
    }


@check("attention_random", points=14, hint="paged_attention",
       title="paged_attention equals dense attention on random ragged, GQA, low-precision cases")
@settings(max_examples=25, deadline=None)
@given(spec=attention_specs(), tensor_seed=st.integers(0, 2**31 - 1))
def test_attention_random(sub, spec, tensor_seed):
    case = paged_case(torch.Generator().manual_seed(tensor_seed), **spec)
    expect_attention(sub, case, expected_outputs(reference("paged_kv"), case))


@check("attention_garbage_random", points=3, hint="paged_attention",
       title="paged_attention ignores NaN, inf and huge values in unused slots and odd padding ids, on random cases")
@settings(max_examples=10, deadline=None)
@given(spec=attention_specs(), tensor_seed=st.integers(0, 2**31 - 1))
def test_attention_garbage_random(sub, spec, tensor_seed):
    gen = torch.Generator().manual_seed(tensor_seed)
    case = with_garbage(gen, paged_case(gen, **spec))
    expect_attention(sub, case, expected_outputs(reference("paged_kv"), case))


@check("attention_bad_context_lens_random", points=3, hint="paged_attention",
       title="paged_attention rejects context lengths below 1 or past the block table, on random cases, and answers "
             "the same cases with their lengths in range")
@settings(max_examples=10, deadline=None)
@given(spec=attention_specs(), tensor_seed=st.integers(0, 2**31 - 1), data=st.data())
def test_attention_bad_context_lens_random(sub, spec, tensor_seed, data):
    case = paged_case(torch.Generator().manual_seed(tensor_seed), **spec)
    capacity = case["block_tables"].shape[1] * spec["block_size"]
    bad = data.draw(st.sampled_from([0, 0, -data.draw(st.integers(1, 5)), capacity + data.draw(st.integers(1, 5))]),
                    label="bad length")
    lens = case["context_lens"].clone()
    lens[data.draw(st.integers(0, len(lens) - 1), label="sequence")] = bad
    expect_refused(sub, {**case, "context_lens": lens}, "context_lens",
                   tr("context lengths lie in [1, {capacity}] here; 0 tokens would give NaN", capacity=capacity))
    expect_attention(sub, case, expected_outputs(reference("paged_kv"), case))  # refusing every call fails here


@check("reservation_random", points=7, hint="reservation_waste",
       title="reservation_waste on random batches matches the reference")
@settings(max_examples=40, deadline=None)
@given(max_len=st.integers(1, 4096), block_size=st.integers(1, 64), data=st.data())
def test_reservation_random(sub, max_len, block_size, data):
    lengths = data.draw(st.lists(st.integers(0, max_len), max_size=12), label="lengths")
    expect_equal(sub.reservation_waste(lengths, max_len, block_size),
                 reference("paged_kv").reservation_waste(lengths, max_len, block_size),
                 f"reservation_waste({lengths}, max_len={max_len}, block_size={block_size})")
