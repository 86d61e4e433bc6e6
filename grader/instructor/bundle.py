"""The student bundle: stubs, public checks with their goldens, hints and the grader; no hidden material."""
from __future__ import annotations

import shutil
from pathlib import Path

from grader.instructor import handout
from grader.sandbox.policy import REPO

INCLUDE = ["pyproject.toml", "exercises", "grader"]
LEFT_OUT = ["test_hidden.py", "__pycache__", "*.pyc", ".infergrade-progress.json"]
# what a student's repository of the handout should not commit: the venv the README makes, progress, results
GITIGNORE = """.venv/
__pycache__/
*.egg-info/
.ipynb_checkpoints/
.infergrade-progress.json
results*.json
junit*.xml
"""


def write_bundle(out: Path) -> list[Path]:
    """Copy what a student needs into `out` (which must not exist); returns the files written."""
    if out.exists():
        raise FileExistsError(f"{out} already exists")
    out.mkdir(parents=True)
    for name in INCLUDE:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, out / name, ignore=shutil.ignore_patterns(*LEFT_OUT))
        else:
            shutil.copy2(source, out / name)
    shutil.copy2(handout.README, out / "README.md")  # the student's own, with nothing that needs instructor material
    (out / ".gitignore").write_text(GITIGNORE)
    return sorted(p for p in out.rglob("*") if p.is_file())
