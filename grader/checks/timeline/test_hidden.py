"""Hidden timeline checks: random models, GPUs, batches and agent sessions drawn from the seed, compared with the
live reference."""
import random

from grader.checks.timeline.expect import (call_text, expect_critical_batch, expect_seconds, expect_throughput,
                                           expect_timeline, misconception_values)
from grader.engine import check, reference, tr

CASES = 25
SESSIONS = 10
# CONTRACTS.md: where the deciding quantity is within 1e-5 of its threshold either answer stands; critical
# batches are drawn outside that band, where rounding amplified by the cancellation stays below 1e-10 relative.
AMBIGUOUS = 1e-5


def random_model(r: random.Random) -> dict:
    """A dense decoder from 0.5B to 16B parameters, with 1- to 2-byte weights and a GQA-sized KV cache."""
    params = int(r.choice([0.5e9, 1.5e9, 3e9, 8e9, 14e9]) * r.uniform(0.8, 1.15))
    n_layers = r.choice([16, 24, 28, 32, 40, 48])
    return {"params": params, "weight_bytes": int(params * r.choice([1, 2])),
            "kv_bytes_per_token": n_layers * 2 * r.choice([1, 2, 4, 8]) * r.choice([64, 128]) * 2,
            "n_layers": n_layers, "d_model": r.choice([1024, 2048, 3072, 4096, 5120])}


def random_hw(r: random.Random) -> dict:
    """A GPU between an L4 and a B200, with the efficiency factors given or left to their default."""
    hw = {"peak_flops": r.uniform(1.2e14, 2.3e15), "mem_bandwidth": r.uniform(0.3e12, 8e12)}
    if r.random() < 0.5:
        hw["flops_efficiency"] = r.uniform(0.3, 1.0)
    if r.random() < 0.5:
        hw["bandwidth_efficiency"] = r.uniform(0.5, 1.0)
    return hw


def random_events(r: random.Random) -> list:
    """An agent session: a first message, then generates, tool rounds, user turns, network waits, and generates
    right after a generate (nothing pending: a prefill of 0 s with a prefix cache)."""
    events = [{"kind": "network", "seconds": r.uniform(0.01, 0.2)}] if r.random() < 0.5 else []
    events.append({"kind": "user", "tokens": r.randint(1, 4000)})
    for _ in range(r.randint(1, 5)):
        events.append({"kind": "generate", "tokens": r.choice([1, r.randint(2, 40), r.randint(2, 300)])})
        follow_up = r.choice(["tool", "user", "network", "nothing"])  # nothing: the next generate follows at once
        if follow_up == "tool":
            events.append({"kind": "tool", "seconds": r.uniform(0.01, 3.0)})
            events.append({"kind": "tool_result", "tokens": r.randint(1, 2000)})
        elif follow_up == "user":
            events.append({"kind": "user", "tokens": r.randint(1, 500)})
        elif follow_up == "network":
            events.append({"kind": "network", "seconds": r.uniform(0.01, 0.2)})
            events.append({"kind": "user", "tokens": r.randint(1, 500)})
    events.append({"kind": "generate", "tokens": r.randint(1, 300)})
    return events


def random_compacted_events(r: random.Random) -> list:
    """A random session with one or two compactions, each after the first generate (so that ttft is that
    generate's), summaries from a few tokens to a few thousand; a generate follows the last one, most times."""
    events = random_events(r)
    first_generate = next(i for i, event in enumerate(events) if event["kind"] == "generate")
    for _ in range(r.randint(1, 2)):
        tokens = r.choice([1, r.randint(2, 60), r.randint(60, 1500)])
        summary = r.choice([tokens, r.randint(1, 3000)])
        at = r.randint(first_generate + 1, len(events) - (1 if r.random() < 0.8 else 0))
        events.insert(at, {"kind": "compact", "summary_tokens": summary, "tokens": tokens})
    return events


def random_machines(seed: int, count: int):
    """`count` random models, each on a random GPU, drawn from the seed, each with the generator that drew them
    (a check goes on drawing its inputs from it)."""
    r = random.Random(seed)
    for _ in range(count):
        yield r, random_model(r), random_hw(r)


def expect_like_reference(sub, expect, fn: str, model: dict, hw: dict, *args, what: str | None = None) -> None:
    """`expect` the submission's `fn(model, hw, *args)` to be the reference's, naming the misconception a wrong
    answer shows; `what` words the call where its arguments are too long to show."""
    ref = reference("timeline")
    expect(getattr(sub, fn)(model, hw, *args), getattr(ref, fn)(model, hw, *args),
           what or call_text(fn, model, hw, *args), misconception_values(ref, fn, model, hw, *args))


@check("random_prefill", points=17, hint="prefill_seconds",
       title="prefill_seconds on random models, GPUs, prompt lengths and cached prefixes, none new included")
def test_random_prefill(sub, seed):
    for r, model, hw in random_machines(seed, CASES):
        new_tokens = r.choice([0, r.randint(1, 64), r.randint(1, 32_000)])
        cached_tokens = r.choice([0, r.randint(1, 100_000), r.randint(100_000, 1_000_000)])
        expect_like_reference(sub, expect_seconds, "prefill_seconds", model, hw, new_tokens, cached_tokens)


@check("random_decode_step", points=7, hint="decode_step_seconds",
       title="decode_step_seconds on random models, GPUs and batches, memory- and compute-bound")
def test_random_decode_step(sub, seed):
    for r, model, hw in random_machines(seed, CASES):
        batch = r.choice([1, r.randint(1, 16), r.randint(64, 1024)])
        context_lens = [r.randint(0, r.choice([256, 8192, 131_072])) for _ in range(batch)]
        expect_like_reference(sub, expect_seconds, "decode_step_seconds", model, hw, context_lens,
                              what=call_text("decode_step_seconds", model, hw,
                                             tr("<{count} context lengths>", count=batch)))


def the_line(model: dict, hw: dict) -> float:
    """The context length at which a sequence's K/V read per decode step equals its compute (may be fractional)."""
    flops = hw["peak_flops"] * hw.get("flops_efficiency", 1.0)
    bandwidth = hw["mem_bandwidth"] * hw.get("bandwidth_efficiency", 1.0)
    return 2 * model["params"] * bandwidth / (flops * model["kv_bytes_per_token"])


def context_near_the_line(r: random.Random, line: float, below: bool) -> int:
    """A context length on the chosen side of `line`, up to 3 times beyond it, outside the ambiguous band."""
    while True:
        context_len = r.randint(0, int(line)) if below else r.randint(int(line) + 1, int(3 * line) + 1)
        if abs(context_len - line) > AMBIGUOUS * line:
            return context_len


@check("random_critical_batch", points=7, hint="critical_batch_size",
       title="critical_batch_size on random models and GPUs, with contexts on both sides of the line")
def test_random_critical_batch(sub, seed):
    for case, (r, model, hw) in enumerate(random_machines(seed, CASES)):
        context_len = context_near_the_line(r, the_line(model, hw), below=case % 2 == 0)
        expect_like_reference(sub, expect_critical_batch, "critical_batch_size", model, hw, context_len)


@check("random_decode_throughput", points=7, hint="decode_throughput",
       title="decode_throughput on random models, GPUs, batches and context lengths")
def test_random_decode_throughput(sub, seed):
    for r, model, hw in random_machines(seed, CASES):
        batch = r.choice([1, r.randint(2, 64), r.randint(65, 2048)])
        context_len = r.choice([0, r.randint(1, 1024), r.randint(1, 131_072)])
        expect_like_reference(sub, expect_throughput, "decode_throughput", model, hw, batch, context_len)


def expect_sessions(sub, model: dict, hw: dict, events: list) -> None:
    """The submission's session_timeline of `events`, with and without a prefix cache, must be the reference's."""
    for prefix_cache in (True, False):
        expect_like_reference(sub, expect_timeline, "session_timeline", model, hw, events, prefix_cache,
                              what=call_text("session_timeline", model, hw, events, prefix_cache=prefix_cache))


@check("random_sessions", points=31, hint="session_timeline",
       title="session_timeline of random agent sessions, with and without a prefix cache")
def test_random_sessions(sub, seed):
    for r, model, hw in random_machines(seed, SESSIONS):
        expect_sessions(sub, model, hw, random_events(r))


@check("random_compacted_sessions", points=8, hint="session_timeline.compact",
       title="session_timeline of random sessions with compactions: their own call, a cold cache, a shorter context")
def test_random_compacted_sessions(sub, seed):
    for r, model, hw in random_machines(seed, SESSIONS):
        expect_sessions(sub, model, hw, random_compacted_events(r))
