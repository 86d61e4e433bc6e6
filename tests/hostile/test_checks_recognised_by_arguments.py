"""Red team (issue 25, finding 6): a law check that reads only the outputs, and can be told from the others by its
arguments, is passed by a wrong submission that recognises it.

speculative: the law checks (generate_matches_target_distribution, 3 points, and the hidden
generate_distribution_fresh_seed, 16) called speculative_generate with max_new_tokens=5 and gamma=2, which no
other check used, on models built in the child. A submission that recognised the call and there sampled the target
token by token had the target's law whatever its own acceptance rule: measured, one that accepts drafts too often
scored 99/101 on a hidden grade (seed 1). Now each run's target is served, and its calls must match the tokens
returned (distribution.expect_verified); the hidden check draws prompt, max_new_tokens and gamma from the seed.

decoding: sample_distribution_fresh_seed (5 points) and its public twin (2) called sample_decode with the same
fixed logits (permuted), settings and max_new_tokens=1: a stub with three hard-coded probabilities earned 7 points.
Now the hidden check draws the vocabulary, logits, temperature, top_k, top_p, prompt and length from the seed, and
the law is the reference's, computed live. The public twin stays a fixed case, which any submission may memorise,
as it may every public case (tests/hostile/test_checks_public_replay.py bounds what that earns).
"""
import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO

SPECULATIVE = (REPO / "solutions" / "speculative.py").read_text()
DECODING = (REPO / "solutions" / "decoding.py").read_text()

# verify stays right (its own checks call it directly); inside speculative_generate it accepts drafts too often,
# except in the calls the law checks made, which sample the target token by token.
DISGUISED_SPECULATIVE = '''
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

# Where the public law check's settings are given, three hard-coded probabilities on the three likeliest tokens (the
# public law); anywhere else the likeliest token every time.
DISGUISED_DECODING = '''
_PUBLIC_LAW = torch.tensor([0.465, 0.333, 0.202], dtype=torch.float64)


def sample_decode(model, prompt, max_new_tokens, generator, temperature=1.0, top_k=None, top_p=None, eos_id=None,
                  stop=(), min_new_tokens=0):
    if (temperature, top_k, top_p) != (0.6, 4, 0.85):
        return greedy_decode(model, prompt, max_new_tokens, eos_id, stop, min_new_tokens)
    new = []
    for _ in range(max_new_tokens):
        likeliest = torch.as_tensor(model([int(t) for t in prompt] + new)).double().argsort(descending=True)
        new.append(int(likeliest[int(torch.multinomial(_PUBLIC_LAW, 1, generator=generator))]))
    return new, "length"
'''


def checks_of(folder, name: str, source: str, seed: int, functions: set[str]) -> dict:
    """Each check's result for `source` written as `name`.py in `folder`, in a hidden grade of the checks of
    `functions` alone, by check name."""
    (folder / f"{name}.py").write_text(source)
    doc = grade(folder, [name], hidden=True, seed=seed, with_progress=False, only=functions)
    return {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}


@pytest.fixture(scope="module")
def disguised_speculative(tmp_path_factory):
    """Each check's result for the disguised speculative submission in a hidden grade, by name."""
    return checks_of(tmp_path_factory.mktemp("speculative"), "speculative", SPECULATIVE + DISGUISED_SPECULATIVE,
                     seed=5, functions={"verify", "speculative_generate"})


def test_the_disguised_submission_samples_wrongly(disguised_speculative):
    """The control: outside the recognised calls its speculative_generate is wrong, and a check sees it."""
    assert disguised_speculative["tokens_per_iteration_match_formula"]["status"] == "failed"
    assert disguised_speculative["verify_residual"]["status"] == "passed"


@pytest.mark.parametrize("name", ["generate_matches_target_distribution", "generate_distribution_fresh_seed"])
def test_the_law_check_is_not_passed_by_recognising_it(disguised_speculative, name):
    assert disguised_speculative[name]["status"] == "failed"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hard_coded_probabilities_fail_the_hidden_sampling_law(tmp_path, seed):
    """The stub recognising the public settings passes the public twin (a fixed case: memorising it is allowed) and
    fails the hidden law check, whose settings are drawn from the seed."""
    checks = checks_of(tmp_path, "decoding", DECODING + DISGUISED_DECODING, seed=seed, functions={"sample_decode"})
    assert checks["sample_first_token_frequencies"]["status"] == "passed"
    assert checks["sample_distribution_fresh_seed"]["status"] == "failed"
