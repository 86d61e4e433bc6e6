"""Project tests for the prompt_cache topic: the reference's hashes, cache and prices against properties,
hand-traced scenarios and brute force, the solution against the reference, the stub, the hints and the mutants."""
import random
import re
import types
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

from exercises import prompt_cache as stub
from grader.checks.prompt_cache import conversation
from grader.checks.prompt_cache.conversation import CHATS, QA, SYSTEM, agent_session
from grader.checks.prompt_cache.expect import run_ops, session_difference, session_misconceptions, uncapped_prefix
from grader.checks.prompt_cache.pricing import PROVIDERS, SONNET4, UNIT_PRICES
from grader.checks.prompt_cache.test_hidden import agent_session as random_agent_session
from grader.checks.prompt_cache.test_hidden import random_ops, random_session
from mutated import mutant
from reference import prompt_cache as ref
from solutions import prompt_cache as sol

ROOT = Path(__file__).resolve().parents[2]
PRICES, BLOCK_SIZE, MIN_TOKENS = SONNET4["prices"], SONNET4["block_size"], SONNET4["min_tokens"]
MUTANTS = ROOT / "tests" / "mutants" / "prompt_cache"
FUNCTIONS = ("block_hashes", "PrefixCache", "cacheable_prefix", "session_cost")
MISCONCEPTIONS = {"partial_block_hashed", "unchained_hash", "full_prompt_hit", "cache_read_full_price"}
QUICK = settings(max_examples=60, deadline=None)
tokens_lists = st.lists(st.integers(0, 4), max_size=40)
block_sizes = st.integers(1, 8)
seeds = st.integers(0, 2**31 - 1)


# --- the reference against properties, hand-traced scenarios and brute force -----------------------------

@QUICK
@given(tokens=tokens_lists, block_size=block_sizes, data=st.data())
def test_block_hashes_have_the_contract_properties(tokens, block_size, data):
    hashes = ref.block_hashes(tokens, block_size)
    assert len(hashes) == len(tokens) // block_size
    assert ref.block_hashes(tokens, block_size) == hashes
    for k in range(len(hashes) + 1):
        assert ref.block_hashes(tokens[:k * block_size + data.draw(st.integers(0, block_size - 1))],
                                block_size) == hashes[:k]
    if tokens:
        i = data.draw(st.integers(0, len(tokens) - 1))
        edited = tokens[:i] + [tokens[i] + 1] + tokens[i + 1:]
        changed = [a != b for a, b in zip(hashes, ref.block_hashes(edited, block_size))]
        assert changed == [block >= i // block_size for block in range(len(hashes))]


@pytest.mark.parametrize("module", [ref, sol])
@pytest.mark.parametrize("a, b", [(-1, -2), (0, 2**61 - 1), (1, 2**61)])   # equal under CPython's hash()
def test_block_hashes_tell_apart_ids_that_python_hash_confuses(module, a, b):
    assert hash(a) == hash(b) and hash((None, (5, a))) == hash((None, (5, b)))
    first, second = module.block_hashes([5, a, 7, 8], 2), module.block_hashes([5, b, 7, 8], 2)
    assert first[0] != second[0] and first[1] != second[1]


def test_chained_check_fails_a_block_hash_built_on_python_hash():
    from grader.checks.prompt_cache import test_public
    from grader.engine import CheckFailure, goldens

    def python_hash_chain(tokens, block_size):   # the solution before issue 18
        hashes, parent = [], None
        for start in range(0, len(tokens) // block_size * block_size, block_size):
            parent = hash((parent, tuple(tokens[start:start + block_size])))
            hashes.append(parent)
        return hashes

    goldens.activate("prompt_cache", record=False)
    with pytest.raises(CheckFailure, match=r"-1 and -2 must hash apart") as failed:
        test_public.test_block_hashes_chained(types.SimpleNamespace(block_hashes=python_hash_chain))
    assert failed.value.misconception is None


def test_lru_scenario_traced_by_hand():
    a, b, c = [1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]
    cache = ref.PrefixCache(4, 2)
    cache.insert(a)
    cache.insert(b)
    assert cache.match(a + [0]) == 4          # refreshes a: b is now least recently used
    cache.insert(c)                           # six blocks: b's two go
    assert cache.match(b + [0]) == 0
    assert cache.match(a + [0]) == 4
    assert cache.match(c + [0]) == 4          # a is older than c now
    cache.insert(b)
    assert (cache.match(a + [0]), cache.match(c + [0]), cache.match(b + [0])) == (0, 4, 4)
    cache = ref.PrefixCache(3, 2)
    cache.insert(a)
    cache.insert(b)                           # one block too many: a's tail goes, its head stays
    assert (cache.match(a + [0]), cache.match(b + [0])) == (2, 4)


def test_match_never_covers_the_last_token():
    cache = ref.PrefixCache(16, 4)
    cache.insert(list(range(8)))
    assert [cache.match(list(range(n))) for n in (0, 1, 4, 5, 8, 9)] == [0, 0, 0, 4, 4, 8]


@QUICK
@given(seed=seeds)
def test_cache_respects_capacity_and_never_orphans_a_block(seed):
    r = random.Random(seed)
    capacity, block_size = r.randint(0, 10), r.choice([1, 2, 3, 4])
    cache = ref.PrefixCache(capacity, block_size)
    inserted = []
    for op, tokens in random_ops(r, max(capacity, 1), block_size):
        if op == "insert":
            cache.insert(tokens)
            inserted.append(tokens)
        assert len(cache.stamps) <= capacity
        for prompt in inserted:  # every cached block's parent is cached
            present = [h in cache.stamps for h in ref.block_hashes(prompt, block_size)]
            assert present == sorted(present, reverse=True)


@QUICK
@given(prev=tokens_lists, tokens=tokens_lists, block_size=block_sizes, min_tokens=st.integers(0, 30))
def test_cacheable_prefix_matches_brute_force(prev, tokens, block_size, min_tokens):
    n = min(len(prev), len(tokens))
    differ = torch.tensor(prev[:n], dtype=torch.long) != torch.tensor(tokens[:n], dtype=torch.long)  # [n]
    shared = int(differ.int().argmax()) if bool(differ.any()) else n
    best = 0
    for cut in range(0, len(tokens), block_size):  # block boundaries before the last token
        if cut <= shared:
            best = cut
    expected = best if len(tokens) >= min_tokens else 0
    assert ref.cacheable_prefix(prev, tokens, block_size, min_tokens) == expected


def test_stable_prefix_reads_the_previous_prompt_and_the_timestamp_reads_nothing():
    stable = CHATS["stable prefix, dynamic part at the end"]
    result = ref.session_cost(stable, PRICES, BLOCK_SIZE, MIN_TOKENS)
    for turn, previous, row in zip(stable[1:], stable, result["turns"][1:]):
        assert turn["prompt"][:len(previous["prompt"])] == previous["prompt"]
        assert row["cached"] == len(previous["prompt"]) // BLOCK_SIZE * BLOCK_SIZE
    stamped = ref.session_cost(CHATS["timestamp at the front of every turn"], PRICES, BLOCK_SIZE, MIN_TOKENS)
    assert all(row["cached"] == 0 for row in stamped["turns"]) and stamped["hit_rate"] == 0.0
    no_cache = sum(len(t["prompt"]) * PRICES["input"] + t["output_tokens"] * PRICES["output"] for t in stable)
    assert result["total_cost"] < no_cache < stamped["total_cost"]
    prompt_tokens = sum(len(t["prompt"]) for t in stable)
    assert result["hit_rate"] == pytest.approx(sum(r["cached"] for r in result["turns"]) / prompt_tokens)


def test_agent_session_worked_by_hand():
    turns = agent_session()
    # task 0, task 1 (fails), task 1 again, task 2, the compaction call, task 3; a task's reply is 120 + 30 * task
    # tokens, the compaction call's output the 240-token summary
    assert [t["output_tokens"] for t in turns] == [120, conversation.FAILED_OUTPUT, 150, 180, 240, 210]
    assert turns[1]["prompt"] == turns[2]["prompt"]  # the retry sends the same prompt
    assert turns[4]["prompt"][:len(turns[3]["prompt"])] == turns[3]["prompt"]  # compaction reads the history
    assert turns[5]["prompt"][:len(SYSTEM) + 240] == SYSTEM + conversation.SUMMARY
    for provider in PROVIDERS.values():
        block = provider["block_size"]
        rows = ref.session_cost(turns, provider["prices"], block, provider["min_tokens"])["turns"]
        n = [len(t["prompt"]) for t in turns]  # 1540, 1707, 1707, 1911, 2121, 1801
        # the retry reads every whole block that ends before its last token and writes nothing new
        assert (rows[2]["cached"], rows[2]["written"]) == ((n[2] - 1) // block * block, 0)
        # the compaction call reads all of task 2's full blocks: its prompt extends task 2's
        assert rows[4]["cached"] == n[3] // block * block
        # after the compaction only the system prompt's whole blocks are read: 1488 (16-token), 1408 (128-token)
        assert rows[5]["cached"] == len(SYSTEM) // block * block == {16: 1488, 128: 1408}[block]


def test_padding_raises_the_hit_rate_and_the_bill_together():
    for provider in PROVIDERS.values():
        lean, padded = (ref.session_cost(turns, provider["prices"], provider["block_size"], provider["min_tokens"])
                        for turns in QA.values())
        assert all(len(t["prompt"]) < provider["min_tokens"] for t in QA["lean"])  # never cached
        assert lean["hit_rate"] == 0 and padded["hit_rate"] > 0.6
        assert padded["total_cost"] > 1.1 * lean["total_cost"]


def test_product_figures_are_inputs_with_their_source_and_date():
    for provider in PROVIDERS.values():
        assert re.search(r"\(\d{4}-\d{2}\)", provider["label"])
        assert set(provider["prices"]) == {"input", "cache_write", "cache_read", "output"}
    assert UNIT_PRICES["cache_write"] / UNIT_PRICES["input"] == SONNET4["prices"]["cache_write"] / PRICES["input"]
    for folder in ("exercises", "solutions", "reference"):
        code = (ROOT / folder / "prompt_cache.py").read_text()
        assert not re.search(r"\b(1\.25|0\.1|1024|1_024|3e-6)\b", code), f"{folder} builds in a product's figure"


def test_session_cost_prices_each_kind_of_token():
    turns = [{"prompt": list(range(10)), "output_tokens": 5}, {"prompt": list(range(15)), "output_tokens": 3}]
    result = ref.session_cost(turns, UNIT_PRICES, 4, 8)
    assert [(r["cached"], r["written"], r["uncached"]) for r in result["turns"]] == [(0, 8, 2), (8, 4, 3)]
    assert [r["cost"] for r in result["turns"]] == pytest.approx([8 * 1.25 + 2 + 25, 0.8 + 5 + 3 + 15])
    assert result["hit_rate"] == pytest.approx(8 / 25)


# --- the solution -----------------------------------------------------------------------------------------

@QUICK
@given(seed=seeds)
def test_solution_cache_matches_reference(seed):
    r = random.Random(seed)
    capacity, block_size = r.randint(1, 10), r.choice([2, 3, 4, 8])
    ops = random_ops(r, capacity, block_size)
    assert run_ops(sol.PrefixCache(capacity, block_size), ops) == run_ops(ref.PrefixCache(capacity, block_size), ops)


@QUICK
@given(prev=tokens_lists, tokens=tokens_lists, block_size=block_sizes, min_tokens=st.integers(0, 30))
def test_solution_hashes_and_prefix_match_reference(prev, tokens, block_size, min_tokens):
    assert len(sol.block_hashes(tokens, block_size)) == len(ref.block_hashes(tokens, block_size))
    assert sol.cacheable_prefix(prev, tokens, block_size, min_tokens) == \
        ref.cacheable_prefix(prev, tokens, block_size, min_tokens)


@QUICK
@given(seed=seeds, block_size=st.integers(1, 16), min_tokens=st.integers(0, 48))
def test_solution_session_cost_matches_reference(seed, block_size, min_tokens):
    for turns in (random_session(random.Random(seed)), random_agent_session(random.Random(seed))):
        expected = ref.session_cost(turns, PRICES, block_size, min_tokens)
        assert session_difference(sol.session_cost(turns, PRICES, block_size, min_tokens), expected) is None


def test_random_agent_sessions_retry_and_compact():
    seen = {"retry": 0, "compaction": 0}
    for seed in range(200):
        turns = random_agent_session(random.Random(seed))
        prompts = [t["prompt"] for t in turns]
        seen["retry"] += any(a == b for a, b in zip(prompts, prompts[1:]))
        seen["compaction"] += any(len(b) < len(a) for a, b in zip(prompts, prompts[1:]))
    assert min(seen.values()) > 50


TURN = [{"prompt": [1, 2, 3], "output_tokens": 1}]
BAD_CALLS = [
    ("block_size", "block_hashes", ([1, 2], 0)),
    ("block_size", "PrefixCache", (4, 0)),
    ("capacity_blocks", "PrefixCache", (-1, 2)),
    ("block_size", "cacheable_prefix", ([1], [1, 2], 0, 0)),
    ("min_tokens", "cacheable_prefix", ([1], [1, 2], 1, -1)),
    ("block_size", "session_cost", (TURN, PRICES, 0, 0)),
    ("min_tokens", "session_cost", (TURN, PRICES, 1, -1)),
    ("output_tokens", "session_cost", ([{"prompt": [1], "output_tokens": -1}], PRICES, 1, 0)),
]


@pytest.mark.parametrize("module", [ref, sol], ids=["reference", "solution"])
@pytest.mark.parametrize("argument, fn, args", BAD_CALLS)
def test_bad_arguments_name_the_argument(module, argument, fn, args):
    with pytest.raises(ValueError, match=argument):
        getattr(module, fn)(*args)


# --- stub, hints, mutants ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [("block_hashes", ([1, 2], 1)), ("PrefixCache", (4, 2)),
                                      ("cacheable_prefix", ([1], [1, 2], 1, 0)),
                                      ("session_cost", (TURN, PRICES, 1, 0))])
def test_stub_raises_not_implemented(fn, args):
    with pytest.raises(NotImplementedError, match="TODO"):
        getattr(stub, fn)(*args)


def test_stub_cache_methods_raise_not_implemented():
    cache = object.__new__(stub.PrefixCache)
    for method in (cache.insert, cache.match):
        with pytest.raises(NotImplementedError, match="TODO"):
            method([1, 2, 3])



@pytest.mark.parametrize("misconception", sorted(MISCONCEPTIONS))
def test_mutants_state_their_bug_and_keep_the_api(misconception):
    assert (MUTANTS / f"{misconception}.py").read_text().startswith('"""Bug: ')
    module = mutant("prompt_cache", misconception)
    assert all(callable(getattr(module, name)) for name in FUNCTIONS)


def test_cache_read_full_price_is_what_its_prediction_says():
    module = mutant("prompt_cache", "cache_read_full_price")
    for turns in [*CHATS.values(), *QA.values(), agent_session()]:
        predicted = session_misconceptions(ref, turns, PRICES, BLOCK_SIZE, MIN_TOKENS)
        got = module.session_cost(turns, PRICES, BLOCK_SIZE, MIN_TOKENS)
        if "cache_read_full_price" in predicted:
            assert session_difference(got, predicted["cache_read_full_price"]) is None
        else:  # nothing is read from the cache: the bug does not show
            assert session_difference(got, ref.session_cost(turns, PRICES, BLOCK_SIZE, MIN_TOKENS)) is None


@QUICK
@given(prev=tokens_lists, tokens=tokens_lists, block_size=block_sizes, min_tokens=st.integers(0, 30))
def test_full_prompt_hit_is_what_its_prediction_says(prev, tokens, block_size, min_tokens):
    got = mutant("prompt_cache", "full_prompt_hit").cacheable_prefix(prev, tokens, block_size, min_tokens)
    assert got == uncapped_prefix(ref, prev, tokens, block_size, min_tokens)


def test_hash_mutants_show_their_bug():
    tokens = [1, 2, 3, 4, 5]
    assert len(mutant("prompt_cache", "partial_block_hashed").block_hashes(tokens, 2)) == 3
    unchained = mutant("prompt_cache", "unchained_hash").block_hashes
    assert unchained([9, 9, 3, 4], 2)[1] == unchained([1, 2, 3, 4], 2)[1]


def test_notebook_closes_on_what_the_topic_does_not_do():
    from grader.learner.notebooks.build import build

    last = build("prompt_cache").cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## What this does not do")
    closing = " ".join(last.source.split())
    # the chapter's completion standard for prompt caching (issue 26, point 16), each point a sentence of its own
    assert all(phrase in closing for phrase in (
        "computation state, not memory", "Cache, compression and long-term memory are three different things",
        "A higher hit rate is not success", "task quality, total cost and total time read together"))


def test_notebook_says_compaction_keeps_the_front_of_the_prompt_hitting():
    from grader.learner.notebooks.build import build

    text = " ".join(" ".join(cell.source.split()) for cell in build("prompt_cache").cells
                    if cell.cell_type == "markdown")
    assert "The cache stops matching from the summary on" in text
    assert "the system prompt and the tool definitions) is unchanged, so those blocks still hit" in text
