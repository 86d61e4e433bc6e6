"""GitHub Actions workflows for GitHub Classroom: checks on each student push, hidden grading for the instructor.

Each workflow sits under the path it takes in its repository: `student/.github/workflows/infergrade-check.yml`
goes into the handout that Classroom copies for every student, `instructor/.github/workflows/infergrade-grade.yml`
into the instructor's repository. The instructor's collects every repository into one class folder, grades it in
`shards` jobs of `grade-batch --shard K/N` (one by default) and joins them with `infergrade merge`: one class
folder (grades.csv, report.html, every results JSON) whatever the number of jobs. Actions are pinned by version
tag, Python and every package by version. In a language other than English (`init-ci --lang zh`), the student's
check runs with INFERGRADE_LANG set to it: what the student reads of each push is in that language.
"""
from __future__ import annotations

import os
from pathlib import Path

from grader import language, output
from grader.instructor import pins
from grader.wording import count

HERE = Path(__file__).resolve().parent
WORKFLOWS = {"student.yml": "student/.github/workflows/infergrade-check.yml",
             "instructor-shards.yml": "instructor/.github/workflows/infergrade-grade.yml"}
RUN_INDENT = " " * 10  # the commands of a `run: |` block in the templates


def render(template: str, shards: int = 1) -> str:
    """A workflow's text: the pins, the instructor's grading in `shards` jobs, the student's check in this run's
    language."""
    grading = ("one job grades it with `grade-batch --shard 1/1`" if shards == 1 else
               f"{count(shards, 'job')} (a matrix) each grade one shard of it with `grade-batch --shard K/{shards}`")
    text = (HERE / template).read_text()
    text = (text.replace("@SHARDS@", str(list(range(1, shards + 1)))).replace("@SHARD_COUNT@", str(shards))
                .replace("@GRADING@", grading).replace("@LANGUAGE_ENV@", language_env(language.current())))
    return (text.replace("@PYTHON@", pins.PYTHON)
                .replace("@PIP_COMMANDS@", "\n".join(RUN_INDENT + c for c in pins.pip_commands())))


def language_env(lang: str) -> str:
    """The `env:` of the student's check step that sets its language: none for English (the workflow as it was)."""
    if lang == "en":
        return ""
    return (f"        env:\n          {language.VARIABLE}: {lang}  # the language of what the student reads "
            f"(init-ci --lang {lang})\n")


def write_workflows(out: Path, overwrite: bool = False, shards: int = 1) -> list[Path]:
    """Write both workflows under `out`, the instructor's grading the class in `shards` jobs; FileExistsError names
    one that exists (unless `overwrite`)."""
    assert shards >= 1, shards
    targets = {template: out / relative for template, relative in WORKFLOWS.items()}
    existing = [str(p) for p in targets.values() if os.path.lexists(p)]
    if existing and not overwrite:
        raise FileExistsError(f"{existing[0]} already exists (pass --force to replace it)")
    texts = {template: render(template, shards) for template in targets}  # all rendered before anything is written
    for template, path in targets.items():
        output.write_text(texts[template], path)  # a link in a workflow's place is replaced, never followed
    return list(targets.values())
