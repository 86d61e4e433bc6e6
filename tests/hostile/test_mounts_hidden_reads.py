"""Hostile submission: reads the grader's hidden material, through the newly readable venv or directly."""
import json

from grader.grading import grade
from grader.results import problems
from grader.sandbox.policy import REPO

PROBE = r'''
import os, sys
REPO = {repo!r}
venv = sys.prefix
R = []
targets = [REPO + "/.git/HEAD", REPO + "/.git/config", REPO + "/solutions/sampling.py", REPO + "/reference",
           REPO + "/grader/checks/sampling/test_hidden.py", REPO + "/tests", REPO,
           venv + "/../solutions/sampling.py", venv + "/../.git/HEAD",
           venv + "/../grader/checks/sampling/test_hidden.py",
           "/proc/self/root" + REPO + "/solutions/sampling.py", "/proc/1/root" + REPO + "/solutions/sampling.py"]
for t in targets:
    try:
        if os.path.isdir(t):
            R.append("LISTED " + t + " " + ",".join(sorted(os.listdir(t))[:20]))
        else:
            R.append("READ " + t + " " + open(t).read(400))
    except Exception as e:
        R.append("denied " + t)
for mod in ("grader.checks.sampling.test_hidden", "solutions.sampling", "reference"):
    try:
        m = __import__(mod)
        R.append("IMPORTED " + mod + " " + repr(getattr(m, "__file__", "")))
    except BaseException:
        R.append("denied import " + mod)
raise ImportError("\n".join(R))
'''


def test_hidden_material_unreadable_from_the_child(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text(PROBE.format(repo=str(REPO)))
    doc = grade(folder, ["sampling"], hidden=True, seed=1, with_progress=False)
    assert problems(doc) == []
    text = json.dumps(doc)
    assert doc["score"] == 0
    assert "denied" in text  # the probe ran and reported back
    for marker in ("READ ", "LISTED ", "IMPORTED "):
        assert marker not in text, text
    secret = (REPO / "solutions" / "sampling.py").read_text().splitlines()
    assert not any(line.strip() and len(line.strip()) > 25 and line.strip() in text for line in secret)
    head = (REPO / ".git" / "HEAD").read_text().strip() if (REPO / ".git" / "HEAD").is_file() else None
    if head:
        assert head not in text
