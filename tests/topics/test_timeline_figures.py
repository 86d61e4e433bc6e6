"""The figures the timeline notebook's closing paragraph states are the reference's: the notebook's sessions run on
the reference, and the share each saves with the prefix cache is recomputed."""
from notebook_run import prose, run_experiments

from grader.learner.notebooks.topics import timeline as notebook
from reference import timeline as ref


def test_the_prefix_cache_saves_very_different_shares_of_the_three_sessions():
    _, names = run_experiments("timeline")[0]
    saved = {}
    for name, events in names["sessions"].items():
        cached, uncached = (ref.session_timeline(names["model"], names["hw"], events, prefix_cache=cache)["total"]
                            for cache in (True, False))
        saved[name] = 1 - cached / uncached
    assert saved["long input, short output"] == saved["short input, long output"] == 0.0  # one call: nothing to reuse
    closing = prose(notebook.CLOSING)
    assert f"saves about {round(100 * saved['frequent tool calls'])}% of the tool-heavy session" in closing
    assert "nothing of the two single-call sessions" in closing
