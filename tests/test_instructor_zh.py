"""The instructor's outputs in Chinese: the class report (`report --lang zh`), Gradescope's and Classroom's
student-visible results, the autograder zip (`gradescope --lang zh`) and the Classroom workflows (`init-ci --lang
zh`). Only words change: every number, id, score and status is the English output's."""
import difflib
import json
import os
import re
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import yaml

from grader import hints, language
from grader.exporters.classroom import to_classroom
from grader.exporters.gradescope import to_gradescope
from grader.instructor import autograder, report
from grader.instructor.autograder import finalize

ROOT = Path(__file__).resolve().parent.parent
CHINESE = re.compile(r"[\u4e00-\u9fff]")
FINALIZE = ROOT / "grader" / "instructor" / "autograder" / "finalize.py"
MISCONCEPTION = "uses_query_heads"  # kv_cache's, explained in both languages


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    language.choose(None)


def in_both(make):
    """`make()` in English, then in Chinese."""
    language.choose("en")
    english = make()
    language.choose("zh")
    return english, make()


def check(name: str, status: str, misconception: str | None = None, visibility: str = "public") -> dict:
    return {"id": f"kv_cache.{name}", "title": f"the English title of {name}", "status": status, "score": 2 if
            status == "passed" else 0, "max_score": 2, "visibility": visibility, "misconception": misconception,
            "hint": "kv_cache.kv_bytes_per_token" if status != "passed" else None, "duration_s": 0.25,
            "message": "expected 4096, got 2048" if status == "failed" else "", "output": "printed 7" if
            status == "failed" else "", "function": "kv_bytes_per_token"}


def document(name: str, failing: bool, seed: int = 3, status: str = "completed") -> dict:
    """A results document of kv_cache with a check passed, one failed with a misconception (when `failing`) and one
    not started."""
    checks = [check("gqa_bytes_per_token", "passed"),
              check("mla_bytes_per_token", "failed" if failing else "passed", MISCONCEPTION if failing else None,
                    "hidden"),
              check("head_dim_default", "not_started")]
    score = sum(c["score"] for c in checks)
    return {"status": status, "score": score, "max_score": 6, "seed": seed, "mode": "hidden", "incomplete": None,
            "tool": {"name": "infergrade", "version": "0.1.0"}, "error": None if status == "completed" else
            "bad input: no topic module", "started_at": f"2026-12-0{seed}T10:00:00+00:00", "duration_s": 2.0 + seed,
            "isolation": {"level": "full"},
            "topics": [{"id": "kv_cache", "score": score, "max_score": 6, "duration_s": 1.5, "checks": checks,
                        "status": "completed", "message": ""}]}


CLASS = {"ann": document("ann", True), "bo": document("bo", False), "cy": document("cy", True, seed=4),
         "di": document("di", False, status="error")}


def cells(page: str, table: str) -> list[list[str]]:
    body = re.search(rf'<table id="{table}">(.*?)</table>', page, re.S)[1]
    return [re.findall(r"<td>(.*?)</td>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)[1:]]


def numbers(text: str) -> Counter:
    return Counter(re.findall(r"\d+(?:\.\d+)?", text))


def test_the_chinese_report_says_its_fixed_text_in_chinese_and_every_number_as_the_english_one(monkeypatch):
    monkeypatch.setattr(report, "_png", lambda fig: "")  # the figures are checked below
    english, chinese = in_both(lambda: report.render(CLASS))
    headings = re.findall(r"<h[12]>(.*?)</h[12]>", english)
    assert len(headings) == 8 and not set(headings) & set(re.findall(r"<h[12]>(.*?)</h[12]>", chinese))
    assert all(CHINESE.search(h) for h in re.findall(r"<(?:h[12]|th|title)>(.*?)</", chinese)), chinese[:3000]
    assert '<html lang="zh-CN">' in chinese and '<html lang="en">' in english
    for table in ("misconceptions", "checks", "ungradable", "students"):
        said, translated = cells(english, table), cells(chinese, table)
        assert len(said) == len(translated) > 0
        for row, row_zh in zip(said, translated):  # names, ids, counts and shares are the same
            kept = [i for i, cell in enumerate(row) if not re.search(r"[a-z]{3,} [a-z]{3,}", cell)]
            assert [row[i] for i in kept] == [row_zh[i] for i in kept], (row, row_zh)
    explained = hints.explain("kv_cache", MISCONCEPTION).split("\n\n")[0]
    assert explained in chinese and CHINESE.search(explained)
    for part in ("heading", "headline", "summary", "warning"):
        said, translated = (re.search(rf'<p id="{part}">(.*?)</p>', page)[1] for page in (english, chinese))
        if part == "headline":
            said, translated = said.split(" — ")[0], translated.split("——")[0]  # the explanation is translated
        assert numbers(said) == numbers(translated) and CHINESE.search(translated), (said, translated)


def test_the_report_figures_say_their_titles_and_axes_in_chinese(monkeypatch):
    figures = []
    monkeypatch.setattr(report, "_png", lambda fig: figures.append(fig) or "")
    language.choose("zh")
    report.score_histograms(CLASS)
    report.grading_times(CLASS)
    texts = [fig._suptitle.get_text() for fig in figures if fig._suptitle]
    texts += [text for fig in figures for ax in fig.axes if ax.axison
              for text in (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) if text]
    assert len(texts) >= 7 and all(CHINESE.search(t) or t.startswith("kv_cache") for t in texts), texts


def test_the_report_figures_draw_chinese_glyphs_not_boxes():
    """A CJK font is found (a system one, or the zh extra's mplfonts): two different Chinese titles draw different
    pixels (a missing glyph draws the same box for every character), and the whole report warns of no missing
    glyph."""
    import base64
    import io
    import warnings

    import matplotlib.image
    import matplotlib.pyplot as plt

    @report._in_this_language
    def drawn(text: str):
        fig = plt.figure(figsize=(2, 0.6))
        fig.text(0.05, 0.3, text, fontsize=14)
        png = report._png(fig)
        plt.close(fig)
        return matplotlib.image.imread(io.BytesIO(base64.b64decode(png)))

    language.choose("zh")
    first, second = drawn("班级报告"), drawn("得分分布")
    assert first.shape == second.shape and (first != second).any()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report.render(CLASS)
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_gradescopes_results_say_in_chinese_what_english_says_with_the_same_scores():
    broken = document("x", True)
    broken["topics"].append({"id": "sampling", "score": 0, "max_score": 3, "duration_s": 0.1, "checks": [],
                             "status": "error", "message": "sampling.py, line 2: SyntaxError"})
    english, chinese = in_both(lambda: to_gradescope(broken, leaderboard=True))
    strip = lambda doc: json.dumps([{k: v for k, v in t.items() if k not in ("name", "output")} for t in doc["tests"]])
    assert strip(english) == strip(chinese) and english["score"] == chinese["score"]
    assert [t["name"] for t in chinese["tests"] if t["tags"] == ["sampling"]] == ["sampling：无法评分"]
    failed = next(t["output"] for t in chinese["tests"] if MISCONCEPTION in t["tags"])
    for said in ("expected 4096, got 2048", "printed 7", f"常见误区 {MISCONCEPTION}：",
                 hints.explain("kv_cache", MISCONCEPTION).strip(), "infergrade hint kv_cache.kv_bytes_per_token"):
        assert said in failed, failed
    assert chinese["output"] == "2/6 分（种子 3，含隐藏检查）" and english["output"].startswith("2/6 points")
    assert [b["value"] for b in chinese["leaderboard"]] == [b["value"] for b in english["leaderboard"]]
    assert all(CHINESE.search(b["name"]) for b in chinese["leaderboard"])


def test_classrooms_points_are_the_same_and_its_names_chinese():
    english, chinese = in_both(lambda: to_classroom(document("x", True), {"sampling": 2}))
    assert [(t["status"], t["score"]) for t in english["tests"]] == [(t["status"], t["score"]) for t in
                                                                      chinese["tests"]]
    assert english["status"] == chinese["status"] and english["max_score"] == chinese["max_score"]
    assert chinese["tests"][0]["name"] == "sampling：未开始（第 1 分，共 2 分）"
    assert chinese["tests"][0]["message"] == "未开始：sampling.py 里还没有写好任何函数"
    not_started = next(t for t in chinese["tests"] if t["name"].startswith("kv_cache.head_dim_default"))
    assert not_started["message"] == "未开始：kv_bytes_per_token 仍在抛出 NotImplementedError"


def test_finalize_says_grading_failed_in_the_runs_language(tmp_path):
    results = tmp_path / "results.json"
    env = {**os.environ, language.VARIABLE: "zh"}
    done = subprocess.run([sys.executable, FINALIZE, results, "--exit-code", "127", "--time-limit", "540"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(results.read_text())
    assert doc["output"].startswith("评分失败：评分程序退出，退出码为 127，并且没有写出结果。") and doc["score"] == 0
    assert doc["tests"][0]["name"] == "infergrade：评分没有完成"
    results.write_text(json.dumps(to_gradescope(document("x", True))))  # (English, as graded before)
    language.choose("zh")
    stopped = finalize.finalize(str(results), 124, 540, None, False, language.tr)
    assert stopped["output"].startswith("评分到了 540 秒的时限，已被停止。这不是完整的成绩。")
    results.write_text(json.dumps(to_gradescope(document("x", True) | {"incomplete": "2 checks skipped"})))
    said = finalize.finalize(str(results), 124, 540, None, False, language.tr)["output"]
    assert said.startswith("评分到了 540 秒的时限，已被停止。不是完整的成绩：2 checks skipped"), said  # said once


def test_the_chinese_autograder_zip_grades_in_chinese_and_its_last_resort_says_so(tmp_path):
    language.choose("zh")
    autograder.write_zip(tmp_path / "zh.zip", ["sampling"])
    with zipfile.ZipFile(tmp_path / "zh.zip") as z:
        script = z.read("run_autograder").decode()
    assert re.search(rf"^export {language.VARIABLE}=zh\b", script, re.M)
    last_resort = json.loads(script.split("<<'JSON'\n")[1].split("\nJSON\n")[0])
    assert last_resort["output"].startswith("评分失败：") and last_resort["score"] == 0
    path = tmp_path / "run_autograder"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", path], capture_output=True, timeout=60).returncode == 0
    language.choose("en")
    english = autograder.run_script(["sampling"], autograder.DEADLINE_S, False)
    assert language.VARIABLE not in english and not re.search(r"@[A-Z_]+@", english)  # every placeholder filled


def test_the_chinese_classroom_workflow_sets_the_students_language(tmp_path):
    def init(out: Path, *lang: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "grader", "init-ci", "--out", out, *lang], capture_output=True,
                              text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr
        return {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.yml")}

    english, chinese = init(tmp_path / "en"), init(tmp_path / "zh", "--lang", "zh")
    student = "student/.github/workflows/infergrade-check.yml"
    assert english.keys() == chinese.keys() and all(english[k] == chinese[k] for k in english if k != student)
    steps = {s["name"]: s for s in yaml.safe_load(chinese[student])["jobs"]["run-autograding-tests"]["steps"]
             if "name" in s}
    check = steps["Public checks of the topics started"]
    assert check["env"] == {language.VARIABLE: "zh"} and "infergrade check" in check["run"]
    assert language.VARIABLE not in english[student]
    changed = [line for line in difflib.ndiff(english[student].splitlines(), chinese[student].splitlines())
               if line[0] in "+-"]
    assert changed == ["+         env:", f"+           {language.VARIABLE}: zh  # the language of what the student "
                                         "reads (init-ci --lang zh)"]
