"""Sandbox v4, red team: an installed copy of the grader beside the checkout that grades, and hidden folders
bound below /tmp.

The Gradescope image is built by setup.sh with `pip install /autograder/source`: the venv's site-packages then
holds `grader` (every check, test_hidden.py and the goldens included) and `reference`. run_autograder grades
from /autograder/source, and policy.hidden_paths hid only that checkout's folders: a module that looked for
`reference/sampling.py` on sys.path and loaded it by path under another name (the import blocker goes by name)
served the model answers, 105/105 in hidden mode. And where a venv lives below /tmp (`mktemp -d`), Landlock's
rule for the private /tmp covered every folder bound below it, hidden ones included. Fixed: the grader's packages
are hidden in every site-packages (policy.PACKAGES), and the private root covers what it would show of a hidden
path with an empty tmpfs (mounts._mask), whatever Landlock grants.
"""
import shutil
import sys

import pytest

from grader.grading import grade
from grader.sandbox import policy, zygote
from grader.sandbox.policy import REPO
from grader.sandbox.zygote import Zygote

DELEGATE = '''
import importlib.util
import os
import sys

for _folder in sys.path:
    _path = os.path.join(_folder, "reference", "sampling.py")
    if os.path.isfile(_path):
        _spec = importlib.util.spec_from_file_location("copied_model_answer", _path)
        _answer = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_answer)
        globals().update({k: v for k, v in vars(_answer).items() if not k.startswith("__")})
        HIDDEN_CHECKS = open(os.path.join(_folder, "grader", "checks", "sampling", "test_hidden.py")).read()
        break
else:
    raise ImportError("no installed reference found")
'''


def test_an_installed_reference_and_its_hidden_checks_are_unreadable(tmp_path, monkeypatch):
    site = tmp_path / "venv" / "lib" / "site-packages"
    shutil.copytree(REPO / "reference", site / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "grader", site / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [tmp_path, *tmp_path.rglob("*")]:
        folder.chmod(0o755 if folder.is_dir() else 0o644)             # as pip leaves them: readable to all
    monkeypatch.syspath_prepend(str(site))
    fresh = Zygote()  # started now, with the venv on sys.path as the autograder's interpreter has it from the start
    monkeypatch.setattr(zygote, "_shared", [fresh])
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "sampling.py").write_text(DELEGATE)
    try:
        doc = grade(folder, ["sampling"], hidden=True, seed=7, with_progress=False)
    finally:
        fresh.close()
    assert doc["score"] == 0, f"a module with no code of its own scored {doc['score']}/{doc['max_score']} hidden"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
def test_a_hidden_package_in_a_site_packages_below_tmp_stays_unreadable(tmp_path, monkeypatch, sandboxed):
    site = tmp_path / "venv" / "site-packages"                   # below /tmp, as a `mktemp -d` venv is
    (site / "grader_bait").mkdir(parents=True)
    (site / "grader_bait" / "test_hidden.py").write_text("SECRET = 'hidden-bait-4711'\n")
    for path in (tmp_path, tmp_path / "venv", site, site / "grader_bait"):
        path.chmod(0o755)
    monkeypatch.syspath_prepend(str(site))
    real = policy.hidden_paths
    monkeypatch.setattr(policy, "hidden_paths", lambda *a: [*real(*a), str(site / "grader_bait")])
    sub = sandboxed(f"def read():\n    return open({str(site / 'grader_bait' / 'test_hidden.py')!r}).read()\n")
    with pytest.raises(Exception, match="Permission denied|No such file"):
        sub.read()
    sub.close()
