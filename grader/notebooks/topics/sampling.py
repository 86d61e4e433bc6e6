"""Notebook content for sampling: candidate sets under temperature, top-k and top-p; many draws against one."""

CONCEPT = """
A language model ends each step with **logits**: one score per token of the vocabulary. Softmax turns them into a
next-token distribution, and *decoding* is the choice of which token to emit. Everything here works along the
last dimension `[..., V]`, so the same code serves one row, a batch, and a batch of sequences.

Three knobs reshape the distribution before we draw. **Temperature** divides the logits: below 1 it sharpens
(towards greedy), above 1 it flattens. **Top-k** keeps the k largest logits. **Top-p** (nucleus) keeps the
smallest set of most probable tokens whose mass reaches p, *including* the token that crosses p. Removed tokens
get logit `-inf`, hence probability exactly 0 after softmax. The order is fixed: temperature, top-k, top-p.

Drawing uses the **exponential race**: with i.i.d. Exp(1) noise per token, the argmax of `probs / noise` is a
sample from `probs`. Given the noise the draw is deterministic, which makes it testable; a zero-probability token
never wins. Greedy is the limit with no randomness: the argmax, lowest index on ties.
"""

EXPERIMENTS = [
    ("""
### Candidate sets

One row of logits, and the distribution we would sample from under several settings. Watch which tokens survive
and how the mass moves.
""", """
import torch

logits = torch.tensor([3.0, 2.4, 2.0, 1.2, 0.8, 0.3, -0.5, -1.0], dtype=torch.float64)
settings = [dict(temperature=0.5), dict(temperature=1.0), dict(temperature=2.0),
            dict(top_k=3), dict(top_p=0.8), dict(temperature=1.5, top_k=5, top_p=0.9)]
fig, axes = plt.subplots(2, 3, figsize=(12, 6), sharey=True)
for ax, kw in zip(axes.flat, settings):
    probs = impl.filtered_probs(logits, **kw)
    ax.bar(range(len(logits)), probs.tolist(), color=["C0" if p > 0 else "lightgray" for p in probs.tolist()])
    ax.set_title(", ".join(f"{k}={v}" for k, v in kw.items()))
    ax.set_xlabel("token id")
axes[0, 0].set_ylabel("probability")
axes[1, 0].set_ylabel("probability")
fig.suptitle("the distribution to sample from (gray: removed tokens)")
plt.tight_layout()
plt.show()
"""),
    ("""
### Many draws against one

One draw is one token; only many draws show the distribution. The histogram of 4000 exponential-race draws
should match the bars of `filtered_probs` (top-p 0.9 here).
""", """
gen = torch.Generator().manual_seed(0)
probs = impl.filtered_probs(logits, top_p=0.9)
noise = torch.empty(4000, len(logits), dtype=torch.float64).exponential_(generator=gen)
draws = impl.sample(probs.expand(4000, -1), noise)
one = int(impl.sample(probs, noise[0]))
counts = torch.bincount(draws, minlength=len(logits)).double() / len(draws)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.bar(range(len(logits)), [1.0 if i == one else 0.0 for i in range(len(logits))], color="C1")
left.set_title(f"one draw: token {one}")
right.bar(range(len(logits)), counts.tolist(), label="4000 draws")
right.plot(range(len(logits)), probs.tolist(), "k_", markersize=20, label="filtered_probs")
right.set_title("many draws match the distribution")
right.legend()
for ax in (left, right):
    ax.set_xlabel("token id")
plt.tight_layout()
plt.show()
"""),
]
