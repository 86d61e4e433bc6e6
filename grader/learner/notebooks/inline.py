"""Inline checks in a notebook: the sandboxed public checks of one function, run on the kernel's own cells."""
from __future__ import annotations

import atexit
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from grader import language, progress
from grader.language import tr
from grader.learner.notebooks import kernel
from grader.submission.notebook import from_history, units

MIME = "application/vnd.infergrade.check+json"
SGR = re.compile(r"\x1b\[([0-9;]*)m")  # the terminal styles click.style writes: colours, bold, reset
COLOURS = {31: "#c62828", 32: "#2e7d32", 33: "#9a6700"}  # red, green, yellow, dark enough on white
_server: list[subprocess.Popen] = []
_folder: list[Path] = []


class Report:
    """What an inline check found: shown as the terminal summary in HTML (plain text where HTML is not shown),
    and as data under MIME for tools."""

    def __init__(self, target: str, doc: dict):
        self.target, self.doc = target, doc
        checks = [c for t in doc["topics"] for c in t["checks"]]
        self.statuses = {c["id"]: c["status"] for c in checks}
        self.waiting = {c["id"]: c["function"] for c in checks if c["status"] == "not_started"}

    def _repr_mimebundle_(self, include=None, exclude=None):
        from grader.exporters.terminal import summary

        text = summary(self.doc) if self.statuses else tr("{target}: no checks of its own", target=self.target)
        if self.doc["status"] != "completed":
            text += "\n" + tr("the checks did not complete: {error}", error=self.doc["error"])
        data = {"target": self.target, "status": self.doc["status"], "statuses": self.statuses,
                "waiting_for": self.waiting, "score": self.doc["score"], "max_score": self.doc["max_score"]}
        return {"text/html": _html(text), "text/plain": click.unstyle(text), MIME: data}


def _html(styled: str) -> str:
    """Terminal text styled by click as HTML: its colours and bold as spans, in a <pre> that keeps the layout."""
    out, colour, bold = [], None, False
    for i, piece in enumerate(SGR.split(styled)):
        if i % 2:  # the codes of one escape sequence
            for code in [int(c) for c in piece.split(";") if c] or [0]:
                colour = COLOURS.get(code, colour) if code not in (0, 39) else None
                bold = (bold or code == 1) and code not in (0, 22)
        elif piece:
            style = (f"color:{colour};" if colour else "") + ("font-weight:bold;" if bold else "")
            out.append(f'<span style="{style}">{html.escape(piece)}</span>' if style else html.escape(piece))
    return f"<pre style=\"white-space:pre-wrap\">{''.join(out)}</pre>"


def check(target: str) -> Report:
    """Run the public checks of `target` ("sampling.top_p_filter", or a whole topic "sampling") on the code
    this kernel ran, in the grader's sandbox; progress goes to the notebook's folder."""
    from IPython import get_ipython

    topic, _, name = target.partition(".")
    if topic not in _topics() or (name and name.split(".")[0] not in units(topic)):
        known = ', '.join(f'{topic}.{u}' for u in units(topic)) if topic in _topics() else ', '.join(_topics())
        raise ValueError(tr("unknown exercise {target}; this topic's are: {known}", target=repr(target), known=known))
    folder = _workspace()
    kernel.listen()
    (folder / f"{topic}.py").write_text(from_history(topic, list(get_ipython().user_ns["In"]), kernel.TAGS))
    doc = _ask({"folder": str(folder), "topic": topic, "units": [name.split(".")[0]] if name else None})
    progress.record_checks(Path.cwd(), doc)
    return Report(target, doc)


def _topics() -> list[str]:
    from grader.topics import all_topics

    return all_topics()


def _workspace() -> Path:
    if not _folder:
        _folder.append(Path(tempfile.mkdtemp(prefix="infergrade-inline-")))
        _folder[0].chmod(0o755)  # a root grader's child runs as nobody and must read it
        atexit.register(shutil.rmtree, _folder[0], ignore_errors=True)
    return _folder[0]


def start(lang: str | None = None) -> None:
    """Start the warm checking process now (it takes seconds), unless it runs already, and record the tags of
    the cells run from now on; `lang`, the notebook's language, is that of its check reports whatever shell opened
    the notebook (INFERGRADE_LANG, which the checking process inherits)."""
    if lang is not None:
        os.environ[language.VARIABLE] = language.choose(lang)
    kernel.listen()
    running = bool(_server) and _server[0].poll() is None
    if running and _server[0].args[-1] != language.current():  # started in another language
        _server[0].kill()
        _server[0].wait()
        running = False
    if not running:
        _server[:] = [subprocess.Popen([sys.executable, "-m", "grader.learner.notebooks.server",
                                        language.current()], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True, start_new_session=True)]
        atexit.register(_server[0].kill)


def _ask(request: dict) -> dict:
    """One request to the warm checking process, started on first use and again if it died."""
    start()
    server = _server[0]
    try:
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        line = server.stdout.readline()
    except BaseException:  # an interrupted check leaves a reply unread: the next check starts afresh
        server.kill()
        raise
    if not line:
        raise RuntimeError(tr("the checking process ended without an answer (see the kernel's log); run the cell "
                              "again"))
    return json.loads(line)
