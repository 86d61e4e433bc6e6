"""Notebook content for reasoning: accuracy against tokens per effort level, and the level to pay for."""

CONCEPT = """
Reasoning models spend **reasoning tokens** before they answer, and you pay for them as output. The usage
objects of the big APIs (OpenAI Chat Completions and Responses, Anthropic Messages, Google Gemini) report them,
and cached input, in different shapes: OpenAI counts reasoning inside its output total, Anthropic counts thinking
inside `output_tokens` (newer responses say how much), Gemini reports thoughts beside the candidates and bills
both. A ledger that reads all of them is the first step to knowing what a prompt costs.

The reasoning itself is **opaque state** that the provider keeps to itself. Anthropic returns thinking blocks
that carry a cryptographic signature: in a tool-use loop they must go back to the API unmodified with the
assistant turn, so that the model's thinking continues between tool calls (interleaved thinking) instead of
starting over. OpenAI never returns the raw chain of thought of its reasoning models. It returns readable
summaries of the reasoning when asked (`reasoning={"summary": "auto"}`), and an encrypted copy of the reasoning
only on request (`include=["reasoning.encrypted_content"]`), which a client that keeps the conversation itself
(`store=False`) sends back unchanged; by default the reasoning items stay on OpenAI's servers and a later turn
reaches them through `previous_response_id`. Neither is a notebook you may edit: you carry it forward (or let the
provider keep it), and you pay for it.
Whatever the state holds, it is built only from what the model was given. A model cannot reason its way into a
file it never saw: the timeout set in a private config file, the failing line of a log nobody attached. Thinking
longer about missing evidence produces a confident guess, not the fact; the fix is a tool call that reads the
file.

More effort buys accuracy, with diminishing returns. To compare two prompt variants on the same tasks, only the
tasks where they disagree carry information: McNemar's exact test on those discordant pairs says whether the
difference is real; a p-value of 0.05 or more means these tasks cannot tell the variants apart, not that they
are equal. `compare_variants` also reports each variant's median seconds and the share of its answers a reader
can verify (a test run, a cited line): a prompt that is right as often but slower, or whose answers cannot be
checked, is not the same prompt. To choose an effort level, take the cheapest one whose accuracy reaches what you
need, not the most accurate one.
"""

EXPERIMENTS = [
    ("""
### Accuracy against tokens per effort level

Simulated results of 200 tasks at four effort levels. Each point is a level: its accuracy against the tokens
it spent in total (from `compare_variants` of the level with itself); the level `pick_effort` chooses for a
required accuracy of 0.8 is circled. A black tick marks the rate each level's tasks were drawn at.

A measured accuracy carries sampling noise: 200 tasks pin a rate near 0.85 down to about ±0.05 (the bars are 95%
intervals), so "high", drawn at 0.87, can score below "medium", drawn at 0.83, on one set of tasks, as it does
here. Levels this close are not ordered by one run of 200 tasks; telling them apart takes more tasks, or a paired
comparison on the same tasks.
""", """
import random

rng = random.Random(0)
levels = {"minimal": (0.55, 300), "low": (0.72, 1200), "medium": (0.83, 3500), "high": (0.87, 9000)}
results = {level: [{"correct": rng.random() < acc, "tokens": int(rng.expovariate(1 / mean)) + 1,
                    "seconds": 0.01} for _ in range(200)]
           for level, (acc, mean) in levels.items()}
picked = impl.pick_effort(results, 0.8)
mine = impl.compare_variants is not getattr(ref, "compare_variants", None)
picks_mine = impl.pick_effort is not getattr(ref, "pick_effort", None)
fig, ax = plt.subplots(figsize=(8, 5))
for n, (level, rows) in enumerate(results.items()):
    c = impl.compare_variants(rows, rows)
    x, y = c["tokens_a"], c["accuracy_a"]
    half = 1.96 * (y * (1 - y) / len(rows)) ** 0.5  # a 95% interval of a rate measured on len(rows) tasks
    ax.plot([x, x], [y - half, y + half], color="C0", linewidth=1.5)
    ax.plot(x, y, "o", color="C0", markersize=8,
            label=f"accuracy, with its 95% interval ({'yours' if mine else 'reference'})" if n == 0 else None)
    ax.plot(x, levels[level][0], "k_", markersize=14, mew=2, label="rate the tasks were drawn at" if n == 0 else None)
    ax.annotate(level, (x, y), textcoords="offset points", xytext=(10, 2), va="center")
    if ref is not None and mine:
        theirs = ref.compare_variants(rows, rows)
        ax.plot(theirs["tokens_a"], theirs["accuracy_a"], "kx", markersize=8,
                label="the reference's compare_variants" if n == 0 else None)
    if level == picked:
        ax.plot(x, y, "o", markersize=22, fillstyle="none", color="C3",
                label=f"chosen by {'your' if picks_mine else 'the reference'} pick_effort")
ax.axhline(0.8, color="gray", linestyle=":", label="required accuracy 0.8")
ax.set(xscale="log", xlabel="total tokens over 200 tasks", ylabel="accuracy")
ax.set_xlim(ax.get_xlim()[0] / 1.5, ax.get_xlim()[1] * 2.5)  # room for each level's name on the right of its point
ax.set_ylim(ax.get_ylim()[0] - 0.03, ax.get_ylim()[1] + 0.03)
title = f"{'Your' if picks_mine else 'The reference'} pick_effort chooses {picked!r}"
if ref is not None and picks_mine:
    title += f"; the reference chooses {ref.pick_effort(results, 0.8)!r}"
ax.set_title(title + ".")
ax.legend(loc="lower right", fontsize=8)
ax.grid(alpha=0.3)
plt.show()
"""),
]

CLOSING = """
More effort does not replace missing evidence: when the answer lives in a file, a log or a measurement the model
was never given, every effort level fails alike and the right move is to fetch it, not to pay for longer
thinking. The same holds for permissions: when a failure comes from missing evidence or from a missing permission
(the agent may not read the directory, run the tests or call the tool), raising the reasoning effort only adds
cost and does not make the task feasible. A budget is worth what it buys in quality: choose the effort level by
the accuracy it reaches on your tasks, and pay for no more than the cheapest level that is good enough. The ledger
counts what a provider *says* a call consumed; it does not check the bill, and a documented capability (a context
length, a cache discount, a "thinking improves accuracy" claim) is not your own measurement: the accuracies,
tokens and seconds here come from results you ran on your tasks, and they say nothing about other tasks. McNemar's test tells whether these paired tasks show a difference; it does not prove
that there is none, and it does not say whether an answer is right: that takes the evidence a verifiable answer
carries.
"""
