"""Notebook content for prompt_cache: hit rate against cost for stable-prefix and timestamp-first prompts."""

CONCEPT = """
Most of an agent's prompt repeats from call to call: the system prompt, the tool definitions, the conversation
so far. **Prompt (prefix) caching** keeps the KV cache of a prompt's leading blocks so that the next request that
starts with exactly the same tokens skips their prefill. The cache works in whole **blocks** identified by a
hash of everything up to and including the block, so a block matches only when the whole prefix before it
matches too; a match always leaves the last token to compute (its logits are needed).

Providers price it, each by its own rules: reading from the cache costs a fraction of plain input (0.1x at
Anthropic and for OpenAI's GPT-5, 2025), and writing to it costs 1.25x input at Anthropic for a 5-minute cache
(2x for one hour) but nothing extra at OpenAI, which caches automatically and charges no write premium. The
experiment uses Anthropic's ratios. The lesson for prompt design: keep what is stable at the front. One changing
token early in the prompt, such as a timestamp before the system prompt, changes every later block's hash and
turns each turn into a full miss.

**Compaction** (compression) is a call that summarises the conversation so far; the summary then replaces the
history in the next prompt. The cache stops matching from the summary on: everything after that point is new
text. What comes in front of the summary (the system prompt and the tool definitions) is unchanged, so those
blocks still hit. A compaction therefore costs its own call, a cold cache for the summary and all that follows
it, and a shorter prompt for every later turn.
"""

EXPERIMENTS = [
    ("""
### Stable prefix against timestamp first

Sessions of 2 to 12 turns with a 2,000-token system prompt and 300 new tokens per turn: once with the stable
part first, once with a timestamp token in front that changes each turn. Each point is one session length: hit
rate against the session's cost (prices per token of input, cache write, cache read and output in dollars).
Where the reference is installed and `session_cost` is yours, its points are drawn as black crosses.
""", """
prices = {"input": 3e-6, "cache_write": 3.75e-6, "cache_read": 0.3e-6, "output": 15e-6}
system = list(range(1000, 3000))

def turns(n, timestamp_first):
    out, history = [], []
    for i in range(n):
        history += list(range(5000 + 300 * i, 5300 + 300 * i))
        prompt = ([90000 + i] if timestamp_first else []) + system + history
        out.append({"prompt": prompt, "output_tokens": 200})
    return out

mine = impl.session_cost is not getattr(ref, "session_cost", None)
fig, ax = plt.subplots(figsize=(7, 4.5))
for timestamp_first, style, name in ((False, "-o", "stable prefix first"), (True, "--s", "timestamp first")):
    costs = [impl.session_cost(turns(n, timestamp_first), prices, 64, 1024) for n in range(2, 13)]
    ax.plot([c["hit_rate"] for c in costs], [c["total_cost"] for c in costs], style,
            label=f"{name} ({'yours' if mine else 'reference'})")
    if ref is not None and mine:
        theirs = [ref.session_cost(turns(n, timestamp_first), prices, 64, 1024) for n in range(2, 13)]
        ax.plot([c["hit_rate"] for c in theirs], [c["total_cost"] for c in theirs], "kx",
                label="reference" if not timestamp_first else None)
ax.set(xlabel="cache hit rate (cached prompt tokens / prompt tokens)", ylabel="session cost ($)",
       title="Over 2 to 12 turns, a stable prefix first hits the cache and costs less.")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
"""),
]

CLOSING = """
A prompt cache is computation state, not memory. It keeps the keys and values that a prefill of exactly these
tokens produced, so that the same tokens need not be computed again; the model learns nothing from it and recalls
nothing through it. A hit changes what a request costs and how soon its first token comes, never what the model
knows or answers: the same prompt gives the same distribution (up to floating-point rounding) whether its prefix
came from the cache or was computed afresh. When the cache expires or evicts a block, nothing is forgotten that the
model had learned; the next request simply pays the prefill again. Whatever a conversation should carry forward
must be in the prompt (or in a store the application reads into it), and a high hit rate is no measure of how well
an agent remembers.

Cache, compression and long-term memory are three different things. The cache reuses the computation of an
identical prefix and changes nothing the model sees. Compression rewrites the context into a shorter summary: it
changes what the model sees, can drop a detail a later step needs, and restarts the cache from the summary on.
Long-term memory is what an application stores outside the model and reads back into later prompts. A higher hit
rate is not success: padding a prompt with a long stable prefix it never needs raises the hit rate and the bill
together. Judge a change by task quality, total cost and total time read together, never by the hit rate alone.
"""
