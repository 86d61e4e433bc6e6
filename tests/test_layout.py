"""The layers of grader/ import only downwards: the core never imports the learner's or the instructor's tools, and
reading a submission imports nothing of grading, the engine or the tools above them. The command line
(cli.py, __main__.py) and the old name of the notebooks' module sit on top and may import every layer."""
import ast
from pathlib import Path

import grader

GRADER = Path(grader.__file__).resolve().parent
TOP = {"grader.cli", "grader.__main__", "grader.notebooks"}  # entry points: the command line, old notebooks' import
# layer -> the packages its modules must not import; "core" is every module of grader/ outside the other layers
FORBIDDEN = {
    "core": ("grader.cli", "grader.learner", "grader.instructor"),
    "grader.submission": ("grader.cli", "grader.grading", "grader.engine", "grader.learner", "grader.instructor"),
    "grader.learner": ("grader.cli", "grader.instructor"),
    "grader.instructor": ("grader.cli",),
}


def module_name(path: Path) -> str:
    """grader/learner/watch.py -> grader.learner.watch (a package's __init__.py names the package)."""
    parts = ("grader", *path.relative_to(GRADER).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """The layer of FORBIDDEN a module of grader/ belongs to."""
    return next((name for name in FORBIDDEN if module == name or module.startswith(name + ".")), "core")


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every absolute import in `path`, those inside functions included; `from grader import x`
    counts as importing grader.x."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def upward_arrows() -> list[str]:
    """'file:line imports module' for every import that runs against FORBIDDEN."""
    arrows = []
    for path in sorted(GRADER.rglob("*.py")):
        module = module_name(path)
        if module in TOP:
            continue
        for line, imported in imports(path):
            if any(imported == f or imported.startswith(f + ".") for f in FORBIDDEN[layer(module)]):
                arrows.append(f"{path.relative_to(GRADER.parent)}:{line} imports {imported}")
    return arrows


def test_no_layer_imports_one_above_it():
    assert upward_arrows() == []


def test_the_import_reader_sees_the_command_line_reach_every_layer():
    """The command line imports the learner's and the instructor's tools: an import reader that saw nothing would
    find no upward arrow anywhere either."""
    reached = {layer(m) for _, m in imports(GRADER / "cli.py") if m.startswith("grader.")}
    assert {"grader.learner", "grader.instructor", "core"} <= reached


def test_no_module_is_much_longer_than_400_lines():
    """A module past about 400 lines holds more than one concept: split it by what each part does."""
    long = [f"{p.relative_to(GRADER.parent)}: {n} lines" for p in sorted(GRADER.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > 420]
    assert long == []
