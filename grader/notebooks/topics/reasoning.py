"""Notebook content for reasoning: accuracy against tokens per effort level, and the level to pay for."""

CONCEPT = """
Reasoning models spend **reasoning tokens** before they answer, and you pay for them as output. The usage
objects of the three big APIs (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages) report them, and
cached input, in different shapes: a ledger that reads all three is the first step to knowing what a prompt
costs.

More effort buys accuracy, with diminishing returns. To compare two prompt variants on the same tasks, only the
tasks where they disagree carry information: McNemar's exact test on those discordant pairs says whether the
difference is real. To choose an effort level, take the cheapest one whose accuracy reaches what you need, not
the most accurate one.
"""

EXPERIMENTS = [
    ("""
### Accuracy against tokens per effort level

Simulated results of 200 tasks at four effort levels. Each point is a level: its accuracy against the tokens
it spent in total (from `compare_variants` of the level with itself); the level `pick_effort` chooses for a
required accuracy of 0.8 is circled.
""", """
import random

rng = random.Random(0)
levels = {"minimal": (0.55, 300), "low": (0.72, 1200), "medium": (0.83, 3500), "high": (0.87, 9000)}
results = {level: [{"correct": rng.random() < acc, "tokens": int(rng.expovariate(1 / mean)) + 1,
                    "seconds": 0.01} for _ in range(200)]
           for level, (acc, mean) in levels.items()}
picked = impl.pick_effort(results, 0.8)
fig, ax = plt.subplots(figsize=(7, 4.5))
for level, rows in results.items():
    c = impl.compare_variants(rows, rows)
    ax.plot(c["tokens_a"], c["accuracy_a"], "o", markersize=9)
    ax.annotate(level, (c["tokens_a"], c["accuracy_a"]), textcoords="offset points", xytext=(6, -12))
    if level == picked:
        ax.plot(c["tokens_a"], c["accuracy_a"], "o", markersize=20, fillstyle="none", color="C3")
ax.axhline(0.8, color="gray", linestyle=":", label="required accuracy 0.8")
ax.set(xscale="log", xlabel="total tokens over 200 tasks", ylabel="accuracy",
       title=f"pick_effort chooses {picked!r}")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
"""),
]
