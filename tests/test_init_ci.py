"""`infergrade init-ci`: run for real; the workflows parse, are pinned, and run only commands that exist."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from grader import pins
from grader.cli import main

ROOT = Path(__file__).resolve().parent.parent
INFERGRADE = [sys.executable, "-m", "grader"]  # this checkout's grader
STUDENT = "student/.github/workflows/infergrade-check.yml"
INSTRUCTOR = "instructor/.github/workflows/infergrade-grade.yml"
PINNED_ACTIONS = re.compile(r"^actions/(checkout|setup-python|upload-artifact)@v\d+(\.\d+){0,2}$")


@pytest.fixture(scope="module")
def workflows(tmp_path_factory):
    out = tmp_path_factory.mktemp("ci")
    done = subprocess.run([*INFERGRADE, "init-ci", "--out", out], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out / STUDENT}" in done.stdout and f"wrote {out / INSTRUCTOR}" in done.stdout
    again = subprocess.run([*INFERGRADE, "init-ci", "--out", out], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr
    return {name: yaml.safe_load((out / name).read_text()) for name in (STUDENT, INSTRUCTOR)}


def steps(workflow: dict) -> list[dict]:
    return [s for job in workflow["jobs"].values() for s in job["steps"]]


def run_lines(workflow: dict) -> list[str]:
    """Each shell command of every `run:` block (continuation lines joined)."""
    lines = []
    for step in steps(workflow):
        if "run" in step:
            lines += [line.strip() for line in step["run"].replace("\\\n", " ").splitlines() if line.strip()]
    return lines


def infergrade_commands(workflow: dict) -> list[list[str]]:
    """The arguments of each `infergrade ...` command, GitHub expressions and shell variables made a plain 1."""
    found = []
    for line in run_lines(workflow):
        line = re.sub(r"\$\{\{[^}]*\}\}", "1", line)
        line = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", "1", line)
        words = shlex.split(line)
        found += [words[i + 1:] for i, w in enumerate(words) if w == "infergrade"]
    return found


def test_both_workflows_have_the_structure_github_expects(workflows):
    for workflow in workflows.values():
        assert set(workflow) >= {"name", "on", "jobs"} and workflow["jobs"]
        for job in workflow["jobs"].values():
            assert job["runs-on"] == "ubuntu-24.04" and job["timeout-minutes"] > 0 and job["steps"]
            for step in job["steps"]:
                assert ("uses" in step) != ("run" in step), step
    assert "push" in workflows[STUDENT]["on"]
    dispatch = workflows[INSTRUCTOR]["on"]["workflow_dispatch"]["inputs"]
    assert dispatch["repository"]["required"] is True


def test_every_version_is_pinned(workflows):
    versions = pins.pins()
    for workflow in workflows.values():
        uses = [s["uses"] for s in steps(workflow) if "uses" in s]
        assert uses and all(PINNED_ACTIONS.match(u) for u in uses), uses
        python = [s["with"]["python-version"] for s in steps(workflow) if s.get("uses", "").startswith(
            "actions/setup-python")]
        assert python == ["3.11"]
        installs = [line for line in run_lines(workflow) if "pip install" in line]
        torch_cpu = f"torch=={versions['torch']} --index-url https://download.pytorch.org/whl/cpu"
        assert installs[0] == f"python -m pip install {torch_cpu}" and versions["torch"] == "2.13.0"
        for name, version in versions.items():
            if name != "torch":
                assert f" {name}=={version}" in installs[1]
        assert all("==" in w for w in installs[1].split()[4:])


def test_the_student_checks_and_the_instructor_grades_hidden_and_keeps_both_files(workflows):
    assert ["check", "--submission", "exercises", "--out", "infergrade-check.json"] in \
        infergrade_commands(workflows[STUDENT])
    grading = infergrade_commands(workflows[INSTRUCTOR])
    assert len(grading) == 2 and all(c[0] == "grade" and "--hidden" in c for c in grading)
    assert [c[c.index("--seed") + 1] for c in grading] == ["1", "1"]  # the same $SEED: one grade, two formats
    assert any("--format" in c and c[c.index("--format") + 1] == "junit" for c in grading)
    upload = [s for s in steps(workflows[INSTRUCTOR]) if s.get("uses", "").startswith("actions/upload-artifact")]
    assert len(upload) == 1 and upload[0]["if"] == "always()"
    assert set(upload[0]["with"]["path"].split()) == {"results/results.json", "results/junit.xml"}


def test_every_infergrade_command_is_a_real_subcommand_with_real_options(workflows):
    for workflow in workflows.values():
        for args in infergrade_commands(workflow):
            command = main.commands.get(args[0])
            assert isinstance(command, click.Command), f"no subcommand {args[0]!r}"
            known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            options = [a.split("=", 1)[0] for a in args[1:] if a.startswith("-")]
            assert set(options) <= known, f"infergrade {args[0]}: unknown {set(options) - known}"
            command.make_context(args[0], list(args[1:]))  # click parses it: values of the right type, arity


def test_the_pins_cover_what_the_direct_dependencies_need_in_turn():
    """Gradescope's setup.sh and the workflows install the whole tested environment, not only its top."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    versions = {canonicalize_name(n): v for n, v in pins.pins().items()}
    needed = {canonicalize_name(Requirement(text).name) for direct in pins.requirements()
              for text in metadata.requires(direct) or [] if Requirement(text).marker is None}
    assert needed and needed <= set(versions), needed - set(versions)
    assert all(metadata.version(name).split("+")[0] == version for name, version in versions.items())
