"""The student bundle carries no hidden material and its public checks run from the goldens alone."""
import os
import shutil
import subprocess
import sys

from grader.bundle import write_bundle
from grader.selftest import SOLUTIONS_DIR
from grader.topics import all_topics

# Run the bundle's CLI with the repository's reference and solutions packages unimportable, as on a student's machine.
CLI = """
import sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("reference", "solutions", "tests"):
            raise ImportError(f"{name} is not in the student bundle")
sys.meta_path.insert(0, Absent())
from grader.cli import main
main(prog_name="infergrade")
"""


def test_bundle_has_no_hidden_material_and_grades_from_goldens(tmp_path):
    out = tmp_path / "bundle"
    files = [p.relative_to(out).as_posix() for p in write_bundle(out)]
    assert not any(f.startswith(("solutions/", "reference/", "tests/")) or f.endswith("test_hidden.py")
                   for f in files)
    assert "exercises/sampling.py" in files or "exercises/kv_cache.py" in files
    submission = tmp_path / "student"
    shutil.copytree(SOLUTIONS_DIR, submission)
    env = {**os.environ, "PYTHONPATH": str(out)}
    where = subprocess.run([sys.executable, "-c", "import grader; print(grader.__file__)"], cwd=out, env=env,
                           capture_output=True, text=True)
    assert where.stdout.strip() == str(out / "grader" / "__init__.py")
    done = subprocess.run([sys.executable, "-c", CLI, "check", *all_topics(), "--submission", str(submission)],
                          cwd=out, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "grader error" not in done.stdout
    stubs = subprocess.run([sys.executable, "-c", CLI, "check", "--submission", "exercises"],
                           cwd=out, env=env, capture_output=True, text=True, timeout=600)
    assert stubs.returncode == 1 and "grader error" not in stubs.stdout and "could not load" not in stubs.stdout
