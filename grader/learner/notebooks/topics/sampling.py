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

SETUP = """
import torch

logits = torch.tensor([3.0, 2.4, 2.0, 1.2, 0.8, 0.3, -0.5, -1.0], dtype=torch.float64)  # one step, 8 tokens
"""

EXPERIMENTS = [
    ("""
### Candidate sets

One row of logits, and the distribution we would sample from under several settings. Watch which tokens survive
and how the mass moves: a removed token has probability 0, so it is drawn in gray at the probability it had
before the cut (after the temperature), and a kept token in blue at its renormalised probability. Where the
reference is installed and the function is yours, a black tick marks the reference's probability of each token.
""", """
settings = [dict(temperature=0.5), dict(temperature=1.0), dict(temperature=2.0),
            dict(top_k=3), dict(top_p=0.8), dict(temperature=1.5, top_k=5, top_p=0.9)]
mine = impl.filtered_probs is not getattr(ref, "filtered_probs", None)  # yours, not the reference's
whose = "yours" if mine else "reference"
fig, axes = plt.subplots(2, 3, figsize=(12, 6), sharey=True)
for ax, kw in zip(axes.flat, settings):
    probs = impl.filtered_probs(logits, **kw).tolist()
    before = impl.filtered_probs(logits, temperature=kw.get("temperature", 1.0)).tolist()  # no cut yet
    removed = [i for i, p in enumerate(probs) if p == 0]
    kept = [i for i, p in enumerate(probs) if p > 0]
    ax.bar(removed, [before[i] for i in removed], color="lightgray", edgecolor="gray", label="removed")
    ax.bar(kept, [probs[i] for i in kept], color="C0", label=f"kept, renormalised ({whose})")
    if ref is not None and mine:
        ax.plot(range(len(logits)), ref.filtered_probs(logits, **kw).tolist(), "k_", markersize=16, mew=2,
                label="reference")
    ax.set_title(f"With {', '.join(f'{k}={v}' for k, v in kw.items())}, {len(kept)} tokens stay.", fontsize=10)
    ax.set_xlabel("token id")
axes[0, 0].set_ylabel("probability")
axes[1, 0].set_ylabel("probability")
axes[1, 1].legend()
fig.suptitle(f"The distribution to sample from, {whose} (gray: removed tokens, at their probability before the cut).")
plt.tight_layout()
plt.show()
"""),
    ("""
### The nucleus, worked by hand

The chapter's case: probabilities 0.70, 0.15, 0.10, 0.05. A token stays when the mass ranked strictly above it
is still below p. At p = 0.8 the second token stays (0.70 above it) and the third goes (0.85 above it): 2 tokens.
At p = 0.95 the third stays (0.85 above it) and the fourth goes (0.95 above it reaches p): 3 tokens. The steps
show the mass above each token, the dashed line p; a black triangle marks each token the reference keeps, where
it is installed and `top_p_filter` is yours.
""", """
worked = torch.tensor([0.70, 0.15, 0.10, 0.05], dtype=torch.float64)
above = (worked.cumsum(-1) - worked).tolist()  # mass ranked strictly above each token
mine = impl.top_p_filter is not getattr(ref, "top_p_filter", None)
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, p in zip(axes, (0.8, 0.95)):
    kept = torch.isfinite(impl.top_p_filter(worked.log(), p)).tolist()
    ax.bar(range(4), worked.tolist(), color=["C0" if k else "lightgray" for k in kept],
           edgecolor=["C0" if k else "gray" for k in kept])
    ax.step(range(4), above, where="mid", color="C1", label="mass ranked above")
    ax.axhline(p, color="k", linestyle="--", label=f"p = {p}")
    if ref is not None and mine:
        theirs = [i for i, k in enumerate(torch.isfinite(ref.top_p_filter(worked.log(), p)).tolist()) if k]
        ax.plot(theirs, [worked[i].item() + 0.04 for i in theirs], "kv", label="kept by the reference")
    for i, m in enumerate(above):
        ax.annotate(f"{m:.2f}", (i, m), textcoords="offset points", xytext=(0, 5), ha="center", color="C1")
    ax.set_xticks(range(4), [f"{q:.2f}" for q in worked.tolist()])
    ax.set_xlabel("token probability")
    ax.set_ylim(0, 1.08)
    ax.set_title(f"At top-p {p}, {'your' if mine else 'the reference'} top_p_filter\\nkeeps {sum(kept)} tokens "
                 f"(gray: removed).", fontsize=10)
    ax.legend(loc="center right")
axes[0].set_ylabel("probability / mass")
plt.tight_layout()
plt.show()
"""),
    ("""
### Many draws against one

One draw is one token; only many draws show the distribution. The histogram of 4000 exponential-race draws
should match the bars of `filtered_probs` (top-p 0.9 here), and yours the reference's where it is installed.
""", """
gen = torch.Generator().manual_seed(0)
probs = impl.filtered_probs(logits, top_p=0.9)
noise = torch.empty(4000, len(logits), dtype=torch.float64).exponential_(generator=gen)
draws = impl.sample(probs.expand(4000, -1), noise)
one = int(impl.sample(probs, noise[0]))
counts = torch.bincount(draws, minlength=len(logits)).double() / len(draws)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.bar(range(len(logits)), [1.0 if i == one else 0.0 for i in range(len(logits))], color="C1")
drew = "your" if impl.sample is not getattr(ref, "sample", None) else "the reference's"
left.set_title(f"One draw of {drew} sample picks token {one}.")
right.bar(range(len(logits)), counts.tolist(), label=f"4000 draws of {drew} sample")
mine = impl.filtered_probs is not getattr(ref, "filtered_probs", None)
right.plot(range(len(logits)), probs.tolist(), "k_", markersize=20,
           label=f"filtered_probs ({'yours' if mine else 'reference'})")
if ref is not None and mine:
    right.plot(range(len(logits)), ref.filtered_probs(logits, top_p=0.9).tolist(), "rx", label="reference")
right.set_title("Many draws match the distribution.")
right.legend()
for ax in (left, right):
    ax.set_xlabel("token id")
plt.tight_layout()
plt.show()
"""),
]

CLOSING = """
Temperature, top-k and top-p only reshape a distribution the model already produced: they choose *how* to draw
from it, never *what is true*. A sharper distribution is a more confident one, not a more correct one; a token
that the model rates highly and that states a wrong fact stays just as wrong at temperature 0.1, and nucleus
sampling never checks an answer against anything. The frequencies of many draws estimate the distribution, not
the quality of what it says: judging an answer needs evidence from outside the model (a test, a source, a
measurement). Nor does one sampled run say which setting is better: compare settings over many draws.

Nucleus sampling was proposed under research conditions that are not your task: the degeneration study (Holtzman
et al., "The Curious Case of Neural Text Degeneration", ICLR 2020) judged open-ended text, continuations of web
text read for how natural and varied they are. An advantage measured on open-ended text does not turn into a setting every
coding agent needs: no fixed p fits every coding agent, because the right setting depends on the model, the task
and how its output is checked, and only measuring on your own tasks can choose it. The worked case of this
notebook (0.70, 0.15, 0.10, 0.05 at p = 0.8 and p = 0.95) is arithmetic that shows how the cut works, not a
recommended setting for generating code.
"""
