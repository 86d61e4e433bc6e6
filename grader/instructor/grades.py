"""grades.csv: one row per student of a class folder, read by spreadsheets and scripts."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from grader import output
from grader.text import one_line, printable

NOT_GRADED = "the batch was interrupted before this submission was graded"
HEADER = ["total", "max", "status", "reason", "seed", "graded_path", "similarity", "similar_to"]


def write_csv(out: Path, topics: list[str], docs: dict[str, dict | None], max_scores: dict[str, float],
              similar: dict[str, tuple[float, str]] | None = None) -> Path:
    """grades.csv: one row per student (None: not graded, the batch was interrupted), a column per topic, the total,
    the maximum (kept for a submission that could not be graded), the status, why (paths relative to the class
    folder), the seed, the folder of the upload that was graded, and the largest share of the student's code
    found in another module with its owner (`similarity`; it flags, it never changes a score)."""
    path = out / "grades.csv"
    f = io.StringIO(newline="")
    # every cell quoted: a spreadsheet that splits on ';' (a comma-decimal locale's) keeps a name with ';' whole
    writer = csv.writer(f, quoting=csv.QUOTE_ALL)
    writer.writerow(["student", *topics, *HEADER])
    for name in sorted(docs):
        share, other = (similar or {}).get(name, (None, ""))
        writer.writerow([_cell(one_line(name)), *_row(docs[name], topics, max_scores),
                         "" if share is None else f"{share:.2f}", _cell(one_line(other))])
    output.write_text(f.getvalue(), path)
    return path


def _cell(text: str) -> str:
    """Text a spreadsheet shows as text, and a terminal or an editor shows as it is stored (no escape, no control
    character, no bidi override: `text.printable`): a name an upload chose that starts like a formula gets a
    leading '."""
    text = printable(text)
    return f"'{text}" if text.startswith(("=", "+", "-", "@", "\t")) else text


def _row(doc: dict | None, topics: list[str], max_scores: dict[str, float]) -> list[str]:
    """A row's cells after the name, up to the graded path; the maximum of topics graded without checks comes from
    `max_scores`. A submission that was not graded, or could not be, leaves its score cells empty: a spreadsheet's
    average must not count a corrupt upload as a real zero."""
    known = all(t in max_scores for t in topics)
    class_max = _number(sum(max_scores[t] for t in topics)) if known else ""
    if doc is None:
        return [*("" for _ in topics), "", class_max, "interrupted", NOT_GRADED, "", ""]
    scores = {t["id"]: t["score"] for t in doc["topics"]}
    graded = all(t["checks"] for t in doc["topics"]) and {t["id"] for t in doc["topics"]} == set(topics)
    maximum = _number(doc["max_score"]) if graded else class_max
    scored = doc["status"] == "completed"
    upload = doc["submission"]["path"]
    reason = (doc["error"] or doc["incomplete"] or "").replace(str(Path(upload).parent) + "/", "")
    return [*(_number(scores.get(t, 0)) if scored else "" for t in topics), _number(doc["score"]) if scored else "",
            maximum, doc["status"], _cell(reason), str(doc["seed"]),
            _cell(one_line(doc["submission"].get("graded", "")))]


def _number(x: float) -> str:
    return f"{x:g}"
