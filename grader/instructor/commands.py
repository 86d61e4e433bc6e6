"""The instructor's commands: grade a class, report on it, and export the autograder for Gradescope and CI."""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import sys
from pathlib import Path

import click
from tqdm import tqdm

from grader import interrupt, output, topics as topic_registry
from grader.instructor import batch, grades, handout, report
from grader.language import tr
from grader.text import one_line
from grader.wording import count


class ShardOption(click.ParamType):
    """`K/N`: shard K of N (1 ≤ K ≤ N) of a class, as (K, N)."""
    name = "K/N"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        found = re.fullmatch(r"(\d+)/(\d+)", str(value), re.ASCII)
        if not found or not 1 <= int(found[1]) <= int(found[2]):
            self.fail(f"--shard takes K/N, shard K of N with 1 ≤ K ≤ N (say 2/4), got {str(value)!r}", param, ctx)
        return int(found[1]), int(found[2])


@click.command("grade-batch")
@click.argument("submissions", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="folder for one results JSON per submission, grades.csv and batch.json (the class's seed)")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="submissions graded at once (one worker process each) [the cores available]")
@click.option("--topic", "-t", "topics", multiple=True, type=click.Choice(topic_registry.all_topics()),
              metavar="TOPIC", help="grade only these topics (repeatable) [all, or OUT's]")
@click.option("--hidden/--public", default=True, show_default=True, help="hidden checks too, or public only")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="one seed for the whole class [OUT's, else random]")
@click.option("--resume", is_flag=True, help="skip submissions already graded with this seed and these files")
@click.option("--shard", type=ShardOption(), default=None,
              help="grade only shard K of N of the class (every N-th student by sorted name, from the K-th), one "
                   "job of many; `infergrade merge` joins the N output folders")
@click.pass_context
def grade_batch(ctx: click.Context, submissions: Path, out: Path, jobs, topics, hidden: bool, seed, resume: bool,
                shard):
    """Grade every submission in SUBMISSIONS (one per subfolder, zip or tar archive) into OUT.

    OUT/batch.json records the class's seed, mode and topics (and the shard): a later run into OUT (--resume) uses
    them, and refuses others. Exit 0 when every submission was graded (whatever the scores), 1 when some could not
    be, 2 for bad arguments, 130 or 143 when interrupted (what was graded is kept: run again with --resume).
    """
    from grader.instructor import similarity  # numpy and copydetect: only where a class is graded

    explicit_mode = ctx.get_parameter_source("hidden") is not click.core.ParameterSource.DEFAULT
    try:
        manifest = batch.Manifest.read(out)
        earlier = {d["seed"] for d in report.load(out).values()} if manifest is None and out.is_dir() else set()
        seed, mode, chosen = batch.settle(manifest, seed, hidden if explicit_mode else None,
                                          list(dict.fromkeys(topics)) or None, earlier)
        batch.settle_shard(manifest, shard)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    hidden = hidden if mode is None else mode
    chosen = chosen or topic_registry.all_topics()
    seed = secrets.randbelow(2**31) if seed is None else seed
    jobs = jobs or len(os.sched_getaffinity(0))
    if hidden and handout.is_handout():
        raise click.UsageError(handout.refusal("grade-batch --hidden"))
    found = [p for p in batch.submissions(submissions) if p.resolve() != out.resolve()]  # OUT may lie inside
    if not found:
        raise click.UsageError(f"no submission in {str(submissions)!r}: expected one subfolder or archive "
                               f"({', '.join(batch.ARCHIVES)}) per student")
    names = [batch.student(p) for p in found]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise click.UsageError(f"two submissions would be graded as {twice[0]!r}: rename one")
    if Path(batch.MANIFEST).stem in names:
        raise click.UsageError(f"a submission named {Path(batch.MANIFEST).stem!r} would overwrite OUT's "
                               f"{batch.MANIFEST}: rename it")
    part = None
    if shard:
        part = batch.Shard(*shard, len(names), batch.class_digest(names), batch.shard_of(names, *shard))
        picked = set(part.students)
        found = [p for p in found if batch.student(p) in picked]
    out.mkdir(parents=True, exist_ok=True)
    max_scores = manifest.max_scores if manifest else {}
    batch.Manifest(seed, hidden, chosen, max_scores, part).write(out)
    results = {p: out / f"{batch.student(p)}.json" for p in found}
    sliced = f" (shard {part.label} of a class of {part.class_size})" if part else ""
    click.echo(f"{len(found)} submissions{sliced}; seed {seed}{' (from ' + batch.MANIFEST + ')' if manifest else ''}"
               f", {'hidden' if hidden else 'public'} checks of {', '.join(chosen)}, {jobs} at once", err=True)
    docs: dict[str, dict | None] = {batch.student(p): None for p in found}
    skipped = 0
    with interrupt.signals_interrupt():
        try:
            if interrupt.received():  # while the command line was starting
                raise interrupt.received()
            with tqdm(total=len(found), unit="submission", file=sys.stderr, dynamic_ncols=True) as bar, \
                    contextlib.closing(batch.grade_all(found, chosen, hidden, seed, jobs,
                                                       results if resume else None)) as outcomes:
                for outcome in outcomes:
                    name, result = batch.student(outcome.path), results[outcome.path]
                    if outcome.doc is None:
                        skipped += 1
                        docs[name] = json.loads(result.read_text())
                    else:
                        batch.write_results(outcome.doc, result)
                        similarity.keep_sources(out, name, outcome.sources)
                        docs[name] = outcome.doc
                    max_scores.update(outcome.max_scores or {})
                    doc = docs[name]
                    bar.set_postfix_str(f"{one_line(name)}: " + (f"{doc['score']:g}/{doc['max_score']:g}"
                                                                 if doc["status"] == "completed" else doc["status"]))
                    bar.update()
        except KeyboardInterrupt:
            pass
    for doc in filter(None, docs.values()):
        max_scores.update({t["id"]: t["max_score"] for t in doc["topics"] if t["checks"]})
    batch.Manifest(seed, hidden, chosen, max_scores, part).write(out)
    pairs = similarity.class_pairs(out, chosen)
    csv = grades.write_csv(out, chosen, docs, max_scores, similarity.by_student(pairs))
    graded = [d for d in docs.values() if d is not None]
    click.echo(f"wrote {len(graded) - skipped} results ({skipped} already graded) and {csv}", err=True)
    flagged = [p for p in pairs if p.match.flagged]
    if flagged:
        click.echo(f"similarity: {len(flagged)} module{'' if len(flagged) == 1 else 's'} at or above "
                   f"{similarity.FLAG:.0%} of another (grades.csv's similarity column; `infergrade report` shows "
                   f"the matching lines). It flags; no score changed", err=True)
    stopped = interrupt.received()
    if stopped:
        command = shlex.join(["infergrade", "grade-batch", str(submissions), "--out", str(out), "--resume",
                              *(["--shard", part.label] if part else [])])
        click.echo(f"{stopped.reason}: {len(graded)} of {len(found)} submissions graded. To grade the rest with "
                   f"the same seed, run:\n  {command}", err=True)
        sys.exit(stopped.exit_code)
    sys.exit(1 if any(d["status"] != "completed" for d in graded) else 0)


@click.command("merge")
@click.argument("shards", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="a new folder for the class: every results JSON, grades.csv, batch.json and report.html")
def merge_cmd(shards, out: Path):
    """Join the output folders of `grade-batch --shard K/N` (all N of them) into one class folder in OUT.

    Refused (exit 2, nothing written) unless the folders are every shard of one class, each once, graded with one
    seed, mode, set of topics and grader version. Exit 0 when every submission was graded, 1 when some could not
    be (as grade-batch).
    """
    from grader.instructor import merge

    try:
        manifest, docs = merge.merge(list(shards), out)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    graded = {name: doc for name, doc in docs.items() if doc is not None}
    if graded:
        click.echo(report.headline(report.shared_misconceptions(graded)))
    failed = sum(d["status"] != "completed" for d in graded.values())
    click.echo(f"merged {count(len(shards), 'shard')}: {len(docs)} submissions ({len(graded) - failed} graded, "
               f"{failed} could not be graded, {len(docs) - len(graded)} not graded before their shard was stopped), "
               f"seed {manifest.seed}; wrote {out / 'grades.csv'}, {out / batch.MANIFEST}"
               f"{', ' + str(out / 'report.html') if graded else ''}", err=True)
    sys.exit(1 if any(d is None or d["status"] != "completed" for d in docs.values()) else 0)


@click.command("report")
@click.argument("results", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="the HTML file to write [RESULTS/report.html, or report-anonymous.html]")
@click.option("--anonymous", is_flag=True, help="leave out every student's name (a report to share)")
def report_cmd(results: Path, out: Path | None, anonymous: bool):
    """Write a class report from a folder of results (grade-batch's OUT): shared misconceptions first."""
    from grader.instructor import similarity

    docs = report.load(results)
    if not docs:
        raise click.UsageError(f"no results JSON in {str(results)!r} (run grade-batch first)")
    out = out or results / ("report-anonymous.html" if anonymous else "report.html")
    topics = sorted({t["id"] for doc in docs.values() for t in doc["topics"]})
    output.write_text(report.render(docs, anonymous, similarity.class_pairs(results, topics)), out)
    click.echo(report.headline(report.shared_misconceptions(docs)))
    warning = report.seed_warning(docs)
    if warning:
        click.echo(click.style(tr("warning: {warning}", warning=warning), fg="red"), err=True)
    click.echo(f"wrote {out}", err=True)


@click.command("gradescope")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--topic", "-t", "topics", multiple=True,
              help="grade only these topics, say one assignment per topic (repeatable) [all]")
@click.option("--deadline", type=click.FloatRange(min=10), default=480, show_default=True, metavar="SECONDS",
              help="the grader's time limit per submission; it is stopped 60 s later, so set Gradescope's "
                   "autograder timeout above the sum")
@click.option("--leaderboard", is_flag=True, help="also send a Gradescope leaderboard (score, grading time)")
@click.option("--force", is_flag=True, help="replace OUT if it exists")
def gradescope_cmd(out: Path, topics, deadline: float, leaderboard: bool, force: bool):
    """Write the Gradescope autograder zip to OUT: setup.sh, run_autograder and the grader with its reference.

    Each submission is graded with the hidden checks in its own container; results.json is always written, and
    says so when grading failed.
    """
    from grader.instructor import autograder
    from grader.grading import resolve_topics
    from grader.submission.folder import BadInput

    try:
        chosen = resolve_topics(topics)
    except BadInput as exc:
        raise click.UsageError(str(exc)) from None
    if out.exists() and not force:
        raise click.UsageError(f"{out} already exists (pass --force to replace it)")
    try:
        names = autograder.write_zip(out, list(topics and chosen), deadline, leaderboard)
    except (FileNotFoundError, LookupError) as exc:
        raise click.UsageError(exc.args[0]) from None
    total = sum(batch.topic_points(chosen, hidden=True).values())
    click.echo(f"wrote {out}: setup.sh, run_autograder and {len(names) - 2} source files; grades "
               f"{', '.join(chosen)} with the hidden checks")
    click.echo(f"set the assignment's total points on Gradescope to {total:g} (the public and hidden checks of "
               f"{'these topics' if len(chosen) > 1 else chosen[0]})")
    click.echo(f"upload it on Gradescope (Configure Autograder, zip file) and set the autograder timeout above "
               f"{deadline + autograder.HARD_MARGIN_S:g} s", err=True)


@click.command("init-ci")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=Path("ci"),
              show_default=True, help="the folder to write student/.github/... and instructor/.github/... into")
@click.option("--force", is_flag=True, help="replace workflows that exist")
@click.option("--shards", type=click.IntRange(1, 256), default=1, show_default=True, metavar="N",
              help="the instructor's workflow grades the class in N jobs of `grade-batch --shard K/N`, joined by "
                   "`infergrade merge` into one class folder: more for a class one job cannot grade in 60 minutes")
def init_ci(out: Path, force: bool, shards):
    """Write GitHub Actions workflows for GitHub Classroom: `check` on each student push, hidden grading for you."""
    from grader.instructor import ci

    if handout.is_handout():  # the instructor's workflow grades with the reference, which the handout leaves out
        raise click.UsageError(handout.refusal("init-ci"))
    try:
        written = ci.write_workflows(out, overwrite=force, shards=shards)
    except (FileExistsError, LookupError) as exc:
        raise click.UsageError(exc.args[0]) from None
    for path in written:
        click.echo(f"wrote {path}")
    click.echo("copy student/.github into the handout's repository (the Classroom template) and "
               "instructor/.github into yours", err=True)
    click.echo(f"your workflow grades the class in {count(shards, 'job')} and keeps one class folder (grades.csv, "
               f"report.html, every results JSON) as the artifact infergrade-class", err=True)
