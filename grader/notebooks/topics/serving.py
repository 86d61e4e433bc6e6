"""Notebook content for serving: throughput against p99 TTFT as max_num_seqs grows."""

CONCEPT = """
A server is judged on more than one request's speed. **Throughput** (output tokens per second over all users)
grows with the batch: a decode step costs little more for 32 sequences than for one. **Latency** is what each
user feels: time to first token (TTFT), time per output token (TPOT), the gaps between tokens (ITL) and the end
to end time, and users feel the **tail** (p99), which a mean hides. Goodput counts only the requests that met
their service-level objectives.

**Continuous batching** admits waiting requests at every step as slots free up; **static batching** waits for
the whole batch to finish first. `max_num_seqs` caps the running batch: larger batches raise throughput until
each step's prefill work for newly admitted prompts starts to delay everyone's tokens. Here you build the engine
loop as a simulator and compute the metrics from its log.
"""

EXPERIMENTS = [
    ("""
### Throughput against p99 TTFT

A mixed workload (chat with short prompts, summaries with long prompts and short answers, long generations)
arriving at about 6 requests per second, run under continuous and static batching with `max_num_seqs` from
1 to 64. Each point is one setting, labelled with `max_num_seqs`.
""", """
import random

rng = random.Random(0)
requests, t = [], 0.0
for i in range(240):
    t += rng.expovariate(6.0)
    kind = rng.choice(["chat", "summary", "generation"])
    prompt, output = {"chat": (200, 120), "summary": (3000, 60), "generation": (300, 600)}[kind]
    requests.append({"id": i, "arrival": t, "prompt_tokens": rng.randint(prompt // 2, prompt),
                     "output_tokens": rng.randint(output // 2, output)})
cost = {"base": 0.008, "per_prefill_token": 0.00002, "per_decode_seq": 0.0002}
fig, ax = plt.subplots(figsize=(7.5, 4.5))
for policy, style in (("continuous", "-o"), ("static", "--s")):
    points = []
    for n in (1, 2, 4, 8, 16, 32, 64):
        records = impl.simulate(requests, policy, n, cost)
        duration = max(r["finish"] for r in records)
        m = impl.serving_metrics(records, duration)
        points.append((m["output_throughput"], m["ttft"]["p99"], n))
    ax.plot([p[1] for p in points], [p[0] for p in points], style, label=policy)
    for throughput, p99, n in points:
        ax.annotate(str(n), (p99, throughput), textcoords="offset points", xytext=(4, 4), fontsize=8)
ax.set(xscale="log", xlabel="p99 TTFT (s)", ylabel="output tokens / s", title="throughput against tail latency")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
"""),
]
