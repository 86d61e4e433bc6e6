"""Which submission is graded: the folder the user named (never through a symbolic link), the one folder below it
that holds the modules, or the modules a notebook's tagged cells make; refused where it lies in the grader's own
material or holds a link. The folder is opened once, and what is graded is the grader's copy of it
(`snapshot.take`)."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from grader import topics as topic_registry
from grader.language import tr
from grader.sandbox import policy
from grader.submission.opening import BadInput, FOLDER, open_below, open_given, path_of
from grader.submission.snapshot import Snapshot, take

SEARCH_DEPTH = 3  # how deep below the given folder a submission's modules are looked for


def resolve_submission(path: Path) -> tuple[Snapshot, str | None]:
    """The grader's copy of the submission, and a note when it is of a subfolder of the one given (or of the
    modules a notebook's tagged cells make). The caller removes the copy (`with`), else it goes at exit.

    An upload often has its modules one level down (`submission/exercises/sampling.py`): when the given folder
    holds no topic module and exactly one folder below it does, that folder is graded. BadInput for a path that is
    or passes through a symbolic link, a folder inside the grader's own material, or one that holds a link. The
    path is opened once, without following a link; all that is judged and copied is what was opened.
    """
    top, info = open_given(path)
    try:
        if stat.S_ISREG(info.st_mode) and path.suffix == ".ipynb":
            return _notebook_snapshot(path, top)
        if not stat.S_ISDIR(info.st_mode):
            raise BadInput(tr("submission {path} is not a folder (pass the folder that holds sampling.py etc.)",
                              path=repr(str(path))))
        given = path_of(top, path)
        modules = [f"{t}.py" for t in topic_registry.all_topics()]
        if _holds_modules(top, modules):
            return _snapshot(top, given), None
        found = _folders_with_modules(top, Path(), modules, SEARCH_DEPTH)
        expected = ", ".join(modules)
        if not found:
            raise BadInput(tr("no topic module in {folder} or the folders below it (looked {depth} levels down for "
                              "any of: {expected})", folder=repr(str(given)), depth=SEARCH_DEPTH, expected=expected))
        if len(found) > 1:
            listed = ", ".join(repr(str(f)) for f in found[:5])
            raise BadInput(tr("{folder} holds no topic module, and several folders below it do ({listed}): pass the "
                              "one to grade with --submission", folder=repr(str(given)), listed=listed))
        below = open_below(top, found[0])
        try:
            return _snapshot(below, given / found[0]), tr(
                "{folder} holds no topic module: grading {below}, the one folder below it that does",
                folder=repr(str(given)), below=repr(str(given / found[0])))
        finally:
            os.close(below)
    finally:
        os.close(top)


def _snapshot(folder: int, given: Path) -> Snapshot:
    """The copy of the folder open at `folder`, or BadInput when it lies inside the grader's own material (its
    package, reference, solutions, tests or history: `policy.grader_material`, which the sandbox hides), judged by
    the folder opened, or holds a symbolic link among the files the copy takes."""
    material = {}
    for path in policy.grader_material(policy.site_dirs()):
        try:
            info = os.stat(path)
        except OSError:
            continue
        material[(info.st_dev, info.st_ino)] = path
    inside = _inside(folder, material)
    if inside is not None:
        raise BadInput(tr("submission folder {folder} lies inside the grader's own {inside}, which is never graded "
                          "as a submission; pass a folder of your own", folder=repr(str(given)),
                          inside=repr(str(inside))))
    return take(folder, given)


def _inside(folder: int, material: dict[tuple[int, int], Path]) -> Path | None:
    """The folder of `material` (by device and inode) that the folder open at `folder` lies below, if any: its
    parents are walked up through `..` from the folder itself, never by name."""
    current = os.dup(folder)
    try:
        here = os.fstat(current)
        for _ in range(4096):  # deeper than any path the system can name
            parent = os.open("..", FOLDER, dir_fd=current)
            os.close(current)
            current, above = parent, os.fstat(parent)
            if (above.st_dev, above.st_ino) == (here.st_dev, here.st_ino):
                return None  # the root
            if (above.st_dev, above.st_ino) in material:
                return material[(above.st_dev, above.st_ino)]
            here = above
        return None
    finally:
        os.close(current)


def _notebook_snapshot(notebook: Path, opened: int) -> tuple[Snapshot, str]:
    """A copy holding the modules extracted from the notebook open at `opened` (its tagged cells, never executed)."""
    from grader.submission.notebook import write_modules

    snapshot = Snapshot(Path(os.path.realpath(notebook)))
    try:
        found = write_modules(notebook, snapshot.folder, opened)
        for module in (f"{topic}.py" for topic in found):
            (snapshot.folder / module).chmod(0o644)  # a root grader's child runs as nobody and must read it
            snapshot.files[module] = hashlib.sha256((snapshot.folder / module).read_bytes()).hexdigest()
    except ValueError as exc:
        snapshot.remove()
        raise BadInput(str(exc)) from None
    except BaseException:
        snapshot.remove()
        raise
    return snapshot, tr("grading the tagged cells of {notebook} ({topics})", notebook=repr(str(notebook)),
                        topics=", ".join(found))


def _holds_modules(folder: int, modules: list[str]) -> bool:
    """Whether the folder open at `folder` holds a topic module (a file, or a link that the copy then refuses)."""
    for module in modules:
        try:
            if stat.S_ISREG((info := os.stat(module, dir_fd=folder, follow_symlinks=False)).st_mode) or \
                    stat.S_ISLNK(info.st_mode):
                return True
        except OSError:
            continue
    return False


def _folders_with_modules(folder: int, relative: Path, modules: list[str], depth: int) -> list[Path]:
    """Folders below the one open at `folder` (`relative` to the given one; never through a link, skipping hidden
    and cache folders) that hold a topic module, by their path relative to the given folder."""
    found = []
    try:
        with os.scandir(folder) as listing:
            children = sorted(e.name for e in listing if e.is_dir(follow_symlinks=False)
                              and not e.name.startswith((".", "__")))
    except OSError:
        return found
    for name in children:
        try:
            child = open_below(folder, Path(name))
        except OSError:
            continue
        try:
            if _holds_modules(child, modules):
                found.append(relative / name)
            elif depth > 1:
                found += _folders_with_modules(child, relative / name, modules, depth - 1)
        finally:
            os.close(child)
    return found
