"""Hostile submission: tries to carry hidden-check inputs or its own text into the results of a hidden run
through printed output, exception types and messages."""
import json

from grader.grading import grade
from grader.results import problems
from grader.sandbox.policy import REPO

MARK = "ZQXJ_HOSTILE"

ATTACK = r'''

import sys as _sys

class ValueError_{mark}(Exception):
    pass

def _shout(*args):
    text = "{mark} " + repr(args)[:300]
    print(text)
    print(text, file=_sys.stderr)
    return text

def top_k_filter(logits, k):
    _shout(logits.flatten()[:8].tolist(), k)
    raise ValueError_{mark}(_shout(logits.flatten()[:8].tolist(), k))

def top_p_filter(logits, p):
    raise ValueError(_shout(logits.flatten()[:8].tolist(), p))

def apply_temperature(logits, temperature):
    _shout(temperature)
    return logits * 0

def filtered_probs(logits, temperature=1.0, top_k=None, top_p=None):
    _shout(logits.flatten()[:8].tolist(), temperature, top_k, top_p)
    _sys.exit(_shout(temperature))
'''


def test_hidden_checks_show_neither_output_nor_submission_text(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text((REPO / "solutions" / "sampling.py").read_text()
                                        + ATTACK.replace("{mark}", MARK))
    doc = grade(folder, ["sampling"], hidden=True, seed=1, with_progress=False)
    assert problems(doc) == []
    hidden = [c for t in doc["topics"] for c in t["checks"] if c["visibility"] == "hidden"]
    assert hidden and any(c["status"] != "passed" for c in hidden)
    for c in hidden:
        assert "output" not in c, c
        assert MARK not in json.dumps(c), c
    for t in doc["topics"]:
        assert MARK not in (t["message"] or "")
    assert MARK not in str(doc["error"]) and MARK not in str(doc["incomplete"])
    # the public checks may show what was printed: the bait did run
    public = [c for t in doc["topics"] for c in t["checks"] if c["visibility"] == "public"]
    assert any(MARK in c.get("output", "") for c in public)
