"""The class report's figures and sentences from hand-made results: the median of an even class, who it leaves out,
the heading that says what was graded, and whole-number counts on the histograms' axes."""
import pytest

from grader.instructor import report


def document(score: float, status: str = "completed", seed: int = 3, day: str = "2026-12-01",
             seconds: float = 2.0) -> dict:
    """A results document with the fields the report reads: one topic of 100 points."""
    return {"status": status, "score": score if status == "completed" else 0, "max_score": 100, "seed": seed,
            "mode": "hidden", "tool": {"name": "infergrade", "version": "0.1.0"}, "error": None if status ==
            "completed" else "bad input: no topic module", "started_at": f"{day}T10:00:00+00:00", "duration_s": seconds,
            "topics": [{"id": "kv_cache", "score": score if status == "completed" else 0, "max_score": 100,
                        "duration_s": 1.5, "checks": []}]}


def test_the_median_of_an_even_class_and_who_it_leaves_out():
    docs = {"a": document(100), "b": document(100), "c": document(75), "d": document(50), "e": document(0, "error")}
    said = report.summary(docs)
    assert "5 submissions" in said and "87.5%" in said and "over the 4 graded in full" in said
    assert "1 left out" in said
    assert "left out" not in report.summary({k: docs[k] for k in "abc"}) and "100.0%" in \
        report.summary({k: docs[k] for k in "abc"})


def test_the_heading_names_topics_mode_seed_dates_and_version():
    said = report.heading({"a": document(10, day="2026-12-01"), "b": document(20, day="2026-12-03")})
    for part in ("kv_cache", "hidden mode", "seed 3", "2026-12-01 to 2026-12-03", "infergrade 0.1.0"):
        assert part in said, said
    assert "seed 3 and 4" in report.heading({"a": document(1), "b": document(2, seed=4)})


@pytest.mark.parametrize("draw", [report.score_histograms, report.grading_times])
def test_histograms_count_in_whole_numbers(monkeypatch, draw):
    """One submission in each bar: ticks at 0 and 1, never at 0.2."""
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    draw({"a": document(10, seconds=1), "b": document(50, seconds=5), "c": document(90, seconds=9)})
    counted = figures[0].axes[0]
    ticks = [t for t in counted.get_yticks() if counted.get_ylim()[0] <= t <= counted.get_ylim()[1]]
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks


def test_the_similar_code_section_shows_the_pairs_side_by_side_and_names_no_one_when_anonymous():
    from grader.instructor import similarity
    from grader.instructor.selftest import EXERCISES_DIR, SOLUTIONS_DIR

    solution = (SOLUTIONS_DIR / "kv_cache.py").read_text()
    pairs = similarity.topic_pairs("kv_cache", {"ann": solution, "bo<b>": "def f(x):\n    return x\n"},
                                   {"solutions": solution}, (EXERCISES_DIR / "kv_cache.py").read_text())
    page = report.render({"ann": document(100)}, pairs=pairs)
    section = page.split("<h2>Similar code</h2>")[1]
    assert "1 module at or above 70%" in section and "(flagged)" in section and "the shipped solutions" in section
    assert section.count("<pre>") >= 2 and "bo<b>" not in page                  # names are escaped
    anonymous = report.render({"ann": document(100)}, anonymous=True, pairs=pairs).split("<h2>Similar code</h2>")[1]
    assert "1 module at or above 70%" in anonymous and "ann" not in anonymous and "<pre>" not in anonymous
