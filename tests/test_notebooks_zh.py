"""The Chinese notebooks: every text translates today's English (grader/locale/zh/notebooks/), with no English
sentence left; the code's table of literals still finds each English literal and changes nothing but literals;
`notebook --lang zh` (or a Chinese locale) writes the Chinese notebook; all eleven, with the solutions pasted in, run
to the end with nbclient, their check reports in Chinese; and the figures' Chinese is drawn as characters, not as
the boxes of a font without CJK glyphs."""
import ast
import re
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from click.testing import CliRunner
from test_notebooks import FIGURES, _assert_figures, _code, _errors, _pngs, _reports, execute_in_one_kernel

from grader import language, topics
from grader.cli import main
from grader.instructor.selftest import SOLUTIONS_DIR
from grader.learner.notebooks import fonts, texts
from grader.learner.notebooks.build import FRAME, build
from grader.learner.notebooks.inline import MIME

nbclient = pytest.importorskip("nbclient", reason="the dev extra runs the notebooks")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")  # before pyplot: no display in a test
import matplotlib.pyplot as plt  # noqa: E402

TOPICS = topics.all_topics()
CATALOGS = [texts.FRAME, *TOPICS]
WORKERS = 2
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # ideographs and full-width punctuation
DISPLAY = {"label", "title", "xlabel", "ylabel"}  # the keywords whose string a reader reads
GLYPH_MISSING = re.compile(r"Glyph \d+ .*missing from (?:current )?font")  # matplotlib's warning of a box drawn
# What a Chinese text keeps in English: the names the chapter keeps (../shared/GLOSSARY.zh.md) and the names of
# products, interfaces, papers and models, which a student searches for as they are written.
KEPT_NAMES = sorted([
    "Top-p", "Top-k", "Prefill", "Decode", "Token", "KV", "Prompt Caching", "PagedAttention", "FlashAttention",
    "OpenAI Chat Completions", "OpenAI Responses", "Chat Completions", "Anthropic Messages", "Hugging Face",
    "Inference API", "OpenAI Chat", "Google Gemini", "vLLM V0", "vLLM V1", "The Curious Case of Neural Text Degeneration",
], key=len, reverse=True)
CODE_LIKE = [r"```.*?```", r"`[^`]*`", r"\{[^{}]*\}",   # code blocks, inline code, format fields
             r"\b\w*(?:_\w*|\d)\w*\b",                   # snake_case names and anything with a digit
             r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b"]  # CamelCase classes: BlockAllocator


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    language.choose(None)


def english_sources(name: str) -> dict[str, str]:
    """{key: English text} of catalog `name`: the frame every notebook has, or a topic's prose."""
    return {key: text.strip() for key, text in FRAME.items()} if name == texts.FRAME else texts.prose(name)


def english_run(text: str) -> str | None:
    """The first two English words in a row left in `text` once code, identifiers, numbers and the kept names
    are set aside; None where there are none."""
    for pattern in CODE_LIKE[:3]:
        while (shorter := re.sub(pattern, " ", text, flags=re.DOTALL)) != text:  # fields hold fields
            text = shorter
    for name in KEPT_NAMES:
        text = text.replace(name, " ")
    for pattern in CODE_LIKE[3:]:
        text = re.sub(pattern, " ", text)
    found = re.search(r"[A-Za-z]+ +[A-Za-z]+", text)
    return found.group() if found else None


def chinese_texts(name: str) -> dict[str, str]:
    """{key: Chinese text} of catalog `name`'s prose."""
    catalog = texts.catalog(name, "zh")
    return {key: found["text"] for key in english_sources(name) if (found := texts.entry(catalog, key))}


def code_of(topic: str) -> list[str]:
    """The pieces of code of `topic`'s notebook that the table translates: the shared set-up, each experiment."""
    content = texts.content(topic)
    shared = [content.SETUP.strip()] if hasattr(content, "SETUP") else []
    return shared + [code.strip() for _, code in content.EXPERIMENTS]


# ------------------------------------------------------------------------------------------------ the texts
@pytest.mark.parametrize("name", CATALOGS)
def test_every_prose_text_has_a_chinese_translation_of_todays_english(name):
    """A missing translation, or one whose marker is not the hash of today's English (the English changed and its
    Chinese was not looked at again)."""
    catalog = texts.catalog(name, "zh")
    wanting = [key for key, english in english_sources(name).items()
               if (found := texts.entry(catalog, key)) is None or found.get("source") != language.source_hash(english)]
    assert not wanting, f"{name}: {wanting} want a translation of today's English"


@pytest.mark.parametrize("name", CATALOGS)
def test_a_catalog_holds_no_prose_that_no_english_text_asks_for(name):
    catalog = texts.catalog(name, "zh")
    held = {kind if "text" in table else f"{kind}.{key}" for kind, table in catalog.items() if kind != "code"
            for key in (["text"] if "text" in table else table)}
    assert held <= set(english_sources(name)), sorted(held - set(english_sources(name)))


@pytest.mark.parametrize("name", CATALOGS)
def test_the_chinese_prose_leaves_no_english_sentence(name):
    left = {key: run for key, text in chinese_texts(name).items() if (run := english_run(text))}
    assert not left, f"{name}: English left in {left}"
    assert all(CJK.search(text) for text in chinese_texts(name).values())


def test_the_detector_finds_the_english_sentences_it_looks_for():
    """Every topic's English prose holds a run of English words the detector finds, and the kept names it does not."""
    for name in TOPICS:
        assert all(english_run(text) for text in english_sources(name).values()), name
    assert english_run("在 Hugging Face 的 `generate` 里，Top-p 和 block_q = 16：vLLM V1 的 BlockAllocator") is None


@pytest.mark.parametrize("topic", TOPICS)
def test_every_english_literal_of_the_code_table_is_still_in_the_code(topic):
    """A figure title changed in English: its Chinese literal no longer replaces anything, and this says so."""
    code = "\n".join(code_of(topic))
    table = texts.replacements(topic, "zh")
    assert table, f"{topic}: the figures' texts have no Chinese"
    assert not [english for english, _ in table if english not in code], f"{topic}: literals no longer in the code"
    for _, chinese in table:
        said = re.findall(r'"((?:[^"\\]|\\.)*)"', chinese)  # the literal, without the code an entry quotes around it
        assert any(CJK.search(s) for s in said) and not [run for s in said if (run := english_run(s))], chinese


class _Literals(ast.NodeTransformer):
    """A tree with its string literals emptied and each f-string's fields kept (in sorted order, as a sentence may
    reorder them), their format specs as written."""

    def visit_Constant(self, node):
        return ast.Constant("") if isinstance(node.value, str) else node

    def visit_FormattedValue(self, node):
        node.value = self.visit(node.value)
        return node

    def visit_JoinedStr(self, node):
        fields = [self.visit(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        return ast.JoinedStr(sorted(fields, key=ast.dump))


def data_literals(code: str) -> list[str]:
    """The string literals `code` uses as data rather than as words: a subscript's key, a comparison's operand, a
    keyword argument other than a label or title (`fillstyle="none"`, `r["preemptions"]`, `kind == "deps"`)."""
    found = []
    for node in ast.walk(ast.parse(code)):
        held = {ast.Subscript: lambda n: [n.slice], ast.Compare: lambda n: [n.left, *n.comparators],
                ast.keyword: lambda n: [n.value] if n.arg not in DISPLAY else []}.get(type(node), lambda n: [])(node)
        found += [c.value for part in held for c in ast.walk(part) if isinstance(c, ast.Constant)
                  and isinstance(c.value, str)]
    return found


@pytest.mark.parametrize("topic", TOPICS)
def test_the_chinese_code_differs_from_the_english_only_in_the_words_it_shows(topic):
    """The code is written once: the table changes what a figure says, never what the code does (its structure,
    its f-string fields, and the literals it uses as data: a table entry quotes the code around a literal that is
    also data elsewhere, `set_ylabel("preemptions"`)."""
    for english in code_of(topic):
        chinese = texts.code(topic, english, "zh")
        shape = [ast.dump(_Literals().visit(ast.parse(code))) for code in (english, chinese)]
        assert shape[0] == shape[1], f"{topic}: the table changed more than literals in\n{english[:300]}"
        assert data_literals(chinese) == data_literals(english), f"{topic}: the table changed data in\n{english[:300]}"


def test_the_notebook_command_writes_the_chinese_notebook_for_lang_zh_or_a_chinese_locale(tmp_path, monkeypatch):
    concept = texts.said("sampling", "concept", "", "zh")
    result = CliRunner().invoke(main, ["notebook", "sampling", "--lang", "zh", "--out", str(tmp_path / "flag")])
    assert result.exit_code == 0, result.output
    for name in ("LC_ALL", "LC_MESSAGES", language.VARIABLE):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    language.choose(None)
    assert CliRunner().invoke(main, ["notebook", "sampling", "--out", str(tmp_path / "locale")]).exit_code == 0
    for folder in ("flag", "locale"):
        nb = nbformat.read(str(tmp_path / folder / "sampling.ipynb"), as_version=4)
        assert nb.metadata.infergrade.lang == "zh" and concept in nb.cells[0].source
        assert 'infergrade.start(lang="zh")' in _code(nb, "setup")[0].source
    english = build("sampling", lang="en")
    assert english.metadata.infergrade.lang == "en" and concept not in english.cells[0].source


# ---------------------------------------------------------------------------------------- the fonts
def _drawn(text: str, family) -> "numpy.ndarray":  # noqa: F821
    fig = plt.figure(figsize=(3, 1), dpi=72)
    fig.text(0.05, 0.3, text, fontsize=24, family=family)
    fig.canvas.draw()
    pixels = fig.canvas.buffer_rgba()
    plt.close(fig)
    return bytes(pixels)


def test_the_chosen_font_draws_chinese_characters_not_boxes():
    """Two different Chinese words drawn with the notebooks' font differ; drawn with matplotlib's default font
    alone, which has no CJK glyph, both are the same boxes (the control that shows the comparison can fail)."""
    name = fonts.cjk_font()
    assert name, "no CJK font: pip install mplfonts"
    assert _drawn("温度", ["sans-serif", name]) != _drawn("采样", ["sans-serif", name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the boxes' warnings
        assert _drawn("温度", ["DejaVu Sans"]) == _drawn("采样", ["DejaVu Sans"])


def test_without_a_cjk_font_the_notebook_says_once_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(fonts, "SYSTEM", ())
    monkeypatch.setattr(fonts, "packaged_font", lambda: None)
    monkeypatch.setattr(fonts, "_said", [])
    before = list(matplotlib.rcParams["font.family"])
    language.choose("zh")
    fonts.use_cjk_font()
    fonts.use_cjk_font()
    said = capsys.readouterr().out
    assert said.count("\n") == 1 and "mplfonts" in said and CJK.search(said)
    assert matplotlib.rcParams["font.family"] == before


@pytest.mark.parametrize("topic", TOPICS)
def test_every_chinese_figure_is_legible_and_labels_yours_beside_the_reference(topic):
    """tests/test_notebook_figures.py's checks on the Chinese figures, drawn in the CJK font with the solutions as
    the learner's beside the reference (no text out of its axes, no titles run together, legend entries told
    apart), and their Chinese rules: a title ends as a sentence ends, 。, and 你的 stands beside 参考实现."""
    import importlib
    from unittest import mock

    from test_notebook_figures import _texts, check_figure, draw_all

    content = texts.content(topic)
    chinese = [(intro, texts.code(topic, code, "zh")) for intro, code in content.EXPERIMENTS]
    shared = texts.code(topic, getattr(content, "SETUP", ""), "zh")
    solutions, reference = (importlib.import_module(f"{package}.{topic}") for package in ("solutions", "reference"))
    english_rules = ("is not a sentence", "'yours'")  # an English title's capital and period, the word "yours"
    problems = []
    with matplotlib.rc_context(), mock.patch.object(content, "EXPERIMENTS", chinese), \
            mock.patch.object(content, "SETUP", shared, create=True):
        fonts.use_cjk_font()
        for drawn in draw_all(topic, solutions, reference):
            problems += [f"{drawn.name}: {p}" for p in check_figure(drawn, True, pixels=False)
                         if not any(rule in p for rule in english_rules)]
            titles = [t for t in [drawn.fig.get_suptitle()] + [ax.get_title() for ax in drawn.fig.axes] if t.strip()]
            problems += [f"{drawn.name}: the title {t!r} does not end with 。" for t in titles if not t.endswith("。")]
            said = " ".join(_texts(drawn))
            if not ("你的" in said and "参考实现" in said):
                problems.append(f"{drawn.name}: no 你的 beside 参考实现 in {said!r}")
        plt.close("all")
    assert problems == [], "\n".join(problems)


# ------------------------------------------------------------------------------------ the notebooks, run
@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every topic's Chinese notebook with the solutions pasted in, executed on two kernels side by side, each
    taking every other topic."""
    out = tmp_path_factory.mktemp("notebooks_zh")
    out.chmod(0o755)
    start = time.monotonic()
    built = {topic: build(topic, SOLUTIONS_DIR / f"{topic}.py", lang="zh") for topic in TOPICS}  # one at a time (ast)
    shares = [{t: built[t] for t in TOPICS[k::WORKERS]} for k in range(WORKERS)]
    with ThreadPoolExecutor(WORKERS) as pool:
        done = {t: nb for share in pool.map(lambda share: execute_in_one_kernel(share, out), shares)
                for t, nb in share.items()}
    for topic, nb in done.items():
        for n, png in enumerate(_pngs(nb) if FIGURES else []):
            (FIGURES / f"{topic}-zh-{n}.png").write_bytes(png)
    print(f"\n{len(TOPICS)} Chinese notebooks executed in {time.monotonic() - start:.1f} s")
    return done


def _said(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o["output_type"] == "stream")


@pytest.mark.parametrize("topic", TOPICS)
def test_the_chinese_notebook_runs_to_the_end_with_its_checks_and_figures(executed, topic):
    nb = executed[topic]
    assert _errors(nb) == []
    reports = _reports(nb)
    assert reports and None not in reports and {r["status"] for r in reports} == {"completed"}
    assert {s for r in reports for s in r["statuses"].values()} <= {"passed", "skipped", "not_started"}
    shown = [o["data"]["text/plain"] for c in _code(nb, "check") for o in c.outputs if MIME in o.get("data", {})]
    assert len(shown) == len(reports) and all(CJK.search(text) for text in shown), shown  # the reports speak Chinese
    assert CJK.search(_said(_code(nb, "experiment")[0]))  # which functions the experiments use, in Chinese
    _assert_figures(nb)


@pytest.mark.parametrize("topic", TOPICS)
def test_no_glyph_was_drawn_as_a_box(executed, topic):
    said = [_said(c) for c in executed[topic].cells if c.cell_type == "code"]
    assert not [s for s in said if GLYPH_MISSING.search(s)], [s for s in said if GLYPH_MISSING.search(s)][:1]


def test_the_glyph_detector_sees_a_box_warning():
    """matplotlib warns of each box it draws: the detector above reads that warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _drawn("温度", ["DejaVu Sans"])
    assert any(GLYPH_MISSING.search(str(w.message)) for w in caught), [str(w.message) for w in caught]

