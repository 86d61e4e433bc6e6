"""Randomness from the generator given, and from nothing else: two ways to ignore it that the global-seed checks
could not see, in each topic that takes a generator.

- A generator of the module's own, seeded once at import: every child starts it alike, so two children whose
  global seeds differ agree, and its draws are as random as the given generator's. Caught by running one seed
  twice in one child.
- A fresh generator with a fixed seed in every call: the same draws whatever the seed. Caught by four seeds.
"""
import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO

OWN_AT_IMPORT = '''
_own = torch.Generator().manual_seed(0)


def _draws_from(generator):
    return _own
'''
FRESH_PER_CALL = '''

def _draws_from(generator):
    return torch.Generator().manual_seed(0)
'''
WRAPPERS = {  # topic: (the function that takes a generator, with it replaced, its check, a neighbouring check)
    "sampling": ('''
_empirical = empirical_distribution


def empirical_distribution(probs, num_samples, generator):
    return _empirical(probs, num_samples, _draws_from(generator))
''', "empirical_distribution_generator_only", "num_samples_random"),
    "decoding": ('''
_sample_decode = sample_decode


def sample_decode(model, prompt, max_new_tokens, generator, *args, **kwargs):
    return _sample_decode(model, prompt, max_new_tokens, _draws_from(generator), *args, **kwargs)
''', "sample_generator_only", "sample_random_one_hot"),
    "speculative": ('''
_generate = speculative_generate


def speculative_generate(target, draft, prompt, max_new_tokens, gamma, generator):
    return _generate(target, draft, prompt, max_new_tokens, gamma, _draws_from(generator))
''', "generate_uses_generator", "generate_stats_add_up"),
}


@pytest.mark.parametrize("way", [OWN_AT_IMPORT, FRESH_PER_CALL], ids=["own_at_import", "fresh_per_call"])
@pytest.mark.parametrize("topic", sorted(WRAPPERS))
def test_a_generator_other_than_the_one_given_is_caught(tmp_path, topic, way):
    wrapper, caught, neighbour = WRAPPERS[topic]
    source = (REPO / "solutions" / f"{topic}.py").read_text() + "\nimport torch\n" + way + wrapper
    (tmp_path / f"{topic}.py").write_text(source)
    doc = grade(tmp_path, [topic], hidden=True, seed=11, with_progress=False)
    checks = {c["id"].split(".")[-1]: c for t in doc["topics"] for c in t["checks"]}
    assert checks[caught]["status"] == "failed", checks[caught]["message"]
    assert "generator" in checks[caught]["message"]
    assert checks[neighbour]["status"] == "passed", checks[neighbour]["message"]  # the rest still works
