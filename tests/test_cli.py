"""The command line, end to end with click's CliRunner, and bad input of every kind."""
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import topics
from grader.cli import main
from grader.results import problems
from grader.instructor.selftest import EXERCISES_DIR, SOLUTIONS_DIR

KV = (SOLUTIONS_DIR / "kv_cache.py").read_text()


def run(*args):
    result = CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False)
    return result.exit_code, result.output


def submission(tmp_path: Path, source: str, topic: str = "kv_cache") -> Path:
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / f"{topic}.py").write_text(source)
    return folder


def grade(tmp_path, folder, *extra):
    out = tmp_path / "results.json"
    code, output = run("grade", "--submission", folder, "--topic", "kv_cache", "--seed", 5, "--out", out, *extra)
    doc = json.loads(out.read_text())
    assert problems(doc) == []
    return code, output, doc


def test_list_names_topics_and_functions():
    code, output = run("list")
    assert code == 0 and "kv_cache" in output and "kv_bytes_per_token(config, dtype_bytes=2)" in output


def test_check_passes_on_the_solutions_and_fails_on_the_stubs(tmp_path):
    folder = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS_DIR, folder)
    code, output = run("check", "kv_cache", "--submission", folder)
    assert code == 0 and "score" in output
    assert (folder / ".infergrade-progress.json").exists()
    stubs = tmp_path / "stubs"
    shutil.copytree(EXERCISES_DIR, stubs)
    code, output = run("check", "kv_cache", "--submission", stubs)
    assert code == 1 and "hint: infergrade hint kv_cache." in output


def test_fresh_stubs_say_not_started_once_per_function(tmp_path):
    stubs = tmp_path / "stubs"
    shutil.copytree(EXERCISES_DIR, stubs)
    code, output = run("check", "kv_cache", "--submission", stubs)
    started = [line.split("NOT STARTED", 1)[1].split(":")[0].strip() for line in output.splitlines()
               if "NOT STARTED" in line]
    functions = [name for name in topics.api("kv_cache") if "." not in name]
    assert code == 1 and sorted(started) == sorted(functions)
    assert "ERROR" not in output and "not implemented yet" not in output


def test_grade_writes_valid_results_with_provenance(tmp_path):
    code, _, doc = grade(tmp_path, SOLUTIONS_DIR, "--hidden")
    assert code == 0 and doc["status"] == "completed" and doc["mode"] == "hidden" and doc["seed"] == 5
    assert doc["score"] == doc["max_score"] > 0
    assert set(doc["submission"]["files"]) >= {"kv_cache.py"}
    assert {c["visibility"] for c in doc["topics"][0]["checks"]} == {"public", "hidden"}


def test_same_seed_same_results(tmp_path):
    _, _, a = grade(tmp_path, EXERCISES_DIR, "--hidden")
    _, _, b = grade(tmp_path, EXERCISES_DIR, "--hidden")
    assert outcomes(a) == outcomes(b)


def outcomes(doc):
    return [(c["id"], c["status"], c["seed"], c["score"]) for t in doc["topics"] for c in t["checks"]]


@pytest.mark.parametrize("fmt", ["gradescope", "junit"])
def test_exports(tmp_path, fmt):
    out = tmp_path / f"out.{fmt}"
    code, _ = run("grade", "--submission", SOLUTIONS_DIR, "--topic", "kv_cache", "--seed", 1, "--out", out,
                  "--format", fmt)
    assert code == 0
    if fmt == "gradescope":
        doc = json.loads(out.read_text())
        assert doc["score"] == sum(t["max_score"] for t in doc["tests"]) > 0
        assert all(t["status"] == "passed" for t in doc["tests"])
    else:
        suite = ET.parse(out).getroot().find("testsuite")
        assert suite.get("name") == "kv_cache" and suite.get("failures") == "0" and int(suite.get("tests")) > 0


def test_unknown_topic_is_a_usage_error_with_an_error_results_file(tmp_path):
    out = tmp_path / "r.json"
    code, output = run("grade", "--topic", "nonsense", "--out", out)
    assert code == 2 and "unknown topic 'nonsense'" in output
    doc = json.loads(out.read_text())
    assert problems(doc) == [] and doc["status"] == "error" and "unknown topic" in doc["error"]


def test_missing_submission_folder(tmp_path):
    out = tmp_path / "r.json"
    code, output = run("grade", "--submission", tmp_path / "absent", "--out", out)
    assert code == 2 and "does not exist" in output
    assert json.loads(out.read_text())["status"] == "error"
    code, output = run("check", "kv_cache", "--submission", tmp_path / "absent")
    assert code == 2 and "does not exist" in output


def test_missing_module_file(tmp_path):
    folder = submission(tmp_path, (SOLUTIONS_DIR / "sampling.py").read_text(), topic="sampling")
    code, _, doc = grade(tmp_path, folder)
    topic = doc["topics"][0]
    assert code == 0 and topic["status"] == "error" and topic["score"] == 0 < topic["max_score"]
    assert "kv_cache.py is missing" in topic["message"]
    assert all("kv_cache.py is missing" not in c["message"] for c in topic["checks"])


def test_a_folder_without_any_topic_module_says_where_it_looked(tmp_path):
    folder = tmp_path / "empty"
    (folder / "notes").mkdir(parents=True)
    out = tmp_path / "r.json"
    code, output = run("grade", "--submission", folder, "--out", out)
    assert code == 2 and "no topic module" in output and "sampling.py" in output
    assert json.loads(out.read_text())["status"] == "error"


def test_syntax_error(tmp_path):
    code, _, doc = grade(tmp_path, submission(tmp_path, "def kv_bytes_per_token(config:\n"))
    topic = doc["topics"][0]
    assert topic["status"] == "error" and "SyntaxError" in topic["message"]
    assert all(c["status"] == "error" for c in topic["checks"])


def test_wrong_signature_names_the_contract(tmp_path):
    source = KV.replace("def kv_bytes_per_token(config: dict, dtype_bytes: int = 2)",
                        "def kv_bytes_per_token(config: dict, nbytes: int = 2)")
    assert source != KV
    _, _, doc = grade(tmp_path, submission(tmp_path, source))
    messages = [c["message"] for c in doc["topics"][0]["checks"] if c["status"] == "error"]
    assert any("the contract's signature is kv_bytes_per_token(config, dtype_bytes=2)" in m for m in messages)


@pytest.mark.parametrize("value,words", [("float('nan')", "returned float nan"),
                                          ("str(1)", "returned str '1'"),
                                          ("__import__('numpy').int64(1).reshape(1)", "returned numpy.ndarray")])
def test_wrong_return_types_and_nan(tmp_path, value, words):
    source = KV + f"\n\ndef kv_bytes_per_token(config, dtype_bytes=2):\n    return {value}\n"
    _, _, doc = grade(tmp_path, submission(tmp_path, source))
    failed = [c for c in doc["topics"][0]["checks"] if c["status"] == "failed"]
    assert failed and any(words in c["message"] for c in failed), [c["message"] for c in failed]


def test_hint_levels_and_progress(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    code, first = run("hint", "kv_cache.kv_bytes_per_token", "--submission", folder)
    assert code == 0 and "hint 1/3" in first
    code, second = run("hint", "kv_cache.kv_bytes_per_token", "--submission", folder)
    assert "hint 2/3" in second and second != first
    code, third = run("hint", "kv_cache.kv_bytes_per_token", "--level", "3", "--submission", folder)
    assert "hint 3/3" in third
    progress = json.loads((folder / ".infergrade-progress.json").read_text())
    assert progress["hints"]["kv_cache.kv_bytes_per_token"] == 3


@pytest.mark.parametrize("args,words", [
    (["hint", "kv_cache.nope"], ["no hints for kv_cache.nope"]),
    (["hint", "nope"], ["expected TOPIC.FUNCTION"]),
    (["hint", "kv_cache.kv_bytes_per_token", "--level", "4"], ["--level", "4"]),  # click words the rest
    (["grade", "--seed", "-1"], ["--seed", "-1"]),
    (["grade", "--format", "xml"], ["--format", "xml"]),
])
def test_bad_arguments_are_named(args, words):
    code, output = run(*args)
    assert code == 2 and all(w in output for w in words)


@pytest.mark.parametrize("fmt", ["json", "gradescope", "junit"])
def test_control_characters_and_lone_surrogates_from_a_submission_break_no_format(tmp_path, fmt):
    source = KV + ("\n\ndef kv_bytes_per_token(config, dtype_bytes=2):\n"
                   "    raise ValueError('\\x1b[2J\\x00\\ud800 oops')\n")
    out = tmp_path / f"out.{fmt}"
    code, output = run("grade", "--submission", submission(tmp_path, source), "--topic", "kv_cache", "--seed", 1,
                       "--out", out, "--format", fmt)
    text = out.read_text(encoding="utf-8")
    assert code == 0 and "oops" in text and "\x1b" not in output + text and "\x00" not in text
    if fmt == "junit":
        ET.fromstring(text.encode("utf-8"))
    else:
        json.loads(text)


def test_verbose_check_shows_the_sandbox_reached(tmp_path):
    folder = submission(tmp_path, KV)
    code, output = run("check", "kv_cache", "--submission", folder, "--verbose")
    level = next(line for line in output.splitlines() if line.startswith("sandbox: "))
    assert code == 0 and level.endswith("rlimits")


def test_junit_totals_no_empty_misconception_and_stubs_as_failures(tmp_path):
    out = tmp_path / "stubs.xml"
    run("grade", "--submission", EXERCISES_DIR, "--topic", "kv_cache", "--seed", 1, "--out", out, "--format", "junit")
    root = ET.parse(out).getroot()
    cases = root.findall(".//testcase")
    assert int(root.get("tests")) == len(cases) > 0
    assert int(root.get("failures")) == len(cases) and root.get("errors") == "0"     # not started: failures
    assert all(case.find("failure") is not None and case.find("error") is None for case in cases)
    assert all(p.get("value") not in ("None", "") for p in root.iter("property"))
    assert not [p for p in root.iter("property") if p.get("name") == "misconception"]
    assert all("not implemented" in case.find("failure").get("message") for case in cases)


def test_a_bare_function_name_suggests_its_hint():
    code, output = run("hint", "top_p_filter")
    assert code == 2 and "infergrade hint sampling.top_p_filter" in output


def test_the_submission_is_found_from_anywhere_in_the_project(tmp_path, monkeypatch):
    """Like rustlings: inside exercises/ the working folder is the submission; below the project, exercises/
    is found above."""
    import subprocess
    import sys

    from grader.cli import _find_submission

    project = tmp_path / "project"
    (project / "exercises").mkdir(parents=True)
    (project / "notes" / "deep").mkdir(parents=True)
    (project / "exercises" / "kv_cache.py").write_text(KV)
    for folder in (project, project / "exercises"):
        folder.chmod(0o755)
    monkeypatch.chdir(project / "notes" / "deep")
    assert _find_submission(None, None, None) == project / "exercises"
    assert _find_submission(None, None, Path("mine")) == Path("mine")
    done = subprocess.run([sys.executable, "-m", "grader", "check", "kv_cache"], cwd=project / "exercises",
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (project / "exercises" / ".infergrade-progress.json").is_file()


def test_a_refused_hidden_grade_in_the_handout_writes_nothing(tmp_path, monkeypatch):
    from grader.instructor import handout

    monkeypatch.setattr(handout, "is_handout", lambda: True)
    folder = submission(tmp_path, KV)
    out = folder / "results.json"
    code, output = run("grade", "--hidden", "--submission", folder, "--out", out)
    assert code == 2 and "hidden checks are not in the student handout" in output and not out.exists()


def test_a_notebook_grades_the_topic_it_holds(tmp_path):
    import subprocess
    import sys

    from grader.learner.notebooks.build import write

    notebook = write("kv_cache", tmp_path)
    tmp_path.chmod(0o755)
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", notebook, "--out", out],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [t["id"] for t in json.loads(out.read_text())["topics"]] == ["kv_cache"]
    assert "score" in done.stdout  # the report goes to standard output, as check's does


def test_results_that_cannot_be_written_are_a_plain_error(tmp_path):
    import click

    from grader.cli import _write

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(click.UsageError) as caught:
        _write({"topics": []}, blocker / "results.json", "json")
    assert str(blocker / "results.json") in caught.value.message


def test_a_check_waiting_on_another_function_hints_at_the_function_to_write():
    """A top_p_filter check that stopped at filtered_probs' NotImplementedError points at filtered_probs' hints."""
    from grader.exporters.terminal import _topic_lines

    waiting = {"id": "sampling.top_p_pipeline", "status": "not_started", "function": "filtered_probs",
               "hint": "sampling.top_p_filter", "points": 2, "message": "", "title": "a pipeline"}
    topic = {"id": "sampling", "status": "completed", "message": "", "score": 0, "max_score": 2, "checks": [waiting]}
    (line,) = [line for line in _topic_lines(topic, False, set()) if "NOT STARTED" in line]
    assert "infergrade hint sampling.filtered_probs" in line and "top_p_filter" not in line


LEAVE = """
import atexit, sys
from grader.leaving import run_as_command
atexit.register(lambda: open(sys.argv[1], "w").write("ran"))
run_as_command(lambda: (print("said", end=""), sys.exit(sys.argv[2] if sys.argv[2] != "int" else 3)))
"""


@pytest.mark.parametrize("code, status", [("int", 3), ("a message", 1)])
def test_the_command_line_leaves_with_its_status_after_its_exit_handlers(tmp_path, code, status):
    """The command line skips the interpreter's teardown, never what the exit would have done: its exit handlers
    run, its output is flushed, and sys.exit's status is kept (a message is printed and gives 1)."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", LEAVE, str(tmp_path / "handler"), code], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == status and done.stdout == "said"
    assert (tmp_path / "handler").read_text() == "ran"
    assert (code == "a message") == ("a message" in done.stderr)


def test_the_command_line_collects_no_garbage_until_its_checks_start():
    """Imports run without garbage collection; `collection.resume` freezes what they made and collects again."""
    import subprocess

    probe = ("import gc\nfrom grader import collection\nfrom grader.leaving import run_as_command\n"
             "def main():\n    print(gc.isenabled(), gc.get_freeze_count() > 0)\n    collection.resume()\n"
             "    print(gc.isenabled(), gc.get_freeze_count() > 0)\nrun_as_command(main)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.split("\n")[:2] == ["False False", "True True"], done
