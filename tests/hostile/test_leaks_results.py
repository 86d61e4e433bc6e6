"""Hostile submissions from a red-team review of the results: hidden inputs carried out in a class name or
through a folder shared between checks, and names that break the exports."""
import json
import xml.etree.ElementTree as ET

from click.testing import CliRunner

from grader.cli import main
from grader.grading import grade
from grader.results import problems
from grader.sandbox.policy import REPO

MARK = "ZQXJ_LEAK"

RENAMING_CACHE = r'''

_Real = PrefixCache
_seen = []

class PrefixCache(_Real):
    """Once it has seen inputs, turns into a class whose name spells them, with an unfinished method."""
    def __init__(self, capacity_blocks, block_size):
        super().__init__(capacity_blocks, block_size)
        if _seen:
            def insert(self, tokens):
                raise NotImplementedError
            name = "MARK" + "_".join("x".join(map(str, t)) for t in _seen) + "\x1b[31m"
            self.__class__ = type(name[:180], (_Real,), {"insert": insert, "__module__": __name__})

    def insert(self, tokens):
        _seen.append(list(tokens))
        return super().insert(tokens)
'''


def solution(topic: str) -> str:
    return (REPO / "solutions" / f"{topic}.py").read_text()


def test_a_class_name_spelling_hidden_inputs_never_reaches_the_results(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "prompt_cache.py").write_text(solution("prompt_cache") + RENAMING_CACHE.replace("MARK", MARK))
    doc = grade(folder, ["prompt_cache"], hidden=True, seed=3, with_progress=False)
    assert problems(doc) == []
    checks = doc["topics"][0]["checks"]
    assert any(c["status"] == "not_started" for c in checks)  # the bait ran
    hidden = [c for c in checks if c["visibility"] == "hidden"]
    assert hidden and all(c["function"] is None and MARK not in json.dumps(c) for c in hidden)
    assert "\x1b" not in json.dumps(doc, ensure_ascii=False)


LOGGING_SAMPLING = r'''

import os as _os
_real_top_k = top_k_filter

def top_k_filter(logits, k):
    for folder in (_os.environ.get("TRITON_CACHE_DIR", ""), _os.environ.get("TMPDIR", ""), "/tmp", "/dev/shm"):
        try:
            with open(_os.path.join(folder, "infergrade-leak.txt"), "a") as f:
                f.write(f"MARK k={k} {logits.flatten()[:4].tolist()}\n")
        except OSError:
            pass
    return _real_top_k(logits, k)
'''

READING_KV = r'''
import glob as _glob
import os as _os
_found = []
_places = [_os.path.join(_os.environ.get(v, "/nonexistent"), "infergrade-leak.txt")
           for v in ("TRITON_CACHE_DIR", "TMPDIR")]
for _path in _places + _glob.glob("/tmp/**/infergrade-leak.txt", recursive=True) + ["/dev/shm/infergrade-leak.txt"]:
    try:
        _found.append(open(_path).read())
    except OSError:
        pass
raise ImportError("found: " + " | ".join(_found)[-1500:])
'''


def test_nothing_one_check_writes_is_readable_by_a_later_check(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text(solution("sampling") + LOGGING_SAMPLING.replace("MARK", MARK))
    (folder / "kv_cache.py").write_text(READING_KV)
    doc = grade(folder, ["sampling", "kv_cache"], hidden=True, seed=3, with_progress=False)
    assert problems(doc) == [] and doc["topics"][0]["status"] == "passed"
    kv = doc["topics"][1]
    assert kv["status"] == "error" and "found:" in kv["message"]  # the reader ran
    assert MARK not in json.dumps(doc)


ODD_NAMES = r'''

class Odd(Exception):
    pass

Odd.__qualname__ = "Odd\x01\ud800\uffff"

def greedy(logits):
    raise Odd("message with \x01 \ud800 \uffff")
'''


def test_odd_characters_in_names_and_messages_break_no_export(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text(solution("sampling") + ODD_NAMES)
    outputs = tmp_path / "out"
    for fmt in ("json", "gradescope", "junit"):
        out = outputs / f"results.{fmt}"
        result = CliRunner().invoke(main, ["grade", "--submission", str(folder), "--topic", "sampling", "--seed", "1",
                                           "--out", str(out), "--format", fmt], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        assert "message with" in text
        if fmt == "junit":
            ET.fromstring(text.encode("utf-8"))
        else:
            json.loads(text)
    assert sorted(p.name for p in outputs.iterdir()) == ["results.gradescope", "results.json", "results.junit"]
