"""The figures the serving notebook's prose and the lesson's docstring state are the reference's: the notebook's
experiments run in order on the reference, figures drawn off screen, and each stated figure is recomputed."""
import pytest
from notebook_run import prose, run_experiments

from grader.checks.serving import lesson
from reference import serving as ref


@pytest.fixture(scope="module")
def experiments() -> list:
    """The serving notebook's experiments, run on the reference."""
    return run_experiments("serving")


def test_the_itl_rise_is_stated_as_prefill_stalls_with_the_references_figures(experiments):
    text, names = experiments[0]
    itl, free, tpot, seats = names["itl"], names["itl_free"], names["tpot"], names["seats"]
    assert (seats[0], seats[-1]) == (1, 64) and "between 1 and 64 seats" in text
    assert f"ITL p99 rises only from {free[0]:.3f} to {free[-1]:.3f} s" in text
    assert f"(to {itl[-1]:.3f} s, about seven times)" in text and round(itl[-1] / itl[0]) == 7
    assert f"{tpot[0]:.3f} to {tpot[-1]:.3f} s" in text
    # the claims: the batch alone adds little, the stalls add most, TPOT sits between the two
    assert free[-1] < 1.6 * free[0] and itl[-1] > 4 * free[-1] and free[-1] < tpot[-1] < itl[-1]
    # under static batching nobody streams while a newcomer prefills: its ITL p99 is the batch's cost alone
    assert names["static_itl"][-1] < 0.5 * itl[-1]


def test_chunked_prefill_delays_the_short_chats_with_the_references_figures(experiments):
    text, names = experiments[3]
    chat, budgets = names["chat_ttft"], names["budgets"]
    whole, chunked = chat[budgets.index(None)], chat[budgets.index(2048)]
    assert f"rises from {whole:.2f} s without a budget to {chunked:.2f} s at 2,048 tokens" in text
    assert f"rises from {whole:.2f} to {chunked:.2f} s" in prose(lesson.__doc__)
    assert chunked > 1.1 * whole
    # not only because chats that timed out without a budget now complete: over the chats that complete in both
    runs = [{r["id"]: r for r in ref.simulate(lesson.lesson_requests(), "continuous", lesson.CHUNK_SEATS,
                                             lesson.COST, max_num_batched_tokens=budget)} for budget in (None, 2048)]
    both = [key for key, r in runs[0].items()
            if key.startswith("chat-") and r["status"] == runs[1][key]["status"] == "ok"]
    common = [ref.serving_metrics([run[key] for key in both], lesson.SPAN)["ttft"]["p99"] for run in runs]
    assert f"({common[0]:.2f} to {common[1]:.2f} s over the chats that complete in both runs)" in prose(lesson.__doc__)
    assert common[1] > 1.1 * common[0]


def test_the_censored_p99_is_called_a_lower_bound_where_it_is_taught(experiments):
    text, names = experiments[1]
    assert "lower bound" in text and "lower bound" in prose(lesson.__doc__)
    assert names["censored"][0] > 3 * names["completed"][0]  # 4 seats: the timed-out waits dominate the tail
