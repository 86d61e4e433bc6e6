"""What a child may read and how much it may use: the sandbox settings of one grading run."""
from __future__ import annotations

import site
import sys
from pathlib import Path

import torch

import grader

REPO = Path(grader.__file__).resolve().parent.parent
SYSTEM_ROOTS = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev", "/opt"]
TMP_BYTES = 256 * 2**20  # the private /tmp of one child, its only writable place
# and its files, links and folders: each holds an inode and a dentry in the kernel (about 1 KiB, a link's target
# up to a page) that no byte cap counts; the default, half the machine's pages, let one child pin gigabytes
TMP_FILES = 4096
PACKAGES = ("grader", "reference", "solutions")  # the grader's own (`exercises` holds only the stubs)


def grader_material(site_dirs: list[str]) -> set[Path]:
    """The grader's package, reference, solutions, tests and history, here and in every site-packages: what no
    submission may be graded from inside (`submission.folder.resolve_submission`) and no child may read."""
    paths = {Path(grader.__file__).parent, REPO / "reference", REPO / "solutions", REPO / "tests", REPO / ".git"}
    return paths | {Path(d) / name for d in site_dirs for name in PACKAGES}


def site_dirs() -> list[str]:
    """The interpreter's package folders, and any other on sys.path (a .pth file may add one: a shared environment)."""
    return list(dict.fromkeys([*site.getsitepackages(), site.getusersitepackages(),
                               *(p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")
                                 and Path(p).is_dir())]))


def hidden_paths(submission_dir: Path, site_dirs: list[str]) -> list[str]:
    """The grader's own material: unreadable to the child unless it is the submission being graded.

    From a checkout the whole repository is hidden (its .git holds every file); an installed grader's packages
    sit in site-packages, where only they are hidden, in every site-packages (a copy installed beside the
    checkout that grades, as Gradescope's setup.sh makes one, holds the same hidden checks).
    """
    paths = grader_material(site_dirs)
    if str(REPO.resolve()) not in {str(Path(d).resolve()) for d in site_dirs}:
        # every entry of the checkout but a virtual environment that lives in it (`.venv`: the interpreter)
        environment = [Path(p).resolve() for p in (sys.prefix, *site_dirs)]
        paths |= {p for p in REPO.iterdir() if not any(e == p.resolve() or p.resolve() in e.parents
                                                        for e in environment)}
    sub = submission_dir.resolve()
    # as written and resolved: the private root binds a folder under the name sys.path gives it (a venv in a
    # linked workspace), Landlock goes by the resolved one
    return sorted({str(q) for p in paths if p.resolve() != sub and p.exists() for q in (p.absolute(), p.resolve())})


def sandbox_config(submission_dir: Path, memory_bytes: int, output_bytes: int) -> dict:
    """The per-run part of a child's configuration (the topic is added per check).

    Nothing is writable by more than one child: each has its own temp folder (Triton's cache included), so no
    check's child can leave anything for another's to read.
    """
    sites = site_dirs()
    python = [sys.prefix, sys.base_prefix, sys.exec_prefix, *sites]
    cuda = torch.cuda.is_available()
    devices = sorted(str(p) for p in Path("/dev").glob("nvidia*")) if cuda else []  # opened read-write by CUDA
    env = {} if cuda else {"TRITON_INTERPRET": "1"}
    # CUDA reserves far more address space than it uses: with a GPU the address-space cap would stop it
    # the private root binds these beside the system's library folders (CUDA also reads /sys)
    bound = sorted(set(python + (["/sys"] if cuda else [])))
    return {"read_roots": sorted(set(SYSTEM_ROOTS + python)), "bound_read_only": bound, "devices": devices,
            "tmp_bytes": TMP_BYTES, "tmp_files": TMP_FILES,
            "hidden": hidden_paths(submission_dir, sites), "memory_bytes": None if cuda else memory_bytes,
            "output_bytes": output_bytes, "submission_dir": str(submission_dir.resolve()), "env": env}
