"""Notebook content for serving: what max_num_seqs trades, survivorship in the tail, KV preemption, chunked prefill."""

CONCEPT = """
A server is judged on more than one request's speed. **Throughput** (output tokens per second over all users)
grows with the batch only until the engine keeps up with what arrives: past that point it equals the arrival rate,
whatever the batch. **Latency** is what each user feels: time to first token (TTFT), time per output token (TPOT),
the gaps between tokens (ITL) and the end-to-end time; users feel the **tail** (p99), which a mean hides.
**Goodput** counts only the requests that met their service-level objectives.

**Continuous batching** admits waiting requests at every step as seats free up; **static batching** waits for the
whole batch to finish first. `max_num_seqs` caps the running batch: more seats cut the queueing before the first
token, and every extra running sequence makes each step, and so every user's next token, a little slower. A real
server manages its seats together with its other limits: the **KV cache** (`kv_blocks`: a request is admitted
when its first chunk fits, and when the running requests outgrow the cache the one admitted last, the lowest
priority under first come, first served, is preempted and later recomputes its cache), the **token budget** of a
step (`max_num_batched_tokens`: chunked prefill splits long prompts across steps) and the model's **maximum
length** (a longer request is rejected at its arrival; the simulator judges each request by its true output
length, where a real server knows only the `max_tokens` it asks for). Here you build the engine loop as a
simulator and compute the metrics from its log.

Read every percentile with the **counts** beside it: latency statistics describe the requests that completed, and
a server that times out its slow requests shows a better tail while serving fewer people.
"""

SETUP = """
from grader.checks.serving import lesson

workload = lesson.lesson_requests()  # the lessons' requests: a minute of chat and a coding agent's long ones
"""

EXPERIMENTS = [
    ("""
### What `max_num_seqs` trades

A mixed workload (chat with short prompts, summaries with long prompts and short answers, long generations)
arriving at about 6 requests per second, run under continuous and static batching with `max_num_seqs` from 1 to
64. Throughput rises until the engine keeps up, then levels off at the rate the requests arrive (the dashed line:
output tokens asked for per second of arrivals; measured up to the last finish, the drain included, the plateau
sits a little below it); the queueing before the first token (TTFT p99) falls.

The right panel separates two causes of slower streams under continuous batching. The batch itself: every
running sequence adds `per_decode_seq` to a step, yet with prefill priced at 0 (dotted) ITL p99 rises only from
0.008 to 0.012 s between 1 and 64 seats. The rest of the rise of ITL p99 (to 0.058 s, about seven times) is prefill
stalls: a summary's prompt of up to 3,000 tokens is prefilled whole in one step, every running stream waits
through that step, and with more seats more streams are running when a newcomer is admitted. That is lesson 3's
mechanism, which chunked prefill bounds, not a cost of the batch size. TPOT p99 (dashed) spreads a request's
stalls over all its tokens: 0.008 to 0.017 s, the slowdown one stream feels over a whole answer. Under static
batching nobody is admitted while others stream, so its ITL p99 is the batch's cost alone.
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
seats = [1, 2, 4, 8, 16, 32, 64]
offered = sum(r["output_tokens"] for r in requests) / requests[-1]["arrival"]
free_prefill = {**cost, "per_prefill_token": 0.0}


def measure(module):
    \"\"\"Every curve of the three panels, by seat count, from `module`'s simulate and serving_metrics.\"\"\"
    curves = {}
    for run, policy, prices in (("continuous", "continuous", cost), ("static", "static", cost),
                                ("free", "continuous", free_prefill)):
        for n in seats:
            records = module.simulate(requests, policy, n, prices)
            m = module.serving_metrics(records, max(r["finish"] for r in records))
            for metric, value in (("throughput", m["output_throughput"]), ("ttft", m["ttft"]["p99"]),
                                  ("itl", m["itl"]["p99"]), ("tpot", m["tpot"]["p99"])):
                curves.setdefault((run, metric), []).append(value)
    return curves


mine = any(getattr(impl, name) is not getattr(ref, name, None) for name in ("simulate", "serving_metrics"))
whose = "yours" if mine else "reference"
curves = measure(impl)
itl, tpot = curves["continuous", "itl"], curves["continuous", "tpot"]
static_itl, itl_free = curves["static", "itl"], curves["free", "itl"]
fig, (left, middle, right) = plt.subplots(1, 3, figsize=(14, 4.6))
for policy, style in (("continuous", "-o"), ("static", "--s")):
    left.plot(seats, curves[policy, "throughput"], style, label=f"{policy} ({whose})")
    middle.plot(seats, curves[policy, "ttft"], style, label=f"{policy} ({whose})")
right.plot(seats, itl, "-o", color="tab:blue", label=f"ITL p99, continuous ({whose})")
right.plot(seats, itl_free, ":^", color="tab:green", label=f"ITL p99, continuous, prefill priced at 0 ({whose})")
# a wide pale band, and hollow squares: static ITL meets TPOT at 1 and 64 seats and the prefill-free ITL up to 16,
# and each stays visible where they meet
right.plot(seats, tpot, "--", color="tab:purple", linewidth=6, alpha=0.35, label=f"TPOT p99, continuous ({whose})")
right.plot(seats, static_itl, "s", color="tab:orange", fillstyle="none", markersize=10, mew=1.5,
           label=f"ITL p99, static: the batch's cost alone ({whose})")
if ref is not None and mine:
    theirs = measure(ref)
    for ax, keys in ((left, [("continuous", "throughput"), ("static", "throughput")]),
                     (middle, [("continuous", "ttft"), ("static", "ttft")]),
                     (right, [("continuous", "itl"), ("free", "itl"), ("continuous", "tpot"), ("static", "itl")])):
        for n, key in enumerate(keys):
            ax.plot(seats, theirs[key], "k.", label="reference" if n == 0 else None)
top = max(curves["continuous", "throughput"])
knee = next(n for n, value in zip(seats, curves["continuous", "throughput"]) if value >= 0.99 * top)
left.axhline(offered, color="gray", linestyle=":", label="arrival rate (output tokens asked for / s)")
left.set(ylabel="output tokens / s")
left.set_title(f"Continuous batching levels off from {knee} seats, {1 - top / offered:.0%} below\\n"
               f"the arrival rate: its span runs to the last finish.", fontsize=10)
middle.set(yscale="log", ylabel="TTFT p99 (s)")
middle.set_title("More seats, less queueing before the first token.", fontsize=10)
right.set(yscale="log", ylabel="seconds")
for axis_ticks in (right.yaxis.set_major_formatter, right.yaxis.set_minor_formatter):
    axis_ticks(plt.FormatStrFormatter("%g"))  # 0.02 rather than 2 x 10^-2
right.set_title("The ITL rise is prefill stalls, not batch size.", fontsize=10)
for ax in (left, middle, right):
    ax.set(xscale="log", xlabel="max_num_seqs")
    ax.set_xticks(seats, [str(n) for n in seats])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right" if ax is left else "best")
fig.tight_layout()
plt.show()
print(f"continuous, {seats[0]} to {seats[-1]} seats: ITL p99 {itl[0]:.3f} -> {itl[-1]:.3f} s, "
      f"with prefill priced at 0 {itl_free[0]:.3f} -> {itl_free[-1]:.3f} s, TPOT p99 {tpot[0]:.3f} -> {tpot[-1]:.3f} s")
"""),
    ("""
### Lesson 1: a better p99 from the requests that gave up

The public lesson's workload (`grader/checks/serving/lesson.py`): one minute of chat (3-s timeout, some
cancellations) and a coding agent's long requests. At 4 seats about half the requests time out, and the p99 TTFT
of those that complete looks *better* than at 8 seats. Counting each timed-out request's wait until it gave up,
or reading the counts and goodput (TTFT within 1 s, per second), shows the truth. That censored p99 is itself a
lower bound: a request that gave up at its timeout would have waited at least that long for its first token,
maybe far longer, and the log cannot say how much more.
""", """
import numpy as np


def tails(module, say=False):
    \"\"\"By seat count: a label, p99 TTFT of the completed, p99 wait with the timed-out counted, goodput.\"\"\"
    labels, completed, censored, goodput = [], [], [], []
    for n in lesson.SEATS:
        records = module.simulate(workload, "continuous", n, lesson.COST)
        m = module.serving_metrics(records, lesson.SPAN, lesson.SLO)
        waits = [(r["first_token"] if r["first_token"] is not None else r["finish"]) - r["arrival"]
                 for r in records if r["status"] in ("ok", "timeout")]
        labels.append(f"{n} seats\\n{m['counts']['ok']} ok, {m['counts']['timeout']} timeouts")
        completed.append(m["ttft"]["p99"])
        censored.append(float(np.percentile(waits, 99)))
        goodput.append(m["goodput"])
        if say:
            print(f"max_num_seqs {n:2d}: counts {m['counts']}, TTFT mean {m['ttft']['mean']:.2f} s, "
                  f"p99 {m['ttft']['p99']:.2f} s, goodput {m['goodput']:.2f} req/s")
    return labels, completed, censored, goodput


mine = any(getattr(impl, name) is not getattr(ref, name, None) for name in ("simulate", "serving_metrics"))
whose = "yours" if mine else "reference"
labels, completed, censored, goodput = tails(impl, say=True)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
x = range(len(labels))
left.bar([i - 0.2 for i in x], completed, width=0.4, label=f"p99 TTFT, completed requests only ({whose})")
left.bar([i + 0.2 for i in x], censored, width=0.4,
         label=f"p99 wait, timed-out requests counted, a lower bound ({whose})")
right.bar(list(x), goodput, color="tab:green", label=f"goodput ({whose})")
if ref is not None and mine:
    _, their_completed, their_censored, their_goodput = tails(ref)
    left.plot([i - 0.2 for i in x], their_completed, "k_", markersize=20, mew=2, label="reference")
    left.plot([i + 0.2 for i in x], their_censored, "k_", markersize=20, mew=2)
    right.plot(list(x), their_goodput, "k_", markersize=40, mew=2, label="reference")
left.set_xticks(list(x), labels)
left.set(ylabel="seconds")
left.set_title("Leaving out the requests that gave up makes the tail look shorter.", fontsize=10)
left.legend(fontsize=8)
right.set_xticks(list(x), labels)
right.set(ylabel="requests / s meeting TTFT <= 1 s")
right.set_title("Goodput counts only the requests that meet TTFT <= 1 s.", fontsize=10)
right.legend(fontsize=8)
fig.tight_layout()
plt.show()
"""),
    ("""
### Lesson 2: more seats than the KV cache holds

The same workload with a cache of 2,400 blocks of 16 tokens and chunked prefill (2,048 tokens a step). A request
is admitted when its first chunk fits; once the running requests outgrow the cache, the one admitted last is
preempted (vLLM evicts the lowest priority, which under first come, first served is the request admitted last) and
must later prefill its prompt and its tokens again. Past the seats the cache holds, preemptions (red, right axis)
climb and the recomputation eats the steps: throughput (blue) falls. That the evicted request recomputes
everything is this exercise's convention, vLLM's with prefix caching off. vLLM V1 turns prefix caching on by
default: the full blocks a preempted request frees stay in the cache, hashed, until another request needs the
space, and when it is readmitted it reuses those still there, so its recomputation can be much shorter than here.
""", """
seats = [2, 4, 6, 8, 12]
mine = impl.simulate is not getattr(ref, "simulate", None)
runs = {"yours" if mine else "reference": impl} | ({"reference": ref} if ref is not None and mine else {})
fig, ax = plt.subplots(figsize=(7, 4))
twin = ax.twinx()
for (whose, module), style in zip(runs.items(), ("-o", "--x")):
    throughput, preemptions = [], []
    for n in seats:
        records = module.simulate(workload, "continuous", n, lesson.COST, **lesson.KV_LIMITS)
        throughput.append(module.serving_metrics(records, lesson.SPAN)["output_throughput"])
        preemptions.append(sum(r["preemptions"] for r in records))
    ax.plot(seats, throughput, style, color="tab:blue", label=f"output tokens / s ({whose})")
    twin.plot(seats, preemptions, style, color="tab:red", label=f"preemptions ({whose})")
ax.set(xlabel="max_num_seqs", ylabel="output tokens / s")
ax.set_title(f"Past the seats a cache of {lesson.KV_LIMITS['kv_blocks']} blocks holds,\\n"
             f"preemptions climb and throughput falls.", fontsize=10)
twin.set_ylabel("preemptions", color="tab:red")
handles, labels = ax.get_legend_handles_labels()
more, their_labels = twin.get_legend_handles_labels()
ax.legend(handles + more, labels + their_labels, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2,
          fontsize=8)  # below the plot: clear of both curves
ax.grid(alpha=0.3)
plt.show()
"""),
    ("""
### Lesson 3: chunked prefill trades TTFT for everyone's ITL

At 12 seats without a token budget, each code prompt is prefilled in one step of up to half a second that every
running stream waits through. A budget bounds every step; the long prompts now take several steps, each paying
the step's overhead and sharing the budget with the decodes, so their first token comes later. The short requests
pay as well: while a long prompt's chunks fill the budget nobody else is admitted, so a chat that arrives then waits
for that prompt's last chunk. The chat requests' TTFT p99 rises from 1.80 s without a budget to 2.17 s at 2,048
tokens. A budget above the longest prompt bounds nothing: at 8,192 tokens a step holds one code prompt and the
start of the next, and the stalls grow.

The exercise plans a step's budget decodes first, then prompt chunks, both in admission order: the policy of
vLLM V0's chunked prefill, and the one vLLM V1's documentation describes. V1's scheduler itself walks its running
requests in admission order and gives each what it still needs from the budget. Because a request is admitted only
when its first chunk fits, at most one running request is still prefilling, the one admitted last, so the two
orders plan the same steps here.
""", """
budgets = [None, 8192, 4096, 2048, 1024, 512]


def budget_runs(module):
    \"\"\"By budget: ITL p99 of every request, mean TTFT of the code prompts, TTFT p99 of the chats.\"\"\"
    itl, code_ttft, chat_ttft = [], [], []
    for budget in budgets:
        records = module.simulate(workload, "continuous", lesson.CHUNK_SEATS, lesson.COST,
                                  max_num_batched_tokens=budget)
        itl.append(module.serving_metrics(records, lesson.SPAN)["itl"]["p99"])
        code = [r for r in records if r["id"].startswith("code-")]
        chat = [r for r in records if r["id"].startswith("chat-")]
        code_ttft.append(module.serving_metrics(code, lesson.SPAN)["ttft"]["mean"])
        chat_ttft.append(module.serving_metrics(chat, lesson.SPAN)["ttft"]["p99"])
    return itl, code_ttft, chat_ttft


mine = any(getattr(impl, name) is not getattr(ref, name, None) for name in ("simulate", "serving_metrics"))
whose = "yours" if mine else "reference"
itl, code_ttft, chat_ttft = budget_runs(impl)
names = ["none" if b is None else str(b) for b in budgets]
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.plot(names, itl, "-o", label=f"ITL p99, every request ({whose})")
right.plot(names, code_ttft, "-o", color="tab:orange", label=f"mean TTFT, long code prompts ({whose})")
right.plot(names, chat_ttft, "--s", color="tab:green", label=f"TTFT p99, short chat prompts ({whose})")
if ref is not None and mine:
    theirs = budget_runs(ref)
    for ax, curves in ((left, theirs[:1]), (right, theirs[1:])):
        for n, curve in enumerate(curves):
            ax.plot(names, curve, "k.", label="reference" if n == 0 else None)
left.set(xlabel="max_num_batched_tokens", ylabel="seconds")
left.set_title("Smaller budgets cut every stream's stalls; one above the longest prompt does not.", fontsize=10)
right.set(xlabel="max_num_batched_tokens", ylabel="seconds")
right.set_title("A budget delays first tokens, the short prompts' too.", fontsize=10)
left.legend(fontsize=8)
right.legend(fontsize=8)
for ax in (left, right):
    ax.grid(alpha=0.3)
fig.tight_layout()
plt.show()
print(f"chat TTFT p99: {chat_ttft[0]:.2f} s without a budget, {chat_ttft[budgets.index(2048)]:.2f} s at 2048 tokens")
"""),
]

CLOSING = """
This simulator prices a step with three illustrative numbers; it is not a measurement of your server. A real
engine's step cost depends on the kernels, the attention lengths, the batch shape and the hardware, and the
lessons' figures (the 4-seat survivorship, the thrashing at 8 seats, the budget that balances ITL against TTFT)
move with the workload and the costs: measure your own server under your own traffic before you tune it. Until
you have run that hardware experiment yourself, state what you expect as mechanisms and assumptions ("a token
budget bounds every step, so long prompts should stall the streams less, if prefill dominates the step"), not as
results. A capability a framework documents (a feature, a throughput figure from its own benchmark) is not your
measurement either: it was measured on someone else's hardware, model and traffic, and the supported features
change from version to version. Judge a deployment by what its users' tasks get (requests completed in time,
goodput), not by the speed of one kernel or one request's tokens per second.

The simulator follows one system's conventions where systems differ: vLLM V1's scheduler with prefix caching
off (recompute preemption, no swapping, no speculative tokens), a length limit checked against the true output
length (a server knows only the max_tokens a request asks for), one model replica, and no network or tokenizer
time. And whatever the tool, read the counts and goodput before the percentiles: a latency
statistic describes only the requests that completed.
"""
