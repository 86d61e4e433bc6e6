"""Red team 4: Hypothesis (6.131 and later) caches the literal constants of every module loaded in the grader's
process under `.hypothesis/constants/` in the working folder, whatever the profile's `database=None` says: the
grader's modules, the hidden checks of paged_kv (the one topic whose checks use Hypothesis) and reference/paged_kv.py.

Graded from inside the submission folder (`cd alice && infergrade grade --hidden --submission .`), the grader leaves
those files in the student's folder: a file left behind (and hashed into the next run's `submission.files`), holding
the literal constants of the reference and of the hidden checks, which the sandbox then serves to the submission
(mounts.SKIPPED does not skip `.hypothesis`: a later run's public check can print them). It also reads them back:
a file planted there under the hash of a grader module's source feeds Hypothesis's constant pool in the grader.

Fixed: the grader's process gives Hypothesis a storage folder of its own (runner._private_hypothesis_home), never
the working folder, and the sandbox's copy of a submission leaves out any `.hypothesis` folder (mounts.SKIPPED).
"""
import json
import os
import subprocess
import sys

from grader.grading import grade
from grader.sandbox.policy import REPO


def test_grading_from_inside_the_submission_folder_leaves_nothing_there(tmp_path):
    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "paged_kv.py").write_text((REPO / "solutions" / "paged_kv.py").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS")}
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "--topic", "paged_kv", "--submission", ".",
                           "--seed", "1", "--out", str(tmp_path / "r.json")], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]  # the solution passes: the run was real
    left = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert left == ["paged_kv.py"], left[:10]


PROBE = """import os
found = os.path.exists(os.path.join(os.path.dirname(__file__), ".hypothesis", "constants", "planted"))
raise ImportError("PLANTED-" + ("SEEN" if found else "ABSENT"))
"""


def test_a_hypothesis_folder_in_the_submission_is_not_served_to_the_child(tmp_path):
    """One left by an earlier grader, holding the constants of hidden checks, stays out of the sandbox's copy."""
    (tmp_path / ".hypothesis" / "constants").mkdir(parents=True)
    (tmp_path / ".hypothesis" / "constants" / "planted").write_text("a constant of a hidden check")
    (tmp_path / "sampling.py").write_text(PROBE)
    text = json.dumps(grade(tmp_path, ["sampling"], hidden=False, seed=1, with_progress=False))
    assert "PLANTED-ABSENT" in text and "PLANTED-SEEN" not in text
