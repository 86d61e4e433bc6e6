"""The student bundle: stubs, public checks with their goldens, hints and the grader; no hidden material.

In Chinese (`bundle --lang zh`) the README is the Chinese one (the English one beside it, README.en.md) and the
handout's pyproject.toml names its language, so that its commands speak Chinese without --lang or a Chinese locale.
"""
from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from grader import language
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
# what a Chinese handout's pyproject.toml ends with: its commands' language (grader/language.py reads it)
LANGUAGE_SETTING = """
[tool.infergrade]
# the language of this handout's commands: INFERGRADE_LANG or --lang still choose another
lang = "{lang}"
"""


def write_bundle(out: Path) -> list[Path]:
    """Copy what a student needs into `out` (which must not exist), its README and commands in this run's language;
    returns the files written."""
    lang = language.current()
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
    if lang != "en":
        shutil.copy2(handout.README, out / "README.en.md")
        (out / "README.md").write_text(handout.readme(lang), encoding="utf-8")
        project = out / "pyproject.toml"
        project.write_text(project.read_text(encoding="utf-8") + LANGUAGE_SETTING.format(lang=lang), encoding="utf-8")
        assert tomllib.loads(project.read_text(encoding="utf-8"))["tool"]["infergrade"]["lang"] == lang
        # the same, inside the grader package: an installed wheel of the handout carries no pyproject.toml
        (out / "grader" / "locale" / "handout.toml").write_text(f'lang = "{lang}"\n', encoding="utf-8")
    (out / ".gitignore").write_text(GITIGNORE)
    return sorted(p for p in out.rglob("*") if p.is_file())
