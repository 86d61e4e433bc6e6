"""The stored goldens are what the reference computes today (regenerate with `infergrade goldens`)."""
import pytest
import torch

from grader.engine import goldens
from grader.grading import grade
from grader.selftest import SOLUTIONS_DIR
from grader.topics import all_topics

TOPICS = [t for t in all_topics() if (goldens.CHECKS_DIR / t / "goldens.pt").exists()]


@pytest.mark.parametrize("topic", TOPICS)
def test_goldens_match_the_reference(topic):
    stored = torch.load(goldens.CHECKS_DIR / topic / "goldens.pt", weights_only=True)
    doc = grade(SOLUTIONS_DIR, [topic], hidden=False, seed=0, record_goldens=True, with_progress=False)
    assert doc["score"] == doc["max_score"]
    fresh = goldens.recorded(topic).values
    assert fresh.keys() == stored.keys()
    stale = [k for k in fresh if not goldens.same(fresh[k], stored[k])]
    assert not stale, f"stale goldens of {topic}: {stale[:5]}; run `infergrade goldens {topic}`"
