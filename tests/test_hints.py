"""Every exercise function and class has three non-empty hint levels; every misconception is explained."""
import pytest

from grader import hints, topics

TOPICS = topics.all_topics()


@pytest.mark.parametrize("topic", TOPICS)
def test_three_levels_for_every_function_and_class(topic):
    functions = hints.load(topic)["functions"]
    for name in [n for n in topics.api(topic) if "." not in n]:
        keys = [k for k in functions if k == name or k.startswith(f"{name}.")]
        assert keys, f"{topic}.{name} has no hints"
        for key in keys:
            texts = [hints.hint(topic, key, level) for level in hints.LEVELS]
            assert all(texts) and len(set(texts)) == 3, f"{topic}.{key}: three distinct non-empty levels"


@pytest.mark.parametrize("topic", TOPICS)
def test_misconceptions_are_explained(topic):
    explained = hints.load(topic)["misconceptions"]
    assert explained and all(isinstance(t, str) and len(t) > 20 for t in explained.values())


def test_unknown_function_names_the_known_ones():
    with pytest.raises(KeyError, match="functions with hints"):
        hints.hint(TOPICS[0], "no_such_function", 1)
