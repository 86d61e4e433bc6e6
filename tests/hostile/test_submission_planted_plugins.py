"""Sandbox v4, red team: nothing in the submission folder or in the PYTEST_* variables changes what is graded.

The bait is a pytest plugin that marks every check passed. A stub `sampling.py` (every function raises
NotImplementedError) comes with it in every place pytest or Python might pick a file up: conftest.py, the ini
files pytest reads (pytest.ini, tox.ini, setup.cfg, pyproject.toml), sitecustomize.py, a .pth file, a `hypothesis`
package, and the model solution compiled to an unchecked-hash .pyc in __pycache__ (Python loads such a file
without looking at the source). The grader runs from inside that folder. The stub must still score nothing.

Found open and fixed: PYTEST_PLUGINS loaded its modules (a stub scored 30/30; runner.py now drops every PYTEST_*
variable), and without a private root (where the kernel refuses the mounts, the child reads the folder itself)
the planted .pyc ran instead of the source (child.SourceOnly now compiles the source).
"""
import importlib.util
import py_compile
import sys

import pytest

from grader.grading import grade
from grader.sandbox.policy import REPO

UNCHECKED = py_compile.PycInvalidationMode.UNCHECKED_HASH

FORCE_PASS = '''
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    outcome.force_result(None)
'''
INI = "[pytest]\naddopts = -p forcepass_bait\n"


def stub_folder(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text((REPO / "exercises" / "sampling.py").read_text())
    return folder


def graded(folder) -> dict:
    doc = grade(folder, ["sampling"], hidden=False, seed=1, with_progress=False)
    return {"score": doc["score"], "statuses": {c["status"] for t in doc["topics"] for c in t["checks"]}}


def test_files_in_the_submission_folder_change_nothing(tmp_path, monkeypatch):
    folder = stub_folder(tmp_path)
    (folder / "forcepass_bait.py").write_text(FORCE_PASS)
    (folder / "conftest.py").write_text(FORCE_PASS)
    for name in ("pytest.ini", "tox.ini", "setup.cfg"):
        (folder / name).write_text(INI)
    (folder / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-p forcepass_bait"\n')
    (folder / "sitecustomize.py").write_text("import forcepass_bait\n")
    (folder / "bait.pth").write_text("import forcepass_bait\n")
    (folder / "hypothesis").mkdir()
    (folder / "hypothesis" / "__init__.py").write_text(FORCE_PASS)
    pyc = folder / importlib.util.cache_from_source("sampling.py")
    pyc.parent.mkdir()
    py_compile.compile(str(REPO / "solutions" / "sampling.py"), cfile=str(pyc),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    monkeypatch.chdir(folder)
    result = graded(folder)
    assert result == {"score": 0, "statuses": {"not_started"}}, result


@pytest.mark.parametrize("variable, value", [("PYTEST_ADDOPTS", "-p forcepass_bait"),
                                             ("PYTEST_PLUGINS", "forcepass_bait")])
def test_pytest_variables_in_the_environment_change_nothing(tmp_path, monkeypatch, variable, value):
    folder = stub_folder(tmp_path)
    (tmp_path / "forcepass_bait.py").write_text(FORCE_PASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(variable, value)
    result = graded(folder)
    assert result == {"score": 0, "statuses": {"not_started"}}, result


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")
def test_a_planted_pyc_is_not_what_runs_without_a_private_root(open_folder, sandboxed, private_root_refused):
    for name in ("demo", "helper"):  # the module graded, and one it imports from the folder
        pyc = open_folder / importlib.util.cache_from_source(f"{name}.py")
        pyc.parent.mkdir(exist_ok=True)
        source = open_folder / "planted.py"
        source.write_text("def answer():\n    return 'from the pyc'\n")
        py_compile.compile(str(source), cfile=str(pyc), invalidation_mode=UNCHECKED)
        source.unlink()
        pyc.chmod(0o644)
    pyc.parent.chmod(0o755)
    (open_folder / "helper.py").write_text("def answer():\n    return 'from the source'\n")
    sub = sandboxed("import helper\n\n\ndef answer():\n    return 'from the source'\n\n\n"
                    "def helper_answer():\n    return helper.answer()\n",
                    folder=open_folder, zygote_=private_root_refused)
    assert sub.answer() == "from the source" and sub.helper_answer() == "from the source"
    sub.close()
