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
    jobs = workflows[INSTRUCTOR]["jobs"]  # by default one class, graded in one job (`init-ci --shards 1`)
    assert list(jobs) == ["collect", "grade", "merge"] and jobs["grade"]["needs"] == "collect"
    assert jobs["grade"]["strategy"]["matrix"]["shard"] == [1] and jobs["merge"]["needs"] == "grade"


def test_every_version_is_pinned(workflows):
    versions = pins.pins()
    for workflow in workflows.values():
        uses = [s["uses"] for s in steps(workflow) if "uses" in s]
        assert uses and all(PINNED_ACTIONS.match(u) for u in uses), uses
        # every job that installs the grader (the instructor's grade and merge jobs) installs the same pins
        installing = [job for job in workflow["jobs"].values() if any(s.get("uses", "").startswith(
            "actions/setup-python") for s in job["steps"])]
        assert installing
        for job in installing:
            python = [s["with"]["python-version"] for s in job["steps"] if s.get("uses", "").startswith(
                "actions/setup-python")]
            assert python == ["3.11"]
            installs = [line for line in run_lines({"jobs": {"job": job}}) if "pip install" in line]
            torch_cpu = f"torch=={versions['torch']} --index-url https://download.pytorch.org/whl/cpu"
            assert installs[0] == f"python -m pip install {torch_cpu}" and versions["torch"] == "2.13.0"
            for name, version in versions.items():
                if name != "torch":
                    assert f" {name}=={version}" in installs[1]
            assert all("==" in w for w in installs[1].split()[4:])


def test_the_student_checks_and_the_instructor_grades_hidden_into_one_class_folder(workflows, tmp_path, monkeypatch):
    assert ["check", "--started", "--submission", "exercises", "--out", "infergrade-check.json", "--export",
            "classroom=classroom.json"] in infergrade_commands(workflows[STUDENT])
    jobs = workflows[INSTRUCTOR]["jobs"]
    for folder in ("class", "shards/infergrade-shard-1"):  # as download-artifact lays them out
        (tmp_path / folder).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    (grade,), (join,) = (parse_commands({"jobs": {job: jobs[job]}}) for job in ("grade", "merge"))
    assert grade[:2] == ["grade-batch", "class"] and "--hidden" in grade and grade[grade.index("--shard") + 1] == "1/1"
    assert join[:2] == ["merge", "shards/infergrade-shard-1"]
    (kept,) = [s["with"] for s in jobs["merge"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert kept["name"] == "infergrade-class" and kept["path"] == join[join.index("--out") + 1]


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

    def reporter_readings(payload: dict) -> tuple[float, float]:
        """The two readings of classroom-resources/autograding-grading-reporter v1 (d13b591): its log's "Total
        points for infergrade" (src/helpers/test-helpers.js, getTestScore: max_score times the fraction of tests
        whose status is "pass") and the "Points" it sends to Classroom (src/notify-classroom.js: the tests' scores
        added up)."""
        passed = sum(t["status"] == "pass" for t in payload["tests"])
        return passed / len(payload["tests"]) * payload["max_score"], sum(t["score"] for t in payload["tests"])

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
    # the log and Classroom read the same points (before: "Total points for infergrade: 196.30/269", "Points 35/269")
    log, points = reporter_readings(payload)
    assert log == pytest.approx(points, abs=1e-9) and points == public["kv_cache"]
    assert len(payload["tests"]) == payload["max_score"] and {t["max_score"] for t in payload["tests"]} == {1}
    not_started = [t["name"].split(":")[0] for t in payload["tests"] if ": not started" in t["name"]]
    assert {t: not_started.count(t) for t in set(not_started)} == \
        {t: points for t, points in public.items() if t != "kv_cache"}  # stubs are not run, only counted
    code, payload = run_step("wrong", solution + (ROOT / "tests" / "mutants" / "kv_cache" / "uses_query_heads.py")
                             .read_text())
    assert code == 1 and payload["status"] == "fail"
    log, points = reporter_readings(payload)
    assert 0 < points < public["kv_cache"] and log == pytest.approx(points, abs=1e-9)


def parse_commands(workflow: dict) -> list[list[str]]:
    """Each `infergrade` command of the workflow, checked to be a real subcommand that click parses."""
    found = infergrade_commands(workflow)
    for args in found:
        command = main.get_command(click.Context(main), args[0])
        assert isinstance(command, click.Command), f"no subcommand {args[0]!r}"
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        options = [a.split("=", 1)[0] for a in args[1:] if a.startswith("-")]
        assert set(options) <= known, f"infergrade {args[0]}: unknown {set(options) - known}"
        command.make_context(args[0], list(args[1:]))  # click parses it: values of the right type, arity
    return found


def test_every_infergrade_command_is_a_real_subcommand_with_real_options(workflows, tmp_path, monkeypatch):
    for folder in ("class", "shards/infergrade-shard-1"):  # the folders the instructor's commands read
        (tmp_path / folder).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
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


def test_the_default_workflow_keeps_one_class_folder_with_every_result(workflows, tmp_path):
    """Found: the default workflow graded each repository in a job of its own and kept its files apart (no
    grades.csv, no report; a repository that could not be cloned in no row). Its steps now run as Actions runs them:
    collect, grade the one shard, merge; the artifact's folder holds grades.csv with a row for every repository,
    the one that could not be cloned included, report.html and every graded student's results JSON."""
    import csv
    import json
    import shutil

    workflow = workflows[INSTRUCTOR]
    ada, stubs = tmp_path / "ada", tmp_path / "stubs"
    for folder in (ada, stubs):
        shutil.copytree(ROOT / "exercises", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (ada / "kv_cache.py").write_text((ROOT / "solutions" / "kv_cache.py").read_text())
    collect = collect_step(workflow, tmp_path, f'mkdir -p "$4"\ncase "$3" in\n  org/gone) exit 1;;\n'
                                               f'  org/ada) cp -r {ada} "$4/exercises";;\n'
                                               f'  *) cp -r {stubs} "$4/exercises";;\nesac\n')
    where = tmp_path / "run"
    assert collect("org/ada org/bo org/gone", where).returncode == 0
    for path in [tmp_path, where, *(where / "class").rglob("*")]:  # readable in the sandbox, as a checkout is
        path.chmod(0o755 if path.is_dir() else 0o644)

    def run(job: str, step_name: str, **env: str) -> subprocess.CompletedProcess:
        (step,) = [s for s in workflow["jobs"][job]["steps"] if s.get("name") == step_name]
        return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=where, capture_output=True, text=True,
                              timeout=900, env={**os.environ, **env, "PATH": f"{Path(sys.executable).parent}"
                                                                         f"{os.pathsep}{os.environ['PATH']}"})

    graded = run("grade", "Grade one shard with the hidden checks", SEED="7", SHARD="1")
    assert graded.returncode == 1, graded.stderr  # org/gone could not be graded: the job fails, merge still runs
    shutil.copytree(where / "shard-1", where / "shards" / "infergrade-shard-1")  # upload-artifact, download-artifact
    merged = run("merge", "Join the shards into one class")
    assert merged.returncode == 1 and "merged 1 shard:" in merged.stderr, merged.stderr
    (kept,) = [s["with"]["path"] for s in workflow["jobs"]["merge"]["steps"]
               if s.get("uses", "").startswith("actions/upload-artifact")]
    folder = where / kept
    rows = {row["student"]: row for row in csv.DictReader((folder / "grades.csv").open())}
    assert set(rows) == {"org--ada", "org--bo", "org--gone"} and (folder / "report.html").is_file()
    assert rows["org--gone"]["status"] == "error" and rows["org--gone"]["total"] in ("", "0")
    for name in ("org--ada", "org--bo"):
        doc = json.loads((folder / f"{name}.json").read_text())
        assert rows[name]["status"] == "completed" and float(rows[name]["total"]) == doc["score"]
    assert float(rows["org--ada"]["kv_cache"]) > 0 == float(rows["org--bo"]["total"])


def test_a_classroom_document_too_large_for_the_reporter_keeps_every_point_and_cuts_messages():
    """The reporter reads the document from one environment variable (Linux: 131,072 bytes at most, base64): failing
    checks with long messages and prints are cut to fit, never their tests or points."""
    import json

    from grader.exporters.classroom import MAX_JSON_BYTES, classroom_json

    checks = [{"id": f"sampling.case_{i}", "title": "a check", "score": 0, "max_score": 3, "status": "failed",
               "message": "expected [0, 1], got [0] " * 40, "output": "step\n" * 20, "misconception": None,
               "hint": "sampling.top_p_filter", "duration_s": 0.1, "visibility": "public"} for i in range(100)]
    doc = {"status": "completed", "max_score": 300, "topics": [{"id": "sampling", "checks": checks}]}
    text = classroom_json(doc, {"decoding": 20.0})
    payload = json.loads(text)
    assert len(text.encode()) <= MAX_JSON_BYTES and len(payload["tests"]) == payload["max_score"] == 320
    assert payload["status"] == "fail" and all(t["message"].endswith("shows it whole)") for t in payload["tests"]
                                               if t["message"] and t["name"].startswith("sampling."))
    small = json.loads(classroom_json({**doc, "topics": [{"id": "sampling", "checks": checks[:2]}]}))
    assert small["tests"][0]["message"].startswith("expected [0, 1], got [0] expected")  # whole where it fits


def test_the_student_readme_says_what_a_green_check_means():
    """A green Classroom run is not a finished assignment: the handout's README says so in the student's words."""
    text = " ".join((ROOT / "grader" / "instructor" / "handout" / "README.md").read_text().split())
    assert "A green check means that nothing you have started is wrong, not that the work is complete" in text
