"""A topic's solution with one mutant appended, loaded as a module in this process: the topic tests call a mutant's
functions directly, on the code the selftest grades."""
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mutant(topic: str, misconception: str) -> types.ModuleType:
    """The solution of `topic` with the mutant of `misconception` appended, as the selftest builds it."""
    path = ROOT / "tests" / "mutants" / topic / f"{misconception}.py"
    module = types.ModuleType(f"{topic}_{misconception}")
    source = (ROOT / "solutions" / f"{topic}.py").read_text() + "\n" + path.read_text()
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102
    return module
