"""Notebook content for speculative: expected speed-up against acceptance rate for several gamma."""

CONCEPT = """
Decoding is memory-bound: each step reads all the weights to produce one token. **Speculative decoding** lets a
small **draft** model propose `gamma` tokens, then runs the large **target** model once over all of them. Each
draft token is accepted with probability `min(1, p/q)` (target over draft probability): with a uniform `u`, when
`u < p/q`. That strict test is Chen et al.'s (2023); Leviathan et al. (2023) accept at `u <= p/q`. The two differ
only when `u` lands exactly on `p/q` (probability 0 for a continuous `u`); the case that can happen in floating
point is a token the target forbids (`p = 0`) drawn with `u = 0`, which the strict test rejects. This exercise
follows Chen et al. At the first rejection a replacement is drawn from the normalised residual `max(0, p - q)`,
and if all are accepted the target adds a bonus token. This rule makes the output distributed **exactly** as the
target's own samples.

With acceptance rate `alpha`, one iteration yields `(1 - alpha^(gamma+1)) / (1 - alpha)` tokens on average and
costs one target pass plus `gamma` draft passes (each `c` of a target pass). More draft tokens pay off only when
`alpha` is high and the draft is cheap.
"""

EXPERIMENTS = [
    ("""
### Expected speed-up against acceptance rate

Speed-up over the target alone for gamma = 1, 2, 4, 8, with a draft costing c = 0.05 of the target. Below the
dotted line speculation is slower than not speculating.
""", """
alphas = [i / 50 for i in range(51)]
fig, ax = plt.subplots(figsize=(7, 4.5))
for gamma in (1, 2, 4, 8):
    ax.plot(alphas, [impl.expected_speedup(a, gamma, 0.05) for a in alphas], label=f"gamma = {gamma}")
ax.axhline(1.0, color="gray", linestyle=":")
ax.set(xlabel="acceptance rate alpha", ylabel="expected speed-up", title="speculative decoding, c = 0.05")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
"""),
]

CLOSING = """
Propose-and-verify is not voting. The draft does not get a say that the target weighs against its own: the
target's distribution decides every token, the draft only guesses ahead so that one target pass can settle
several positions, and a rejected guess is replaced by a draw the target makes. Two models agreeing is no
evidence that an answer is right; with this rule the output is exactly what the target alone would have sampled,
with its mistakes included.

Verifying a distribution is not fact-checking. The target checks that each token is one it would itself have
produced with that probability, not that the text is true: a confident error of the target is accepted as
readily as a fact, and a correct draft token the target considers unlikely is usually rejected. Speculative decoding
changes how fast the answer comes, never what it says; checking what it says needs evidence from outside the
model (tests, sources, tools).
"""
