"""The `infergrade` command line: list, check, grade, hint, selftest, goldens, bundle, notebook, watch, progress."""
from __future__ import annotations

import json
import secrets
import signal
import sys
from pathlib import Path

import click

from grader import interrupt, leaving

interrupt.record_early()  # before any import that takes time: Ctrl-C from here on is an interrupted run
if interrupt.is_command_line():
    from grader.learner import early

    early.start_zygote(sys.argv)

from grader import language, output, progress, topics as topic_registry  # noqa: E402
from grader.instructor import handout  # noqa: E402
from grader.sandbox import limits  # noqa: E402
from grader.command_group import LazyGroup  # noqa: E402
from grader.learner.warm import client as warm  # noqa: E402

DEADLINE = click.option("--deadline", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
                        help="the whole run's time limit, after which the remaining checks time out "
                             "[60 s per topic]")
def _find_submission(ctx, param, value: Path | None) -> Path:
    """The --submission given, else the folder a student means from wherever they stand in the project: the
    working folder when it holds a topic module (inside exercises/), else `exercises/` here or in the nearest
    folder above that has one (as rustlings and git find their project)."""
    if value is not None:
        return value
    here = Path.cwd()
    if any((here / f"{t}.py").is_file() for t in topic_registry.all_topics()):
        return here
    return next((d / "exercises" for d in (here, *here.parents) if (d / "exercises").is_dir()), Path("exercises"))


SUBMISSION = click.option("--submission", "-s", type=click.Path(path_type=Path), default=None,
                          callback=_find_submission,
                          help="the folder holding your topic modules (sampling.py, ...) [exercises/, found here or "
                               "above; the working folder when it holds them]")
EXPORTS = ("json", "gradescope", "junit", "classroom")
EXPORT = click.option("--export", "exports", multiple=True, metavar="FORMAT=PATH",
                      help=f"also write the results in FORMAT ({', '.join(EXPORTS)}) to PATH (repeatable): one run, "
                           f"every file")


def _start_checking() -> None:
    """First of all in a command that runs checks: start the zygote (a fresh interpreter that imports torch
    meanwhile), then import torch here; other commands import nothing heavy."""
    from grader.sandbox.zygote import shared

    shared()
    import torch

    torch.set_num_threads(1)  # the grader's own tensors are small: no OpenMP pool spinning beside the children


def _fail(message: str) -> None:
    raise click.UsageError(message)


def _instructor_only(command: str) -> None:
    """Refuse, in plain words, a command that needs the reference and the model solutions (the instructor's)."""
    if handout.absent("reference") or handout.absent("solutions"):
        _fail(handout.refusal(command))


def _interrupt_code() -> int:
    return (interrupt.received() or interrupt.Interrupted(signal.SIGINT)).exit_code


def _resolve(topics, submission: Path, record_bad_input=None):
    """The topics and the grader's copy of the submission (`snapshot.Snapshot`, removed at exit), or a usage error
    naming what is wrong; says where it looked.

    `record_bad_input(message)` runs before the usage error (`grade` writes an error results file there).
    """
    from grader.grading import resolve_topics
    from grader.submission.folder import BadInput, resolve_submission

    try:
        chosen = resolve_topics(topics)
        snapshot, note = resolve_submission(submission)
    except BadInput as exc:
        if record_bad_input is not None:
            _fail(f"{exc} ({record_bad_input(str(exc))})")
        _fail(str(exc))
    if note:
        click.echo(note, err=True)
    if submission.suffix == ".ipynb" and not topics:  # a notebook grades the topics its tagged cells hold
        chosen = [t for t in chosen if (snapshot.folder / f"{t}.py").is_file()]
    return chosen, snapshot


def _chosen(topics) -> list[str]:
    """The topics asked for (every topic where none is), or a usage error naming one that does not exist."""
    from grader.grading import resolve_topics
    from grader.submission.folder import BadInput

    try:
        return resolve_topics(topics)
    except BadInput as exc:
        _fail(str(exc))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="infergrade", message="infergrade %(version)s")
def main():
    """Auto-graded exercises for LLM inference and serving."""
    limits.cap_grader_memory()


@main.command("list")
@SUBMISSION
def list_topics(submission: Path):
    """List the topics, their functions and your progress."""
    from grader.learner.listing import lines

    click.echo("\n".join(lines(submission)))


@main.command()
@click.argument("topics", nargs=-1)
@SUBMISSION
@click.option("--verbose", "-v", is_flag=True, help="also list the checks that passed")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="also write the results JSON here")
@click.option("--started", is_flag=True,
              help="only the topics whose module has a function written; fail only on what is wrong, not on what "
                   "is not started yet (a repository's checks on every push)")
@EXPORT
@DEADLINE
def check(topics, submission: Path, verbose: bool, out: Path | None, started: bool, exports, deadline):
    """Run the public checks of TOPICS (all by default); exit 0 iff every check ran and passed.

    A warm grader, which only `infergrade serve` starts, runs them when one of this grader runs: the same output,
    without loading torch again."""
    targets = _export_targets(exports)
    if (code := warm.hand_over([submission, *([out] if out else []), *(p for _, p in targets)])) is not None:
        sys.exit(code)  # a warm grader ran it (its output is written); else it runs here, cold
    _start_checking()
    from grader.exporters.terminal import summary
    from grader.grading import grade
    from grader.submission.stubs import started_topics

    chosen, snapshot = _resolve(topics, submission)
    writes = ([("json", out)] if out is not None else []) + targets
    to_stderr = _results_on_stdout(writes)
    not_started: dict[str, float] = {}
    if started:
        from grader.instructor.batch import topic_points

        begun = started_topics(snapshot.folder, chosen)
        if len(begun) < len(chosen):
            not_started = topic_points([t for t in chosen if t not in begun], hidden=False)
            click.echo(language.tr("not started yet (no function written): {topics}", topics=", ".join(not_started)),
                       err=to_stderr)
        chosen = begun
    with interrupt.signals_interrupt():
        doc = grade(snapshot, chosen, hidden=False, seed=0, deadline_s=deadline)
        interrupt.settle()
        for fmt, path in writes:
            _write(doc, path, fmt, not_started)
        progress.record_checks(progress.workspace(snapshot.given), doc)
        click.echo(summary(doc, verbose), err=to_stderr)
    if doc["status"] == "interrupted":
        sys.exit(_interrupt_code())
    done = {"passed", "not_started"} if started else {"passed"}
    all_passed = doc["status"] == "completed" and all(c["status"] in done for t in doc["topics"]
                                                      for c in t["checks"]) and \
        all(t["status"] != "error" for t in doc["topics"])
    sys.exit(0 if all_passed else 1)


def _export_targets(exports) -> list[tuple[str, Path]]:
    """(format, path) of each --export FORMAT=PATH, or a usage error naming the one that is wrong."""
    targets = []
    for item in exports:
        fmt, sep, path = item.partition("=")
        if not sep or fmt not in EXPORTS or not path:
            _fail(language.tr("--export takes FORMAT=PATH with FORMAT one of {formats}, got {given}",
                              formats=", ".join(EXPORTS), given=repr(item)))
        targets.append((fmt, Path(path)))
    return targets


@main.command("grade")
@SUBMISSION
@click.option("--topic", "-t", "topics", multiple=True, help="grade only this topic (repeatable)")
@click.option("--hidden", is_flag=True, help="also run the hidden checks (instructors)")
@click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=None, help="seed of the random cases [random]")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=Path("results.json"),
              show_default=True)
@click.option("--format", "fmt", type=click.Choice(EXPORTS), default="json", show_default=True)
@click.option("--allow-skipped", is_flag=True,
              help="exit 0 even when some checks could not run here (they still score 0 and stay in the maximum)")
@EXPORT
@DEADLINE
def grade_cmd(submission: Path, topics, hidden: bool, seed, out: Path, fmt: str, allow_skipped: bool, exports,
              deadline):
    """Grade a submission and write the results.

    Exit 0 when every check ran, whatever the score; 1 when grading could not complete or some checks could
    not run here (unless --allow-skipped); 2 for bad arguments; 130 or 143 when interrupted.
    """
    targets = _export_targets(exports)
    if hidden and handout.is_handout():  # said before anything is written into the student's folder
        _fail(language.tr("the hidden checks are not in the student handout: `grade --hidden` runs on your "
                          "instructor's side; `grade` without --hidden grades the public checks"))
    _start_checking()
    from grader.exporters.terminal import summary
    from grader.grading import bad_input_document, grade

    seed = secrets.randbelow(2**31) if seed is None else seed
    # the default results.json is the grader's name, not the user's: a FIFO or device there is replaced too
    named = click.get_current_context().get_parameter_source("out") is not click.core.ParameterSource.DEFAULT

    def record_bad_input(message: str) -> str:
        known = [t for t in topics if t in topic_registry.all_topics()]
        _write(bad_input_document(message, submission, known, hidden, seed), out, fmt, named=named)
        return language.tr("an error results file was written to {path}", path=out)

    chosen, snapshot = _resolve(topics, submission, record_bad_input)
    with interrupt.signals_interrupt():
        doc = grade(snapshot, chosen, hidden=hidden, seed=seed, deadline_s=deadline)
        interrupt.settle()
        _write(doc, out, fmt, named=named)
        for target_fmt, path in targets:
            _write(doc, path, target_fmt)
        click.echo(summary(doc), err=_results_on_stdout([(fmt, out)] + targets))
        click.echo(language.tr("wrote {files}", files=", ".join(f"{path} ({f})" for f, path in [(fmt, out)] + targets)),
                   err=True)
    if doc["status"] == "interrupted":
        sys.exit(_interrupt_code())
    if doc["status"] != "completed":
        sys.exit(1)
    if doc["incomplete"] and not allow_skipped:
        click.echo(click.style(language.tr("not every check could run here, so this is not a full grade (install "
                                           "what is missing, or pass --allow-skipped)"), fg="red"), err=True)
        sys.exit(1)
    sys.exit(0)


def _results_on_stdout(writes: list[tuple[str, Path]]) -> bool:
    """Whether a results file goes to standard output (`-`, /dev/stdout): it then owns stdout, and what people read
    goes to stderr."""
    return any(output.descriptor(path) == 1 for _, path in writes)


def _write(doc: dict, out: Path, fmt: str, not_started: dict[str, float] | None = None, named: bool = True) -> None:
    """Write the results in `fmt` to `out` (`output.write_text`: `-` is standard output, a link is replaced, never
    followed; a device or FIFO the user `named` is written into); `not_started` {topic: points} are the topics
    `check --started` left out, which Classroom's maximum keeps."""
    if fmt == "json":
        text = json.dumps(doc, indent=2) + "\n"
    elif fmt == "gradescope":
        from grader.exporters.gradescope import to_gradescope
        text = json.dumps(to_gradescope(doc), indent=2) + "\n"
    elif fmt == "junit":
        from grader.exporters.junit import to_junit
        text = to_junit(doc)
    else:
        from grader.exporters.classroom import classroom_json
        text = classroom_json(doc, not_started)
    try:
        output.write_text(text, out, named)
    except OSError as exc:  # a FIFO nobody reads, a refused block device, a full disk: said plainly
        _fail(language.tr("could not write the results to {path}: {reason}", path=out, reason=exc.strerror or exc))


@main.command()
@click.argument("target", metavar="TOPIC.FUNCTION")
@click.option("--level", "-l", type=click.IntRange(1, 3), default=None,
              help="1 names the idea, 2 outlines the approach, 3 is nearly pseudocode [next unread]")
@SUBMISSION
def hint(target: str, level, submission: Path):
    """Show a hint for one exercise function."""
    from grader.learner.hinting import show

    show(target, level, submission)


@main.command()
@click.option("--topic", "-t", "topics", multiple=True, help="only this topic (repeatable)")
def selftest(topics):
    """Prove the checks: solutions full marks, stubs zero, every mutant caught with its misconception id."""
    _instructor_only("selftest")
    _start_checking()
    from grader.instructor.selftest import check_topic

    chosen = _chosen(topics)
    ok = True
    with interrupt.signals_interrupt():
        try:
            for topic in chosen:
                for v in check_topic(topic):
                    ok &= v.ok
                    mark = click.style("ok  ", fg="green") if v.ok else click.style("BAD ", fg="red")
                    click.echo(f"{mark} {topic:16} {v.subject:44} {v.score:g}/{v.max_score:g}  {v.detail[:400]}")
        except KeyboardInterrupt as exc:
            stopped = interrupt.as_interrupted(exc)
            click.echo(click.style(f"selftest {stopped.reason}: not every verdict was reached", fg="red"))
            sys.exit(stopped.exit_code)
    click.echo("selftest passed" if ok else click.style("selftest FAILED", fg="red"))
    sys.exit(0 if ok else 1)


@main.command()
@click.argument("topics", nargs=-1)
def goldens(topics):
    """Regenerate the stored reference outputs of the public checks (instructors)."""
    _instructor_only("goldens")
    _start_checking()
    from grader.engine import goldens as store
    from grader.exporters.terminal import summary
    from grader.grading import grade
    from grader.instructor.selftest import SOLUTIONS_DIR

    for topic in _chosen(topics):
        doc = grade(SOLUTIONS_DIR, [topic], hidden=False, seed=0, record_goldens=True, with_progress=False)
        bad = [c["id"] for t in doc["topics"] for c in t["checks"] if c["status"] not in ("passed", "skipped")]
        if bad or doc["status"] != "completed":
            click.echo(summary(doc))
            _fail(f"the solutions do not pass the public checks of {topic}; goldens not written")
        store.recorded(topic).save()
        click.echo(f"{topic}: {len(store.recorded(topic).values)} goldens written")


@main.command()
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
def bundle(out: Path):
    """Write the student bundle to OUT: stubs, public checks, goldens, hints; no solutions, reference or hidden checks."""
    _instructor_only("bundle")
    from grader.instructor.bundle import write_bundle

    try:
        files = write_bundle(out)
    except FileExistsError as exc:
        _fail(str(exc))
    click.echo(f"wrote {len(files)} files to {out}")


@main.command()
@click.argument("topic")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="the folder to write TOPIC.ipynb into")
@click.option("--force", is_flag=True, help="replace an existing notebook (and the work in it)")
@SUBMISSION
def notebook(topic: str, out: Path, force: bool, submission: Path):
    """Write a self-study notebook for TOPIC: the idea, your functions (from your TOPIC.py where you have changed
    it, else the stub's) with inline checks, experiments."""
    from grader.learner.notebooks.build import write

    (chosen,) = _chosen([topic])
    try:
        mine = submission / f"{chosen}.py"
        stub = topic_registry.EXERCISES_DIR / f"{chosen}.py"
        source = mine if mine.is_file() and mine.read_bytes() != stub.read_bytes() else None
        path = write(chosen, out, overwrite=force, source=source)
    except (ValueError, FileExistsError) as exc:  # a TOPIC.py that does not parse, or a notebook already there
        _fail(str(exc))
    click.echo(language.tr("wrote {path} with your functions from {source}", path=path, source=source) if source
               else language.tr("wrote {files}", files=path))
    click.echo(language.tr("open it with `jupyter lab {path}` (pip install jupyterlab), or in VS Code", path=path))


@main.command()
@click.argument("topic", required=False)
@SUBMISSION
def watch(topic, submission: Path):
    """Re-check a topic each time you save its file (TOPIC, else the next one to do); Ctrl-C stops."""
    _start_checking()
    from grader.learner.watch import suggest, watch as run_watch

    chosen, snapshot = _resolve([topic] if topic else [], submission)
    snapshot.remove()  # each check of the watch takes a copy of its own
    if submission.suffix == ".ipynb":
        _fail(language.tr("watch follows your topic files; for a notebook, run its check cells"))
    first = topic or suggest(snapshot.given) or chosen[0]
    try:
        with interrupt.signals_interrupt():  # the first Ctrl-C stops the checks or the wait, whichever runs
            run_watch(snapshot.given, chosen, first)
    except KeyboardInterrupt:
        click.echo("\n" + language.tr("stopped watching"))


@main.command("progress")
@SUBMISSION
def progress_cmd(submission: Path):
    """Your progress: every topic and function, not started, failing or passing; hints read; what is next."""
    from grader.learner.overview import render

    click.echo(render(submission if submission.is_dir() else submission.resolve().parent))


language.add_option(main)  # --lang on the group and every command


def command_line() -> None:
    """The `infergrade` command (pyproject's script, `python -m grader`): `main`, left without the teardown."""
    leaving.run_as_command(lambda: main(prog_name="infergrade"))
