"""`infergrade init-ci`: run for real; the workflows parse, are pinned, and run only commands that exist."""
import glob
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from grader import topics
from grader.instructor import pins
from grader.cli import main

ROOT = Path(__file__).resolve().parent.parent
INFERGRADE = [sys.executable, "-m", "grader"]  # this checkout's grader
STUDENT = "student/.github/workflows/infergrade-check.yml"
INSTRUCTOR = "instructor/.github/workflows/infergrade-grade.yml"
PINNED_ACTIONS = re.compile(r"^(actions/(checkout|setup-python|upload-artifact|download-artifact)|"
                            r"classroom-resources/autograding-grading-reporter)@v\d+(\.\d+){0,2}$")
SHELL_OPERATORS = {"||", "&&", ";", "|"}


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
    """The arguments of each `infergrade ...` command, GitHub expressions and shell variables made a plain 1,
    globs expanded in the working folder as the shell would."""
    found = []
    for line in run_lines(workflow):
        line = re.sub(r"\$\{\{[^}]*\}\}", "1", line)
        line = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", "1", line)
        words = [match for word in shlex.split(line) for match in (sorted(glob.glob(word)) or [word])]
        for i, w in enumerate(words):
            if w == "infergrade":
                args = words[i + 1:]
                found.append(args[:next((j for j, a in enumerate(args) if a in SHELL_OPERATORS), len(args))])
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
    assert dispatch["repositories"]["required"] is True
    grade = workflows[INSTRUCTOR]["jobs"]["grade"]
    assert grade["needs"] == "plan" and "fromJSON(needs.plan.outputs.repositories)" in \
        grade["strategy"]["matrix"]["repository"]


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
    assert ["check", "--started", "--submission", "exercises", "--out", "infergrade-check.json", "--export",
            "classroom=classroom.json"] in infergrade_commands(workflows[STUDENT])
    grading = infergrade_commands(workflows[INSTRUCTOR])
    assert len(grading) == 1 and grading[0][0] == "grade" and "--hidden" in grading[0]  # one run, both files
    assert grading[0][grading[0].index("--export") + 1] == "junit=results/junit.xml"
    upload = [s for s in steps(workflows[INSTRUCTOR]) if s.get("uses", "").startswith("actions/upload-artifact")]
    assert len(upload) == 1 and upload[0]["if"] == "always()"
    assert set(upload[0]["with"]["path"].split()) == {"results/results.json", "results/junit.xml"}


def test_pip_downloads_are_cached(workflows):
    for workflow in workflows.values():
        setup = [s for s in steps(workflow) if s.get("uses", "").startswith("actions/setup-python")]
        assert setup and all(s["with"]["cache"] == "pip" for s in setup)


def test_the_student_workflow_reports_points_to_classroom_and_fails_only_on_what_is_wrong(workflows, tmp_path):
    """The check step's commands run in order, as Actions runs them: a handout with one topic written and the
    rest stubs passes and reports that topic's points; the same with a wrong answer fails and reports fewer."""
    import base64
    import json
    import os
    import shutil

    workflow = workflows[STUDENT]
    job = workflow["jobs"]["run-autograding-tests"]
    assert job["name"] == "Autograding Tests" and workflow["permissions"]["checks"] == "write"
    step = next(s for s in job["steps"] if s.get("id") == "infergrade")
    reporter = next(s for s in job["steps"] if "autograding-grading-reporter" in s.get("uses", ""))
    assert reporter["if"] == "always()" and reporter["with"]["runners"] == "infergrade"
    assert reporter["env"] == {"INFERGRADE_RESULTS": "${{ steps.infergrade.outputs.result }}"}

    def run_step(name: str, kv_cache_source: str) -> tuple[int, dict]:
        repo = tmp_path / name / "repo"
        shutil.copytree(ROOT / "exercises", repo / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
        (repo / "exercises" / "kv_cache.py").write_text(kv_cache_source)
        for folder in (repo, repo / "exercises"):
            folder.chmod(0o755)
        outputs = tmp_path / name / "github_output"
        env = {**os.environ, "GITHUB_OUTPUT": str(outputs),
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=600)
        (line,) = [x for x in outputs.read_text().splitlines() if x.startswith("result=")]
        return done.returncode, json.loads(base64.b64decode(line.removeprefix("result=")))

    solution = (ROOT / "solutions" / "kv_cache.py").read_text()
    code, payload = run_step("right", solution)
    from grader.instructor.batch import topic_points

    public = topic_points(topics.all_topics(), hidden=False)
    assert code == 0 and payload["status"] == "pass" and payload["max_score"] == sum(public.values())
    assert sum(t["score"] for t in payload["tests"]) == public["kv_cache"]  # the other topics keep their points
    assert {t["name"] for t in payload["tests"] if "not started" in t["name"]} == \
        {f"{t}: not started" for t in topics.all_topics() if t != "kv_cache"}  # stubs are not run, only counted
    code, payload = run_step("wrong", solution + (ROOT / "tests" / "mutants" / "kv_cache" / "uses_query_heads.py")
                             .read_text())
    assert code == 1 and payload["status"] == "fail"
    assert 0 < sum(t["score"] for t in payload["tests"]) < public["kv_cache"]


def parse_commands(workflow: dict) -> list[list[str]]:
    """Each `infergrade` command of the workflow, checked to be a real subcommand that click parses."""
    found = infergrade_commands(workflow)
    for args in found:
        command = main.commands.get(args[0])
        assert isinstance(command, click.Command), f"no subcommand {args[0]!r}"
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        options = [a.split("=", 1)[0] for a in args[1:] if a.startswith("-")]
        assert set(options) <= known, f"infergrade {args[0]}: unknown {set(options) - known}"
        command.make_context(args[0], list(args[1:]))  # click parses it: values of the right type, arity
    return found


def test_every_infergrade_command_is_a_real_subcommand_with_real_options(workflows):
    for workflow in workflows.values():
        parse_commands(workflow)


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


def test_init_ci_is_an_instructor_command(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from grader.instructor import handout

    monkeypatch.setattr(handout, "is_handout", lambda: True)
    result = CliRunner().invoke(main, ["init-ci", "--out", str(tmp_path / "ci")])
    assert result.exit_code == 2 and "instructor command" in result.output and not (tmp_path / "ci").exists()


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The instructor's workflow of `init-ci --shards 3`."""
    out = tmp_path_factory.mktemp("ci-shards")
    done = subprocess.run([*INFERGRADE, "init-ci", "--out", out, "--shards", "3"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load((out / INSTRUCTOR).read_text())


def test_the_sharded_workflow_grades_n_shards_of_one_class_and_merges_them(sharded, tmp_path, monkeypatch):
    jobs = sharded["jobs"]
    assert jobs["grade"]["needs"] == "collect" and jobs["merge"]["needs"] == "grade"
    assert jobs["grade"]["strategy"]["matrix"]["shard"] == [1, 2, 3]
    assert jobs["merge"]["if"] == "${{ !cancelled() }}"                  # a failed shard is refused as missing
    (tmp_path / "class").mkdir()
    for k in (1, 2, 3):                                               # as download-artifact lays them out
        (tmp_path / "shards" / f"infergrade-shard-{k}").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)                                        # where the commands' folders exist
    (grade,), (join,) = parse_commands({"jobs": {"grade": jobs["grade"]}}), parse_commands({"jobs": {"merge":
                                                                                                   jobs["merge"]}})
    assert grade[:2] == ["grade-batch", "class"] and "--hidden" in grade
    assert grade[grade.index("--shard") + 1] == "1/3" and grade[grade.index("--out") + 1] == "shard-1"
    assert join[:4] == ["merge", *(f"shards/infergrade-shard-{k}" for k in (1, 2, 3))]

    def step(job: str, action: str) -> dict:
        (found,) = [s["with"] for s in jobs[job]["steps"] if s.get("uses", "").startswith(f"actions/{action}")]
        return found

    # what each job keeps is what the next one fetches: the class, then every shard's output folder
    assert step("collect", "upload-artifact")["name"] == step("grade", "download-artifact")["name"]
    assert step("grade", "download-artifact")["path"] == "class"
    assert step("grade", "upload-artifact")["path"] == "shard-${{ matrix.shard }}"
    assert step("grade", "upload-artifact")["name"] == "infergrade-shard-${{ matrix.shard }}"
    assert step("merge", "download-artifact") == {"pattern": "infergrade-shard-*", "path": "shards"}
    assert step("merge", "upload-artifact")["path"] == join[join.index("--out") + 1]
    uses = [s["uses"] for job in jobs.values() for s in job["steps"] if "uses" in s]
    assert all(PINNED_ACTIONS.match(u) for u in uses), uses


def collect_step(sharded, tmp_path: Path, clones: str):
    """`collect(repositories, where)`: the collect step run as Actions runs it, in `where` beside the instructor's
    checkout (this one), by a python3 without site-packages (the runner's: no torch) and a stand-in for
    `gh repo clone` that runs the shell `clones` for `$3` (the repository) into `$4` (the folder)."""
    (step,) = [s for s in sharded["jobs"]["collect"]["steps"] if s.get("name") == "Collect the submissions"]
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "gh").write_text(f"#!/bin/bash\n# gh repo clone REPO DIR -- --quiet\n{clones}")
    (bin_ / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    for tool in ("gh", "python3"):
        (bin_ / tool).chmod(0o755)

    def collect(repositories: str, where: Path) -> subprocess.CompletedProcess:
        where.mkdir()
        (where / "instructor").symlink_to(ROOT)  # where actions/checkout put the instructor's repository
        env = {**os.environ, "REPOSITORIES": repositories, "REF": "",
               "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}"}
        return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=where, env=env, capture_output=True, text=True,
                              timeout=60)
    return collect


def test_the_sharded_workflow_collects_every_repository_into_one_class_folder(sharded, tmp_path):
    """The collect step: a folder per repository with its exercises/, a note for one that cannot be cloned or has
    none, and a refused list with a non-repository."""
    collect = collect_step(sharded, tmp_path, 'case "$3" in\n  org/gone) exit 1;;\n  org/bare) mkdir -p "$4/docs";;\n'
                                              '  *) mkdir -p "$4/exercises" && echo "# $3" > '
                                              '"$4/exercises/kv_cache.py";;\nesac\n')
    done = collect("org/ada, org/bo\norg/gone org/bare org/ada", tmp_path / "ok")
    assert done.returncode == 0, done.stderr
    made = {p.name: sorted(f.name for f in p.iterdir()) for p in (tmp_path / "ok" / "class").iterdir()}
    assert made == {"org--ada": ["kv_cache.py"], "org--bo": ["kv_cache.py"], "org--gone": ["MISSING.txt"],
                    "org--bare": ["MISSING.txt"]}
    assert (tmp_path / "ok" / "class" / "org--bo" / "kv_cache.py").read_text() == "# org/bo\n"
    assert "org/gone" in (tmp_path / "ok" / "class" / "org--gone" / "MISSING.txt").read_text()
    assert "org/bare" in (tmp_path / "ok" / "class" / "org--bare" / "MISSING.txt").read_text()
    assert not (tmp_path / "ok" / "checkout").exists()
    refused = collect("org/ada org/$(touch_x)", tmp_path / "bad")
    assert refused.returncode != 0 and "org/$(touch_x)" in refused.stderr
    assert sorted(p.name for p in (tmp_path / "bad").iterdir()) == ["instructor", "repositories.txt"]  # no clone


def test_the_collect_step_refuses_a_linked_exercises_folder_and_copies_no_link(sharded, tmp_path):
    """Found: a repository whose exercises/ linked to a classmate's collected folder was graded as the classmate's
    (upload-artifact follows links), and kept as a link it had no row at all. Now a linked exercises/, or one that
    holds a link, is not collected: its folder holds a note naming the link, and the class folder holds no link."""
    collect = collect_step(sharded, tmp_path, 'mkdir -p "$4"\ncase "$3" in\n'
                                              '  org/linked) ln -s ../class/org--ada "$4/exercises";;\n'
                                              '  org/inner) mkdir "$4/exercises" && '
                                              'ln -s ../../class/org--ada/kv_cache.py "$4/exercises/kv_cache.py";;\n'
                                              '  *) mkdir "$4/exercises" && echo "# $3" > '
                                              '"$4/exercises/kv_cache.py";;\nesac\n')
    done = collect("org/ada org/linked org/inner", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "run" / "class"
    made = {p.name: sorted(f.name for f in p.iterdir()) for p in folder.iterdir()}
    assert made == {"org--ada": ["kv_cache.py"], "org--linked": ["MISSING.txt"], "org--inner": ["MISSING.txt"]}
    assert not [p for p in folder.rglob("*") if p.is_symlink()]
    linked, inner = ((folder / f"org--{n}" / "MISSING.txt").read_text() for n in ("linked", "inner"))
    assert "org/linked" in linked and "symbolic link" in linked and "../class/org--ada" in linked
    assert "org/inner" in inner and "symbolic link" in inner and "kv_cache.py" in inner
    assert linked.strip() in done.stdout and inner.strip() in done.stdout  # the warnings in the run's summary
