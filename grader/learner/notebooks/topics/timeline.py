"""Notebook content for timeline: Gantt charts of three agent sessions, with and without the prefix cache."""

CONCEPT = """
An LLM call has two phases. **Prefill** computes the whole prompt in one pass: many tokens at once, so it is
usually **compute-bound** and ends with the first output token (time to first token, TTFT). **Decode** then
produces one token per step; each step reads every weight and the whole KV cache for a single token per
sequence, so at small batch it is **memory-bound**. The roofline model says a pass takes the slower of its
FLOPs over the achievable FLOP/s and its bytes over the achievable bandwidth; batching more sequences shares the
weight reads until compute catches up (the critical batch size). Here a whole decode step is one roofline, and
past a few hundred cached tokens per sequence it never turns compute-bound, however large the batch. That is a
model: kernel by kernel, the weight matmuls do turn compute-bound at large batches, while attention, which reads
each sequence's own K/V, never does; the whole-step figure says which of the two dominates the step.

An agent session chains calls with tool runs and network waits. Each new call must prefill what was added since
the last one; with a **prefix cache** the earlier context stays computed and only the new tokens are prefilled,
without one the whole conversation is recomputed every time. **Compaction** (compression) spends one call to
summarise the context, then replaces the context by the summary: the cache no longer matches from the summary on,
so the next prefill recomputes the summary, but every later decode step and prefill reads a far shorter context.
(The model here replaces the whole context, so that prefill starts cold; a real compaction keeps the system prompt
and the tool definitions in front of the summary, and those blocks still hit.) **Parallel tool calls** shorten
only the waits. Each optimisation shortens its own segment. What to measure depends on the
shape of the session: TTFT for long inputs, decode speed for long outputs, and the waits for tool-heavy agents.
"""

SETUP = """
model = {"params": 8.0e9, "weight_bytes": 16.0e9, "kv_bytes_per_token": 131072, "n_layers": 32, "d_model": 4096}
hw = {"peak_flops": 989e12, "mem_bandwidth": 3.35e12}
colors = {"prefill": "C0", "decode": "C1", "tool": "gray", "network": "lightgray", "compact": "C2"}
"""

EXPERIMENTS = [
    ("""
### Three sessions, with and without a prefix cache

A Llama-3-8B-like model on an H100-like GPU (989 TFLOP/s, 3.35 TB/s): a long input with a short answer, a
short input with a long answer, and an agent making frequent tool calls. Blue: prefill, orange: decode, gray:
tools and network; the red tick marks the first token. Where the reference is installed and `session_timeline` is
yours, black dashed ticks mark the reference's first token and end.
""", """
agent = [{"kind": "user", "tokens": 3000}]
for _ in range(6):
    agent += [{"kind": "generate", "tokens": 40}, {"kind": "tool", "seconds": 0.3},
              {"kind": "tool_result", "tokens": 1500}]
agent += [{"kind": "generate", "tokens": 200}]
sessions = {"long input, short output": [{"kind": "user", "tokens": 60000}, {"kind": "generate", "tokens": 60}],
            "short input, long output": [{"kind": "user", "tokens": 300}, {"kind": "generate", "tokens": 600}],
            "frequent tool calls": agent}
mine = impl.session_timeline is not getattr(ref, "session_timeline", None)
drawn = set()  # the kinds of segment drawn, for the legend
fig, axes = plt.subplots(3, 1, figsize=(11, 7))
for ax, (name, events) in zip(axes, sessions.items()):
    totals = {}
    for row, cache in enumerate((True, False)):
        t = impl.session_timeline(model, hw, events, prefix_cache=cache)
        totals[cache] = t["total"]
        for seg in t["segments"]:
            ax.broken_barh([(seg["start"], seg["end"] - seg["start"])], (row - 0.35, 0.7),
                           facecolors=colors[seg["kind"]])
            drawn.add(seg["kind"])
        ax.plot([t["ttft"]] * 2, [row - 0.45, row + 0.45], color="red")
        ax.text(t["total"], row, f"  {t['total']:.2f} s", va="center")
        if ref is not None and mine:
            r = ref.session_timeline(model, hw, events, prefix_cache=cache)
            ax.plot([r["ttft"]] * 2, [row - 0.45, row + 0.45], "k--")
            ax.plot([r["total"]] * 2, [row - 0.45, row + 0.45], "k--")
    ax.set_yticks([0, 1], ["prefix cache", "no cache"])
    ax.set_title(f"{name[0].upper()}{name[1:]}: the prefix cache saves {1 - totals[True] / totals[False]:.0%} of "
                 f"the time.")
    ax.set_xlim(0, ax.get_xlim()[1] * 1.1)  # room for the total beside the longer bar
axes[-1].set_xlabel("seconds")
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for kind, c in colors.items() if kind in drawn]
names = [kind for kind in colors if kind in drawn] + ["first token" + (" (yours)" if mine else "")]
handles.append(plt.Line2D([], [], color="red"))
if ref is not None and mine:
    handles.append(plt.Line2D([], [], color="k", linestyle="--"))
    names.append("reference: first token, end")
fig.legend(handles, names, loc="lower center", ncol=len(names))
plt.tight_layout(rect=(0, 0.05, 1, 1))
plt.show()
"""),
    ("""
### Which segment each optimisation shortens

A long agent session on the same model and GPU: eight tool calls whose results bring the context to about 100,000
tokens, then four more and a 3,000-token answer. Seconds per kind of segment for the session as it is (no prefix
cache), with a prefix cache, with the context compacted into a 1,000-token summary after the eighth call (cache
on), and with the tool calls issued in parallel batches of four. Where the reference is installed and
`session_timeline` is yours, a black tick marks the reference's total.
""", """
def rounds(count, seconds, result, call=80):
    return count * [{"kind": "generate", "tokens": call}, {"kind": "tool", "seconds": seconds},
                    {"kind": "tool_result", "tokens": result}]

def parallel(count, seconds, result, call=80):  # the same calls and results, four to a wait
    return rounds(count // 4, seconds, 4 * result, 4 * call)

mine = impl.session_timeline is not getattr(ref, "session_timeline", None)
answer = [{"kind": "generate", "tokens": 3000}]
compact = [{"kind": "compact", "summary_tokens": 1000, "tokens": 1000}]
variants = {
    "as it is": ([{"kind": "user", "tokens": 3000}] + rounds(8, 1.0, 12000) + rounds(4, 1.0, 3000) + answer, False),
    "prefix cache": ([{"kind": "user", "tokens": 3000}] + rounds(8, 1.0, 12000) + rounds(4, 1.0, 3000) + answer,
                     True),
    "cache + compaction": ([{"kind": "user", "tokens": 3000}] + rounds(8, 1.0, 12000) + compact
                           + rounds(4, 1.0, 3000) + answer, True),
    "cache + parallel tools": ([{"kind": "user", "tokens": 3000}] + parallel(8, 1.0, 12000) + parallel(4, 1.0, 3000)
                               + answer, True),
}
kinds = ["prefill", "decode", "compact", "tool"]
fig, ax = plt.subplots(figsize=(10, 4))
for row, (name, (events, cache)) in enumerate(variants.items()):
    t = impl.session_timeline(model, hw, events, prefix_cache=cache)
    left = 0.0
    for kind in kinds:
        ax.barh(row, t[kind], left=left, color=colors[kind], label=kind if row == 0 else None)
        left += t[kind]
    ax.text(left, row, f"  {t['total']:.1f} s", va="center")
    if ref is not None and mine:
        ax.plot([ref.session_timeline(model, hw, events, prefix_cache=cache)["total"]] * 2, [row - 0.45, row + 0.45],
                "k", lw=2, label="reference total" if row == 0 else None)
ax.set_yticks(range(len(variants)), list(variants))
ax.invert_yaxis()
ax.set_xlim(0, ax.get_xlim()[1] * 1.1)  # room for each total beside its bar
ax.set(xlabel="seconds", title=f"Each optimisation shortens one segment of {'your' if mine else 'the reference'} "
                               f"session_timeline.")
ax.legend(loc="lower right")
plt.tight_layout()
plt.show()
"""),
]

CLOSING = """
This timeline is a roofline model, not a measurement. It assumes every pass runs at a fixed fraction of the peak
FLOP/s or bandwidth, that a whole step is bound by one of the two, that batch-1 decode has the GPU to itself, and
that nothing else runs: no kernel launch overheads, no scheduler, no queueing behind other users, no network
jitter, no sampling or detokenisation time. Its value is in telling which segment an optimisation can shorten and
by roughly how much; you need no production serving stack to use it that way.

So state what it shows as a testable performance hypothesis, not as a result: "with a prefix cache, this
session's later prefills should shrink to the new tokens, and its total should fall by about this much; timing
the session with the cache on and off will tell". How long your session really takes comes only from timing it on
your hardware and serving stack. And a speed-up found for one session does not carry over to every task: the
prefix cache saves about 15% of the tool-heavy session above and nothing of the two single-call sessions, and a
task with other input lengths, output lengths or tool waits gains its own share. Nor does the timeline say anything about the answer: a compacted context is
faster to read, and it may have dropped the one detail the next step needed.
"""
