"""The instructor's commands: grade a class, report on it, and export the autograder for Gradescope and CI."""
from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

import click
from tqdm import tqdm

from grader import batch, handout, interrupt, report
from grader.grading import BadInput, resolve_topics


@click.command("grade-batch")
@click.argument("submissions", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="folder for one results JSON per submission and grades.csv")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=2, show_default=True,
              help="submissions graded at once (one worker process each)")
@click.option("--topic", "-t", "topics", multiple=True, help="grade only these topics (repeatable) [all]")
@click.option("--hidden/--public", default=True, show_default=True, help="hidden checks too, or public only")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="one seed for the whole class [random]")
@click.option("--resume", is_flag=True, help="skip submissions already graded with this seed and these files")
def grade_batch(submissions: Path, out: Path, jobs: int, topics, hidden: bool, seed, resume: bool):
    """Grade every submission in SUBMISSIONS (one per subfolder, .zip or .tar.gz) into OUT.

    Exit 0 when every submission was graded (whatever the scores), 1 when some could not be, 130 or 143 when
    interrupted (what was graded is kept: run again with --resume).
    """
    if hidden and handout.is_handout():
        raise click.UsageError(handout.refusal("grade-batch --hidden"))
    try:
        chosen = resolve_topics(topics)
    except BadInput as exc:
        raise click.UsageError(str(exc)) from None
    seed = secrets.randbelow(2**31) if seed is None else seed
    found = [p for p in batch.submissions(submissions) if p.resolve() != out.resolve()]  # OUT may lie inside
    if not found:
        raise click.UsageError(f"no submission in {str(submissions)!r}: expected one subfolder or archive "
                               f"({', '.join(batch.ARCHIVES)}) per student")
    names = [batch.student(p) for p in found]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise click.UsageError(f"two submissions would be graded as {twice[0]!r}: rename one")
    out.mkdir(parents=True, exist_ok=True)
    results = {batch.student(p): out / f"{batch.student(p)}.json" for p in found}
    todo = [p for p in found if not (resume and batch.already_graded(p, results[batch.student(p)], hidden, seed))]
    click.echo(f"{len(found)} submissions, {len(found) - len(todo)} already graded; seed {seed}, "
               f"{'hidden' if hidden else 'public'} checks, {jobs} at once", err=True)
    failed = 0
    with interrupt.signals_interrupt():
        try:
            with tqdm(total=len(todo), unit="submission", file=sys.stderr, dynamic_ncols=True) as bar:
                for path, doc in batch.grade_all(todo, chosen, hidden, seed, jobs):
                    batch.write_results(doc, results[batch.student(path)])
                    failed += doc["status"] != "completed"
                    bar.set_postfix_str(f"{batch.student(path)}: {doc['score']:g}/{doc['max_score']:g}")
                    bar.update()
        except KeyboardInterrupt:
            pass
    docs = {name: json.loads(path.read_text()) for name, path in results.items() if path.exists()}
    csv = batch.write_csv(out, chosen, docs)
    click.echo(f"wrote {len(docs)} results and {csv}", err=True)
    if interrupt.received():
        sys.exit(interrupt.received().exit_code)
    sys.exit(1 if failed else 0)


@click.command("report")
@click.argument("results", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="the HTML file to write [RESULTS/report.html]")
def report_cmd(results: Path, out: Path | None):
    """Write a class report from a folder of results (grade-batch's OUT): shared misconceptions first."""
    docs = report.load(results)
    if not docs:
        raise click.UsageError(f"no results JSON in {str(results)!r} (run grade-batch first)")
    out = out or results / "report.html"
    out.write_text(report.render(docs), encoding="utf-8")
    click.echo(report.headline(report.shared_misconceptions(docs)))
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
    from grader import autograder

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
    click.echo(f"wrote {out}: setup.sh, run_autograder and {len(names) - 2} source files; grades "
               f"{', '.join(chosen)} with the hidden checks")
    click.echo(f"upload it on Gradescope (Configure Autograder, zip file) and set the autograder timeout above "
               f"{deadline + autograder.HARD_MARGIN_S:g} s", err=True)


@click.command("init-ci")
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=Path("ci"),
              show_default=True, help="the folder to write student/.github/... and instructor/.github/... into")
@click.option("--force", is_flag=True, help="replace workflows that exist")
def init_ci(out: Path, force: bool):
    """Write GitHub Actions workflows for GitHub Classroom: `check` on each student push, hidden grading for you."""
    from grader import ci

    try:
        written = ci.write_workflows(out, overwrite=force)
    except (FileExistsError, LookupError) as exc:
        raise click.UsageError(exc.args[0]) from None
    for path in written:
        click.echo(f"wrote {path}")
    click.echo("copy student/.github into the handout's repository (the Classroom template) and "
               "instructor/.github into yours", err=True)
