"""Random usage objects, malformed records, paired results and effort families for the hidden checks.

Usage objects take each provider's shape (see usage.py) with the variations real responses show: detail objects
present, absent or null, null counts, OpenAI's cached counts in steps of 128 tokens and its cache writes (now and
then more than the total leaves beside the cached tokens: the ledger's assumption fails there, another reading
allows it), Anthropic cache counts that are absent or null, its write breakdown and its thinking count (alone
telling the shape once `exclude_none` has dropped the cache keys), Gemini thoughts, cached content and tool-use
prompts, in snake_case or the REST API's camelCase; and the serialised forms clients produce (nulls dropped, as
`exclude_none` and `to_json_dict()` do, where a key that tells the shape remains). Task counts for effort families
are 10, 20 or 40, so an accuracy k/n given as the target is reached however a submission computes it (k / n >=
target or k >= target · n agree on these).
"""
import random

from grader.checks.reasoning.usage import anthropic_usage, camel_case, chat_usage, gemini_usage, responses_usage

EFFORTS = ("minimal", "low", "medium", "high", "xhigh")


def input_size(r: random.Random) -> int:
    """An input length: a short question, a chat turn, or a long repository context."""
    return r.choice([r.randint(0, 200), r.randint(200, 20_000), r.randint(20_000, 200_000)])


def part(r: random.Random, total: int, step: int = 1) -> int:
    """A count between 0 and `total` (0 one time in three), a multiple of `step`."""
    return 0 if r.random() < 1 / 3 else r.randint(0, total // step) * step


def cache_writes(r: random.Random, total: int, cached: int) -> int | None:
    """OpenAI's cache_write_tokens: absent (None), within what the total leaves beside the cached tokens, or now
    and then beyond it."""
    if r.random() < 0.6:
        return None
    return part(r, total - cached) if r.random() < 0.8 else r.randint(total - cached + 1, total + 500)


def random_chat(r: random.Random) -> dict:
    """An OpenAI Chat Completions usage, details present, absent, null, or with null counts."""
    prompt, completion = input_size(r), r.randint(1, 30_000)
    style = r.choice(["details", "details", "absent", "null objects", "null counts"])
    cached = part(r, prompt, 128)
    written = cache_writes(r, prompt, cached)
    usage = chat_usage(prompt, completion, cached, part(r, completion), details=style != "absent", written=written)
    if style == "null objects":
        usage["prompt_tokens_details"] = None
        usage["completion_tokens_details"] = None if r.random() < 0.5 else usage["completion_tokens_details"]
    elif style == "null counts":
        usage["prompt_tokens_details"]["cached_tokens"] = None
        usage["completion_tokens_details"]["reasoning_tokens"] = None
    return usage


def random_responses(r: random.Random) -> dict:
    """An OpenAI Responses usage, sometimes with one detail object left out or a null count."""
    input_tokens, output_tokens = input_size(r), r.randint(1, 30_000)
    cached = part(r, input_tokens, 128)
    written = cache_writes(r, input_tokens, cached)
    usage = responses_usage(input_tokens, output_tokens, cached, part(r, output_tokens), written=written)
    style = r.choice(["full", "full", "no input details", "no output details", "null count"])
    if style == "no input details":
        del usage["input_tokens_details"]
    elif style == "no output details":
        del usage["output_tokens_details"]
    elif style == "null count":
        usage["output_tokens_details"]["reasoning_tokens"] = None
    return usage


def random_anthropic(r: random.Random) -> dict:
    """An Anthropic Messages usage: the cache counts present, null, or one of them left out; the write total
    null beside its breakdown; thinking reported or not; or no cache used, dumped without its null fields, so that
    only the thinking count tells the shape."""
    output_tokens = r.randint(1, 30_000)
    thinking = r.choice([None, part(r, output_tokens)])
    usage = anthropic_usage(r.randint(0, 5000), output_tokens, cache_read=part(r, 200_000),
                            cache_write=part(r, 50_000), thinking=thinking)
    style = r.choice(["full", "full", "null caches", "no cache write key", "no cache read key", "breakdown only",
                      "thinking alone"])
    if style == "thinking alone":  # exclude_none, or to_dict() of the unset fields, of a call that used no cache
        usage = without_nulls({**usage, "cache_creation_input_tokens": None, "cache_read_input_tokens": None,
                               "cache_creation": None, "output_tokens_details": {"thinking_tokens": thinking or 0}})
    elif style == "null caches":
        usage.update(cache_creation_input_tokens=None, cache_read_input_tokens=None, cache_creation=None)
    elif style == "no cache write key":
        del usage["cache_creation_input_tokens"], usage["cache_creation"]
    elif style == "no cache read key":
        del usage["cache_read_input_tokens"]
    elif style == "breakdown only":
        breakdown = {"ephemeral_5m_input_tokens": part(r, 30_000),
                     "ephemeral_1h_input_tokens": r.choice([None, part(r, 30_000)])}
        usage.update(cache_creation_input_tokens=None, cache_creation=breakdown)
    return usage


def random_gemini(r: random.Random) -> dict:
    """A Gemini usage_metadata: thoughts, cached content and tool-use prompts each reported or left out, or null
    as model_dump() gives them; a quarter of them in the REST API's camelCase."""
    prompt = input_size(r)
    usage = gemini_usage(prompt, r.randint(0, 8000), thoughts=r.choice([None, r.randint(0, 24_000)]),
                         cached=r.choice([None, part(r, prompt)]), tool_prompt=r.choice([None, r.randint(0, 3000)]))
    if r.random() < 0.3:  # model_dump(): every field, the unreported ones null
        usage = {"cache_tokens_details": None, "cached_content_token_count": None, "candidates_tokens_details": None,
                 "prompt_tokens_details": None, "thoughts_token_count": None, "tool_use_prompt_token_count": None,
                 "tool_use_prompt_tokens_details": None, "traffic_type": None, **usage}
    return camel_case(usage) if r.random() < 0.25 else usage


def without_nulls(usage: dict) -> dict:
    """The usage as `exclude_none` or `to_json_dict()` serialise it: null fields dropped, nested ones too."""
    return {key: without_nulls(value) if isinstance(value, dict) else value
            for key, value in usage.items() if value is not None}


TELLING_KEYS = ("prompt_tokens", "prompt_token_count", "promptTokenCount", "candidatesTokenCount",
                "thoughtsTokenCount", "cachedContentTokenCount", "toolUsePromptTokenCount", "cache_read_input_tokens",
                "cache_creation_input_tokens", "cache_creation", "input_tokens_details", "output_tokens_details")


def telling(usage: dict) -> bool:
    """Whether the usage still has a key that tells its shape (CONTRACTS.md section 11; output_tokens_details
    covers Anthropic's thinking count)."""
    return any(key in usage for key in TELLING_KEYS)


def random_usage(r: random.Random) -> dict:
    """A valid usage object of a random provider, sometimes with its nulls dropped."""
    usage = r.choice([random_chat, random_responses, random_anthropic, random_gemini])(r)
    if r.random() < 0.25 and telling(without_nulls(usage)):
        return without_nulls(usage)
    return usage


def random_calls(r: random.Random, count: int, prefix: str = "call") -> list:
    """`count` valid (call_id, usage, seconds) records with distinct ids (strings or ints)."""
    ids = [f"{prefix}-{i}" if r.random() < 0.8 else 1000 * len(prefix) + i for i in range(count)]
    return [(call_id, random_usage(r), round(r.uniform(0.05, 120.0), 3)) for call_id in ids]


def random_prices(r: random.Random) -> dict:
    """Per-token prices shaped like hosted APIs': cheaper cached reads, dearer cache writes, dearer output."""
    base = r.uniform(5e-8, 1.5e-5)
    return {"input": base, "cached_input": base * r.choice([0.1, 0.25, 0.5]),
            "cache_write": base * r.choice([0.0, 1.25, 2.0]), "output": base * r.choice([4, 5, 8])}


def without(usage: dict, key: str) -> dict:
    """The usage with `key` left out."""
    return {k: v for k, v in usage.items() if k != key}


def random_bad_record(r: random.Random) -> tuple:
    """(the argument a ValueError must name, usage, seconds) of a record that must be rejected; the argument is a
    tuple of names where two documented rules apply at once (a Gemini usage without its prompt count has no key
    that tells its shape, and lacks a required count) or Gemini's two spellings name the same count."""
    seconds = round(r.uniform(0.05, 60.0), 3)
    prompt, output = r.randint(1, 20_000), r.randint(1, 20_000)
    kind = r.randrange(12)
    if kind == 0:    # input_tokens and output_tokens with no key that tells the shape
        usage = {"input_tokens": prompt, "output_tokens": output}
        return "usage", r.choice([usage, {**usage, "total_tokens": prompt + output},
                                  without_nulls({**anthropic_usage(prompt, output), "cache_creation_input_tokens": None,
                                                 "cache_read_input_tokens": None, "cache_creation": None})]), seconds
    if kind == 9:    # a Gemini total missing or null, or cached content larger than the prompt that includes it
        usage = gemini_usage(prompt, output, thoughts=r.randint(0, 5000))
        if r.random() < 0.5:
            key = r.choice(["prompt_token_count", "candidates_token_count"])
            usage = without(usage, key) if r.random() < 0.5 else {**usage, key: None}
            names = (key, *camel_case({key: 0})) + (("usage",) if key == "prompt_token_count" else ())
            return names, camel_case(usage) if r.random() < 0.3 else usage, seconds
        return "cached_content_token_count", {**usage, "cached_content_token_count": prompt + r.randint(1, 500)}, \
            seconds
    if kind == 10:   # a negative Gemini count, Anthropic thinking larger than the output that includes it
        if r.random() < 0.5:
            key = r.choice(["thoughts_token_count", "tool_use_prompt_token_count", "cached_content_token_count"])
            return key, {**gemini_usage(prompt, output), key: -r.randint(1, 500)}, seconds
        return "thinking_tokens", anthropic_usage(prompt, output, thinking=output + r.randint(1, 500)), seconds
    if kind == 11:   # negative OpenAI cache writes (more writes than the total holds is allowed: usage.py)
        make = r.choice([chat_usage, responses_usage])
        return "cache_write_tokens", make(prompt, output, written=-r.randint(1, 500)), seconds
    if kind == 1:    # a required count missing or null
        usage, key = r.choice([(chat_usage(prompt, output), "completion_tokens"),
                               (responses_usage(prompt, output), r.choice(["input_tokens", "output_tokens"])),
                               (anthropic_usage(prompt, output), r.choice(["input_tokens", "output_tokens"]))])
        return key, without(usage, key) if r.random() < 0.5 else {**usage, key: None}, seconds
    if kind == 2:    # a required count negative
        key, usage = r.choice([("prompt_tokens", chat_usage(-prompt, output)),
                               ("completion_tokens", chat_usage(prompt, -output)),
                               ("input_tokens", responses_usage(-prompt, output)),
                               ("output_tokens", anthropic_usage(prompt, -output))])
        return key, usage, seconds
    if kind == 3:    # cached input larger than the input total that includes it
        make = r.choice([chat_usage, responses_usage])
        return "cached_tokens", make(prompt, output, cached=prompt + r.randint(1, 500)), seconds
    if kind == 4:    # reasoning larger than the output total that includes it
        make = r.choice([chat_usage, responses_usage])
        return "reasoning_tokens", make(prompt, output, reasoning=output + r.randint(1, 500)), seconds
    if kind == 5:    # a negative detail count
        make = r.choice([chat_usage, responses_usage])
        return r.choice([("cached_tokens", make(prompt, output, cached=-r.randint(1, 128))),
                         ("reasoning_tokens", make(prompt, output, reasoning=-r.randint(1, 128)))]) + (seconds,)
    if kind == 6:    # a negative Anthropic cache count
        key = r.choice(["cache_read_input_tokens", "cache_creation_input_tokens"])
        return key, {**anthropic_usage(prompt, output), key: -r.randint(1, 4096)}, seconds
    return "seconds", random_usage(r), -round(r.uniform(0.001, 10.0), 3)


def task_results(r: random.Random, outcomes: list, tokens: list) -> list:
    """Per-task results from outcomes and token counts, with seconds growing with the tokens."""
    return [{"correct": bool(c), "tokens": t, "seconds": round(r.uniform(0.2, 2.0) + t / r.uniform(40, 120), 3)}
            for c, t in zip(outcomes, tokens)]


def random_pair(r: random.Random) -> tuple[list, list]:
    """Paired results of two variants: random concordant and discordant tasks, b wordier, leaner or equal, each
    list marked verifiable or not."""
    only_a, only_b = r.choice([(r.randint(0, 6), r.randint(0, 6)), (r.randint(0, 3), r.randint(5, 20)),
                               (r.randint(5, 20), r.randint(0, 3))])
    both, neither = r.randint(0, 25), r.randint(0, 10)
    kinds = ["10"] * only_a + ["01"] * only_b + ["11"] * both + ["00"] * neither or ["11"]
    r.shuffle(kinds)
    a_tokens = [r.randint(150, 4000) for _ in kinds]
    style = r.choice(["wordier b", "leaner b", "same tokens"])
    factor = {"wordier b": r.uniform(1.05, 1.8), "leaner b": r.uniform(0.5, 0.95), "same tokens": 1.0}[style]
    b_tokens = [round(t * factor) for t in a_tokens]
    if style == "same tokens":
        r.shuffle(b_tokens)  # the same total, spread differently
    return (marked_verifiable(r, task_results(r, [k[0] == "1" for k in kinds], a_tokens)),
            marked_verifiable(r, task_results(r, [k[1] == "1" for k in kinds], b_tokens)))


def marked_verifiable(r: random.Random, results: list) -> list:
    """The results, half the time each marked verifiable or not (every result of the list, or none, says)."""
    if r.random() < 0.5:
        return results
    share = r.random()
    return [{**result, "verifiable": r.random() < share} for result in results]


def random_bad_comparison(r: random.Random) -> tuple:
    """(the argument a ValueError must name, a, b, the valid (a, b) it was made from) of a comparison that must be
    rejected."""
    a, b = random_pair(r)
    valid = ([dict(result) for result in a], [dict(result) for result in b])
    kind = r.randrange(5)
    if kind == 0:
        return (("a", [], b) if r.random() < 0.5 else ("b", a, [])) + (valid,)
    if kind == 1:
        return "b", a, b + [dict(b[-1])], valid
    victim, i = r.choice([a, b]), r.randrange(len(a))
    if kind == 2:
        victim[i] = {**victim[i], "tokens": -r.randint(1, 500)}
        return "tokens", a, b, valid
    if kind == 3:
        victim[i] = {**victim[i], "seconds": -r.uniform(0.01, 5.0)}
        return "seconds", a, b, valid
    key = r.choice(["correct", "tokens", "seconds"])
    victim[i] = without(victim[i], key)
    return key, a, b, valid


def random_family(r: random.Random, ceiling: float = 1.0) -> dict:
    """{effort level: results} for 1 to 5 levels on the same tasks, accuracy rising with effort (mostly) and
    tokens growing with it; accuracies stay at or below `ceiling`; totals are all distinct; listing order random.
    """
    n = r.choice([10, 20, 40])
    levels = sorted(r.sample(range(len(EFFORTS)), r.randint(1, len(EFFORTS))))
    top = int(ceiling * n)
    correct = sorted(r.randint(0, top) for _ in levels) if r.random() < 0.8 else [r.randint(0, top) for _ in levels]
    family = {}
    for level, k in zip(levels, correct):
        outcomes = [True] * k + [False] * (n - k)
        r.shuffle(outcomes)
        per_task = round(300 * 2.2 ** level * r.uniform(0.7, 1.3))
        family[EFFORTS[level]] = task_results(r, outcomes, [max(0, per_task + r.randint(-150, 150))
                                                            for _ in range(n)])
    totals = [sum(t["tokens"] for t in runs) for runs in family.values()]
    if len(set(totals)) < len(totals):  # equal totals are a tie the contract leaves open: draw again
        return random_family(r, ceiling)
    items = list(family.items())
    r.shuffle(items)
    return dict(items)


def random_target(r: random.Random, family: dict) -> float:
    """A target accuracy: one level's accuracy exactly, a two-decimal value, 0 or 1."""
    runs = r.choice(list(family.values()))
    exact = sum(t["correct"] for t in runs) / len(runs)
    return r.choice([exact, exact, round(r.uniform(0.0, 1.0), 2), 0.0, 1.0])
