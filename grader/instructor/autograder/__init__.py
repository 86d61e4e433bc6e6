"""The Gradescope autograder zip: setup.sh, run_autograder and the instructor's grader source.

Gradescope unpacks the zip in /autograder/source, runs setup.sh once to build the image, then run_autograder once
per submission in a fresh container (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
The templates beside this file are filled in here; finalize.py is what run_autograder runs last.
"""
from __future__ import annotations

import fnmatch
import io
import json
import shlex
import zipfile
from pathlib import Path

from grader import language, output
from grader.instructor import pins

HERE = Path(__file__).resolve().parent
SOURCE = ["grader", "exercises", "reference", "pyproject.toml", "README.md"]  # never solutions/ or tests/
LEFT_OUT = ["__pycache__", "*.pyc", ".infergrade-progress.json", ".ipynb_checkpoints", ".pytest_cache"]
SCRIPTS = ["setup.sh", "run_autograder"]  # at the zip's root, as Gradescope requires
DEADLINE_S = 480.0  # the grader's limit; with HARD_MARGIN_S it fits Gradescope's default 10-minute timeout
HARD_MARGIN_S = 60.0  # past the deadline, time to score and write before the grader is stopped
ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed, so the same sources make the same zip


def setup_script() -> str:
    venv_python = '"$VENV/bin/python"'
    return (HERE / "setup.sh").read_text().replace("@PIP_COMMANDS@", "\n".join(pins.pip_commands(venv_python)))


def run_script(topics: list[str], deadline_s: float, leaderboard: bool) -> str:
    """run_autograder, grading in this run's language: a language other than English is exported as INFERGRADE_LANG
    (to the grade and finalize.py), and the document it writes when nothing else can run is said in it."""
    lang = language.current()
    could_not_run = language.tr("Grading failed: the autograder could not run (see its log). This is not your grade: "
                                "submit again, or tell the course staff.")
    fill = {"@DEADLINE@": f"{deadline_s:g}", "@TIME_LIMIT@": f"{deadline_s + HARD_MARGIN_S:g}",
            "@TOPICS@": " ".join(f"--topic {shlex.quote(t)}" for t in topics),
            "@FINALIZE_OPTIONS@": "--leaderboard" if leaderboard else "",
            "@LANGUAGE@\n": "" if lang == "en" else f"export {language.VARIABLE}={lang}  # what the student reads: "
                                                     f"`infergrade gradescope --lang {lang}`\n",
            "@COULD_NOT_RUN@": json.dumps(could_not_run, ensure_ascii=False)}
    text = (HERE / "run_autograder").read_text()
    for key, value in fill.items():
        text = text.replace(key, value)
    return text


def source_files(repo: Path = pins.REPO) -> list[tuple[Path, str]]:
    """(file, name in the zip) for the grader's source; FileNotFoundError unless `repo` is the instructor's."""
    missing = [name for name in SOURCE if not (repo / name).exists()]
    if missing:
        raise FileNotFoundError(f"{repo} is not the instructor's repository (no {', '.join(missing)}): "
                                f"run from a checkout that holds the reference")
    found = []
    for name in SOURCE:
        path = repo / name
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            relative = f.relative_to(repo)
            if not any(fnmatch.fnmatch(part, pattern) for part in relative.parts for pattern in LEFT_OUT):
                found.append((f, relative.as_posix()))
    return found


def write_zip(out: Path, topics: list[str], deadline_s: float = DEADLINE_S, leaderboard: bool = False) -> list[str]:
    """Write the autograder zip to `out` (replacing it), grading in this run's language; returns the names it holds.
    `topics`: [] for all."""
    scripts = {"setup.sh": setup_script(), "run_autograder": run_script(topics, deadline_s, leaderboard)}
    files = source_files()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, text in scripts.items():
            _add(z, name, text.encode("utf-8"), 0o755)
        for path, name in files:
            _add(z, name, path.read_bytes(), 0o755 if path.stat().st_mode & 0o111 else 0o644)
    output.write_bytes(buffer.getvalue(), out)  # whole, renamed into place; a link there is replaced, not followed
    return [*scripts, *(name for _, name in files)]


def _add(z: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.external_attr = (0o100000 | mode) << 16  # a regular file and its permissions, for unzip on Linux
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)
