"""Every exercise function and class has three non-empty hint levels; every misconception is explained.

Issue 19 item 10: an explanation is shown on the first failure, before any hint is read, so it names the
misconception and what the output shows, never the fix (that is the hint ladder's levels 2 and 3). FIX_VERBS are
the verbs that opened the instructions of the texts of 896fc65 ("Compare every logit with the k-th largest value
instead", "...: draw with replacement", "; use repeat_interleave along the head axis", "so keep the variant with
fewer tokens"); a clause that opens with one of them, or the word "instead", is an instruction. Gerunds
("Keeping only the indices...") describe what the submission did and do not match.
"""
import re

import pytest

from grader import hints, topics

TOPICS = topics.all_topics()
FIX_VERBS = ("accept", "admit", "always", "bill", "call", "carry", "change", "check", "compare", "compute",
             "decrement", "divide", "draw", "exponentiate", "fetch", "hash", "interpolate", "judge", "keep",
             "multiply", "pay", "read", "remove", "report", "subtract", "take", "treat", "use")
CLAUSE_START = r"(?:^|[.;:!?(]\s+|\(|\b(?:so|then)\s+)"  # a sentence, a clause after ; or :, a bracket, "so ..."
INSTRUCTION = re.compile(rf"{CLAUSE_START}(?:{'|'.join(FIX_VERBS)})\b|\binstead\b", re.IGNORECASE)


def instructions(text: str) -> list[str]:
    """The places in a misconception text that tell the student what to do, each with the words after it."""
    return [text[m.start():m.end() + 40].strip() for m in INSTRUCTION.finditer(text)]


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


def test_an_instruction_is_found_and_a_diagnosis_is_not():
    assert instructions("Ties are dropped. Compare every logit with the k-th value instead: all tied logits stay.")
    assert instructions("Independent draws let a token repeat: draw with replacement.")
    assert instructions("Tiling with repeat pairs the wrong heads; use repeat_interleave.")
    assert not instructions("Keeping only the indices torch.topk returns drops logits tied with the k-th largest.")


@pytest.mark.parametrize("topic", TOPICS)
def test_misconception_texts_diagnose_without_giving_the_fix(topic):
    found = {key: instructions(text) for key, text in hints.load(topic)["misconceptions"].items()}
    found = {key: places for key, places in found.items() if places}
    assert not found, (f"misconception texts of {topic} say what to do (the fix belongs to the hints):\n"
                       + "\n".join(f"  {key}: {places}" for key, places in found.items()))
