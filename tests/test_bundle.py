"""The student bundle carries no hidden material and its public checks run from the goldens alone."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from grader.instructor.bundle import write_bundle
from grader.instructor.selftest import SOLUTIONS_DIR
from grader.topics import all_topics

# Run the bundle's CLI with the repository's reference and solutions packages unimportable, as on a student's machine.
CLI = """
import sys
from pathlib import Path
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
    ignored = (out / ".gitignore").read_text().split()
    assert {".venv/", ".infergrade-progress.json"} <= set(ignored)
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


def test_the_handout_installs_from_a_wheel_and_works_alone(tmp_path):
    """Built into a wheel and installed in a fresh venv (its dependencies borrowed from this one), the handout
    checks a partly solved submission, and refuses the instructor's commands in plain words."""
    import site
    import sysconfig

    out = tmp_path / "handout"
    write_bundle(out)
    assert "instructor" not in (out / "README.md").read_text().split("## Submitting")[0].lower()
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "dist"), str(out)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("infergrade-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    target = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                            capture_output=True, text=True, check=True).stdout.strip()
    borrowed = [p for p in site.getsitepackages() + [sysconfig.get_paths()["purelib"]] if Path(p).is_dir()]
    (Path(target) / "borrowed.pth").write_text("\n".join(dict.fromkeys(borrowed)) + "\n")
    installed = subprocess.run([python, "-m", "pip", "install", "--no-deps", "-q", str(wheel)],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr[-2000:]
    student = tmp_path / "work"
    student.mkdir()
    solved = (SOLUTIONS_DIR / "sampling.py").read_text()
    (student / "sampling.py").write_text(solved + "\n\ndef top_p_filter(logits, p):\n    raise NotImplementedError\n")
    cli = venv / "bin" / "infergrade"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*args):
        return subprocess.run([cli, *args], cwd=out, env=env, capture_output=True, text=True, timeout=600)

    where = subprocess.run([python, "-c", "import grader, exercises; print(grader.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True)
    assert where.stdout.strip().startswith(target)                       # the handout's grader, not this one
    checked = run("check", "sampling", "--submission", str(student))
    passed = re.search(r"(\d+)/(\d+) checks passed", checked.stdout)
    assert checked.returncode == 1 and passed and 0 < int(passed[1]) < int(passed[2]), checked.stdout[-2000:]
    assert "NOT STARTED top_p_filter" in checked.stdout and "grader error" not in checked.stdout
    for args in (("selftest",), ("goldens", "sampling"), ("bundle", str(tmp_path / "again"))):
        refused = run(*args)
        assert refused.returncode == 2 and "instructor command" in refused.stderr, refused.stderr
    hidden = run("grade", "--hidden", "--submission", str(student), "--topic", "sampling", "--out",
                 str(tmp_path / "r.json"))
    assert hidden.returncode == 2 and "hidden checks are not in the student handout" in hidden.stderr
