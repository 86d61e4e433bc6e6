"""How prompt_cache checks drive a PrefixCache, compare results, and predict what a misconception returns."""
from grader.engine import diagnose, expect_type, fail, tr, within
from grader.engine.checks import type_name

RTOL = 1e-9    # costs and hit rates are sums of products of exact decimals: only the summation order differs
ATOL = 1e-15   # dollars; far below any price difference between two kinds of token
COUNTS = ("cached", "written", "uncached")


def hashes_of(sub, tokens: list, block_size: int) -> list:
    """The submission's block_hashes, required to be a list of ints or strs."""
    what = f"block_hashes({tokens}, {block_size})"
    got = expect_type(sub.block_hashes(tokens, block_size), list, what)
    for value in got:
        expect_type(value, (int, str), tr("{what} element", what=what))
    return got


def run_ops(cache, ops: list) -> list:
    """Apply ("insert" | "match", tokens) operations to `cache` in order; the results of the matches."""
    results = []
    for op, tokens in ops:
        if op == "insert":
            cache.insert(tokens)
        else:
            results.append(cache.match(tokens))
    return results


def ops_text(capacity_blocks: int, block_size: int, ops: list, upto: int) -> str:
    """The operations up to and including `ops[upto]`, as they would be written."""
    calls = "; ".join(f"{op}({tokens})" for op, tokens in ops[:upto + 1])
    return f"cache = PrefixCache({capacity_blocks}, {block_size}); {calls}"


def expect_matches(cache, capacity_blocks: int, block_size: int, ops: list, expected: list,
                   wrong: dict | None = None) -> None:
    """Run `ops` on the submission's cache; each match must return the expected count.

    `wrong` maps a misconception id to the match results it predicts; the first differing match names the id
    whose prediction it equals at that position.
    """
    position = 0
    for index, (op, tokens) in enumerate(ops):
        if op == "insert":
            cache.insert(tokens)
            continue
        got = cache.match(tokens)
        want = expected[position]
        what = tr("{ops}: the last match", ops=ops_text(capacity_blocks, block_size, ops, index))
        expect_type(got, int, what)
        if got != want:
            found = next((mid for mid, values in (wrong or {}).items()
                          if position < len(values) and values[position] == got), None)
            fail(tr("{what} returned {got}, expected {expected}", what=what, got=got, expected=want), found)
        position += 1


def session_difference(actual, expected: dict) -> str | None:
    """None when `actual` has `expected`'s per-turn counts and costs, total and hit rate; else the difference."""
    if not isinstance(actual, dict):
        return tr("returned {type}, expected a dict", type=type_name(actual))
    missing = [key for key in ("turns", "total_cost", "hit_rate") if key not in actual]
    if missing:
        return tr("the result has no {keys}", keys=", ".join(map(repr, missing)))
    turns = actual["turns"]
    if not isinstance(turns, (list, tuple)) or len(turns) != len(expected["turns"]):
        return tr("'turns' must be a list of {count} dicts, got {type} {turns!r:.80}", count=len(expected["turns"]),
                  type=type_name(turns), turns=turns)
    for i, (got, want) in enumerate(zip(turns, expected["turns"])):
        if not isinstance(got, dict) or not set(COUNTS + ("cost",)) <= got.keys():
            return tr("turns[{i}] must be a dict with 'cached', 'written', 'uncached', 'cost', got {got!r:.80}", i=i,
                      got=got)
        counts = {key: got[key] for key in COUNTS}
        if any(isinstance(v, bool) or not isinstance(v, int) for v in counts.values()) or \
                counts != {key: want[key] for key in COUNTS}:
            return tr("turns[{i}] tokens {counts}, expected {expected}", i=i, counts=counts,
                      expected={key: want[key] for key in COUNTS})
        if not close(got["cost"], want["cost"]):
            return tr("turns[{i}] cost {cost!r}, expected {expected!r}", i=i, cost=got["cost"], expected=want["cost"])
    for key in ("total_cost", "hit_rate"):
        if not close(actual[key], expected[key]):
            return tr("{key} {actual!r}, expected {expected!r}", key=key, actual=actual[key], expected=expected[key])
    return None


def close(actual, expected: float) -> bool:
    """Whether `actual` is a number within the tolerance of `expected`."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return False
    return within(actual, expected, atol=ATOL, rtol=RTOL)


def expect_session(actual, expected: dict, what: str, wrong: dict) -> None:
    """Fail unless `actual` equals the session cost `expected`, naming a misconception whose result it equals."""
    problem = session_difference(actual, expected)
    if problem is not None:
        fail(tr("{what}: {problem}", what=what, problem=problem),
             diagnose(actual, wrong, lambda got, predicted: session_difference(got, predicted) is None))


def session_misconceptions(ref, turns: list, prices: dict, block_size: int, min_tokens: int) -> dict:
    """{misconception id: the session cost it predicts}, for ids that change the answer.

    cache_read_full_price bills cached tokens like uncached ones: the reference with the read price raised to
    the input price.
    """
    right = ref.session_cost(turns, prices, block_size, min_tokens)
    wrong = {"cache_read_full_price": ref.session_cost(turns, {**prices, "cache_read": prices["input"]},
                                                       block_size, min_tokens)}
    return {mid: value for mid, value in wrong.items() if session_difference(value, right) is not None}


def uncapped_prefix(ref, prev_tokens: list, tokens: list, block_size: int, min_tokens: int) -> int:
    """What cacheable_prefix returns when a hit may cover the last token (full_prompt_hit).

    Appending a token that matches nothing moves the cap past the old last token and leaves the shared prefix
    as it was; raising min_tokens by one keeps the length test as it was.
    """
    return ref.cacheable_prefix(prev_tokens, list(tokens) + [-1], block_size, min_tokens + 1)
