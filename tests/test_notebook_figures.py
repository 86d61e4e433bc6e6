"""Every figure of every topic's notebook, drawn off screen with the solutions as "yours" beside the reference (and
with the reference alone), read back from matplotlib after a draw: legend entries can be told apart and look like
what is drawn, texts stay inside their axes and off hatching, titles are sentences, and the learner's curves are
labelled "yours" wherever the reference is drawn beside them, never where it is not."""
import importlib
import re
from unittest import mock

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display in a test
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import Collection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.container import BarContainer, Container  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from grader import topics  # noqa: E402

DPI = 72  # the inline backend's
EDGE_PX = 1.0  # a text may touch its axes' frame, not cross it
MIN_VISIBLE = 0.5  # the share of a labelled line's own pixels that must still show it in the finished figure
YOURS = re.compile(r"\byours?\b", re.IGNORECASE)
REFERENCE = re.compile(r"\breference", re.IGNORECASE)


def is_sentence(title: str) -> bool:
    """A title states its point as a sentence: a capital first, a period last, and at least three words of two or
    more letters between ("lengths [11, 6, 4, 8]" is a list, not a sentence; neither is "goodput")."""
    text = " ".join(title.split())
    return text[:1].isupper() and text.endswith(".") and len(re.findall(r"[A-Za-z]{2,}", text)) >= 3


@pytest.mark.parametrize(("title", "sentence"), [
    ("Past 16 seats the server waits for requests.", True), ("lengths [11, 6, 4, 8]", False),
    ("goodput", False), ("Goodput.", False), ("the tail with and without the requests that gave up", False),
    ("Top-p 0.8: your top_p_filter keeps 2 tokens\n(gray: removed).", True)])
def test_a_title_is_a_sentence_when_it_states_a_point(title, sentence):
    assert is_sentence(title) is sentence


class Drawn:
    """One figure as plt.show() found it, and the source artists of each legend made on it."""

    def __init__(self, topic: str, number: int, fig, legends: dict):
        self.name, self.fig = f"{topic} experiment {number}", fig
        self.legends = [(legend, sources) for legend, sources in legends.items() if legend.figure is fig]


def draw_all(topic: str, impl, ref) -> list[Drawn]:
    """Every figure of `topic`'s experiments, each experiment run alone after the notebook's shared set-up, with
    `impl` as the learner's functions and `ref` beside them."""
    content = importlib.import_module(f"grader.learner.notebooks.topics.{topic}")
    legends, shown = {}, []
    make_legend = Legend.__init__

    def recording_legend(self, parent, handles, labels, *args, **kwargs):
        make_legend(self, parent, handles, labels, *args, **kwargs)
        legends[self] = [h for h, label in zip(handles, labels) if not str(label).startswith("_")]

    with mock.patch.object(Legend, "__init__", recording_legend):
        for number, (_, code) in enumerate(content.EXPERIMENTS):
            namespace = {"impl": impl, "ref": ref, "plt": plt}
            exec(getattr(content, "SETUP", ""), namespace)  # noqa: S102 (the notebook's own code)
            with mock.patch.object(plt, "show", lambda *a, **k: shown.append((number, plt.gcf()))):
                exec(code, namespace)  # noqa: S102
    return [Drawn(topic, number, fig, legends) for number, fig in shown]


def _look(artist) -> tuple:
    """What tells an artist apart in a legend: a line's colour, line style and marker; a patch's fill and hatch."""
    if isinstance(artist, Container):
        artist = artist[0] if isinstance(artist, BarContainer) else artist.get_children()[0]
    if isinstance(artist, Line2D):
        style = artist.get_linestyle() if artist.get_linewidth() > 0 else "None"
        return ("line", np.round(to_rgba(artist.get_color()), 2).tolist(), style,
                str(artist.get_marker()) if artist.get_marker() not in ("", " ", None) else "None")
    if isinstance(artist, Patch):
        return ("patch", np.round(artist.get_facecolor(), 2).tolist(), artist.get_hatch() or "")
    if isinstance(artist, Collection):
        face = artist.get_facecolor()
        return ("patch", np.round(face[0], 2).tolist() if len(face) else None, artist.get_hatch() or "")
    raise TypeError(f"no look defined for a {type(artist).__name__} in a legend")


def _key(artist_or_look) -> tuple:
    """A look (or an artist's look) as a hashable tuple."""
    look = artist_or_look if isinstance(artist_or_look, tuple) else _look(artist_or_look)
    return tuple(map(str, look))


def _all_patches(source) -> list:
    """Each patch a bar container drew (a legend shows its first one), else the artist itself."""
    return list(source) if isinstance(source, BarContainer) else [source]


def _texts(drawn: Drawn) -> list[str]:
    fig = drawn.fig
    texts = [fig.get_suptitle()] + [t.get_text() for legend, _ in drawn.legends for t in legend.get_texts()]
    for ax in fig.axes:
        texts += [ax.get_title(loc) for loc in ("left", "center", "right")] + [t.get_text() for t in ax.texts]
    return [t for t in texts if t.strip()]


def _render(fig) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)


def _draw_order(line) -> tuple:
    """Where `line` comes in the drawing: later axes (a twin) after earlier ones, then by zorder, then as added."""
    ax = line.axes
    return ax.get_zorder(), ax.figure.axes.index(ax), line.get_zorder(), ax.lines.index(line)


def _visible_shares(fig, lines: list) -> list[float]:
    """For each of `lines`, the share of the pixels it draws alone that no later line of `lines` draws over."""
    drawn = [a for ax in fig.axes for a in ax.lines + ax.patches + ax.collections]
    state = {a: a.get_visible() for a in drawn}
    try:
        for a in drawn:
            a.set_visible(False)
        bare = _render(fig)
        footprints = []
        for line in lines:
            line.set_visible(True)
            footprints.append((_render(fig) != bare).any(-1))
            line.set_visible(False)
    finally:
        for a, visible in state.items():
            a.set_visible(visible)
    shares = []
    for line, footprint in zip(lines, footprints):
        covered = np.zeros_like(footprint)
        for other, theirs in zip(lines, footprints):
            if _draw_order(other) > _draw_order(line):
                covered |= theirs
        shares.append((footprint & ~covered).sum() / footprint.sum() if footprint.any() else 1.0)
    return shares


def check_figure(drawn: Drawn, with_reference: bool, pixels: bool = True) -> list[str]:
    """Every way this figure misleads or is hard to read, as sentences (none: it passes); `pixels`: render each
    labelled line alone to see how much of it the others hide."""
    fig, problems = drawn.fig, []
    fig.set_dpi(DPI)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for legend, sources in drawn.legends:
        labels = [t.get_text() for t in legend.get_texts()]
        looks = [_look(h) for h in legend.legend_handles]
        for i, label in enumerate(labels):
            if looks.count(looks[i]) > 1:
                problems.append(f"legend entry {label!r} looks like another entry of its legend: {looks[i]}")
        drawn_artists = [a for ax in fig.axes for a in ax.lines + ax.patches + ax.collections]
        for label, source, look in zip(labels, sources, looks):
            if isinstance(source, Container) or any(source is a for a in drawn_artists):
                drawn_looks = {_key(p) for p in _all_patches(source)}
                if drawn_looks != {_key(look)}:
                    problems.append(f"legend entry {label!r} shows {look}, the figure draws {sorted(drawn_looks)}")
            elif not any(_key(a) == _key(look) for a in drawn_artists):  # a proxy made for the legend
                problems.append(f"legend entry {label!r} ({look}) stands for nothing the figure draws")
        lines = [(label, s) for label, s in zip(labels, sources) if any(s is a for a in drawn_artists)
                 and isinstance(s, Line2D) and s.get_linestyle() not in ("None", "", " ")]
        # a reference drawn over yours is meant to coincide with it when yours is right: it is left out
        lines = [(label, line) for label, line in lines if not REFERENCE.search(label)]
        for (label, _), share in zip(lines, _visible_shares(fig, [line for _, line in lines]) if pixels else []):
            if share < MIN_VISIBLE:
                problems.append(f"the line of {label!r} is hidden by the lines drawn after it: {share:.0%} shows")
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        hatched = [p.get_window_extent(renderer) for p in ax.patches if p.get_hatch()]
        for text in ax.texts:
            if not text.get_visible() or not text.get_text().strip():
                continue
            box = text.get_window_extent(renderer)
            if (box.x0 < frame.x0 - EDGE_PX or box.x1 > frame.x1 + EDGE_PX or box.y0 < frame.y0 - EDGE_PX
                    or box.y1 > frame.y1 + EDGE_PX):
                problems.append(f"text {text.get_text()!r} runs out of its axes (x {box.x0:.0f} to {box.x1:.0f}, "
                                f"y {box.y0:.0f} to {box.y1:.0f} px; the frame x {frame.x0:.0f} to {frame.x1:.0f}, "
                                f"y {frame.y0:.0f} to {frame.y1:.0f})")
            behind = text.get_bbox_patch()
            if any(box.overlaps(h) for h in hatched) and (behind is None or behind.get_facecolor()[3] < 1):
                problems.append(f"hatching runs through the text {text.get_text()!r}")
    shown = [ax.title for ax in fig.axes if ax.title.get_text().strip()]
    for n, title in enumerate(shown):
        for other in shown[n + 1:]:
            if title.get_window_extent(renderer).overlaps(other.get_window_extent(renderer)):
                problems.append(f"the titles {title.get_text()!r} and {other.get_text()!r} run into each other")
    titles = [fig.get_suptitle()] + [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center", "right")]
    problems += [f"the title {t!r} is not a sentence" for t in titles if t.strip() and not is_sentence(t)]
    texts = _texts(drawn)
    if with_reference and not (any(YOURS.search(t) for t in texts) and any(REFERENCE.search(t) for t in texts)):
        problems.append(f"no text labels the learner's curves 'yours' beside the reference's: {texts}")
    if not with_reference and any(YOURS.search(t) for t in texts):
        problems.append(f"a figure drawn from the reference alone says 'yours': {texts}")
    return problems


@pytest.mark.parametrize("topic", topics.all_topics())
def test_every_figure_is_legible_and_labels_yours_beside_the_reference(topic):
    solutions, reference = (importlib.import_module(f"{package}.{topic}") for package in ("solutions", "reference"))
    problems = []
    for impl, ref, with_reference in ((solutions, reference, True), (reference, reference, False)):
        figures = draw_all(topic, impl, ref)
        assert figures, f"{topic}: no figure was shown"
        for drawn in figures:
            problems += [f"{drawn.name} ({'yours and the reference' if with_reference else 'the reference'}): {p}"
                         for p in check_figure(drawn, with_reference, pixels=with_reference)]
        plt.close("all")
    assert problems == [], "\n".join(problems)


def test_the_reasoning_figure_shows_the_sampling_noise_its_prose_states():
    """Its intro says that 200 tasks pin a rate near 0.85 to about ±0.05 and that "high" scores below "medium" on
    this draw of tasks although it was drawn at the higher rate: both recomputed from the experiment's own data."""
    content = importlib.import_module("grader.learner.notebooks.topics.reasoning")
    intro, code = content.EXPERIMENTS[0]
    namespace = {"impl": importlib.import_module("reference.reasoning"), "ref": None, "plt": plt}
    with mock.patch.object(plt, "show"):
        exec(code, namespace)  # noqa: S102 (the notebook's own code)
    plt.close("all")
    results, levels, prose = namespace["results"], namespace["levels"], " ".join(intro.split())
    measured = {level: sum(r["correct"] for r in rows) / len(rows) for level, rows in results.items()}
    assert measured["high"] < measured["medium"] and levels["high"][0] > levels["medium"][0]
    assert f'"high", drawn at {levels["high"][0]}, can score below "medium", drawn at {levels["medium"][0]}' in prose
    tasks = len(results["high"])
    assert f"{tasks} tasks pin a rate near 0.85 down to about ±{1.96 * (0.85 * 0.15 / tasks) ** 0.5:.2f}" in prose
