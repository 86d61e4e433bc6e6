"""Grading latency and memory: `infergrade check` against the floor of `import torch`, cold and with a warm
grader, the re-check of `infergrade watch` after a save, each topic's hidden grade and the whole hidden grade.

Run: python3 bench/grading.py [--runs 7] [--quick | --only-watch | --only-warm]
Each figure is the median wall time of several runs of a fresh process, beside the median CPU time (user + sys)
of its whole process tree (the grader, the zygote and every sandboxed child, all reaped below it): on a shared,
loaded machine the CPU time is the stable figure. Peak memory is the largest sum of the proportional set size (PSS: shared pages split between the processes sharing them) over the grader and every
process below it (zygote and sandboxed children), sampled every 10 ms in one more run. Reading PSS costs CPU
(a third of a core on 2 cores), so the timed runs are not sampled.
"""
from __future__ import annotations

import argparse
import ast
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
CHECK_OVER_TORCH = 0.35  # seconds `check TOPIC` may take over `import torch` (issue 20's target)
WARM_CHECK = 0.8  # seconds `check TOPIC` may take when a warm grader runs (issue 28's target)
HIDDEN_PER_TOPIC = 1.5  # seconds per topic of a hidden grade of every topic (issue 20's target)
sys.path.insert(0, str(REPO))

from grader.topics import all_topics  # noqa: E402 - the checkout's own, whatever is installed


def tree(pid: int) -> dict[int, int]:
    """{pid: depth below `pid`} for every process of its tree now (the children of each of its threads)."""
    found, stack = {}, [(pid, 0)]
    while stack:
        p, depth = stack.pop()
        found[p] = depth
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack += [(int(c), depth + 1) for c in f.read().split()]
        except OSError:
            continue
    return found


def pss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def timed(cmd: list[str], sample: bool, env: dict | None = None) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds of the process tree, exit code and (when `sample`) peak PSS of one run of `cmd`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak = 0
    while sample and os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:  # not reaped
        peak = max(peak, sum(pss_bytes(p) for p in tree(proc.pid)))
        time.sleep(0.01)
    _, status, usage = os.wait4(proc.pid, 0)  # the rusage of the child and of everything it reaped
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, proc.returncode, peak


def measure(label: str, cmd: list[str], runs: int, expect_code: int | None = 0,
            env: dict | None = None) -> tuple[float, float, int]:
    """Median wall and CPU seconds of `runs` runs, and the peak PSS of one more (sampled) run."""
    results = [timed(cmd, sample=False, env=env) for _ in range(runs)] + [timed(cmd, sample=True, env=env)]
    codes = {r[2] for r in results}
    if expect_code is not None and codes != {expect_code}:
        print(f"  ! {label}: exit codes {sorted(codes)}, expected {expect_code}")
    wall = statistics.median(r[0] for r in results[:-1])
    cpu = statistics.median(r[1] for r in results[:-1])
    peak = results[-1][3]
    print(f"{label:58} wall {wall:6.2f} s (min {min(r[0] for r in results[:-1]):.2f}, max "
          f"{max(r[0] for r in results[:-1]):.2f})  CPU {cpu:6.2f} s  n={runs}  peak PSS {peak / 2**20:5.0f} MiB")
    return wall, cpu, peak


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and every process below it, those they have reaped included (/proc/PID/stat)."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                total += sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:15])  # utime stime cutime cstime
        except OSError:
            continue
    return total / os.sysconf("SC_CLK_TCK")


def warm_check(runs: int, cold: tuple[float, float] | None = None) -> None:
    """`check sampling` cold (INFERGRADE_WARM=0) against the same check handed to a warm grader (`infergrade
    serve`, in a runtime folder of its own): median wall time, and CPU time of the client's process tree plus what
    the warm grader's tree (its fork of the run, its zygote and every sandbox) spent meanwhile; `cold`: the cold
    figures (wall, CPU) where they were just measured."""
    runtime = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    env = {**{k: v for k, v in os.environ.items() if k != "INFERGRADE_WARM"}, "XDG_RUNTIME_DIR": str(runtime)}
    cmd = [PY, "-m", "grader", "check", "sampling", "--submission", "solutions"]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cold, cold_cpu = cold or measure("infergrade check sampling (cold: INFERGRADE_WARM=0)", cmd, runs,
                                     env={**env, "INFERGRADE_WARM": "0"})[:2]
    started = subprocess.run([PY, "-m", "grader", "serve"], cwd=REPO, env=env, capture_output=True, text=True)
    server = int(started.stdout.split("(pid ")[1].split(")")[0])
    try:
        timed(cmd, sample=False, env=env)  # its first run: a sandbox of the topic's, reaped from then on
        results = []
        for _ in range(runs):
            before = tree_cpu(server)
            wall, cpu, code, _ = timed(cmd, sample=False, env=env)
            results.append((wall, cpu + tree_cpu(server) - before, code))
        served = sum("] ran `" in line for line in (runtime / "infergrade" / "log").read_text().splitlines())
    finally:
        subprocess.run([PY, "-m", "grader", "serve", "--stop"], cwd=REPO, env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)
    wall, cpu = statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)
    if {r[2] for r in results} != {0} or served != runs + 1:
        print(f"  ! warm check: exit codes {sorted({r[2] for r in results})}, {served} of {runs + 1} runs served warm")
    print(f"{'infergrade check sampling (warm: infergrade serve runs)':58} wall {wall:6.2f} s (min "
          f"{min(r[0] for r in results):.2f}, max {max(r[0] for r in results):.2f})  CPU {cpu:6.2f} s  n={runs}  "
          f"target <= {WARM_CHECK:.1f} s: {'met' if wall <= WARM_CHECK else 'MISSED'}")
    print(f"{'  -> warm against cold':58} wall {wall - cold:+.2f} s  CPU {cpu - cold_cpu:+.2f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def edited(source: str, function: str, n: int) -> str:
    """`source` with a comment added at the top of `function`'s body: a save that changes one function."""
    node = next(x for x in ast.parse(source).body if getattr(x, "name", None) == function)
    lines = source.splitlines()
    first = node.body[0]
    lines.insert(first.lineno - 1, " " * first.col_offset + f"# edit {n}")
    return "\n".join(lines) + "\n"


def watch_recheck(edits: int) -> None:
    """Median seconds from a save to `infergrade watch sampling`'s re-checked screen, one function per save in
    turn, on the solutions (then to the confirmation of the topic's other checks)."""
    folder = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    folder.chmod(0o755)
    path = folder / "sampling.py"
    shutil.copy(REPO / "solutions" / "sampling.py", path)
    functions = [n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)
                 and not n.name.startswith("_")]
    proc = subprocess.Popen([PY, "-m", "grader", "watch", "sampling", "--submission", str(folder)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    quick, confirmed = [], []
    try:
        proc.stderr.readline()  # the first full check
        for n in range(edits):
            time.sleep(0.3)
            path.write_text(edited(path.read_text(), functions[n % len(functions)], n))
            saved = time.perf_counter()
            line = proc.stderr.readline()
            quick.append(time.perf_counter() - saved)
            if "confirming" in line:
                proc.stderr.readline()
                confirmed.append(time.perf_counter() - saved)
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{'infergrade watch sampling: save -> re-checked screen':58} median {statistics.median(quick):6.2f} s  "
          f"(min {min(quick):.2f}, max {max(quick):.2f}; n={edits}, one function per save)  target <= 0.30 s: "
          f"{'met' if statistics.median(quick) <= 0.3 else 'MISSED'}")
    if confirmed:
        print(f"{'  -> then the other checks of the topic confirmed':58} median {statistics.median(confirmed):6.2f} s")
    print(f"{'  -> Ctrl-C exit code':58} {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only-watch", action="store_true", help="only the watch re-check and a cold check")
    parser.add_argument("--only-warm", action="store_true", help="only `check sampling` cold and with a warm grader")
    parser.add_argument("--quick", action="store_true", help="only `import torch` and `check sampling`")
    args = parser.parse_args()
    grader = [PY, "-m", "grader"]
    os.environ["INFERGRADE_WARM"] = "0"  # every figure but the warm one is cold, whatever warm grader runs
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as a student's Python does (the first run's)
    if args.only_warm:
        warm_check(args.runs)
        return
    if args.only_watch:
        measure("infergrade check sampling --submission solutions (cold)",
                grader + ["check", "sampling", "--submission", "solutions"], args.runs)
        watch_recheck(3 * args.runs)
        return
    out = Path(tempfile.mkdtemp()) / "results.json"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores\n")
    floor, floor_cpu, _ = measure('python -c "import torch"', [PY, "-c", "import torch"], args.runs)
    check, check_cpu, _ = measure("infergrade check sampling --submission solutions",
                                  grader + ["check", "sampling", "--submission", "solutions"], args.runs)
    print(f"{'  -> check sampling minus import torch':58} wall {check - floor:+.2f} s  CPU {check_cpu - floor_cpu:+.2f} s"
          f"  (target <= +{CHECK_OVER_TORCH:.2f} s each)")
    warm_check(args.runs, (check, check_cpu))
    if args.quick:
        return
    for topic in all_topics():
        if topic == "sampling":
            continue
        measure(f"infergrade check {topic} --submission solutions",
                grader + ["check", topic, "--submission", "solutions"], args.runs)
    watch_recheck(3 * args.runs)
    for topic in all_topics():  # each topic's hidden grade alone: its own start-up included
        measure(f"infergrade grade --hidden -t {topic} solutions",
                grader + ["grade", "--hidden", "--submission", "solutions", "-t", topic, "--seed", "1",
                          "--out", str(out)], max(1, args.runs // 2))
    full, full_cpu, peak = measure("infergrade grade --hidden (all topics) solutions",
                                   grader + ["grade", "--hidden", "--submission", "solutions", "--seed", "1",
                                             "--out", str(out)], max(1, args.runs // 2))
    topics = len(all_topics())
    print(f"{'':58} {full / topics:.2f} s wall, {full_cpu / topics:.2f} s CPU per topic over {topics}, target <= "
          f"{HIDDEN_PER_TOPIC:.1f} s; peak PSS target < 1024 MiB: {'met' if peak < 2**30 else 'MISSED'}")


if __name__ == "__main__":
    main()
