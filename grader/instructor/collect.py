"""The sharded workflow's collect step: a student repository's exercises/ copied into the class folder by the grader's
own snapshot code, which never follows a symbolic link (upload-artifact follows every one: an `exercises` linking to
a classmate's collected folder was graded as the classmate's). A linked exercises/, or one holding a link, is not
collected: the student's folder then holds MISSING.txt saying why, and grade-batch gives it an error row.

Run by the runner's own python3 with the instructor's checkout on PYTHONPATH and nothing installed:
`python3 -m grader.instructor.collect OWNER/NAME checkout/exercises class/OWNER--NAME`.
"""
from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

from grader.submission.opening import BadInput
from grader.submission.snapshot import of_folder

NOTE = "MISSING.txt"


def collect(repository: str, source: Path, into: Path) -> str | None:
    """Copy the folder `source` into the new folder `into`: None, or the warning that says why it was not (then
    `into` holds only NOTE, with that warning)."""
    try:
        found = os.lstat(source)
    except FileNotFoundError:
        return _refused(into, f"{repository} has no {source.name}/ folder")
    if stat.S_ISLNK(found.st_mode):
        return _refused(into, f"{repository}'s {source.name} is a symbolic link (to {os.readlink(source)!r}), not "
                              f"collected: the grader grades only a real folder")
    try:
        with of_folder(source) as snapshot:
            shutil.copytree(snapshot.folder, into)
    except BadInput as exc:
        return _refused(into, f"{repository}: {exc}")
    return None


def _refused(into: Path, why: str) -> str:
    into.mkdir()
    warning = f"::warning::{why}"
    (into / NOTE).write_text(warning + "\n")
    return warning


def main(argv: list[str]) -> int:
    repository, source, into = argv
    warning = collect(repository, Path(source), Path(into))
    if warning:
        print(warning)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
