"""A topic notebook's experiments run here on the reference, figures drawn off screen, so that a test can recompute
the figures the notebook's prose states."""
import importlib
from unittest import mock

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display in a test
import matplotlib.pyplot as plt  # noqa: E402


def prose(text: str) -> str:
    """`text` with its line breaks and runs of spaces made single spaces, so a figure split over lines is found."""
    return " ".join(text.split())


def run_experiments(topic: str) -> list[tuple[str, dict]]:
    """(the intro's prose, the names the code left) of each experiment of `topic`'s notebook, run in order in one
    namespace after the notebook's shared set-up, as the notebook runs them, with the reference as the
    implementation and no reference beside it."""
    notebook = importlib.import_module(f"grader.learner.notebooks.topics.{topic}")
    namespace, runs = {"impl": importlib.import_module(f"reference.{topic}"), "ref": None, "plt": plt}, []
    exec(getattr(notebook, "SETUP", ""), namespace)  # noqa: S102 (the notebook's own set-up code)
    with mock.patch.object(plt, "show"):
        for intro, code in notebook.EXPERIMENTS:
            exec(code, namespace)  # noqa: S102 (the notebook's own experiment code)
            plt.close("all")
            runs.append((prose(intro), dict(namespace)))
    return runs
