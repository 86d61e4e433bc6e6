"""Finding 12 of issue 8: in hidden mode, hidden checks carry at least 70% of every function's points."""
import importlib
from collections import defaultdict

import pytest

from grader import topics
from grader.engine.plugin import HIDDEN_FILE

SHARE = (7, 10)  # hidden points / all points of a function, at least 7/10


def function(hint: str | None) -> str:
    """The function a check scores: its hint, with a method counted under its class."""
    return hint.split(".")[0] if hint else "(no hint)"


def points(topic: str) -> dict[str, list[int]]:
    """function -> [public points, hidden points], read from the checks' @check marks without running them."""
    sums = defaultdict(lambda: [0, 0])
    for path in topics.check_files(topic, hidden=True):
        module = importlib.import_module(f"grader.checks.{topic}.{path.stem}")
        for name, test in vars(module).items():
            meta = getattr(test, "__infergrade__", None)
            if meta is not None and name.startswith("test"):
                sums[function(meta.hint)][path.name == HIDDEN_FILE] += meta.points
    return sums


@pytest.mark.parametrize("topic", topics.all_topics())
def test_hidden_checks_carry_most_of_each_functions_points(topic):
    sums = points(topic)
    assert sums, f"{topic} has no checks"
    short = [f"{topic}.{fn}: public {public}, hidden {hidden}"
             for fn, (public, hidden) in sums.items() if hidden * SHARE[1] < SHARE[0] * (public + hidden)]
    assert not short, ("hidden checks must carry at least 70% of each function's points in hidden mode:\n"
                       + "\n".join(short))
