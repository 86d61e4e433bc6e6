"""GitHub Actions workflows for GitHub Classroom: checks on each student push, hidden grading for the instructor.

Each workflow sits under the path it takes in its repository: `student/.github/workflows/infergrade-check.yml`
goes into the handout that Classroom copies for every student, `instructor/.github/workflows/infergrade-grade.yml`
into the instructor's repository. The instructor's grades one repository per job, or, with `shards`, the class in
that many `grade-batch --shard` jobs joined by `infergrade merge`. Actions are pinned by version tag, Python and
every package by version.
"""
from __future__ import annotations

import os
from pathlib import Path

from grader import output
from grader.instructor import pins

HERE = Path(__file__).resolve().parent
WORKFLOWS = {"student.yml": "student/.github/workflows/infergrade-check.yml",
             "instructor.yml": "instructor/.github/workflows/infergrade-grade.yml"}
SHARDED = "instructor-shards.yml"  # the instructor's workflow with `shards`, at the same path
RUN_INDENT = " " * 10  # the commands of a `run: |` block in the templates


def render(template: str, shards: int | None = None) -> str:
    text = (HERE / template).read_text()
    if shards is not None:
        text = text.replace("@SHARDS@", str(list(range(1, shards + 1)))).replace("@SHARD_COUNT@", str(shards))
    return (text.replace("@PYTHON@", pins.PYTHON)
                .replace("@PIP_COMMANDS@", "\n".join(RUN_INDENT + c for c in pins.pip_commands())))


def write_workflows(out: Path, overwrite: bool = False, shards: int | None = None) -> list[Path]:
    """Write both workflows under `out`, the instructor's grading the class in `shards` jobs where given;
    FileExistsError names one that exists (unless `overwrite`)."""
    assert shards is None or shards >= 1, shards
    targets = {template: out / relative for template, relative in WORKFLOWS.items()}
    if shards is not None:
        targets = {SHARDED if t == "instructor.yml" else t: path for t, path in targets.items()}
    existing = [str(p) for p in targets.values() if os.path.lexists(p)]
    if existing and not overwrite:
        raise FileExistsError(f"{existing[0]} already exists (pass --force to replace it)")
    texts = {template: render(template, shards) for template in targets}  # all rendered before anything is written
    for template, path in targets.items():
        output.write_text(texts[template], path)  # a link in a workflow's place is replaced, never followed
    return list(targets.values())
