"""The stored goldens are what the reference computes today (regenerate with `infergrade goldens`)."""
import pytest
import torch

from grader.engine import goldens
from grader.grading import grade
from grader.instructor.selftest import SOLUTIONS_DIR
from grader.topics import all_topics

TOPICS = [t for t in all_topics() if (goldens.CHECKS_DIR / t / "goldens.pt").exists()]


def close(a, b) -> bool:
    """Equal up to the last bits another BLAS may round differently in (goldens hold float64 results)."""
    if isinstance(a, torch.Tensor) and a.is_floating_point():
        return (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and torch.allclose(a.double(), b.double(), rtol=1e-9, atol=1e-12, equal_nan=True))
    if isinstance(a, float):
        return isinstance(b, float) and (a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b)))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return goldens.same(a, b)


@pytest.mark.parametrize("topic", TOPICS)
def test_goldens_match_the_reference(topic):
    stored = torch.load(goldens.CHECKS_DIR / topic / "goldens.pt", weights_only=True)
    doc = grade(SOLUTIONS_DIR, [topic], hidden=False, seed=0, record_goldens=True, with_progress=False)
    assert doc["score"] == doc["max_score"]
    fresh = goldens.recorded(topic).values
    assert fresh.keys() == stored.keys()
    stale = [k for k in fresh if not close(fresh[k], stored[k])]
    assert not stale, f"stale goldens of {topic}: {stale[:5]}; run `infergrade goldens {topic}`"
