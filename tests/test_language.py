"""The Chinese edition: how a language is chosen, and that every text a student reads has a current Chinese
translation that keeps the identifiers, the numbers and the chapter's terms (../shared/GLOSSARY.zh.md)."""
import re

import pytest

from grader import language, topics, wording
from tests.translations import english_sources, entry, wanting

TOPICS = topics.all_topics()

# The glossary's terms, table-driven: where an English text uses the source term, its Chinese text uses the
# chapter's term (the tool's own words are checked on the screens, tests/test_screens_zh.py).
GLOSSARY = [
    (r"\bnucleus sampling\b", "核采样"),
    (r"\bcandidate set\b", "候选集合"),
    (r"\bcumulative probabilit", "累计概率"),
    (r"\bgreedy decoding\b", "贪心解码"),
    (r"\bbeam search\b", "束搜索"),
    (r"\btemperature\b", "温度"),
    (r"\brenormali[sz]", "归一化"),
    (r"\bKV cache\b", "KV缓存"),
    (r"\bKV heads?\b", "KV头"),
    (r"\bquery heads?\b", "查询头"),
    (r"\bprecision\b", "精度"),
    (r"\bbatch size\b", "批大小"),
    (r"\bsequence length\b", "序列长度"),
    (r"\bprefill\b", "Prefill"),
    (r"\bfirst token\b", "首Token"),
    (r"\bmemory-bound\b", "访存受限"),
    (r"\btimeline\b", "时间线"),
    (r"\bprefix(es)?\b", "前缀"),
    (r"\bhit rate\b", "命中率"),
    (r"\breservation\b", "预留"),
    (r"\bon demand\b", "按需"),
    (r"\bcopy-on-write\b", "写时复制"),
    (r"\btiling\b", "分块", {"flash_attention"}),  # paged_kv's "tiling the KV heads" is repeat's sense
    (r"\bspeculative decoding\b", "推测解码"),
    (r"\bdraft model\b", "草稿"),
    (r"\btarget model\b", "目标模型"),
    (r"\bacceptance rate\b", "接受率"),
    (r"\btarget distribution\b", "目标分布"),
    (r"\bcontinuous batching\b", "连续批处理"),
    (r"\bscheduling\b", "调度"),
    (r"\bthroughput\b", "吞吐"),
    (r"\btail latency\b", "尾延迟"),
    (r"\bconcurrency\b", "并发"),
    (r"\bcancell?ation\b", "取消"),
    (r"\bpreempt", "抢占"),
    (r"\bchunked prefill\b", "分块Prefill"),
    (r"\bgoodput\b", "有效吞吐"),
    (r"\bcritical path\b", "关键路径"),
    (r"\bround trips?\b", "往返"),
]
# What a translation keeps as it is: code (snake_case names, dotted calls, CamelCase classes, `quoted` code) and
# numbers with a decimal point or of two digits and more.
KEPT = re.compile(r"`[^`]+`|\b[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[a-z]+\.[a-z_]+\(|"
                  r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+?)+(?=s?\b)|\d+\.\d+|\d{2,}")


def translations(topic: str):
    catalog = language.catalog(topic)
    for key, english in english_sources(topic).items():
        yield key, english, entry(catalog, key)


@pytest.mark.parametrize("topic", TOPICS)
def test_every_text_of_the_topic_has_a_current_chinese_translation(topic):
    """A missing translation, or one whose marker is not the hash of today's English text (the English changed and
    its Chinese was not looked at again): `python tests/translations.py TOPIC` prints what to write."""
    assert not wanting(topic), f"{topic}: {len(wanting(topic))} texts want a translation: {sorted(wanting(topic))}"


@pytest.mark.parametrize("topic", TOPICS)
def test_a_catalog_holds_nothing_that_no_english_text_asks_for(topic):
    known = set(english_sources(topic))
    catalog = language.catalog(topic)
    held = {f"{kind}.{key}" for kind in catalog for key in _leaves(catalog[kind])}
    assert held <= known, f"{topic}: entries with no English text: {sorted(held - known)}"


def _leaves(table: dict, prefix: str = "") -> list[str]:
    found = []
    for key, value in table.items():
        if isinstance(value, dict) and "text" in value:
            found.append(prefix + key)
        elif isinstance(value, dict):
            found += _leaves(value, f"{prefix}{key}.")
    return found


@pytest.mark.parametrize("topic", TOPICS)
def test_a_translation_keeps_the_code_and_the_numbers(topic):
    lost = []
    for key, english, found in translations(topic):
        if found is not None:
            lost += [f"{key}: {kept!r}" for kept in sorted(set(KEPT.findall(english))) if kept not in found["text"]]
    assert not lost, f"{topic}: identifiers or numbers missing from the Chinese: {lost[:20]}"


@pytest.mark.parametrize("topic", TOPICS)
def test_a_translation_uses_the_chapters_terms(topic):
    missing = []
    for key, english, found in translations(topic):
        if found is not None:
            missing += [f"{key}: {term}" for pattern, term, *only in GLOSSARY
                        if (not only or topic in only[0]) and re.search(pattern, english, re.IGNORECASE)
                        and term not in found["text"]]
    assert not missing, f"{topic}: glossary terms not used: {missing[:20]}"


@pytest.mark.parametrize("topic", TOPICS)
def test_a_translation_is_chinese(topic):
    """A text copied over untranslated would pass the markers' test."""
    english_left = [key for key, english, found in translations(topic)
                    if found is not None and not re.search(r"[\u4e00-\u9fff]", found["text"])]
    assert not english_left, f"{topic}: no Chinese in {english_left}"


def test_every_screen_sentence_fills_the_same_fields_as_its_english():
    screens = {k: v for k, v in language.screens().items() if isinstance(v, str)}
    wrong = [k for k, v in screens.items() if language.fields(k) != language.fields(v)]
    assert not wrong, wrong


@pytest.mark.parametrize("environ, chosen", [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "zh_TW.UTF-8", "LC_ALL": "C"}, "en"),  # LC_ALL overrides LANG
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LANG": "zh_CN.UTF-8", "INFERGRADE_LANG": "en"}, "en"),
    ({"LANG": "en_US.UTF-8", "INFERGRADE_LANG": "zh"}, "zh"),
    ({"INFERGRADE_LANG": "fr", "LANG": "zh_CN.UTF-8"}, "zh"),  # a language it has not: the locale decides
])
def test_the_language_comes_from_the_variable_then_the_locale(environ, chosen):
    assert language.from_environment(environ) == chosen


def test_a_chinese_line_wraps_by_display_width_and_keeps_punctuation_with_its_text():
    text = "常见误区：把累计概率越过 p 的 Token 也丢掉了，所以在 p = 0.8 时 0.70/0.15/0.10/0.05 只保留一个 Token。" * 3
    lines = wording.wrap(text, 40, "    ")
    hangs = set("，。、；：？！）》」』】")
    assert all(wording.display_width(line.rstrip("".join(hangs))) <= 40 for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")
    assert not any(line.strip()[0] in hangs for line in lines[1:])
    narrow = wording.wrap("一二三四五六七八九十一二三四五；六七", 30, "")  # 30 columns, then ；
    assert narrow[0].endswith("；") and not narrow[1].startswith("；")
    opened = wording.wrap("一二三四五六七八九十一二三四（五六）七", 30, "")  # （ at column 29: it goes with 五
    assert not opened[0].endswith("（") and opened[1].strip().startswith("（五")
    assert wording.display_width("核采样 p") == 8
