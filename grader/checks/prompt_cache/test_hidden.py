"""Hidden prompt_cache checks: random prompts, block sizes, cache capacities and sessions drawn from the seed,
compared with the live reference."""
import random

from grader.checks.prompt_cache.expect import (expect_matches, expect_session, hashes_of, run_ops,
                                               session_misconceptions, uncapped_prefix)
from grader.engine import check, expect_type, fail, reference, tr

CASES = 25


def random_tokens(r: random.Random, low: int, high: int) -> list:
    """Between `low` and `high` tokens from a small vocabulary, so that equal blocks occur by chance."""
    return [r.randint(0, 5) for _ in range(r.randint(low, high))]


def related_prompt(r: random.Random, bases: list) -> list:
    """One of a few shared beginnings, cut at a random point and continued at random."""
    base = r.choice(bases)
    return base[:r.randint(0, len(base))] + random_tokens(r, 0, 12)


@check("random_block_hashes", points=12, hint="block_hashes",
       title="block_hashes on random prompts: one hash per full block, a change shows from its block on")
def test_random_block_hashes(sub, seed):
    r = random.Random(seed)
    ref = reference("prompt_cache")
    for _ in range(CASES):
        block_size = r.randint(1, 8)
        tokens = random_tokens(r, 1, 40)
        i = r.randrange(len(tokens))           # the token to change
        if r.random() < 0.5:                   # -1 to -2: CPython's hash(-1) == hash(-2), tuples included
            tokens[i] = -1
        what = f"block_hashes({tokens}, {block_size})"
        got = hashes_of(sub, tokens, block_size)
        full_blocks = len(ref.block_hashes(tokens, block_size))
        if len(got) != full_blocks:
            partial = len(tokens) % block_size and len(got) == full_blocks + 1
            fail(tr("{call} returned {count} hashes, expected {expected}", call=what, count=len(got),
                    expected=full_blocks), "partial_block_hashed" if partial else None)
        edited = tokens[:i] + [-2 if tokens[i] == -1 else tokens[i] + r.randint(1, 5)] + tokens[i + 1:]
        after = hashes_of(sub, edited, block_size)
        expected = [a != b for a, b in zip(ref.block_hashes(tokens, block_size), ref.block_hashes(edited, block_size))]
        changed = [a != b for a, b in zip(got, after)]
        if len(after) != len(got) or changed != expected:
            only_own_block = [block == i // block_size for block in range(len(changed))]
            why = (tr(" (token ids -1 and -2 must hash apart; CPython's hash(-1) == hash(-2): hash a stable encoding "
                      "of the ids)") if tokens[i] == -1 else "")
            fail(tr("changing token {i} of {tokens} to {token} (block_size {size}) changed the hashes of blocks "
                    "{changed}, expected {expected}{why}", i=i, tokens=tokens, token=edited[i], size=block_size,
                    changed=[b for b, c in enumerate(changed) if c], expected=[b for b, c in enumerate(expected) if c],
                    why=why), "unchained_hash" if changed == only_own_block else None)
        k = r.randint(0, full_blocks)
        if hashes_of(sub, tokens[:k * block_size], block_size) != got[:k]:
            fail(tr("{call} differs from the first {k} hashes of {what}", k=k, what=what,
                    call=f"block_hashes({tokens[:k * block_size]}, {block_size})"))


def random_ops(r: random.Random, capacity_blocks: int, block_size: int) -> list:
    """Inserts and matches of related prompts.

    Two choices the contract leaves open are avoided: an insert holds at most `capacity_blocks` full blocks (an
    insert larger than the cache may be trimmed block by block or at the end), and a matched prompt's length is
    not a multiple of `block_size` (so whether a match refreshes a cached block that holds the last token
    cannot matter).
    """
    bases = [random_tokens(r, 0, 20) for _ in range(3)]
    ops = []
    for _ in range(30):
        tokens = related_prompt(r, bases)
        if r.random() < 0.45:
            ops.append(("insert", tokens[:capacity_blocks * block_size + block_size - 1]))
        else:
            ops.append(("match", tokens if len(tokens) % block_size else tokens + [r.randint(0, 5)]))
    return ops


def expect_cache_like_reference(sub, capacity_blocks: int, block_size: int, ops: list,
                                wrong_ops: dict | None = None) -> None:
    """The submission's PrefixCache must answer `ops` as the reference's does; `wrong_ops` maps a misconception
    id to the ops on which the reference answers as that misconception would on `ops`."""
    ref = reference("prompt_cache")
    expected = run_ops(ref.PrefixCache(capacity_blocks, block_size), ops)
    wrong = {mid: run_ops(ref.PrefixCache(capacity_blocks, block_size), changed)
             for mid, changed in (wrong_ops or {}).items()}
    expect_matches(sub.PrefixCache(capacity_blocks, block_size), capacity_blocks, block_size, ops, expected, wrong)


@check("random_prefix_cache", points=24, hint="PrefixCache",
       title="PrefixCache on random inserts and matches of related prompts, with evictions")
def test_random_prefix_cache(sub, seed):
    r = random.Random(seed)
    for _ in range(6):
        capacity_blocks, block_size = r.randint(1, 10), r.choice([2, 3, 4, 8])
        expect_cache_like_reference(sub, capacity_blocks, block_size, random_ops(r, capacity_blocks, block_size))


@check("random_hit_leaves_last_token", points=7, hint="PrefixCache",
       title="PrefixCache.match of random cached prompts never covers the last token")
def test_random_hit_leaves_last_token(sub, seed):
    r = random.Random(seed)
    for _ in range(5):
        block_size = r.randint(1, 6)
        prompts = [random_tokens(r, 1, 5) * block_size for _ in range(3)]  # lengths are multiples of block_size
        ops = [("insert", prompt) for prompt in prompts]
        ops += [("match", r.choice(prompts)[:r.randint(1, 5) * block_size]) for _ in range(6)]
        uncapped = [(op, tokens + [-1] if op == "match" else tokens) for op, tokens in ops]
        expect_cache_like_reference(sub, 64, block_size, ops, {"full_prompt_hit": uncapped})


def random_prompt_pairs(seed: int):
    """CASES (previous prompt, prompt, block_size, min_tokens) drawn from the seed, the prompt sharing a random part
    of the previous one."""
    r = random.Random(seed)
    for _ in range(CASES):
        prev_tokens = random_tokens(r, 0, 30)
        yield prev_tokens, related_prompt(r, [prev_tokens]), r.randint(1, 8), r.choice([0, r.randint(0, 30)])


@check("random_cacheable_prefix", points=5, hint="cacheable_prefix",
       title="cacheable_prefix on random prompt pairs, block sizes and minimum lengths")
def test_random_cacheable_prefix(sub, seed):
    ref = reference("prompt_cache")
    for prev_tokens, tokens, block_size, min_tokens in random_prompt_pairs(seed):
        what = f"cacheable_prefix({prev_tokens}, {tokens}, block_size={block_size}, min_tokens={min_tokens})"
        expected = ref.cacheable_prefix(prev_tokens, tokens, block_size, min_tokens)
        got = expect_type(sub.cacheable_prefix(prev_tokens, tokens, block_size, min_tokens), int, what)
        if got != expected:
            uncapped = uncapped_prefix(ref, prev_tokens, tokens, block_size, min_tokens)
            fail(tr("{what} returned {got}, expected {expected}", what=what, got=got, expected=expected),
                 "full_prompt_hit" if got == uncapped else None)


def random_prices(r: random.Random) -> dict:
    """Per-token prices with random ratios: write 1x to 2x input, read 0.1x to 0.5x, output 1x to 5x."""
    base = r.choice([1e-7, 1e-6, 3e-6, 1.5e-5])
    return {"input": base, "cache_write": base * r.choice([1.0, 1.25, 2.0]),
            "cache_read": base * r.choice([0.1, 0.25, 0.5]), "output": base * r.choice([1, 4, 5])}


def random_session(r: random.Random) -> list:
    """Turns whose prompts mostly grow from the previous one, later ones sometimes restart or shrink.

    The first prompt is never empty: the hit rate of a session without prompt tokens is left open.
    """
    prompt, turns = random_tokens(r, 1, 40), []
    for turn in range(r.randint(1, 6)):
        step = r.random() if turn else 1.0
        if step < 0.2:
            prompt = prompt[:r.randint(0, len(prompt))]
        elif step < 0.4:
            prompt = random_tokens(r, 0, 60)
        else:
            prompt = prompt + random_tokens(r, 0, 30)
        turns.append({"prompt": prompt, "output_tokens": r.randint(0, 200)})
    return turns


def expect_random_costs(sub, seed: int, random_turns, max_block_size: int, max_min_tokens: int) -> None:
    """session_cost of CASES sessions drawn by `random_turns(r)` at random prices, block sizes and minimum lengths
    must be the reference's."""
    r = random.Random(seed)
    ref = reference("prompt_cache")
    for _ in range(CASES):
        turns, prices = random_turns(r), random_prices(r)
        block_size, min_tokens = r.randint(1, max_block_size), r.randint(0, max_min_tokens)
        expect_session(sub.session_cost(turns, prices, block_size, min_tokens),
                       ref.session_cost(turns, prices, block_size, min_tokens),
                       f"session_cost({turns}, {prices}, {block_size}, {min_tokens})",
                       session_misconceptions(ref, turns, prices, block_size, min_tokens))


@check("random_session_cost", points=12, hint="session_cost",
       title="session_cost on random multi-turn sessions, prices, block sizes and minimum lengths")
def test_random_session_cost(sub, seed):
    expect_random_costs(sub, seed, random_session, max_block_size=16, max_min_tokens=48)


def agent_session(r: random.Random) -> list:
    """An agent's turns: each extends the history; some fail and are sent again unchanged; some are compaction
    calls whose summary replaces the history after the system prompt. Half the sessions carry a long unused
    prefix in their system prompt."""
    system = random_tokens(r, 0, 12) + (random_tokens(r, 10, 40) if r.random() < 0.5 else [])
    history, turns = [], []
    for _ in range(r.randint(2, 8)):
        event = r.random()
        if event < 0.25 and history:  # compaction: the history in, a summary out
            summary = random_tokens(r, 1, 12)
            turns.append({"prompt": system + history + random_tokens(r, 1, 4), "output_tokens": len(summary)})
            history = summary
            continue
        message, answer = random_tokens(r, 1, 10), random_tokens(r, 0, 20)
        prompt = system + history + message
        if event < 0.5:  # a failed answer, billed and thrown away, then the same prompt again
            turns.append({"prompt": prompt, "output_tokens": r.randint(0, 60)})
        turns.append({"prompt": prompt, "output_tokens": len(answer)})
        history = history + message + answer
    return turns


@check("random_agent_sessions", points=10, hint="session_cost",
       title="session_cost on random agent sessions with failed turns redone, compaction calls and padded prefixes")
def test_random_agent_sessions(sub, seed):
    expect_random_costs(sub, seed, agent_session, max_block_size=8, max_min_tokens=40)
