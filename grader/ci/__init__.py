"""GitHub Actions workflows for GitHub Classroom: checks on each student push, hidden grading for the instructor.

Each workflow sits under the path it takes in its repository: `student/.github/workflows/infergrade-check.yml`
goes into the handout that Classroom copies for every student, `instructor/.github/workflows/infergrade-grade.yml`
into the instructor's repository. Actions are pinned by version tag, Python and every package by version.
"""
from __future__ import annotations

from pathlib import Path

from grader import pins

HERE = Path(__file__).resolve().parent
WORKFLOWS = {"student.yml": "student/.github/workflows/infergrade-check.yml",
             "instructor.yml": "instructor/.github/workflows/infergrade-grade.yml"}
RUN_INDENT = " " * 10  # the commands of a `run: |` block in the templates


def render(template: str) -> str:
    text = (HERE / template).read_text()
    return (text.replace("@PYTHON@", pins.PYTHON)
                .replace("@PIP_COMMANDS@", "\n".join(RUN_INDENT + c for c in pins.pip_commands())))


def write_workflows(out: Path, overwrite: bool = False) -> list[Path]:
    """Write both workflows under `out`; FileExistsError names one that exists (unless `overwrite`)."""
    targets = {template: out / relative for template, relative in WORKFLOWS.items()}
    existing = [str(p) for p in targets.values() if p.exists()]
    if existing and not overwrite:
        raise FileExistsError(f"{existing[0]} already exists (pass --force to replace it)")
    texts = {template: render(template) for template in targets}  # all rendered before anything is written
    for template, path in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(texts[template], encoding="utf-8")
    return list(targets.values())
