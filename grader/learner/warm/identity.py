"""What a warm grader must share with each check it serves, or refuse it: the same grader (its version and a stamp of
its installed files), the same interpreter, and the same environment where something reads it once at start."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import exercises
import grader

# read when an interpreter starts (PYTHONPATH, PYTHONHASHSEED...), by the dynamic loader, or by Hypothesis at import
STARTUP_PREFIXES = ("PYTHON", "LD_", "HYPOTHESIS")
PACKAGE_RECORDS = (".dist-info", ".egg-info")  # one per installed package, named with its version


def identity() -> dict:
    """This grader's version, interpreter and files' stamp."""
    return {"version": _version(), "python": f"{sys.version} {sys.executable} flags {tuple(sys.flags)}",
            "files": files_stamp()}


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("infergrade")
    except metadata.PackageNotFoundError:
        return "0.1.0+source"  # as the results document says it


def files_stamp() -> str:
    """A hash of the name, size and modification time of every file of the grader's package, of where it and the
    stubs were imported from, and of the packages installed on sys.path (their records carry their versions): any
    upgrade, reinstall or edit of the grader, or a changed torch, gives another stamp."""
    digest = hashlib.sha256()
    package = Path(grader.__file__).parent
    for folder, subfolders, files in os.walk(package):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            info = os.lstat(os.path.join(folder, name))
            digest.update(f"{os.path.relpath(os.path.join(folder, name), package)}\0{info.st_size}\0"
                          f"{info.st_mtime_ns}\n".encode(errors="surrogateescape"))
    digest.update(f"{package}\0{Path(exercises.__file__).parent}\n".encode(errors="surrogateescape"))
    for entry in sys.path[1:]:  # [0] is the working folder or the script's: not where the grader comes from
        try:
            records = sorted(n for n in os.listdir(entry) if n.endswith(PACKAGE_RECORDS))
        except OSError:
            records = []
        digest.update(f"{entry}\0{records}\n".encode(errors="surrogateescape"))
    return digest.hexdigest()


def startup_environment(environ) -> dict[str, str]:
    """The variables of `environ` read once at start, by the interpreter, the dynamic loader, torch or the sandbox's
    zygote: a warm grader started with other values would not check as this process would."""
    from grader.sandbox.zygote import ENVIRONMENT, ENVIRONMENT_PREFIXES  # the server's side only: it imports more

    prefixes = ENVIRONMENT_PREFIXES + STARTUP_PREFIXES
    return {k: v for k, v in environ.items() if k in ENVIRONMENT or k.startswith(prefixes)}


def environment_differences(mine: dict[str, str], theirs: dict[str, str]) -> list[str]:
    """The names of the start-up variables whose values differ between two environments."""
    a, b = startup_environment(mine), startup_environment(theirs)
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
