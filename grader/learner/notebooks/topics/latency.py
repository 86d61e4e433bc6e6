"""Notebook content for latency: the critical path drawn on an agent task's graph."""

CONCEPT = """
An agent's task is a graph of steps: model calls, tool round trips, searches, file reads and edits, test runs.
A step starts when every step it waits for has ended, and steps with no path between them run in parallel. The
task's total time is the length of its **critical path**: the chain of steps that takes all of it. Speeding up
a step off that path changes nothing; speeding up one on it helps until another chain becomes critical.

Some waits are needs (a step uses another's output: `deps`), some are habits (two searches run one after the
other although neither uses the other's result: `order`). Removing a habit is often the cheapest saving. What
the user feels first is not the total either: the **first output** is the earliest end among the visible steps.
Measure a change by what it does to the whole task, and attribute a saving to the one setting that changed.
"""

EXPERIMENTS = [
    ("""
### The critical path of a coding agent's task

Each box is a step, placed at its earliest start and as long as its duration; arrows are `deps` (solid) and
`order` (dotted). The critical path is red. Below: the same task with the habit of running the two searches one
after the other dropped. Where the reference is installed and the functions are yours, each title adds the
reference's total and path, and a black tick marks the reference's end of each step.
""", """
durations = {"plan": 2.0, "search_code": 1.5, "search_docs": 2.5, "read_file": 0.4, "edit": 3.0,
             "run_tests": 4.0, "lint": 1.0, "summarize": 1.2}
deps = {"search_code": ["plan"], "search_docs": ["plan"], "read_file": ["search_code"],
        "edit": ["read_file", "search_docs"], "run_tests": ["edit"], "lint": ["edit"],
        "summarize": ["run_tests", "lint"]}
order = {"search_docs": ["search_code"]}

def draw(ax, order):
    times = impl.schedule(durations, deps, order)
    total, path = impl.critical_path(durations, deps, order)
    rows = {step: i for i, step in enumerate(durations)}
    on_path = set(zip(path, path[1:]))
    for step, (start, end) in times.items():
        ax.broken_barh([(start, end - start)], (rows[step] - 0.3, 0.6),
                       facecolors="C3" if step in path else "C0", alpha=0.8)
        ax.text(start + 0.05, rows[step], step, va="center", fontsize=8, color="white")
    for kind, edges in (("deps", deps), ("order", order or {})):
        for step, before in edges.items():
            for b in before:
                red = (b, step) in on_path
                ax.annotate("", xy=(times[step][0], rows[step]), xytext=(times[b][1], rows[b]),
                            arrowprops=dict(arrowstyle="->", color="C3" if red else "gray",
                                            linestyle="-" if kind == "deps" else ":"))
    ax.set_yticks([])
    mine = impl.critical_path is not getattr(ref, "critical_path", None)
    title = f"{'Yours' if mine else 'The reference'}: total {total:.1f} s; critical path {' -> '.join(path)}."
    if ref is not None and mine:
        ref_total, ref_path = ref.critical_path(durations, deps, order)
        title += f"\\nThe reference: total {ref_total:.1f} s; critical path {' -> '.join(ref_path)}."
        for step, (start, end) in ref.schedule(durations, deps, order).items():
            ax.plot([end, end], [rows[step] - 0.4, rows[step] + 0.4], color="k", linewidth=2)
    ax.set_title(title, fontsize=9)

fig, axes = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
draw(axes[0], order)
draw(axes[1], None)
axes[1].set_xlabel("seconds")
plt.tight_layout()
plt.show()
change = impl.what_if(durations, deps, {"parallel": ["search_code", "search_docs"]}, order)
print(f"running the searches in parallel saves {change['saving']:.1f} s")
"""),
]

CLOSING = """
What to optimise is the total time of tasks that succeed, not an isolated token metric: a faster first token, a
higher tokens per second or a better cache hit rate matters only as far as it shortens finished, correct tasks. A
critical path tells where the time of a task goes, not whether its answer is right: cutting a needless round trip
can help, but a faster chain that skips the test run finishes sooner and knows less, and a task that then fails
has taken all of its time for nothing. Look at where the path spends its time before choosing what to change:
when the agent mostly waits on the test environment (a slow build, a long test suite, a flaky service), tuning
sampling or the prompt cache is not the valuable change, because those steps are not on the path; the tests are.

The graph is only as true as its durations and its edges: the durations here are given, not measured, a real step
varies from run to run (read medians and tails over many runs), and an edge recorded as a habit may hide a need
nobody wrote down, which only the outputs can tell. A saving computed by `what_if` is a prediction for one change;
`attribute` credits a measured saving only when one setting changed between the runs, and even then it says how
much faster, not why, nor that the result is as good as before.
"""
