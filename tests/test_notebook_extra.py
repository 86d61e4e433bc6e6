"""The `notebook` extra installs JupyterLab and a Python kernel for the self-study notebooks, and the README's
self-study section names it."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_notebook_extra_installs_jupyterlab_and_the_readme_names_it():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower() for requirement in extras["notebook"]}
    assert {"jupyterlab", "ipykernel"} <= names
    self_study = (ROOT / "README.md").read_text().split("## Self-study", 1)[1].split("\n## ", 1)[0]
    assert 'pip install -e ".[notebook]"' in self_study and "JupyterLab" in self_study
