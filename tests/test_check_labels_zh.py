"""The labels of fixed cases that checks say through `tr(label)` (a variable, so tests/test_grade_zh_topics.py's
reader of literal `tr("...")` calls does not see them) each have their Chinese (issue 29)."""
import pytest

from grader import language
from grader.checks.decoding.cases import MIN_CASES, STOP_CASES
from grader.checks.decoding.corpus import CASES
from grader.checks.latency import tasks
from grader.checks.latency.graphs import FAULTS
from grader.checks.reasoning.tasks import COMPARISONS, FAMILIES

LABELS = {
    "decoding": [case[0] for case in STOP_CASES + MIN_CASES + CASES],
    "latency": [case[0] for table in (tasks.AGENT_WHAT_IFS, tasks.DEPENDENT_PAIRS, tasks.TIES, tasks.BAD_TASKS,
                                      tasks.ONE_CHANGE_RUNS, tasks.CONFOUNDED_RUNS) for case in table] + FAULTS,
    "reasoning": list(COMPARISONS) + list(FAMILIES),
}


@pytest.mark.parametrize("topic", sorted(LABELS))
def test_every_case_label_a_check_says_has_its_chinese(topic):
    assert len(LABELS[topic]) >= 7
    missing = [label for label in LABELS[topic] if label not in language.screens()]
    assert not missing, missing
