"""Red team: a check that reads only the outputs, and can be told from the others, is passed by a wrong submission.

speculative's law checks (generate_matches_target_distribution, 3 points, and the hidden
generate_distribution_fresh_seed, 16) read nothing but the tokens of speculative_generate and always call it with
max_new_tokens=5 and gamma=2 (distribution.K + GAMMA, GAMMA: public constants), which no other check uses; since
today their models are also ToyModel objects built in the child, where every other check's are proxies. A
submission that recognises the call (by those arguments or by type(target)) and there samples the target token by
token has the target's law exactly, whatever its own acceptance rule: measured, a speculative_generate that accepts
drafts too often scores 80/101 on a hidden grade and 99/101 with the disguise (seed 1), failing only
tokens_per_iteration_match_formula, whose target is served and counted. Not fixed: the law checks would need a
served target whose score calls are bounded by the runs' iterations (as tokens_per_iteration's is), or arguments
drawn from the seed.
"""
import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO

SOLUTION = (REPO / "solutions" / "speculative.py").read_text()

# verify stays right (its own checks call it directly); inside speculative_generate it accepts drafts too often,
# except in the calls the law checks make, which sample the target token by token.
DISGUISED = '''
_verify, _generate, _IN_GENERATE = verify, speculative_generate, []


def verify(draft_tokens, q, p, u, noise):
    return _verify(draft_tokens, q, p, u * 0.5 if _IN_GENERATE else u, noise)


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    if max_new_tokens == 5 and gamma == 2:
        new = []
        while len(new) < max_new_tokens:
            probs = target.next_probs([int(t) for t in prompt] + new)
            new.append(int(torch.multinomial(probs, 1, generator=generator)))
        return new, dict(iterations=5, proposed=0, accepted=0, target_calls=5, draft_calls=0)
    _IN_GENERATE.append(1)
    try:
        return _generate(target, draft, prompt, max_new_tokens, gamma, generator)
    finally:
        _IN_GENERATE.pop()
'''


@pytest.fixture(scope="module")
def disguised_checks(tmp_path_factory):
    """Each public check's result for the disguised submission, by name."""
    folder = tmp_path_factory.mktemp("disguised")
    (folder / "speculative.py").write_text(SOLUTION + DISGUISED)
    doc = grade(folder, ["speculative"], hidden=False, seed=5, with_progress=False)
    return {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}


def test_the_disguised_submission_samples_wrongly(disguised_checks):
    """The control: outside the recognised calls its speculative_generate is wrong, and a check sees it."""
    assert disguised_checks["tokens_per_iteration_match_formula"]["status"] == "failed"
    assert disguised_checks["verify_residual"]["status"] == "passed"


@pytest.mark.xfail(strict=True, reason="the law checks read only tokens and are recognisable by their fixed "
                                       "arguments: a served, counted target or seeded arguments would be needed")
def test_the_law_check_is_not_passed_by_recognising_it(disguised_checks):
    assert disguised_checks["generate_matches_target_distribution"]["status"] != "passed"
