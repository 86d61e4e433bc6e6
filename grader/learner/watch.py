"""`infergrade watch`: re-check a topic each time its file is saved, from this warm process (zygote, engine).

A save first re-runs the checks of the functions whose code changed (and of those that use them) and shows the
screen; then it confirms the topic's other checks and shows it again: quick feedback, never a stale verdict.
"""
from __future__ import annotations

import ast
import time
from pathlib import Path

import click

from grader import hints, progress, topics as topic_registry
from grader.exporters.terminal import printed_lines
from grader.language import tr
from grader.learner.overview import function_state
from grader.learner.select_checks import check_units, unit_of
from grader.wording import count, fitted, pad, screen_width, wrap, wrap_width

POLL_S = 0.05
SETTLE_S = 0.02  # a save is read once the file has stopped changing for this long (editors write in steps)
SHOWN_LINES = 12
STATE_COLORS = {"passing": "green", "failing": "red", "not started": "yellow", "blocked": "yellow"}


def units_source(path: Path) -> dict[str, str] | None:
    """{top-level name: its source} and under "" the rest of the module; None when the file does not parse."""
    try:
        text = path.read_text()
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return None
    parts = {"": ""}
    for node in tree.body:
        source = "\n".join(ast.unparse(d) for d in getattr(node, "decorator_list", ()))
        source += ast.get_source_segment(text, node) or ""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            parts[node.name] = source
        else:
            parts[""] += source + "\n"
    return parts


def affected(before: dict[str, str] | None, after: dict[str, str] | None) -> set[str] | None:
    """The top-level names whose code changed and those that use them; None when everything must re-run."""
    if before is None or after is None or before[""] != after[""]:
        return None
    changed = {n for n in before.keys() | after.keys() if before.get(n) != after.get(n)}
    uses = {n: {x.id for x in ast.walk(ast.parse(s)) if isinstance(x, ast.Name)} for n, s in after.items() if n}
    while more := {n for n, names in uses.items() if names & changed} - changed:
        changed |= more
    return changed


class Watcher:
    """The latest verdict of each check of the watched topics, kept from one save to the next."""

    def __init__(self, folder: Path, topics: list[str]):
        self.folder, self.topics = folder, topics
        self.stamps = {t: self.stamp(t) for t in topics}
        self.sources = {t: units_source(self.path(t)) for t in topics}
        self.checks: dict[str, dict[str, dict]] = {}
        self.errors: dict[str, str | None] = {}

    def path(self, topic: str) -> Path:
        return self.folder / f"{topic}.py"

    def stamp(self, topic: str):
        try:
            info = self.path(topic).stat()
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def saved(self) -> str | None:
        """The first watched topic whose file changed since it was last looked at."""
        for topic in self.topics:
            if (stamp := self.stamp(topic)) != self.stamps[topic]:
                while True:
                    time.sleep(SETTLE_S)
                    if (settled := self.stamp(topic)) == stamp:
                        break
                    stamp = settled
                self.stamps[topic] = stamp
                return topic
        return None

    def run(self, topic: str, units: set[str | None] | None) -> tuple[float, int]:
        """Run the checks of `units` (None: every check; a None in the set: the checks without a function) and
        keep their verdicts; the seconds it took and how many checks ran."""
        start = time.perf_counter()
        doc = check_units(self.folder, topic, units)
        if doc["status"] == "interrupted":  # Ctrl-C while the checks ran: the engine stopped them
            raise KeyboardInterrupt
        entry = doc["topics"][0] if doc["topics"] else {"status": "error", "message": doc["error"], "checks": []}
        fresh = {c["id"]: c for c in entry["checks"]}
        self.errors[topic] = entry["message"] if entry["status"] == "error" else None
        self.checks[topic] = fresh if units is None else self.checks.get(topic, {}) | fresh
        progress.record_checks(self.folder, doc)
        return time.perf_counter() - start, len(fresh)

    def recheck(self, topic: str) -> tuple[float, int, set[str | None] | None]:
        """The first run after a save: the changed functions' checks, or every check after an error or a change
        outside the functions; the seconds, the checks run and the functions they cover (None: all)."""
        before, after = self.sources[topic], units_source(self.path(topic))
        self.sources[topic] = after
        units = affected(before, after) if topic in self.checks and not self.errors.get(topic) else None
        seconds, count = self.run(topic, units)
        return seconds, count, units


def screen(watcher: Watcher, topic: str, note: str) -> str:
    """One screen, wrapped at words to the terminal's width: each function's verdict, the first failure with its
    misconception, what the code printed and its hint command, and what comes next."""
    width = screen_width()
    checks = list(watcher.checks.get(topic, {}).values())
    title = f"infergrade watch — {topic}.py"
    lines = [click.style(title, bold=True) + line.removeprefix(title) if line.startswith(title) else line
             for line in wrap(tr("{title}  ({note})", title=title, note=note), width)] + [""]
    by_unit: dict[str, list[dict]] = {}
    for c in checks:
        by_unit.setdefault(unit_of(c["hint"]) or tr("(other)"), []).append(c)
    for unit, group in by_unit.items():
        passed = sum(c["status"] == "passed" for c in group)
        state = function_state([{"status": c["status"], "passed": c["status"] == "passed", "function": c["hint"],
                                 "waiting_for": c["function"]} for c in group])
        waits = [w for c in group if (w := progress.blocked_by(c["status"], c["hint"], c["function"]))]
        said = dict(checks=count(len(waits), "check"), functions=", ".join(sorted(set(waits))))
        waiting = (tr("({checks} waits for {functions})", **said) if len(waits) == 1 else
                   tr("({checks} wait for {functions})", **said))
        shown = tr(state)
        row = wrap(f"{pad(shown, 12)} {pad(unit, 28)} {passed}/{count(len(group), 'check')}" +
                   (f" {waiting}" if waits else ""), width, "  ", " " * 13)
        lines += [row[0].replace(shown, click.style(shown, fg=STATE_COLORS[state]), 1), *row[1:]]
    lines.append("")
    error = watcher.errors.get(topic)
    failed = [c for c in checks if c["status"] not in ("passed", "not_started", "skipped")]
    failing = next((c for c in failed if not progress.blocked_by(c["status"], c["hint"], c["function"])),
                   next(iter(failed), None))  # a check that fails in its own function first
    if error:
        lines += fitted(tr("{module} could not be checked:", module=f"{topic}.py"), width, fg="red")
        lines += [part for line in error.splitlines()[:SHOWN_LINES] for part in wrap(line, width, "  ")]
    elif failing:
        lines += _failure(topic, failing, width)
    waiting = next((c for c in checks if c["status"] == "not_started"
                    and not progress.blocked_by(c["status"], c["hint"], c["function"])),
                   next((c for c in checks if c["status"] == "not_started"), None))
    head = tr("next: ")
    following = wrap(head + _next(watcher.folder, topic, error or failing, waiting), width, "", "      ")
    lines += [click.style(head.rstrip(), bold=True) + following[0].removeprefix(head.rstrip()), *following[1:]]
    return "\n".join(lines)


def _failure(topic: str, failing: dict, width: int) -> list[str]:
    """The first failure as `check` shows it: its message, the misconception's explanation in full (its symptom and
    why, never a hint's level), what the code printed, and the hint command."""
    lines = fitted(tr("first failure: {id} — {title}", id=failing["id"], title=failing["title"]), width, fg="red")
    lines += [part for line in failing["message"].splitlines()[:SHOWN_LINES] for part in wrap(line, width, "  ")]
    why = failing["misconception"] and hints.explain(topic, failing["misconception"])
    if failing["misconception"]:
        lines += wrap(tr("misconception {id}: {why}", id=failing["misconception"], why=why.strip()) if why else
                      tr("misconception {id}", id=failing["misconception"]), width, "  ")
    if failing.get("output"):
        lines += printed_lines(failing["output"], "  ", width)
    if failing["hint"]:
        lines.append("  " + tr("hint: infergrade hint {hint}", hint=failing["hint"]))
    return lines


def _next(folder: Path, topic: str, failing, waiting: dict | None) -> str:
    if failing:
        return tr("fix {module} and save", module=f"{topic}.py")
    if waiting:
        return tr("write {function} (stuck? infergrade hint {hint})",
                  function=waiting["function"] or unit_of(waiting["hint"]), hint=waiting["hint"])
    following = suggest(folder, after=topic)
    return tr("every public check of {topic} passes: infergrade watch {following}", topic=topic,
              following=following) if following else tr("every topic's public checks pass")


def suggest(folder: Path, after: str | None = None) -> str | None:
    """The next topic in course order (after `after`) whose recorded checks are not all passing."""
    done = progress.load(folder)["checks"]
    order = topic_registry.all_topics()
    start = order.index(after) + 1 if after in order else 0
    for topic in [t for t in order[start:] + order[:start] if t != after]:
        seen = [v["passed"] for k, v in done.items() if k.startswith(f"{topic}.")]
        if not (seen and all(seen)):
            return topic
    return None


def watch(folder: Path, topics: list[str], first: str) -> None:
    """Check `first`, then re-check each watched topic when its file is saved, until Ctrl-C."""
    watcher = Watcher(folder, topics)
    seconds, checked = watcher.run(first, None)
    _show(watcher, first, tr("checked {checks} in {seconds} s; save to re-check", checks=count(checked, "check"),
                             seconds=f"{seconds:.2f}"))
    while True:
        topic = watcher.saved()
        if topic is None:
            time.sleep(POLL_S)
            continue
        seconds, checked, units = watcher.recheck(topic)
        note = tr("re-checked {checks} in {seconds} s", checks=count(checked, "check"), seconds=f"{seconds:.2f}")
        if units is None:
            _show(watcher, topic, note)
            continue
        _show(watcher, topic, tr("{note}; confirming the others…", note=note))
        newer = watcher.saved()
        if newer is not None:  # a newer save is re-checked first
            watcher.stamps[newer] = None
            continue
        rest = {u for u in topic_registry.api(topic) if "." not in u} | {None}
        more, count2 = watcher.run(topic, rest - units)
        _show(watcher, topic, tr("{note}, then the other {count} in {seconds} s", note=note, count=count2,
                                 seconds=f"{more:.2f}"))


def _show(watcher: Watcher, topic: str, note: str) -> None:
    click.clear()
    click.echo(screen(watcher, topic, note))
    status = tr("[{time}] {note} — Ctrl-C to stop watching", time=time.strftime("%H:%M:%S"), note=note)
    click.echo("\n".join(fitted(status, wrap_width())), err=True)
