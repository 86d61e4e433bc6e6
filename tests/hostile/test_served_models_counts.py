"""Sandbox v2, red team: toy models live in the grader, so their counts and logs cannot be rewritten.

The speculative models are served over the channel: the child holds a proxy whose every call runs in the grader.
Each attack below worked, or would have worked, while the models counted their own calls inside the child.
"""
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "speculative.py").read_text()
PER_TOKEN = (REPO / "tests" / "mutants" / "speculative" / "one_target_call_per_token.py").read_text()

# After each call, zero every counter the submission can reach: on the proxies, and on any object in the child's
# memory that has one (the models of the old design).
RESET_COUNTS = '''
import gc as _gc

_generate = speculative_generate


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    tokens, stats = _generate(target, draft, prompt, max_new_tokens, gamma, generator)
    for model in (target, draft):
        for name in ("score_calls", "next_probs_calls", "calls"):
            try:
                setattr(model, name, 0)
                object.__setattr__(model, name, 0)
            except Exception:
                pass
    for obj in _gc.get_objects():
        if hasattr(type(obj), "__dict__") and "score_calls" in getattr(obj, "__dict__", {}):
            obj.score_calls = obj.next_probs_calls = 0
    stats["target_calls"] = stats["iterations"]
    return tokens, stats
'''

# Before doing the work, send the grader every malformed or unlisted call a proxy could carry: each is refused,
# and none is counted as a call of the model.
FORGED_CALLS = '''
import grader.sandbox.child as _child
from grader.sandbox import codec as _codec

_generate = speculative_generate
REFUSED = []


def _forge(payload):
    _child.send(_child._channel, _codec.encode(("callback", payload)))
    return _codec.decode(_child.recv(_child._channel))


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    ref = getattr(target, "_ref", None)  # a proxy's; checks that read only outputs build the models in the child
    if REFUSED or ref is None:  # once is enough: each payload is sent on the first call of every check
        return _generate(target, draft, prompt, max_new_tokens, gamma, generator)
    for payload in ([ref, "score_log", [], {}], [ref, "rows", [], {}], [ref, "__class__", [], {}],
                    [ref, "_prefix", [[0]], {}], [ref + 1, "score", [[0], 1], {}], ["x", "score", [], {}],
                    [ref, "score", "not a list", {}], [ref, "score", [[0] * 100000, 1], {}],
                    [ref, "next_probs", [[7]], {}], [ref, "next_probs", [], {"tokens": [0], 5: 1}], 42):
        kind, value = _forge(payload)
        REFUSED.append(kind)
    if any(kind != "raised" for kind in REFUSED):
        raise RuntimeError(f"the grader answered a forged call: {REFUSED}")
    return _generate(target, draft, prompt, max_new_tokens, gamma, generator)
'''

# At import, replace the generator factory the checks build in the child.
REPLACED_FACTORY = '''
import grader.toys as _toys


def _refuse(*args, **kwargs):
    raise RuntimeError("replaced")


_toys.generator = _refuse
'''

# Draw from torch's global generator instead of the one given: the fresh children the grader seeds apart catch it.
GLOBAL_RNG = '''
_multinomial = torch.multinomial


def _global_multinomial(probs, n, *args, generator=None, **kwargs):
    return _multinomial(probs, n, *args, **kwargs)


torch.multinomial = _global_multinomial
'''


def test_rewriting_the_counts_does_not_hide_one_target_call_per_token(graded_speculative):
    checks = graded_speculative("reset", SOLUTION + PER_TOKEN + RESET_COUNTS)
    for name in ("generate_one_target_call_per_iteration", "generate_stats_add_up"):
        assert checks[name]["status"] == "failed"
    assert checks["generate_one_target_call_per_iteration"]["misconception"] == "one_target_call_per_token"


def test_forged_calls_to_the_models_are_refused_and_answer_nothing(graded_speculative):
    checks = graded_speculative("forged", SOLUTION + FORGED_CALLS)
    generate = [c for c in checks.values() if c["hint"] == "speculative.speculative_generate"]
    assert generate and all(c["status"] == "passed" for c in generate), [c["message"] for c in generate]


def test_a_replaced_factory_is_not_the_one_the_checks_use(graded_speculative):
    checks = graded_speculative("factory", SOLUTION + REPLACED_FACTORY)
    assert all(c["status"] == "passed" for c in checks.values()), \
        [c["message"] for c in checks.values() if c["status"] != "passed"]


def test_the_global_generator_is_caught_whatever_the_submission_reseeds(graded_speculative):
    checks = graded_speculative("global", SOLUTION + GLOBAL_RNG)
    assert checks["generate_uses_generator"]["status"] == "failed"
    assert checks["verify_bonus_token"]["status"] == "passed"    # a neighbouring check keeps its points
