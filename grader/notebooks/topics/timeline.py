"""Notebook content for timeline: Gantt charts of three agent sessions, with and without the prefix cache."""

CONCEPT = """
An LLM call has two phases. **Prefill** computes the whole prompt in one pass: many tokens at once, so it is
usually **compute-bound** and ends with the first output token (time to first token, TTFT). **Decode** then
produces one token per step; each step reads every weight and the whole KV cache for a single token per
sequence, so at small batch it is **memory-bound**. The roofline model says a pass takes the slower of its
FLOPs over the achievable FLOP/s and its bytes over the achievable bandwidth; batching more sequences shares the
weight reads until compute catches up (the critical batch size).

An agent session chains calls with tool runs and network waits. Each new call must prefill what was added since
the last one; with a **prefix cache** the earlier context stays computed and only the new tokens are prefilled,
without one the whole conversation is recomputed every time. What to measure depends on the shape of the
session: TTFT for long inputs, decode speed for long outputs, and the waits for tool-heavy agents.
"""

EXPERIMENTS = [
    ("""
### Three sessions, with and without a prefix cache

A Llama-3-8B-like model on an H100-like GPU (989 TFLOP/s, 3.35 TB/s): a long input with a short answer, a
short input with a long answer, and an agent making frequent tool calls. Blue: prefill, orange: decode, gray:
tools and network; the red tick marks the first token.
""", """
model = {"params": 8.0e9, "weight_bytes": 16.0e9, "kv_bytes_per_token": 131072, "n_layers": 32, "d_model": 4096}
hw = {"peak_flops": 989e12, "mem_bandwidth": 3.35e12}
agent = [{"kind": "user", "tokens": 3000}]
for _ in range(6):
    agent += [{"kind": "generate", "tokens": 40}, {"kind": "tool", "seconds": 0.3},
              {"kind": "tool_result", "tokens": 1500}]
agent += [{"kind": "generate", "tokens": 200}]
sessions = {"long input, short output": [{"kind": "user", "tokens": 60000}, {"kind": "generate", "tokens": 60}],
            "short input, long output": [{"kind": "user", "tokens": 300}, {"kind": "generate", "tokens": 600}],
            "frequent tool calls": agent}
colors = {"prefill": "C0", "decode": "C1", "tool": "gray", "network": "lightgray"}
fig, axes = plt.subplots(3, 1, figsize=(11, 7))
for ax, (name, events) in zip(axes, sessions.items()):
    for row, cache in enumerate((True, False)):
        t = impl.session_timeline(model, hw, events, prefix_cache=cache)
        for seg in t["segments"]:
            ax.broken_barh([(seg["start"], seg["end"] - seg["start"])], (row - 0.35, 0.7),
                           facecolors=colors[seg["kind"]])
        ax.plot([t["ttft"]] * 2, [row - 0.45, row + 0.45], color="red")
        ax.text(t["total"], row, f"  {t['total']:.2f} s", va="center")
    ax.set_yticks([0, 1], ["prefix cache", "no cache"])
    ax.set_title(name)
    ax.set_xlim(0, None)
axes[-1].set_xlabel("seconds")
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
fig.legend(handles, list(colors), loc="lower center", ncol=4)
plt.tight_layout(rect=(0, 0.05, 1, 1))
plt.show()
"""),
]
