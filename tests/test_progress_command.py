"""`infergrade progress`: every topic's functions as not started, failing or passing, from the progress file."""
from click.testing import CliRunner

from grader import progress, topics
from grader.cli import main
from grader.learner.overview import states


def _doc(checks):
    return {"topics": [{"checks": [{"id": i, "status": s, "hint": h} for i, s, h in checks]}]}


def test_functions_take_the_state_of_their_recorded_checks(tmp_path):
    progress.record_checks(tmp_path, _doc([
        ("sampling.a", "passed", "sampling.apply_temperature"),
        ("sampling.b", "passed", "sampling.top_k_filter"), ("sampling.c", "failed", "sampling.top_k_filter"),
        ("sampling.d", "not_started", "sampling.top_p_filter")]))
    progress.record_hint(tmp_path, "sampling.top_k_filter", 2)
    table = states(tmp_path)
    assert set(table) == set(topics.all_topics())
    assert table["sampling"]["apply_temperature"] == "passing"
    assert table["sampling"]["top_k_filter"] == "failing"
    assert table["sampling"]["top_p_filter"] == "not started"
    assert set(table["decoding"].values()) == {"not started"}
    result = CliRunner().invoke(main, ["progress", "--submission", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0
    assert "sampling.top_k_filter" in result.output and "2/3" in result.output


def test_a_method_check_counts_for_its_class(tmp_path):
    progress.record_checks(tmp_path, _doc([("paged_kv.x", "passed", "paged_kv.BlockAllocator.append")]))
    assert states(tmp_path)["paged_kv"]["BlockAllocator"] == "passing"


def test_a_hostile_progress_file_reads_as_no_progress(tmp_path):
    progress.path_for(tmp_path).write_text('{"checks": {"sampling.a": {"passed": "yes", "function": 3}}, '
                                           '"hints": {"x": 9}}')
    assert set(states(tmp_path)["sampling"].values()) == {"not started"}
    assert CliRunner().invoke(main, ["progress", "--submission", str(tmp_path)]).exit_code == 0


def test_a_check_waiting_for_another_stub_blames_neither_function(tmp_path):
    progress.record_checks(tmp_path, {"topics": [{"checks": [
        {"id": "sampling.a", "status": "passed", "hint": "sampling.apply_temperature", "function": None},
        {"id": "sampling.b", "status": "not_started", "hint": "sampling.apply_temperature",
         "function": "filtered_probs"},
        {"id": "sampling.c", "status": "not_started", "hint": "sampling.top_k_filter", "function": "filtered_probs"},
        {"id": "sampling.d", "status": "not_started", "hint": "sampling.filtered_probs",
         "function": "filtered_probs"}]}]})
    table = states(tmp_path)["sampling"]
    assert (table["apply_temperature"], table["top_k_filter"], table["filtered_probs"]) == \
        ("blocked", "blocked", "not started")  # apply_temperature's other check can run only once it is written


def test_progress_after_a_check_with_a_stubbed_helper(tmp_path):
    """A real `check` then `progress`: the function whose check also calls a stubbed one is not sent back to."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    source = (Path(__file__).parent.parent / "solutions" / "sampling.py").read_text()
    stubbed = re.sub(r"(def filtered_probs\([^)]*\)[^:]*:\n)", r'\1    raise NotImplementedError\n', source, count=1)
    assert stubbed != source
    (tmp_path / "sampling.py").write_text(stubbed)
    tmp_path.chmod(0o755)
    run = [sys.executable, "-m", "grader"]
    checked = subprocess.run([*run, "check", "sampling", "--submission", str(tmp_path)], capture_output=True,
                             text=True, timeout=300)
    assert checked.returncode == 1, checked.stderr
    shown = subprocess.run([*run, "progress", "--submission", str(tmp_path)], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[1]: line for line in shown.stdout.splitlines() if line.startswith("    ")}
    assert "waits for filtered_probs" in lines["apply_temperature"] and "not started" in lines["filtered_probs"]
    assert "next:" in shown.stdout and "sampling.filtered_probs" in shown.stdout.split("next:")[1]
