"""Where a submission's modules are: the folder the user named (never through a symbolic link), the one folder
below it that holds them, or the modules a notebook's tagged cells make; refused where it lies in the grader's
own material or holds a link."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from grader import topics as topic_registry
from grader.sandbox import mounts, policy


SEARCH_DEPTH = 3  # how deep below the given folder a submission's modules are looked for


class BadInput(ValueError):
    """An argument the user gave is wrong; the message names it."""


def resolve_submission(path: Path) -> tuple[Path, str | None]:
    """The folder that holds the topic modules, and a note when it is a subfolder of the one given (or a
    temporary folder of the modules a notebook's tagged cells make).

    An upload often has its modules one level down (`submission/exercises/sampling.py`): when the given folder
    holds no topic module and exactly one folder below it does, that folder is graded. BadInput for a path that is
    or passes through a symbolic link, a folder inside the grader's own material, or one that holds a link.
    """
    refuse_links_on_the_way(path)
    if not path.exists():
        raise BadInput(f"submission folder {str(path)!r} does not exist "
                       f"(run from the folder that holds it, or pass --submission DIR)")
    if path.is_file() and path.suffix == ".ipynb":
        return _notebook_folder(path)
    if not path.is_dir():
        raise BadInput(f"submission {str(path)!r} is not a folder (pass the folder that holds sampling.py etc.)")
    path = path.resolve()
    modules = [f"{t}.py" for t in topic_registry.all_topics()]
    if _holds_modules(path, modules):
        return _refuse_what_it_must_not_hold(path), None
    found = _folders_with_modules(path, modules, SEARCH_DEPTH)
    expected = ", ".join(modules)
    if not found:
        raise BadInput(f"no topic module in {str(path)!r} or the folders below it (looked {SEARCH_DEPTH} levels "
                       f"down for any of: {expected})")
    if len(found) > 1:
        listed = ", ".join(repr(str(f.relative_to(path))) for f in found[:5])
        raise BadInput(f"{str(path)!r} holds no topic module, and several folders below it do ({listed}): "
                       f"pass the one to grade with --submission")
    return _refuse_what_it_must_not_hold(found[0]), (f"{str(path)!r} holds no topic module: grading "
                                                     f"{str(found[0])!r}, the one folder below it that does")


def refuse_links_on_the_way(path: Path) -> None:
    """BadInput when the submission path the user gave is, or passes through, a symbolic link: the grader grades
    a folder, never where a link points (`exercises -> ../solutions` would be graded as the model answers).

    Only the components the user chose are looked at, as given and before anything is resolved: for a relative
    path, or an absolute one below the working folder (as the system or the shell's $PWD names it), those below
    the working folder, however the user reached it; for another absolute path every component but a link
    directly in `/`, which only the administrator can make (macOS's /tmp and /var, /bin on merged-/usr systems).
    """
    working = [Path(w) for w in (os.getcwd(), os.environ.get("PWD")) if w and os.path.isabs(w)]
    working = [w for w in working if _same_folder(w, Path("."))]
    base = next((w for w in working if path.is_absolute() and path.parts[:len(w.parts)] == w.parts), None)
    if not path.is_absolute():
        base, parts = Path(os.getcwd()), path.parts
    elif base is not None:
        parts = path.parts[len(base.parts):]
    else:
        base, parts = Path(path.anchor), path.parts[1:]
    current = base
    for i, part in enumerate(parts):
        current = current / part
        system_alias = current.parent == Path(current.anchor) and path.is_absolute() and base == Path(path.anchor)
        if part not in (".", "..") and current.is_symlink() and not system_alias:
            shown = Path(*path.parts[:len(path.parts) - len(parts) + i + 1])
            what = "is a symbolic link" if i == len(parts) - 1 else f"passes through the symbolic link {str(shown)!r}"
            raise BadInput(f"submission {str(path)!r} {what} (to {os.readlink(current)!r}): the grader grades only "
                           f"a real folder or notebook, never what a link points to; pass the folder itself")


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _refuse_what_it_must_not_hold(folder: Path) -> Path:
    """`folder` (resolved), or BadInput when it lies inside the grader's own material (its package, reference,
    solutions, tests or history: `policy.grader_material`, which the sandbox hides) or holds a symbolic link among
    the files the sandbox's copy of it takes (`mounts.submission_files`)."""
    for material in policy.grader_material(policy.site_dirs()):
        if material.resolve() in folder.parents:
            raise BadInput(f"submission folder {str(folder)!r} lies inside the grader's own {str(material)!r}, "
                           f"which is never graded as a submission; pass a folder of your own")
    for relative, entry in mounts.submission_files(str(folder)):
        if os.path.islink(entry):
            raise BadInput(f"submission folder {str(folder)!r} holds the symbolic link {relative!r} (to "
                           f"{os.readlink(entry)!r}): the grader reads only the files themselves; put the file "
                           f"in its place")
    return folder


def _notebook_folder(notebook: Path) -> tuple[Path, str]:
    """A temporary folder holding the modules extracted from the notebook's tagged cells (never executed)."""
    from grader.submission.notebook import write_modules

    folder = Path(tempfile.mkdtemp(prefix="infergrade-notebook-"))
    folder.chmod(0o755)  # a root grader's child runs as nobody and must read it
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    try:
        found = write_modules(notebook, folder)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    return folder, f"grading the tagged cells of {str(notebook)!r} ({', '.join(found)})"


def _holds_modules(folder: Path, modules: list[str]) -> bool:
    return any((folder / m).is_file() for m in modules)


def _folders_with_modules(folder: Path, modules: list[str], depth: int) -> list[Path]:
    """Folders below `folder` (not following links, skipping hidden and cache folders) that hold a topic module."""
    found = []
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                          and not p.name.startswith((".", "__")))
    except OSError:
        return found
    for child in children:
        if _holds_modules(child, modules):
            found.append(child)
        elif depth > 1:
            found += _folders_with_modules(child, modules, depth - 1)
    return found
