"""`infergrade progress`: every topic's functions as not started, failing or passing, from the progress file."""
from click.testing import CliRunner

from grader import progress, topics
from grader.cli import main
from grader.overview import states


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
