"""A class report from a folder of results: the misconceptions a class shares first, then who could not be
graded, scores, pass rates, each student's misconceptions and grading time, as one self-contained HTML file
(figures embedded as PNG). The anonymous version leaves out every name, for sharing."""
from __future__ import annotations

import base64
import html
import io
import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from grader import hints, topics as topic_registry
from grader.instructor.batch import MANIFEST
from grader.text import printable

FAILED = ("failed", "error", "timeout")  # a check that ran and did not pass


@dataclass(frozen=True)
class Shared:
    """A misconception and the students who showed it on at least one check."""
    topic: str
    misconception: str
    students: int
    graded: int
    hint: str | None

    @property
    def share(self) -> float:
        return self.students / self.graded


def load(folder: Path) -> dict[str, dict]:
    """Every results document in `folder` by file stem (other JSON files and unreadable ones are left out)."""
    docs = {}
    for path in sorted(folder.glob("*.json")):
        if path.name == MANIFEST:
            continue
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and "topics" in doc and "score" in doc:
            docs[path.stem] = doc
    return docs


def shared_misconceptions(docs: dict[str, dict]) -> list[Shared]:
    """Misconceptions by the share of students graded on their topic who showed them, largest first."""
    graded, showed, hint_of = Counter(), defaultdict(set), {}
    for name, doc in docs.items():
        for topic in doc["topics"]:
            if topic["checks"]:
                graded[topic["id"]] += 1
            for c in topic["checks"]:
                if c["misconception"] and c["status"] != "passed":
                    showed[(topic["id"], c["misconception"])].add(name)
                    hint_of.setdefault((topic["id"], c["misconception"]), c.get("hint"))
    found = [Shared(t, m, len(who), graded[t], hint_of[(t, m)]) for (t, m), who in showed.items()]
    return sorted(found, key=lambda s: (-s.share, -s.students, s.topic, s.misconception))


@dataclass(frozen=True)
class CheckRate:
    """How the class did on one check: passed, ran and did not pass, not started (a stub), and the rest."""
    id: str
    title: str
    passed: int
    failed: int
    not_started: int
    students: int


def pass_rates(docs: dict[str, dict]) -> list[CheckRate]:
    """Every check's outcomes over the class, the most failed first (not started counts apart from failed)."""
    seen: dict[str, list] = {}
    for doc in docs.values():
        for topic in doc["topics"]:
            for c in topic["checks"]:
                entry = seen.setdefault(c["id"], [c["title"], 0, 0, 0, 0])
                entry[1] += c["status"] == "passed"
                entry[2] += c["status"] in FAILED
                entry[3] += c["status"] == "not_started"
                entry[4] += 1
    rates = [CheckRate(cid, *counts) for cid, counts in seen.items()]
    return sorted(rates, key=lambda r: (-r.failed, -r.failed / r.students, r.passed / r.students, r.id))


def ungradable(docs: dict[str, dict]) -> list[tuple[str, str, str]]:
    """(student, status, why) for every submission whose grading did not complete."""
    return [(name, doc["status"], doc["error"] or "") for name, doc in sorted(docs.items())
            if doc["status"] != "completed"]


def misconceptions_by_student(docs: dict[str, dict]) -> dict[str, list[str]]:
    """Each student's misconceptions, as `topic: id`, in course order (instructor-only: it names them)."""
    found = {}
    for name, doc in sorted(docs.items()):
        shown = {(t["id"], c["misconception"]) for t in doc["topics"] for c in t["checks"]
                 if c["misconception"] and c["status"] != "passed"}
        if shown:
            found[name] = [f"{t}: {m}" for t, m in sorted(shown, key=lambda tm: (_course_rank(tm[0]), tm[1]))]
    return found


def summary(docs: dict[str, dict]) -> str:
    """How many submissions, the median score of those graded in full (an even count's is the mean of the middle two),
    and who that median leaves out."""
    graded = [100 * d["score"] / d["max_score"] for d in docs.values()
              if d["status"] == "completed" and d["max_score"] > 0]
    median = (f"median score {statistics.median(graded):.1f}% over the {len(graded)} graded in full"
              if graded else "no submission was graded in full")
    left_out = len(docs) - len(graded)
    return f"{len(docs)} submissions; {median}" + (f"; {left_out} left out of it: they could not be graded fully "
                                                   f"(listed below)" if left_out else "")


def heading(docs: dict[str, dict]) -> str:
    """What the report is of: the topics, mode, seed, grading dates and grader version its results record."""
    def listed(values) -> str:
        return " and ".join(str(v) for v in sorted(set(values), key=str)) or "none"

    topics = {t["id"] for d in docs.values() for t in d["topics"]}
    dates = sorted({d["started_at"][:10] for d in docs.values()})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "never"
    return (f"{', '.join(sorted(topics, key=_course_rank)) or 'no topic'}; {listed(d['mode'] for d in docs.values())}"
            f" mode; seed {listed(d['seed'] for d in docs.values())}; graded {when}; infergrade "
            f"{listed(d['tool']['version'] for d in docs.values())}")


def seeds(docs: dict[str, dict]) -> Counter:
    """How many submissions were graded with each seed (a class is graded with one)."""
    return Counter(doc["seed"] for doc in docs.values())


def _course_rank(topic: str) -> tuple[int, str]:
    order = topic_registry.all_topics()
    return (order.index(topic) if topic in order else len(order), topic)


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode()


def score_histograms(docs: dict[str, dict]) -> str:
    """One histogram of scores (as % of the maximum) per topic, as a base64 PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    by_topic = defaultdict(list)
    for doc in docs.values():
        for topic in doc["topics"]:
            if topic["max_score"] > 0:
                by_topic[topic["id"]].append(100 * topic["score"] / topic["max_score"])
    topics = sorted(by_topic, key=_course_rank)
    columns = min(4, max(1, len(topics)))
    rows = max(1, -(-len(topics) // columns))
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.4 * rows), squeeze=False)
    for ax, topic in zip(axes.flat, topics):
        ax.hist(by_topic[topic], bins=range(0, 101, 10), color="#3b6ea8", edgecolor="white")
        ax.set_title(f"{topic} (n={len(by_topic[topic])})", fontsize=9)
        ax.set_xlabel("score, % of the topic's maximum", fontsize=8)
        ax.set_ylabel("students", fontsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # students are counted in whole ones
    for ax in list(axes.flat)[len(topics):]:
        ax.axis("off")
    fig.suptitle("Scores per topic, in course order")
    fig.tight_layout()
    png = _png(fig)
    plt.close(fig)
    return png


def grading_times(docs: dict[str, dict]) -> str:
    """Grading seconds per submission and per topic (of the completed gradings only), as a base64 PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    graded = [doc for doc in docs.values() if doc["status"] == "completed"]  # an error's time means nothing
    per_topic = defaultdict(list)
    for doc in graded:
        for topic in doc["topics"]:
            per_topic[topic["id"]].append(topic["duration_s"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 2.8))
    left.hist([doc["duration_s"] for doc in graded], bins=20, color="#6a8f3b", edgecolor="white")
    left.set_title(f"Time to grade one submission (n={len(graded)})", fontsize=10)
    left.set_xlabel("seconds")
    left.set_ylabel("submissions")
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    names = sorted(per_topic, key=_course_rank, reverse=True)  # the first topic of the course on top
    right.boxplot([per_topic[t] for t in names], vert=False)
    right.set_yticks(range(1, len(names) + 1), names, fontsize=8)
    right.set_title("Time per topic, in course order", fontsize=10)
    right.set_xlabel("seconds")
    fig.tight_layout()
    png = _png(fig)
    plt.close(fig)
    return png


def headline(shared: list[Shared]) -> str:
    """The first thing an instructor reads: the misconception the largest share of the class showed."""
    if not shared:
        return "No misconception was detected in this class."
    top = shared[0]
    what = _explanation(top)
    return (f"{round(100 * top.share)}% of the class ({top.students} of {top.graded}) showed "
            f"{top.topic}: {top.misconception} — {what}")


def _explanation(s: Shared) -> str:
    text = (hints.explain(s.topic, s.misconception) or "").strip()
    return text.split("\n\n")[0] if text else "(no explanation written)"


def seed_warning(docs: dict[str, dict]) -> str | None:
    """A warning when the results were graded with more than one seed, else None."""
    counts = seeds(docs)
    if len(counts) < 2:
        return None
    listed = ", ".join(f"{seed} ({n} submissions)" for seed, n in counts.most_common())
    return (f"these results mix seeds: {listed}. A class is graded with one seed: regrade it into a new folder "
            f"with one --seed")


def _html(text: str) -> str:
    """`text` as HTML shows it as it is stored: names and reasons come from uploads (`text.printable`)."""
    return html.escape(printable(text))


SHOWN_PAIRS = 10  # the most similar modules the report shows side by side


def similar_section(pairs: list, anonymous: bool) -> str:
    """The modules most like another, flagged first, with the matching lines of both side by side (the canonical
    form the comparison reads: docstrings dropped, every name `v`); names left out when anonymous."""
    from grader.instructor.similarity import FLAG

    e = _html
    top = sorted((p for p in pairs if p.match.share > 0), key=lambda p: (-p.match.share, p.topic, p.student))
    flagged = sum(p.match.flagged for p in pairs)
    said = (f"<p>{flagged} module{'' if flagged == 1 else 's'} at or above {FLAG:.0%}: a share of the student's code "
            f"(after the stub's text, names and layout are set aside) found in one other module. It flags for a "
            f"closer look; it changes no score.</p>")
    if anonymous:
        return said + "<p>The pairs are left out of this shareable report: they would name students.</p>"
    rows = "".join(
        f"<tr><td>{p.match.share:.0%}{' (flagged)' if p.match.flagged else ''}</td><td>{e(p.topic)}</td>"
        f"<td>{e(p.student)}</td><td>{e(('the shipped ' if p.shipped else '') + p.other)}</td>"
        f"<td><pre>{e(chr(10).join(p.match.mine))}</pre></td><td><pre>{e(chr(10).join(p.match.theirs))}</pre></td>"
        f"</tr>" for p in top[:SHOWN_PAIRS])
    return (said + '<table id="similarity"><tr><th>share</th><th>topic</th><th>student</th><th>found in</th>'
            f"<th>the student's matching lines</th><th>the other's</th></tr>{rows}</table>")


def render(docs: dict[str, dict], anonymous: bool = False, pairs: list | None = None) -> str:
    """The whole report as one HTML page; `anonymous` leaves out every student's name, for sharing; `pairs` are
    the class's similarity pairs (`similarity.class_pairs`)."""
    shared = shared_misconceptions(docs)
    e = _html
    rows = "".join(
        f"<tr><td>{round(100 * s.share)}%</td><td>{s.students} / {s.graded}</td><td>{e(s.topic)}</td>"
        f"<td><code>{e(s.misconception)}</code></td><td>{e(_explanation(s))}</td>"
        f"<td>{f'<code>infergrade hint {e(s.hint)}</code>' if s.hint else ''}</td></tr>" for s in shared)
    checks = "".join(f"<tr><td>{r.failed}</td><td>{r.not_started}</td><td>{r.passed}</td><td>{r.students}</td>"
                     f"<td><code>{e(r.id)}</code></td><td>{e(r.title)}</td></tr>" for r in pass_rates(docs))
    lost = ungradable(docs)
    warning = seed_warning(docs)
    if anonymous:
        lost_section = f"<p>{len(lost)} submissions (names and reasons are left out of this shareable report).</p>"
        students_section = "<p>Left out of this shareable report: it would name students.</p>"
    else:
        lost_section = ('<table id="ungradable"><tr><th>student</th><th>status</th><th>why</th></tr>'
                        + "".join(f"<tr><td>{e(n)}</td><td>{e(st)}</td><td>{e(why)}</td></tr>" for n, st, why in lost)
                        + "</table>")
        students_section = ('<table id="students"><tr><th>student</th><th>misconceptions shown</th></tr>'
                            + "".join(f"<tr><td>{e(n)}</td><td>{'<br>'.join(f'<code>{e(m)}</code>' for m in ms)}"
                                      f"</td></tr>" for n, ms in misconceptions_by_student(docs).items())
                            + "</table>")
    figure = '<img alt="{alt}" src="data:image/png;base64,{png}" onload="this.dataset.rendered=this.naturalWidth">'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>infergrade class report{' (anonymous)' if anonymous else ''}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }}
#headline {{ font-size: 1.5em; background: #fff4d6; border-left: 6px solid #e0a100; padding: 0.8em 1em; }}
#warning {{ background: #fde2e1; border-left: 6px solid #c62828; padding: 0.5em 1em; }}
table {{ border-collapse: collapse; width: 100%; font-size: 0.9em; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }}
pre {{ margin: 0; font-size: 0.85em; white-space: pre-wrap; }}
</style></head><body>
<h1>Class report</h1>
<p id="heading">{e(heading(docs))}</p>
<p id="headline">{e(headline(shared))}</p>
{f'<p id="warning">{e(warning)}</p>' if warning else ''}
<p id="summary">{e(summary(docs))}</p>
<h2>Misconceptions the class shares</h2>
<table id="misconceptions"><tr><th>share</th><th>students</th><th>topic</th><th>misconception</th>
<th>what it means</th><th>hint</th></tr>{rows}</table>
<h2>Could not be graded</h2>
{lost_section}
<h2>Scores per topic</h2>
{figure.format(alt="score histograms per topic", png=score_histograms(docs))}
<h2>Outcomes per check (most failed first)</h2>
<table id="checks"><tr><th>failed</th><th>not started</th><th>passed</th><th>students</th><th>check</th>
<th>what it checks</th></tr>{checks}</table>
<h2>Misconceptions per student</h2>
{students_section}
<h2>Similar code</h2>
{similar_section(pairs or [], anonymous)}
<h2>Grading time (completed gradings)</h2>
{figure.format(alt="grading time per submission and per topic", png=grading_times(docs))}
</body></html>
"""
