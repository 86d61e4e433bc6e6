"""The English texts a topic's Chinese catalog translates, each with its marker, and what a catalog lacks.

For translators: `python tests/translations.py TOPIC` prints every entry of grader/locale/zh/TOPIC.toml that is
missing or stale (its `source` no longer the hash of the English text), as TOML with the English text to replace.
"""
import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grader import hints, language, topics  # noqa: E402

KINDS = ("functions", "misconceptions", "titles", "summaries")


def english_sources(topic: str) -> dict[str, str]:
    """{"kind.key": English text} for every text of `topic` a student reads: the hint ladder of each function, each
    misconception's explanation, each check's title (public and hidden), each stub function's first docstring
    line (a Chinese summary goes beside the English contract)."""
    found = {}
    for function, levels in hints.load(topic).get("functions", {}).items():
        found |= {f"functions.{function}.{level}": text.strip() for level, text in levels.items()}
    found |= {f"misconceptions.{m}": text.strip() for m, text in hints.load(topic).get("misconceptions", {}).items()}
    for path in topics.check_files(topic, hidden=True):
        module = importlib.import_module(f"grader.checks.{topic}.{path.stem}")
        for fn in vars(module).values():
            if meta := getattr(fn, "__infergrade__", None):
                found[f"titles.{meta.name}"] = meta.title
    found |= {f"summaries.{name}": line for name, (_, line) in topics.api(topic).items() if "." not in name}
    return found


def entry(catalog: dict, key: str) -> dict | None:
    for part in key.split("."):
        catalog = catalog.get(part) if isinstance(catalog, dict) else None
    return catalog if isinstance(catalog, dict) and "text" in catalog else None


def wanting(topic: str) -> dict[str, str]:
    """{"kind.key": English text} of each entry the catalog lacks, or whose marker is not its English text's."""
    catalog = language.catalog(topic)
    return {key: english for key, english in english_sources(topic).items()
            if (found := entry(catalog, key)) is None or found.get("source") != language.source_hash(english)}


if __name__ == "__main__":
    for key, english in wanting(sys.argv[1]).items():
        print(f"[{key}]\nsource = \"{language.source_hash(english)}\"\ntext = {json.dumps(english, ensure_ascii=False)}\n")
