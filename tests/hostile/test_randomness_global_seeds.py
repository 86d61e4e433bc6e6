"""Sandbox v3, red team: the grader's global seeds hold whatever the submission's import seeds.

The child seeded torch, numpy and Python's global generators before importing the submission, and the checks that
catch a submission drawing from the global generator (speculative.generate_uses_generator, decoding's
sample_generator_only) restart the child with another global seed and compare. A module that calls
`torch.manual_seed(0)` at its top (a common habit) undid that: it ignored the generator it was given, drew from the
global one, and scored 30/30 on speculative in public mode. Fixed in grader/sandbox/child.py: the globals are
seeded again after the import. A submission that reseeds inside each call is caught by the check itself: it also
runs four generator seeds in one child and requires different tokens (as decoding's and sampling's generator
checks now do: test_randomness_private_generators.py).
"""
from grader.grading import grade
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "speculative.py").read_text()

GLOBAL_RNG_SEEDED_AT_IMPORT = '''
_multinomial = torch.multinomial


def _global_multinomial(probs, n, *args, generator=None, **kwargs):
    return _multinomial(probs, n, *args, **kwargs)


torch.multinomial = _global_multinomial
torch.manual_seed(0)  # at the top of the module, for "reproducibility"
'''


def test_seeding_the_globals_at_import_does_not_hide_the_global_generator(tmp_path):
    (tmp_path / "speculative.py").write_text(SOLUTION + GLOBAL_RNG_SEEDED_AT_IMPORT)
    doc = grade(tmp_path, ["speculative"], hidden=False, seed=5, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    assert checks["generate_uses_generator"]["status"] == "failed", checks["generate_uses_generator"]["message"]
    assert checks["verify_bonus_token"]["status"] == "passed"    # a neighbouring check keeps its points


# Reseed the global generator at every call, and ignore the generator given: the same tokens whatever its seed.
GLOBAL_RNG_SEEDED_PER_CALL = '''
_multinomial = torch.multinomial
_generate = speculative_generate


def _global_multinomial(probs, n, *args, generator=None, **kwargs):
    return _multinomial(probs, n, *args, **kwargs)


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    torch.manual_seed(0)
    return _generate(target, draft, prompt, max_new_tokens, gamma, torch.Generator().manual_seed(0))


torch.multinomial = _global_multinomial
'''


def test_reseeding_at_every_call_does_not_hide_an_ignored_generator(tmp_path):
    (tmp_path / "speculative.py").write_text(SOLUTION + GLOBAL_RNG_SEEDED_PER_CALL)
    doc = grade(tmp_path, ["speculative"], hidden=False, seed=5, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    assert checks["generate_uses_generator"]["status"] == "failed", checks["generate_uses_generator"]["message"]
    assert checks["verify_bonus_token"]["status"] == "passed"
