"""Red team 4: the modules the layout moved (grader/instructor, grader/learner, grader/submission, the split sandbox
proxy and the `grader.notebooks` shim) are as unreadable and unimportable from a child as the rest of the grader.

The instructor's tools import the model solutions (selftest) and the reference (the notebooks' `reference`); a child
that could read or import them through their new paths would reach hidden material. Held when written: the whole
grader package is one masked path (policy.grader_material), whatever lies below it.
"""
import json

from grader.grading import grade
from grader.results import problems
from grader.sandbox.policy import REPO

MOVED = ["grader/instructor", "grader/instructor/selftest.py", "grader/instructor/autograder/run_autograder",
         "grader/instructor/ci/instructor-shards.yml", "grader/learner", "grader/learner/notebooks/experiment.py",
         "grader/learner/notebooks/topics/sampling.py", "grader/submission", "grader/submission/folder.py",
         "grader/notebooks.py", "grader/sandbox/pool.py", "grader/sandbox/connection.py"]
MODULES = ["grader.instructor.selftest", "grader.instructor.bundle", "grader.learner.notebooks.experiment",
           "grader.notebooks", "grader.submission.folder", "grader.sandbox.pool"]

PROBE = r'''
import importlib, os
R = []
for t in {paths!r}:
    try:
        if os.path.isdir(t):
            R.append("LISTED " + t + " " + ",".join(sorted(os.listdir(t))[:20]))
        else:
            R.append("READ " + t + " " + open(t).read(200))
    except Exception:
        R.append("denied " + t)
for name in {modules!r}:
    try:
        m = importlib.import_module(name)
        R.append("IMPORTED " + name + " " + repr(getattr(m, "__file__", "")))
    except BaseException:
        R.append("denied import " + name)
raise ImportError("\n".join(R))
'''


def test_moved_modules_are_unreadable_from_the_child(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    paths = [str(REPO / p) for p in MOVED] + ["/proc/self/root" + str(REPO / "grader/instructor/selftest.py")]
    (folder / "sampling.py").write_text(PROBE.format(paths=paths, modules=MODULES))
    doc = grade(folder, ["sampling"], hidden=False, seed=1, with_progress=False)
    assert problems(doc) == []
    text = json.dumps(doc)
    assert doc["score"] == 0 and "denied" in text  # the probe ran and reported back
    for marker in ("READ ", "LISTED ", "IMPORTED "):
        assert marker not in text, text
