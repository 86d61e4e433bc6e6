"""The Chinese handout (`bundle --lang zh`): its README is a current translation of the English one that lists every
function with its Chinese summary, and its commands speak Chinese with no --lang and no Chinese locale."""
import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from grader import language, topics
from grader.instructor import handout
from grader.instructor.bundle import REPO, write_bundle
from tests.test_bundle import CLI

CHINESE = re.compile(r"[\u4e00-\u9fff]")
LOCALE = (language.VARIABLE, *language.LOCALE_VARIABLES)


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    language.choose(None)


def test_the_chinese_readme_translates_todays_english_readme():
    """The marker is the hash of the English README it was translated from: an English README that changes fails
    here until its Chinese is looked at again and the marker updated."""
    chinese = handout.README.with_suffix(".zh.md").read_text(encoding="utf-8")
    marker = re.search(r"source: ([0-9a-f]{12})", chinese)
    assert marker, "README.zh.md has no `source: <hash>` marker"
    assert marker[1] == language.source_hash(handout.README.read_text(encoding="utf-8")), \
        "README.md changed: translate the change into README.zh.md and update its marker"
    english_commands = re.findall(r"^(?:python3|pip|infergrade) .*?(?=\s+#|$)", handout.README.read_text(), re.M)
    assert english_commands and all(command in chinese for command in english_commands)  # the same commands


def test_a_chinese_bundle_has_the_chinese_readme_with_every_function_and_names_its_language(tmp_path):
    language.choose("zh")
    write_bundle(tmp_path / "zh")
    readme = (tmp_path / "zh" / "README.md").read_text(encoding="utf-8")
    assert (tmp_path / "zh" / "README.en.md").read_bytes() == handout.README.read_bytes()
    assert handout.FUNCTIONS not in readme and "source:" not in readme  # listed; the translators' note left out
    for topic in topics.all_topics():
        assert f"### {topic}（`exercises/{topic}.py`）" in readme
        for name, (signature, english) in topics.api(topic).items():
            if "." not in name:
                summary = language.topic_text(topic, "summaries", name, english)
                assert f"- `{signature}`：{summary}\n" in readme + "\n", (topic, name)
    project = tomllib.loads((tmp_path / "zh" / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["infergrade"] == {"lang": "zh"}
    assert language.handout_language(tmp_path / "zh" / "pyproject.toml") == "zh"
    installed = tmp_path / "zh" / "grader" / "locale" / "handout.toml"  # what a wheel of the handout carries
    assert language.handout_language(tmp_path / "no-such-pyproject.toml", installed) == "zh"


def test_an_english_bundle_is_as_it_was(tmp_path):
    language.choose("en")
    write_bundle(tmp_path / "en")
    assert (tmp_path / "en" / "README.md").read_bytes() == handout.README.read_bytes()
    assert not (tmp_path / "en" / "README.en.md").exists()
    assert (tmp_path / "en" / "pyproject.toml").read_bytes() == (REPO / "pyproject.toml").read_bytes()
    assert language.handout_language(tmp_path / "en" / "pyproject.toml") is None
    assert not (tmp_path / "en" / "grader" / "locale" / "handout.toml").exists()


def test_the_handouts_language_comes_after_the_variable_and_before_the_locale(monkeypatch):
    monkeypatch.setattr(language, "handout_language", lambda: "zh")
    assert language.from_environment({"LANG": "en_US.UTF-8"}) == "zh"
    assert language.from_environment({"LANG": "zh_CN.UTF-8", language.VARIABLE: "en"}) == "en"
    monkeypatch.setattr(language, "handout_language", lambda: None)
    assert language.from_environment({"LANG": "zh_CN.UTF-8"}) == "zh"


def test_the_instructors_project_names_no_language():
    """This repository's own commands keep choosing by the variable and the locale."""
    assert language.handout_language() is None


def test_the_chinese_handouts_check_speaks_chinese_without_lang_or_locale(tmp_path):
    language.choose("zh")
    out = tmp_path / "handout"
    write_bundle(out)
    env = {k: v for k, v in os.environ.items() if k not in LOCALE} | {"PYTHONPATH": str(out)}

    def check(**extra):
        done = subprocess.run([sys.executable, "-c", CLI, "check", "kv_cache", "--submission", "exercises", "--out",
                               str(tmp_path / "r.json")], cwd=out, env=env | extra, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 1 and "grader error" not in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout, json.loads((tmp_path / "r.json").read_text())

    said, doc = check()
    assert doc["lang"] == "zh" and CHINESE.search(said), said
    titles = {c["id"]: c["title"] for c in doc["topics"][0]["checks"]}
    assert titles and all(CHINESE.search(title) for title in titles.values())
    said_en, doc_en = check(**{language.VARIABLE: "en"})  # the variable still chooses another language
    assert doc_en["lang"] == "en" and not CHINESE.search(said_en)
    assert {c["id"]: c["score"] for c in doc_en["topics"][0]["checks"]} == \
        {c["id"]: c["score"] for c in doc["topics"][0]["checks"]}
