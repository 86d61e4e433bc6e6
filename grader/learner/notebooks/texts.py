"""A notebook's words in the language it is written in, from grader/locale/<lang>/notebooks/: `<topic>.toml` holds the
topic's prose (the concept, each experiment's text, the closing paragraph) and FRAME.toml the texts build.py adds
to every notebook, each keyed by a stable name with `source`, the hash of the English it says (language.source_hash),
beside its `text`; `[[code]]` holds the topic's replacements, each English string literal exactly as it stands in
the experiments' code (a figure's title, an axis or legend label, a printed sentence; f-string fields included)
beside the literal that says it in that language, with the code around it where the same literal is also data
(`set_ylabel("preemptions"`, not the `r["preemptions"]` of a record). The code itself is written once, in English."""
from __future__ import annotations

import importlib
import re

from grader import language

FRAME = "notebook"  # the catalog of the texts every notebook has


def content(topic: str):
    """The module of `topic`'s notebook content (grader/learner/notebooks/topics/)."""
    return importlib.import_module(f"grader.learner.notebooks.topics.{topic}")


def catalog(name: str, lang: str) -> dict:
    """Catalog `name` (a topic, or FRAME) of the notebooks in `lang`; empty for English, whose texts are the code's."""
    return {} if lang == "en" else language.catalog(f"notebooks/{name}", lang)


def experiment_key(intro: str) -> str:
    """An experiment's stable name: its `###` heading in snake case ("### Candidate sets" -> "candidate_sets")."""
    heading = next(line for line in intro.strip().splitlines() if line.startswith("### "))
    return "_".join(re.findall(r"[a-z0-9]+", heading.lower()))


def prose(topic: str) -> dict[str, str]:
    """{key: English text} of the prose of `topic`'s notebook: "concept", "experiments.<name>", "closing"."""
    module = content(topic)
    found = {"concept": module.CONCEPT.strip()}
    found |= {f"experiments.{experiment_key(intro)}": intro.strip() for intro, _ in module.EXPERIMENTS}
    if hasattr(module, "CLOSING"):
        found["closing"] = module.CLOSING.strip()
    return found


def entry(table: dict, key: str) -> dict | None:
    """The entry under dotted `key` of a catalog (a table with `source` and `text`), or None."""
    for part in key.split("."):
        table = table.get(part) if isinstance(table, dict) else None
    return table if isinstance(table, dict) and "text" in table else None


def said(name: str, key: str, english: str, lang: str) -> str:
    """`english`, the text under `key` of catalog `name`, in `lang`: English where it has no translation."""
    found = entry(catalog(name, lang), key)
    return found["text"].strip() if found else english.strip()


def replacements(topic: str, lang: str) -> list[tuple[str, str]]:
    """(English literal, its `lang` literal) of `topic`'s code table, longest first: a literal that holds a shorter
    one (an f-string holding 'your') is replaced whole before the shorter one could be."""
    pairs = [(r["english"], r["text"]) for r in catalog(topic, lang).get("code", [])]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def code(topic: str, source: str, lang: str) -> str:
    """`source`, code of `topic`'s notebook (an experiment or the shared set-up), with each English literal of the
    topic's table replaced by its `lang` literal."""
    for english, translated in replacements(topic, lang):
        source = source.replace(english, translated)
    return source
