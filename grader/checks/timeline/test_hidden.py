"""Hidden timeline checks: random models, GPUs, batches and agent sessions drawn from the seed, compared with the
live reference."""
import random

from grader.checks.timeline.expect import call_text, expect_seconds, expect_timeline, misconception_values
from grader.engine import check, reference

CASES = 25
SESSIONS = 10


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
    """An agent session: a first message, then generates, tool rounds, user turns and network waits.

    Every generate has at least one pending token: a prefill of nothing is a case the contract leaves open.
    """
    events = [{"kind": "network", "seconds": r.uniform(0.01, 0.2)}] if r.random() < 0.5 else []
    events.append({"kind": "user", "tokens": r.randint(1, 4000)})
    for _ in range(r.randint(1, 5)):
        events.append({"kind": "generate", "tokens": r.choice([1, r.randint(2, 40), r.randint(2, 300)])})
        follow_up = r.choice(["tool", "user", "network"])
        if follow_up == "tool":
            events.append({"kind": "tool", "seconds": r.uniform(0.01, 3.0)})
            events.append({"kind": "tool_result", "tokens": r.randint(1, 2000)})
        elif follow_up == "user":
            events.append({"kind": "user", "tokens": r.randint(1, 500)})
        else:
            events.append({"kind": "network", "seconds": r.uniform(0.01, 0.2)})
            events.append({"kind": "user", "tokens": r.randint(1, 500)})
    events.append({"kind": "generate", "tokens": r.randint(1, 300)})
    return events


@check("random_prefill", points=12, hint="prefill_seconds",
       title="prefill_seconds on random models, GPUs, prompt lengths and cached prefixes")
def test_random_prefill(sub, seed):
    r = random.Random(seed)
    ref = reference("timeline")
    for _ in range(CASES):
        model, hw = random_model(r), random_hw(r)
        new_tokens = r.choice([r.randint(0, 64), r.randint(1, 32_000)])
        cached_tokens = r.choice([0, r.randint(1, 100_000)])
        expect_seconds(sub.prefill_seconds(model, hw, new_tokens, cached_tokens),
                       ref.prefill_seconds(model, hw, new_tokens, cached_tokens),
                       call_text("prefill_seconds", model, hw, new_tokens, cached_tokens), {})


@check("random_decode_step", points=7, hint="decode_step_seconds",
       title="decode_step_seconds on random models, GPUs and batches, memory- and compute-bound")
def test_random_decode_step(sub, seed):
    r = random.Random(seed)
    ref = reference("timeline")
    for _ in range(CASES):
        model, hw = random_model(r), random_hw(r)
        batch = r.choice([1, r.randint(1, 16), r.randint(64, 1024)])
        context_lens = [r.randint(0, r.choice([256, 8192, 131_072])) for _ in range(batch)]
        expect_seconds(sub.decode_step_seconds(model, hw, context_lens),
                       ref.decode_step_seconds(model, hw, context_lens),
                       call_text("decode_step_seconds", model, hw, f"<{batch} context lengths>"),
                       misconception_values(ref, "decode_step_seconds", model, hw, context_lens))


@check("random_sessions", points=31, hint="session_timeline",
       title="session_timeline of random agent sessions, with and without a prefix cache")
def test_random_sessions(sub, seed):
    r = random.Random(seed)
    ref = reference("timeline")
    for _ in range(SESSIONS):
        model, hw, events = random_model(r), random_hw(r), random_events(r)
        for prefix_cache in (True, False):
            expect_timeline(sub.session_timeline(model, hw, events, prefix_cache),
                            ref.session_timeline(model, hw, events, prefix_cache),
                            call_text("session_timeline", model, hw, events, prefix_cache=prefix_cache),
                            misconception_values(ref, "session_timeline", model, hw, events, prefix_cache))
