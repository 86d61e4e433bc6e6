"""Public prompt_cache checks: hash properties, small prefix-cache scenarios, cacheable prefixes, and what caching
does to the cost of sessions (a stable prompt against a timestamped one, a failed turn redone and a compaction
call, a padded prompt whose hit rate rises with its bill); answers from the goldens."""
from grader.checks.prompt_cache.conversation import CHATS, QA, agent_session, named
from grader.checks.prompt_cache.pricing import PROVIDERS, SONNET4, UNIT_PRICES, label
from grader.checks.prompt_cache.expect import (expect_matches, expect_session, hashes_of, run_ops,
                                               session_misconceptions, uncapped_prefix)
from grader.engine import check, expect_raises, expect_type, fail, golden, reference, tr

TOKENS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7]  # three full blocks of 4 and a 2-token tail


@check("block_hashes_one_per_full_block", points=2, hint="block_hashes",
       title="block_hashes returns one hash per full block; a trailing partial block gets none")
def test_block_hashes_one_per_full_block(sub):
    for block_size, length in ((4, 0), (4, 3), (4, 4), (4, 7), (4, 9), (1, 5), (5, 14)):
        tokens = list(range(10, 10 + length))
        expected = golden(f"count.{block_size}.{length}",
                          lambda: len(reference("prompt_cache").block_hashes(tokens, block_size)))
        got = hashes_of(sub, tokens, block_size)
        if len(got) != expected:
            partial = length % block_size and len(got) == -(-length // block_size)
            fail(tr("{call} returned {count} hashes, expected {expected}", call=f"block_hashes({tokens}, {block_size})",
                    count=len(got), expected=expected), "partial_block_hashed" if partial else None)


def changed_blocks(before: list, after: list) -> list:
    """For each block, whether its hash differs between two lists of equal length."""
    return [a != b for a, b in zip(before, after)]


@check("block_hashes_chained", points=2, hint="block_hashes",
       title="changing token i changes the hash of block i // block_size and of every later block, no earlier one")
def test_block_hashes_chained(sub):
    block_size = 4
    before = hashes_of(sub, TOKENS, block_size)
    if len(before) != len(TOKENS) // block_size:
        fail(tr("{call} returned {count} hashes, expected one per full block", count=len(before),
                call=f"block_hashes({TOKENS}, {block_size})"),
             "partial_block_hashed" if len(before) == -(-len(TOKENS) // block_size) else None)
    for i in (0, 5, 11, 13):
        edited = TOKENS[:i] + [TOKENS[i] + 100] + TOKENS[i + 1:]
        expected = golden(f"changed.{i}", lambda: changed_blocks(
            reference("prompt_cache").block_hashes(TOKENS, block_size),
            reference("prompt_cache").block_hashes(edited, block_size)))
        after = hashes_of(sub, edited, block_size)
        if len(after) != len(before):
            fail(tr("block_hashes returned {before} hashes for {tokens} and {after} for {edited}", before=len(before),
                    tokens=TOKENS, after=len(after), edited=edited))
        got = changed_blocks(before, after)
        if got != expected:
            only_own_block = [block == i // block_size for block in range(len(got))]
            fail(tr("changing token {i} of {tokens} (block_size {size}) changed the hashes of blocks {changed}, "
                    "expected blocks {expected}", i=i, tokens=TOKENS, size=block_size,
                    changed=[b for b, changed in enumerate(got) if changed],
                    expected=[b for b, changed in enumerate(expected) if changed]),
                 "unchained_hash" if got == only_own_block else None)
    # token ids are ints, and CPython's hash() is no identity of ints: hash(-1) == hash(-2), so a tuple holding -1
    # hashes like the same tuple holding -2
    minus_one, minus_two = [7, -1, 3, 0, 5, 2, 8, 9], [7, -2, 3, 0, 5, 2, 8, 9]
    expected = golden("changed.minus_one_two", lambda: changed_blocks(
        reference("prompt_cache").block_hashes(minus_one, block_size),
        reference("prompt_cache").block_hashes(minus_two, block_size)))
    got = changed_blocks(hashes_of(sub, minus_one, block_size), hashes_of(sub, minus_two, block_size))
    if got != expected:
        fail(tr("block_hashes({minus_one}, 4) and block_hashes({minus_two}, 4) differ in the hashes of blocks "
                "{changed}, expected blocks {expected}: token ids -1 and -2 must hash apart (CPython's hash(-1) == "
                "hash(-2), and so do tuples that differ only there); hash a stable encoding of the ids, such as "
                "hashlib over their decimal text", minus_one=minus_one, minus_two=minus_two,
                changed=[b for b, changed in enumerate(got) if changed],
                expected=[b for b, changed in enumerate(expected) if changed]))


@check("block_hashes_equal_prefixes", points=1, hint="block_hashes",
       title="equal prefixes give equal hashes, equal blocks after different prefixes differ, and calls repeat")
def test_block_hashes_equal_prefixes(sub):
    prefix, block_size = TOKENS[:8], 4
    first = hashes_of(sub, prefix + [1, 2, 3, 4, 5], block_size)
    second = hashes_of(sub, prefix + [6, 7, 8, 9], block_size)
    alone = hashes_of(sub, prefix, block_size)
    if len(first) != 3 or first[:2] != second[:2] or alone != first[:2]:
        fail(tr("block_hashes of {prefix} + [1, 2, 3, 4, 5], of {prefix} + [6, 7, 8, 9] and of {prefix} itself "
                "(block_size 4) must agree on the first two hashes: got {first}, {second}, {alone}", prefix=prefix,
                first=first, second=second, alone=alone))
    if hashes_of(sub, prefix + [1, 2, 3, 4, 5], block_size) != first:
        fail(tr("{call} returned different hashes on a second call",
                call=f"block_hashes({prefix + [1, 2, 3, 4, 5]}, 4)"))
    if first[2] == second[2]:
        fail(tr("blocks [1, 2, 3, 4] and [6, 7, 8, 9] after the same prefix got the same hash {hash!r}",
                hash=first[2]))
    other_start = hashes_of(sub, [0, 0, 0, 0] + TOKENS[4:8], block_size)
    if len(other_start) != 2:
        fail(tr("{call} returned {count} hashes, expected {expected}",
                call=f"block_hashes({[0, 0, 0, 0] + TOKENS[4:8]}, 4)", count=len(other_start), expected=2))
    if other_start[1] == alone[1]:
        fail(tr("block {block} got the same hash after {prefix} and after [0, 0, 0, 0]; a block's hash must identify "
                "the whole prefix", block=TOKENS[4:8], prefix=TOKENS[:4]), "unchained_hash")


def expect_scenario(sub, key: str, capacity_blocks: int, block_size: int, ops: list, wrong=None) -> None:
    """Run `ops` on the submission's PrefixCache and compare every match with the golden results."""
    expected = golden(f"ops.{key}",
                      lambda: run_ops(reference("prompt_cache").PrefixCache(capacity_blocks, block_size), ops))
    expect_matches(sub.PrefixCache(capacity_blocks, block_size), capacity_blocks, block_size, ops, expected, wrong)


A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [11, 12, 13, 14, 15, 16, 17, 18]
C = [21, 22, 23, 24, 25, 26, 27, 28]
T10 = list(range(100, 110))


@check("prefix_cache_hits_whole_blocks", points=2, hint="PrefixCache",
       title="PrefixCache.match counts the cached whole blocks a prompt starts with")
def test_prefix_cache_hits_whole_blocks(sub):
    ops = [("insert", T10), ("match", T10 + [7, 7, 7]), ("match", T10[:6] + [50, 51, 52, 53]),
           ("match", [99] + T10[1:]), ("match", T10[:3]), ("match", T10[:9]), ("match", [])]
    expect_scenario(sub, "whole_blocks", 16, 4, ops)


@check("prefix_cache_partial_block", points=1, hint="PrefixCache",
       title="the 2-token tail of a 10-token prompt is not cached (block_size 4)")
def test_prefix_cache_partial_block(sub):
    ops = [("insert", T10), ("match", T10 + [7])]
    # a cache that also stored the tail [108, 109] finds it again in T10 + [7]: three blocks
    expect_scenario(sub, "partial_block", 16, 4, ops, {"partial_block_hashed": [3 * 4]})


@check("prefix_cache_chained_lookup", points=1, hint="PrefixCache",
       title="a block only hits after the same prefix it was cached after")
def test_prefix_cache_chained_lookup(sub):
    ops = [("insert", A), ("insert", B), ("match", B[:4] + A[4:] + [0]), ("match", A[:4] + B[4:] + [0])]
    # looked up by its own tokens only, A's second block is found after B's first one (and vice versa)
    expect_scenario(sub, "chained_lookup", 16, 4, ops, {"unchained_hash": [2 * 4, 2 * 4]})


@check("prefix_cache_leaves_last_token", points=2, hint="PrefixCache",
       title="a hit never covers the prompt's last token, whose logits must be computed")
def test_prefix_cache_leaves_last_token(sub):
    ops = [("insert", A), ("match", A), ("match", A[:4]), ("match", A + [9]), ("insert", A + B),
           ("match", A + B), ("match", A + B[:1])]
    uncapped = [(op, tokens + [-1] if op == "match" else tokens) for op, tokens in ops]
    wrong = golden("ops.last_token.full_prompt_hit",
                   lambda: run_ops(reference("prompt_cache").PrefixCache(16, 4), uncapped))
    expect_scenario(sub, "last_token", 16, 4, ops, {"full_prompt_hit": wrong})


@check("prefix_cache_lru_eviction", points=2, hint="PrefixCache",
       title="beyond capacity the least recently used blocks go; match and insert refresh recency")
def test_prefix_cache_lru_eviction(sub):
    a, b, c = A[:4], B[:4], C[:4]  # two blocks of 2 each
    ops = [("insert", a), ("insert", b), ("match", a + [0]), ("insert", c), ("match", b + [0]),
           ("match", a + [0]), ("match", c + [0]), ("insert", b), ("match", a + [0]), ("match", c + [0]),
           ("match", b + [0])]
    expect_scenario(sub, "lru", 4, 2, ops)


@check("prefix_cache_evicts_chain_tail_first", points=2, hint="PrefixCache",
       title="among blocks used together, a chain's later blocks are evicted before its earlier ones")
def test_prefix_cache_evicts_chain_tail_first(sub):
    a, b = A[:4], B[:4]
    expect_scenario(sub, "tail_first", 3, 2, [("insert", a), ("insert", b), ("match", a + [0]), ("match", b + [0])])
    # matching a's first block refreshes it alone, so a's second block is the least recently used
    ops = [("insert", a), ("insert", b), ("match", a[:2] + [0]), ("insert", C[:2]), ("match", a + [0]),
           ("match", b + [0]), ("match", C[:2] + [0])]
    expect_scenario(sub, "partial_refresh", 4, 2, ops)


@check("prefix_cache_counts_shared_blocks_once", points=1, hint="PrefixCache",
       title="two prompts sharing a prefix occupy its blocks once")
def test_prefix_cache_counts_shared_blocks_once(sub):
    shared = A[:4]
    ops = [("insert", shared + [5, 6]), ("insert", shared + [7, 8]), ("match", shared + [5, 6, 0]),
           ("match", shared + [7, 8, 0])]
    expect_scenario(sub, "shared_blocks", 4, 2, ops)


P12 = list(range(50, 62))
PREFIX_CASES = [  # (prev_tokens, tokens, block_size, min_tokens)
    (P12, P12 + [1, 2, 3], 4, 8), (P12, P12, 4, 8), (P12, P12[:8], 4, 8), (P12, P12[:6] + [0] * 6, 4, 8),
    (P12, [0] + P12[1:], 4, 8), (P12, P12[:7], 4, 8), (P12, P12[:8] + [1], 4, 8), ([], P12, 4, 8),
    (P12[:5], P12, 4, 8), (P12, P12, 1, 0), (P12, [], 4, 0), (P12, P12 + [0], 3, 13),
]


def stored_prefix(index: int, prev_tokens: list, tokens: list, block_size: int, min_tokens: int) -> dict:
    """The golden cacheable_prefix of case `index`, and what it is under full_prompt_hit."""
    def compute() -> dict:
        ref = reference("prompt_cache")
        return {"expected": ref.cacheable_prefix(prev_tokens, tokens, block_size, min_tokens),
                "full_prompt_hit": uncapped_prefix(ref, prev_tokens, tokens, block_size, min_tokens)}
    return golden(f"prefix.{index}", compute)


@check("cacheable_prefix_cases", points=2, hint="cacheable_prefix",
       title="cacheable_prefix: shared whole blocks, never the last token, 0 below min_tokens")
def test_cacheable_prefix_cases(sub):
    for index, (prev_tokens, tokens, block_size, min_tokens) in enumerate(PREFIX_CASES):
        case = stored_prefix(index, prev_tokens, tokens, block_size, min_tokens)
        what = f"cacheable_prefix({prev_tokens}, {tokens}, block_size={block_size}, min_tokens={min_tokens})"
        got = expect_type(sub.cacheable_prefix(prev_tokens, tokens, block_size, min_tokens), int, what)
        if got != case["expected"]:
            fail(tr("{what} returned {got}, expected {expected}", what=what, got=got, expected=case["expected"]),
                 "full_prompt_hit" if got == case["full_prompt_hit"] else None)


def expect_cost(sub, key: str, session: str, turns: list, prices: dict, block_size: int, min_tokens: int,
                rules: str | None = None) -> dict:
    """The submission's session_cost must equal the golden `key`; returns the golden result. `rules` names whose
    prices and thresholds these are."""
    def compute() -> dict:
        ref = reference("prompt_cache")
        return {"expected": ref.session_cost(turns, prices, block_size, min_tokens),
                "wrong": session_misconceptions(ref, turns, prices, block_size, min_tokens)}
    case = golden(f"cost.{key}", compute)
    what = (f"session_cost({session}, prices={prices}, block_size={block_size}, min_tokens={min_tokens})"
            + (tr(" under {rules}", rules=rules) if rules else ""))
    expect_session(sub.session_cost(turns, prices, block_size, min_tokens), case["expected"], what, case["wrong"])
    return case["expected"]


def expect_provider_cost(sub, key: str, name: str, turns: list, provider: dict) -> dict:
    """expect_cost for a session of conversation.py under a provider's rules from pricing.py."""
    lengths = [len(turn["prompt"]) for turn in turns]
    session = tr("<{name}: prompts of {lengths} tokens, see grader/checks/prompt_cache/conversation.py>", name=name,
                 lengths=lengths)
    return expect_cost(sub, key, session, turns, provider["prices"], provider["block_size"], provider["min_tokens"],
                       tr("{label}'s rules (grader/checks/prompt_cache/pricing.py)", label=label(provider)))


@check("stable_prompt_vs_timestamp", points=3, hint="session_cost",
       title="a stable prefix reads most of every prompt from the cache; a timestamp at the front reads nothing")
def test_stable_prompt_vs_timestamp(sub):
    for name, turns in CHATS.items():
        expect_provider_cost(sub, name.replace(" ", "_"), named(name), turns, SONNET4)


P16 = list(range(70, 86))
RULES_TURNS = [  # block_size 4, min_tokens 8
    {"prompt": P16[:10], "output_tokens": 5},   # first turn: nothing to read, writes its 2 full blocks
    {"prompt": P16[:15], "output_tokens": 3},   # reads the 2 blocks, writes its third
    {"prompt": P16[:6], "output_tokens": 2},    # below min_tokens: neither read nor written
    {"prompt": P16[:15], "output_tokens": 0},   # the previous prompt was not written: nothing to read
    {"prompt": P16, "output_tokens": 4},        # 16 tokens: reads 3 blocks, the 4th holds its last token
    {"prompt": P16[:12], "output_tokens": 1},   # a shorter prompt: reads 2 blocks, not the one with its last token
]


@check("session_cost_rules", points=2, hint="session_cost",
       title="session_cost reads only what the previous written prompt shares, writes full blocks, bills each kind")
def test_session_cost_rules(sub):
    expect_cost(sub, "rules", repr(RULES_TURNS), RULES_TURNS, UNIT_PRICES, 4, 8,
                tr("Anthropic's 5-minute-cache price ratios (2025-05) in units of the input price"))


@check("agent_retry_and_compaction", points=2, hint="session_cost",
       title="a failed turn is billed and its retry reads the cache; after a compaction only the system prompt hits")
def test_agent_retry_and_compaction(sub):
    for key, provider in PROVIDERS.items():
        expect_provider_cost(sub, f"agent.{key}", tr("agent session: task 1 fails and is redone, a compaction call "
                                                     "before task 3"), agent_session(), provider)


@check("hit_rate_is_not_the_goal", points=2, hint="session_cost",
       title="unused tool descriptions in front of a short session raise its hit rate and its total cost together")
def test_hit_rate_is_not_the_goal(sub):
    # Under both providers' rules the reference gives the lean session a hit rate of 0 and the padded one about
    # 0.7, and the padded bill is 14% (GPT-5) to 26% (Sonnet 4) higher (tests/topics/test_prompt_cache.py asserts
    # that both rise): the hit rate alone never decides.
    for key, provider in PROVIDERS.items():
        for name, turns in QA.items():
            expect_provider_cost(sub, f"qa.{key}.{name.split()[0]}", tr("Q&A session, {name}", name=named(name)),
                                 turns, provider)


BAD_CALLS = [
    ("block_size", "block_hashes", ([1, 2, 3], 0)),
    ("block_size", "PrefixCache", (8, 0)),
    ("capacity_blocks", "PrefixCache", (-1, 4)),
    ("block_size", "cacheable_prefix", ([1, 2, 3], [1, 2, 3, 4], 0, 0)),
    ("min_tokens", "cacheable_prefix", ([1, 2, 3], [1, 2, 3, 4], 2, -1)),
    ("block_size", "session_cost", ([{"prompt": [1, 2, 3], "output_tokens": 1}], UNIT_PRICES, 0, 0)),
    ("min_tokens", "session_cost", ([{"prompt": [1, 2, 3], "output_tokens": 1}], UNIT_PRICES, 2, -5)),
    ("output_tokens", "session_cost", ([{"prompt": [1, 2, 3], "output_tokens": -2}], UNIT_PRICES, 2, 0)),
]


@check("bad_arguments", points=2, hint="PrefixCache",
       title="block_size < 1, negative capacity, min_tokens or output_tokens raise ValueError naming them")
def test_bad_arguments(sub):
    for argument, fn, args in BAD_CALLS:
        what = f"{fn}({', '.join(map(repr, args))})"
        message = expect_raises(ValueError, getattr(sub, fn), *args)
        if argument not in message:
            fail(tr("{call} raised ValueError({message!r}); the message should name {name!r}", call=what,
                    message=message, name=argument))
