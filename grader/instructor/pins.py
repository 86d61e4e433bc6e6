"""The versions the generated environments install (Gradescope's image, GitHub Actions): this environment's.

Every runtime dependency of pyproject.toml, triton so that no Triton check is skipped, and everything those need in
turn (the whole environment that was tested, not only its top), pinned to the version installed where the
instructor runs the command; torch comes from PyTorch's CPU wheel index (the CUDA build is several GB, and grading
runs on the CPU).
"""
from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import grader

REPO = Path(grader.__file__).resolve().parent.parent
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PYTHON = "3.11"  # what CI runs (README)
EXTRA = ["triton"]  # in the `gpu` and `dev` extras: its interpreter runs the kernel checks on the CPU


def requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """The names of the runtime dependencies, in pyproject.toml's order, then EXTRA."""
    names = [re.match(r"[A-Za-z0-9_.-]+", d).group(0) for d in tomllib.loads(pyproject.read_text())["project"]
             ["dependencies"]]
    return list(dict.fromkeys(names + EXTRA))


def installed(name: str) -> str:
    """The installed version without its local label (`2.13.0+cpu` -> `2.13.0`); LookupError if absent."""
    try:
        return metadata.version(name).split("+", 1)[0]
    except metadata.PackageNotFoundError:
        raise LookupError(f"{name} is not installed here, so there is no version to pin: "
                          f"pip install -e '.[dev]' first") from None


def closure(names: list[str]) -> list[str]:
    """`names` and every distribution they need in turn on this platform (no extras), in the order found."""
    found, todo = {}, [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop(0)
        if name in found:
            continue
        found[name] = None
        try:
            needs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # `installed` says so when the pin is asked for
        for text in needs:
            need = Requirement(text)
            if need.marker is None or need.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(need.name))
    return list(found)


def pins() -> dict[str, str]:
    """{name: version} for every requirement and what it needs in turn; torch first."""
    found = {name: installed(name) for name in closure(requirements())}
    return {"torch": found.pop("torch"), **found}


def pip_commands(python: str = "python") -> list[str]:
    """The two pip commands that install the pinned environment (torch from the CPU index, then the rest)."""
    versions = pins()
    rest = " ".join(f"{n}=={v}" for n, v in versions.items() if n != "torch")
    return [f"{python} -m pip install torch=={versions['torch']} --index-url {TORCH_CPU_INDEX}",
            f"{python} -m pip install {rest}"]
