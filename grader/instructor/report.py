"""A class report from a folder of results: the misconceptions a class shares first, then who could not be
graded, scores, pass rates, each student's misconceptions and grading time, as one self-contained HTML file
(figures embedded as PNG). The anonymous version leaves out every name, for sharing. Its fixed text is said in this
run's language (`language.tr`; `report --lang zh`): names, ids and numbers are the same in every language."""
from __future__ import annotations

import base64
import functools
import html
import io
import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from grader import hints, language, topics as topic_registry
from grader.instructor.batch import MANIFEST
from grader.language import tr
from grader.text import printable
from grader.wording import count

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
    median = (tr("median score {median}% over the {graded} graded in full", median=f"{statistics.median(graded):.1f}",
                 graded=len(graded)) if graded else tr("no submission was graded in full"))
    left_out = len(docs) - len(graded)
    if not left_out:
        return tr("{submissions} submissions; {median}", submissions=len(docs), median=median)
    return tr("{submissions} submissions; {median}; {left_out} left out of it: they could not be graded fully (listed "
              "below)", submissions=len(docs), median=median, left_out=left_out)


def heading(docs: dict[str, dict]) -> str:
    """What the report is of: the topics, mode, seed, grading dates and grader version its results record."""
    def listed(values) -> str:
        return tr(" and ").join(str(v) for v in sorted(set(values), key=str)) or tr("none")

    topics = {t["id"] for d in docs.values() for t in d["topics"]}
    dates = sorted({d["started_at"][:10] for d in docs.values()})
    when = dates[0] if len(dates) == 1 else tr("{first} to {last}", first=dates[0], last=dates[-1]) if dates else \
        tr("never")
    return tr("{topics}; {modes} mode; seed {seeds}; graded {when}; infergrade {versions}",
              topics=_enumerated(sorted(topics, key=_course_rank)) or tr("no topic"),
              modes=listed(d["mode"] for d in docs.values()), seeds=listed(d["seed"] for d in docs.values()),
              when=when, versions=listed(d["tool"]["version"] for d in docs.values()))


def seeds(docs: dict[str, dict]) -> Counter:
    """How many submissions were graded with each seed (a class is graded with one)."""
    return Counter(doc["seed"] for doc in docs.values())


def _enumerated(items) -> str:
    """`items` as a list in a sentence: 'a, b, c' ('a、b、c' in Chinese); empty for none."""
    items = list(items)
    return functools.reduce(lambda earlier, later: tr("{earlier}, {later}", earlier=earlier, later=later), items) \
        if items else ""


def _course_rank(topic: str) -> tuple[int, str]:
    order = topic_registry.all_topics()
    return (order.index(topic) if topic in order else len(order), topic)


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode()


def _in_this_language(draw):
    """`draw` (one of the figures) with matplotlib's settings for this run's language: in Chinese, a font with CJK
    glyphs after the default one (learner/notebooks/fonts.py), where one is installed."""
    @functools.wraps(draw)
    def drawn(docs: dict[str, dict]) -> str:
        import matplotlib

        font = None
        if language.current() != "en":
            from grader.learner.notebooks.fonts import cjk_font

            font = cjk_font()
        with matplotlib.rc_context({"font.family": [*matplotlib.rcParams["font.family"], font]} if font else None):
            return draw(docs)
    return drawn


@_in_this_language
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
        ax.set_xlabel(tr("score, % of the topic's maximum"), fontsize=8)
        ax.set_ylabel(tr("students"), fontsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # students are counted in whole ones
    for ax in list(axes.flat)[len(topics):]:
        ax.axis("off")
    fig.suptitle(tr("Scores per topic, in course order"))
    fig.tight_layout()
    png = _png(fig)
    plt.close(fig)
    return png


@_in_this_language
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
    left.set_title(tr("Time to grade one submission (n={n})", n=len(graded)), fontsize=10)
    left.set_xlabel(tr("seconds"))
    left.set_ylabel(tr("submissions"))
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    names = sorted(per_topic, key=_course_rank, reverse=True)  # the first topic of the course on top
    right.boxplot([per_topic[t] for t in names], vert=False)
    right.set_yticks(range(1, len(names) + 1), names, fontsize=8)
    right.set_title(tr("Time per topic, in course order"), fontsize=10)
    right.set_xlabel(tr("seconds"))
    fig.tight_layout()
    png = _png(fig)
    plt.close(fig)
    return png


def headline(shared: list[Shared]) -> str:
    """The first thing an instructor reads: the misconception the largest share of the class showed."""
    if not shared:
        return tr("No misconception was detected in this class.")
    top = shared[0]
    return tr("{share}% of the class ({students} of {graded}) showed {topic}: {misconception} — {what}",
              share=round(100 * top.share), students=top.students, graded=top.graded, topic=top.topic,
              misconception=top.misconception, what=_explanation(top))


def _explanation(s: Shared) -> str:
    text = (hints.explain(s.topic, s.misconception) or "").strip()
    return text.split("\n\n")[0] if text else tr("(no explanation written)")


def seed_warning(docs: dict[str, dict]) -> str | None:
    """A warning when the results were graded with more than one seed, else None."""
    counts = seeds(docs)
    if len(counts) < 2:
        return None
    listed = _enumerated(tr("{seed} ({n} submissions)", seed=seed, n=n) for seed, n in counts.most_common())
    return tr("these results mix seeds: {listed}. A class is graded with one seed: regrade it into a new folder with "
              "one --seed", listed=listed)


def _html(text: str) -> str:
    """`text` as HTML shows it as it is stored: names and reasons come from uploads (`text.printable`)."""
    return html.escape(printable(text))


SHOWN_PAIRS = 10  # the most similar modules the report shows side by side
HTML_LANG = {"zh": "zh-CN"}  # the page's lang attribute, where it is not the language's own code


def _title(rate: CheckRate) -> str:
    """A check's title in this run's language (results graded in another language carry that one's)."""
    topic, _, name = rate.id.partition(".")
    return language.topic_text(topic, "titles", name, rate.title)


def similar_section(pairs: list, anonymous: bool) -> str:
    """The modules most like another, flagged first, with the matching lines of both side by side (the canonical
    form the comparison reads: docstrings dropped, every name `v`); names left out when anonymous."""
    from grader.instructor.similarity import FLAG

    e = _html
    top = sorted((p for p in pairs if p.match.share > 0), key=lambda p: (-p.match.share, p.topic, p.student))
    flagged = sum(p.match.flagged for p in pairs)
    said = "<p>" + tr("{modules} at or above {flag}: a share of the student's code (after the stub's text, names and "
                      "layout are set aside) found in one other module. It flags for a closer look; it changes no "
                      "score.", modules=count(flagged, "module"), flag=f"{FLAG:.0%}") + "</p>"
    if anonymous:
        return said + f"<p>{tr('The pairs are left out of this shareable report: they would name students.')}</p>"
    rows = "".join(
        f"<tr><td>{p.match.share:.0%}{tr(' (flagged)') if p.match.flagged else ''}</td><td>{e(p.topic)}</td>"
        f"<td>{e(p.student)}</td><td>{e(tr('the shipped {other}', other=p.other) if p.shipped else p.other)}</td>"
        f"<td><pre>{e(chr(10).join(p.match.mine))}</pre></td><td><pre>{e(chr(10).join(p.match.theirs))}</pre></td>"
        f"</tr>" for p in top[:SHOWN_PAIRS])
    heads = _th("share", "topic", "student", "found in", "the student's matching lines", "the other's")
    return said + f'<table id="similarity"><tr>{heads}</tr>{rows}</table>'


def _th(*names: str) -> str:
    """Column heads, each said in this run's language."""
    return "".join(f"<th>{html.escape(tr(name), quote=False)}</th>" for name in names)


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
                     f"<td><code>{e(r.id)}</code></td><td>{e(_title(r))}</td></tr>" for r in pass_rates(docs))
    lost = ungradable(docs)
    warning = seed_warning(docs)
    if anonymous:
        lost_section = "<p>" + tr("{submissions} submissions (names and reasons are left out of this shareable "
                                  "report).", submissions=len(lost)) + "</p>"
        students_section = f"<p>{tr('Left out of this shareable report: it would name students.')}</p>"
    else:
        lost_section = (f'<table id="ungradable"><tr>{_th("student", "status", "why")}</tr>'
                        + "".join(f"<tr><td>{e(n)}</td><td>{e(st)}</td><td>{e(why)}</td></tr>" for n, st, why in lost)
                        + "</table>")
        students_section = (f'<table id="students"><tr>{_th("student", "misconceptions shown")}</tr>'
                            + "".join(f"<tr><td>{e(n)}</td><td>{'<br>'.join(f'<code>{e(m)}</code>' for m in ms)}"
                                      f"</td></tr>" for n, ms in misconceptions_by_student(docs).items())
                            + "</table>")
    figure = '<img alt="{alt}" src="data:image/png;base64,{png}" onload="this.dataset.rendered=this.naturalWidth">'
    return f"""<!doctype html>
<html lang="{HTML_LANG.get(language.current(), language.current())}"><head><meta charset="utf-8"><title>\
{e(tr("infergrade class report"))}{e(tr(" (anonymous)")) if anonymous else ''}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }}
#headline {{ font-size: 1.5em; background: #fff4d6; border-left: 6px solid #e0a100; padding: 0.8em 1em; }}
#warning {{ background: #fde2e1; border-left: 6px solid #c62828; padding: 0.5em 1em; }}
table {{ border-collapse: collapse; width: 100%; font-size: 0.9em; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }}
pre {{ margin: 0; font-size: 0.85em; white-space: pre-wrap; }}
</style></head><body>
<h1>{e(tr("Class report"))}</h1>
<p id="heading">{e(heading(docs))}</p>
<p id="headline">{e(headline(shared))}</p>
{f'<p id="warning">{e(warning)}</p>' if warning else ''}
<p id="summary">{e(summary(docs))}</p>
<h2>{e(tr("Misconceptions the class shares"))}</h2>
<table id="misconceptions"><tr>{_th("share", "students", "topic", "misconception")}
{_th("what it means", "hint")}</tr>{rows}</table>
<h2>{e(tr("Could not be graded"))}</h2>
{lost_section}
<h2>{e(tr("Scores per topic"))}</h2>
{figure.format(alt=e(tr("score histograms per topic")), png=score_histograms(docs))}
<h2>{e(tr("Outcomes per check (most failed first)"))}</h2>
<table id="checks"><tr>{_th("failed", "not started", "passed", "students", "check")}
{_th("what it checks")}</tr>{checks}</table>
<h2>{e(tr("Misconceptions per student"))}</h2>
{students_section}
<h2>{e(tr("Similar code"))}</h2>
{similar_section(pairs or [], anonymous)}
<h2>{e(tr("Grading time (completed gradings)"))}</h2>
{figure.format(alt=e(tr("grading time per submission and per topic")), png=grading_times(docs))}
</body></html>
"""
