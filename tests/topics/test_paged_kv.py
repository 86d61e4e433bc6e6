"""Project tests for the paged_kv topic: the reference against dense attention and brute-force counts, the
Triton kernel under TRITON_INTERPRET=1, reference and solution allocators against a simulated KV pool, the stub,
the hints and the mutants."""
import math
import types
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

from exercises import paged_kv as stub
from grader.checks.paged_kv.cases import (TOLERANCE_FLOOR, expected_outputs, holds_garbage, paged_case,
                                          with_garbage)
from grader.engine import CheckFailure, mismatch, tolerance
from grader.grading import grade
from reference import paged_kv as ref
from solutions import paged_kv as sol

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = ROOT / "tests" / "mutants" / "paged_kv"
MISCONCEPTIONS = {"leak_on_free", "no_copy_on_write", "partial_state_on_failure", "fork_copies_blocks",
                  "gqa_head_mapping"}
QUICK = settings(max_examples=30, deadline=None)


@st.composite
def specs(draw, dtypes=(torch.float64,)) -> dict:
    """Arguments of cases.paged_case: ragged lengths, GQA groups, odd block sizes."""
    kv_heads = draw(st.integers(1, 3))
    return {"context_lens": draw(st.lists(st.integers(1, 13), min_size=1, max_size=3)),
            "heads": kv_heads * draw(st.integers(1, 3)), "kv_heads": kv_heads,
            "head_dim": draw(st.sampled_from([3, 4, 8])), "block_size": draw(st.integers(1, 5)),
            "dtype": draw(st.sampled_from(dtypes)), "scale": draw(st.floats(0.1, 2.0))}


def case_of(spec: dict, seed: int = 0) -> dict:
    return paged_case(torch.Generator().manual_seed(seed), **spec)


def dense_attention(case: dict) -> torch.Tensor:
    """Attention over each sequence's tokens gathered one by one, through torch's SDPA in float64."""
    q, k_cache, v_cache = (case[name].double() for name in ("q", "k_cache", "v_cache"))
    block_size, group = k_cache.shape[1], q.shape[1] // k_cache.shape[2]
    out = []
    for s, length in enumerate(case["context_lens"].tolist()):
        where = [(int(case["block_tables"][s, t // block_size]), t % block_size) for t in range(length)]
        keys = torch.stack([k_cache[b, o] for b, o in where]).transpose(0, 1)    # [H_kv, L, D]
        values = torch.stack([v_cache[b, o] for b, o in where]).transpose(0, 1)
        out.append(torch.nn.functional.scaled_dot_product_attention(
            q[s][:, None], keys.repeat_interleave(group, 0), values.repeat_interleave(group, 0),
            scale=case["scale"])[:, 0])
    return torch.stack(out)


# --- paged attention ------------------------------------------------------------------------------------

@QUICK
@given(spec=specs())
def test_reference_attention_is_dense_attention(spec):
    case = case_of(spec)
    torch.testing.assert_close(ref.paged_attention(**case), dense_attention(case), rtol=1e-12, atol=1e-12)


def test_reference_query_head_reads_kv_head_h_div_group():
    case = case_of({"context_lens": [3, 5], "heads": 6, "kv_heads": 3, "head_dim": 4, "block_size": 2,
                    "dtype": torch.float64})
    case["v_cache"][:, :, :, :] = torch.arange(3.0)[:, None]     # every value of KV head g equals g
    out = ref.paged_attention(**case)                             # [S, H, D]
    assert torch.equal(out[:, :, 0], (torch.arange(6.0) // 2).expand(2, 6))


def test_reference_ignores_slots_past_the_context():
    case = case_of({"context_lens": [5], "heads": 2, "kv_heads": 1, "head_dim": 4, "block_size": 4,
                    "dtype": torch.float64})
    before = ref.paged_attention(**case)
    last = int(case["block_tables"][0, 1])
    case["k_cache"][last, 1:] = 1e3                               # slots 5..7 of the sequence, never attended
    case["v_cache"][last, 1:] = 1e3
    assert torch.equal(ref.paged_attention(**case), before)


# paged_attention without its context_lens check: what the bad-argument checks must catch
UNCHECKED = """
def paged_attention(q, k_cache, v_cache, block_tables, context_lens, scale):
    group = q.shape[1] // k_cache.shape[2]
    keys = k_cache[block_tables.long()].flatten(1, 2).repeat_interleave(group, 2).float()       # [S, T, H, D]
    values = v_cache[block_tables.long()].flatten(1, 2).repeat_interleave(group, 2).float()
    scores = torch.einsum("shd,sthd->sht", q.float(), keys) * scale
    past_end = torch.arange(keys.shape[1])[None, :] >= context_lens.long()[:, None]
    weights = scores.masked_fill(past_end[:, None, :], float("-inf")).softmax(-1)
    return torch.einsum("sht,sthd->shd", weights, values).to(q.dtype)
"""


def test_a_context_of_zero_tokens_gives_nan_unless_refused():
    case = case_of({"context_lens": [3, 2], "heads": 2, "kv_heads": 2, "head_dim": 4, "block_size": 2,
                    "dtype": torch.float32})
    case["context_lens"] = torch.tensor([3, 0], dtype=torch.int32)
    unchecked = mutant("unchecked", UNCHECKED).paged_attention(**case)
    assert unchecked[1].isnan().all() and not unchecked[0].isnan().any()     # softmax over no scores: 0/0
    capacity = case["block_tables"].shape[1] * 2
    for lens in ([3, 0], [-2, 1], [3, capacity + 1]):
        for module in (ref, sol, mutant("gqa_head_mapping")):
            with pytest.raises(ValueError, match=r"\bcontext_lens\b"):
                module.paged_attention(**{**case, "context_lens": torch.tensor(lens)})
    full = {**case, "context_lens": torch.tensor([capacity, 1])}             # both edges are allowed
    torch.testing.assert_close(sol.paged_attention(**full), ref.paged_attention(**full).float())


def test_bad_context_lens_checks_fail_an_unchecked_attention():
    from grader.checks.paged_kv import test_hidden, test_public

    unchecked = types.SimpleNamespace(paged_attention=mutant("unchecked", UNCHECKED).paged_attention)
    with pytest.raises(CheckFailure, match="expected it to raise ValueError"):
        test_public.test_attention_bad_arguments(unchecked)
    with pytest.raises(CheckFailure, match="expected it to raise ValueError"):
        test_hidden.test_attention_bad_context_lens_random(unchecked)


@QUICK
@given(spec=specs(dtypes=(torch.float32, torch.float16, torch.bfloat16)))
def test_solution_matches_reference_within_the_dtype_tolerance(spec):
    case = case_of(spec)
    outputs = expected_outputs(ref, case)
    atol, rtol = tolerance(*outputs["calibration"], TOLERANCE_FLOOR[case["q"].dtype])
    assert mismatch(sol.paged_attention(**case), outputs["expected"], atol, rtol) is None


@QUICK
@given(spec=specs(dtypes=(torch.float32, torch.float16, torch.bfloat16)), seed=st.integers(0, 2**31 - 1))
def test_garbage_in_unused_slots_and_padding_changes_no_answer(spec, seed):
    gen = torch.Generator().manual_seed(seed)
    clean = paged_case(gen, **spec)
    dirty = with_garbage(gen, clean)
    assert holds_garbage(dirty) and not holds_garbage(clean)
    for cache in ("k_cache", "v_cache"):
        values = dirty[cache]
        assert values.isnan().any() and values.isposinf().any() and values.isneginf().any()
        assert (values == torch.finfo(values.dtype).max).any() and (values == torch.finfo(values.dtype).min).any()
    assert torch.equal(ref.paged_attention(**dirty), ref.paged_attention(**clean))
    outputs = expected_outputs(ref, dirty)
    atol, rtol = tolerance(*outputs["calibration"], TOLERANCE_FLOOR[spec["dtype"]])
    assert mismatch(sol.paged_attention(**dirty), outputs["expected"], atol, rtol) is None


# the solution before issue 18: every entry of block_tables gathered (ids clamped into the pool here, so that
# padding cannot raise) and the slots past the context zeroed through their softmax weight: 0 x NaN is NaN
MASKED_BY_WEIGHT = """
def paged_attention(q, k_cache, v_cache, block_tables, context_lens, scale):
    group = q.shape[1] // k_cache.shape[2]
    tables = block_tables.long().clamp(0, k_cache.shape[0] - 1)
    keys = k_cache[tables].flatten(1, 2).repeat_interleave(group, 2).float()                # [S, T, H, D]
    values = v_cache[tables].flatten(1, 2).repeat_interleave(group, 2).float()
    scores = torch.einsum("shd,sthd->sht", q.float(), keys) * scale
    past_end = torch.arange(keys.shape[1])[None, :] >= context_lens.long()[:, None]
    weights = scores.masked_fill(past_end[:, None, :], float("-inf")).softmax(-1)
    return torch.einsum("sht,sthd->shd", weights, values).to(q.dtype)
"""


def test_garbage_checks_fail_attention_that_masks_by_weight():
    from grader.checks.paged_kv import test_hidden, test_public
    from grader.engine import goldens

    goldens.activate("paged_kv", record=False)                       # the public checks read the stored cases
    masked = types.SimpleNamespace(paged_attention=mutant("masked_by_weight", MASKED_BY_WEIGHT).paged_attention)
    test_public.test_attention_matches_dense(masked)                 # right on clean pools
    with pytest.raises(CheckFailure, match="NaN from unused cache slots: mask by selecting the used positions"):
        test_public.test_attention_garbage_slots(masked)
    with pytest.raises(CheckFailure, match="NaN from unused cache slots"):
        test_hidden.test_attention_garbage_random(masked)


def test_garbage_check_names_the_padding_when_an_id_past_the_pool_raises(tmp_path):
    (tmp_path / "paged_kv.py").write_text((ROOT / "solutions" / "paged_kv.py").read_text() + "\n"
                                          + UNCHECKED)        # gathers every entry of block_tables
    doc = grade(tmp_path, ["paged_kv"], hidden=False, seed=0, with_progress=False, only={"paged_attention"})
    checks = {c["id"]: c for t in doc["topics"] for c in t["checks"]}
    garbage = checks["paged_kv.attention_garbage_slots"]
    assert garbage["status"] == "failed" and "padding and may hold any id" in garbage["message"], garbage
    assert checks["paged_kv.attention_matches_dense"]["status"] == "passed"


@pytest.mark.parametrize("spec", [
    {"context_lens": [1, 7, 12], "heads": 4, "kv_heads": 2, "head_dim": 16, "block_size": 4, "dtype": torch.float32},
    {"context_lens": [9, 4], "heads": 3, "kv_heads": 1, "head_dim": 12, "block_size": 3, "dtype": torch.float32},
    {"context_lens": [6, 13], "heads": 4, "kv_heads": 4, "head_dim": 8, "block_size": 4, "dtype": torch.float16},
    {"context_lens": [10], "heads": 6, "kv_heads": 3, "head_dim": 8, "block_size": 8, "dtype": torch.bfloat16},
])
def test_triton_paged_decode_matches_reference(spec):
    pytest.importorskip("triton")
    from reference.kernels.paged_decode import paged_decode_attention

    case = case_of(spec, seed=7)
    outputs = expected_outputs(ref, case)
    atol, rtol = tolerance(*outputs["calibration"], TOLERANCE_FLOOR[case["q"].dtype])
    got = paged_decode_attention(**case)
    assert got.dtype == case["q"].dtype
    assert mismatch(got, outputs["expected"], atol, rtol) is None


# --- allocators -----------------------------------------------------------------------------------------

operations = st.lists(st.tuples(st.sampled_from(["append", "append", "fork", "free"]), st.integers(0, 3),
                                 st.integers(0, 3)), max_size=30)


def replay(module, num_blocks: int, block_size: int, ops: list) -> list:
    """Run ops on module.BlockAllocator with a simulated pool; asserts the contract after every step and returns
    what is observable regardless of block ids (outcome, offset, whether a copy happened, free blocks)."""
    alloc, pool, tokens, seen = module.BlockAllocator(num_blocks, block_size), {}, {}, []
    for step, (op, a, b) in enumerate(ops):
        if op == "append":
            try:
                block, offset, copy = alloc.append(a)
            except module.OutOfBlocks:
                seen.append(("out of blocks", a))
            else:
                if copy is not None:
                    for o in range(block_size):
                        pool[copy[1], o] = pool.get((copy[0], o))
                pool[block, offset] = step
                tokens[a] = tokens.get(a, []) + [step]
                seen.append((a, offset, copy is not None))
        elif op == "fork" and a in tokens and b not in tokens:
            alloc.fork(a, b)
            tokens[b] = list(tokens[a])
            seen.append(("fork", a, b))
        elif op == "free" and a in tokens:
            alloc.free(a)
            del tokens[a]
            seen.append(("free", a))
        tables = {s: alloc.block_table(s) for s in tokens}
        for s, history in tokens.items():
            assert alloc.seq_len(s) == len(history)
            assert len(tables[s]) == math.ceil(len(history) / block_size)
            read = [pool[tables[s][i // block_size], i % block_size] for i in range(len(history))]
            assert read == history, f"sequence {s} reads {read}, wrote {history}"
        in_use = {block for table in tables.values() for block in table}
        assert alloc.num_free_blocks() == num_blocks - len(in_use)
        seen.append(alloc.num_free_blocks())
    return seen


@settings(max_examples=60, deadline=None)
@given(num_blocks=st.integers(1, 5), block_size=st.integers(1, 3), ops=operations)
def test_reference_and_solution_allocators_keep_every_sequence_readable(num_blocks, block_size, ops):
    assert replay(ref, num_blocks, block_size, ops) == replay(sol, num_blocks, block_size, ops)


@pytest.mark.parametrize("module", [ref, sol])
def test_allocator_errors(module):
    with pytest.raises(ValueError, match="block_size"):
        module.BlockAllocator(2, 0)
    for num_blocks in (-1, 0):
        with pytest.raises(ValueError, match="num_blocks"):
            module.BlockAllocator(num_blocks, 2)
    alloc = module.BlockAllocator(1, 2)
    alloc.append(0)
    for call in (lambda: alloc.block_table(5), lambda: alloc.free(5), lambda: alloc.fork(5, 6)):
        with pytest.raises(KeyError):
            call()
    with pytest.raises(ValueError, match="child_id"):
        alloc.fork(0, 0)
    alloc.append(0)
    with pytest.raises(module.OutOfBlocks) as raised:
        alloc.append(0)
    assert isinstance(raised.value, RuntimeError)
    assert (alloc.seq_len(0), alloc.num_free_blocks()) == (2, 0)


# --- reservation waste ----------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(max_len=st.integers(1, 300), block_size=st.integers(1, 40), data=st.data())
def test_reservation_waste_counts_whole_blocks(max_len, block_size, data):
    lengths = data.draw(st.lists(st.integers(0, max_len), max_size=6))
    blocks = 0
    for n in lengths:                                # hand out blocks until the sequence fits
        held = 0
        while held * block_size < n:
            held += 1
        blocks += held
    answer = ref.reservation_waste(lengths, max_len, block_size)
    assert answer == {"used": sum(lengths), "reserved_max": len(lengths) * max_len,
                      "reserved_paged": blocks * block_size, "waste_max": len(lengths) * max_len - sum(lengths),
                      "waste_paged": blocks * block_size - sum(lengths)}
    assert 0 <= answer["waste_paged"] < max(len(lengths), 1) * block_size    # under one block per sequence
    assert sol.reservation_waste(lengths, max_len, block_size) == answer


@pytest.mark.parametrize("module", [ref, sol])
def test_reservation_waste_names_bad_arguments(module):
    with pytest.raises(ValueError, match="block_size"):
        module.reservation_waste([1], 4, 0)
    with pytest.raises(ValueError, match="lengths"):
        module.reservation_waste([1, -2], 4, 2)
    with pytest.raises(ValueError, match="lengths"):
        module.reservation_waste([1, 5], 4, 2)
    with pytest.raises(ValueError, match="max_len"):
        module.reservation_waste([], 0, 2)


def test_vllm_comparison_case_lies_in_the_papers_range():
    from grader.checks.paged_kv.test_public import VLLM_LENGTHS

    answer = ref.reservation_waste(VLLM_LENGTHS, 2048, 16)
    assert 0.204 <= answer["used"] / answer["reserved_max"] <= 0.382
    assert answer["waste_paged"] < len(VLLM_LENGTHS) * 16


# --- stub, hints, mutants -------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: stub.BlockAllocator(4, 2),
    lambda: stub.paged_attention(*case_of({"context_lens": [2], "heads": 1, "kv_heads": 1, "head_dim": 2,
                                           "block_size": 2, "dtype": torch.float32}).values()),
    lambda: stub.reservation_waste([1], 4, 2),
])
def test_stub_raises_not_implemented(call):
    with pytest.raises(NotImplementedError, match="TODO"):
        call()


def test_stub_methods_raise_not_implemented():
    alloc = object.__new__(stub.BlockAllocator)
    for method, args in (("append", (0,)), ("fork", (0, 1)), ("free", (0,)), ("block_table", (0,)),
                         ("num_free_blocks", ()), ("seq_len", (0,))):
        with pytest.raises(NotImplementedError, match="TODO"):
            getattr(alloc, method)(*args)



def mutant(misconception: str, extra: str | None = None) -> types.ModuleType:
    """The solution with the mutant (or `extra`) appended, as the selftest builds it."""
    module = types.ModuleType(f"paged_kv_{misconception}")
    source = ((ROOT / "solutions" / "paged_kv.py").read_text() + "\n"
              + (extra or (MUTANTS / f"{misconception}.py").read_text()))
    exec(compile(source, str(MUTANTS / f"{misconception}.py"), "exec"), module.__dict__)
    return module


def forked(module, num_blocks: int, tokens: int):
    """An allocator with block_size 2, sequence 0 of `tokens` tokens, forked into sequence 1."""
    alloc = module.BlockAllocator(num_blocks, 2)
    for _ in range(tokens):
        alloc.append(0)
    alloc.fork(0, 1)
    return alloc


def test_mutants_show_their_misconception():
    for name in MISCONCEPTIONS:
        assert (MUTANTS / f"{name}.py").read_text().startswith('"""Bug: ')
    leak = forked(mutant("leak_on_free"), 4, 3)
    leak.free(0)
    leak.free(1)
    assert leak.num_free_blocks() < 4

    assert forked(mutant("no_copy_on_write"), 4, 3).append(1)[2] is None

    module = mutant("partial_state_on_failure")
    partial = forked(module, 2, 3)
    with pytest.raises(module.OutOfBlocks):
        partial.append(1)
    assert partial.seq_len(1) == 4

    copies = forked(mutant("fork_copies_blocks"), 4, 2)
    assert copies.block_table(1) != copies.block_table(0) and copies.num_free_blocks() == 2

    case = case_of({"context_lens": [5, 3], "heads": 4, "kv_heads": 2, "head_dim": 4, "block_size": 2,
                    "dtype": torch.float32})
    outputs = expected_outputs(ref, case)
    got = mutant("gqa_head_mapping").paged_attention(**case)
    assert mismatch(got, outputs["gqa_head_mapping"], 1e-5, 1e-5) is None
    assert mismatch(got, outputs["expected"], 1e-2, 1e-2) is not None


def test_notebook_closes_on_what_the_topic_does_not_do():
    from grader.learner.notebooks.build import build

    last = build("paged_kv").cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## What this does not do")
    assert all(phrase in " ".join(last.source.split()) for phrase in ('makes no answer truer', 'not throughput'))
