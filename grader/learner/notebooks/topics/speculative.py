"""Notebook content for speculative: expected speed-up against acceptance rate for several gamma."""

CONCEPT = """
At small batch, decoding is memory-bound: each step reads all the weights to produce one token per sequence, and
the arithmetic units wait on memory (at large batch one read of the weights serves many sequences, and the step
becomes compute-bound: the timeline topic finds where). **Speculative decoding** spends that idle arithmetic: a
small **draft** model proposes `gamma` tokens, then the large **target** model runs once over all of them. Each
draft token is accepted with probability `min(1, p/q)` (target over draft probability): with a uniform `u`, when
`u < p/q`. That strict test is Chen et al.'s (2023); Leviathan et al. (2023) accept at `u <= p/q`. The two differ
only when `u` lands exactly on `p/q` (probability 0 for a continuous `u`); the case that can happen in floating
point is a token the target forbids (`p = 0`) drawn with `u = 0`, which the strict test rejects. This exercise
follows Chen et al. At the first rejection a replacement is drawn from the normalised residual `max(0, p - q)`,
and if all are accepted the target adds a bonus token. This rule makes the output distributed **exactly** as the
target's own samples.

With acceptance rate `alpha`, one iteration yields `(1 - alpha^(gamma+1)) / (1 - alpha)` tokens on average and
costs one target pass plus `gamma` draft passes (each `c` of a target pass). The formula assumes that every draft
token is accepted with the same probability `alpha`, independently of the others (i.i.d., as Leviathan et al.
assume too). Real acceptance is neither: it changes from position to position and comes in runs (boilerplate is
easy to guess, a name or a number is not), so for a real pair of models the formula is an approximation, best read
with `alpha` measured on the traffic served. Runs matter: if half the iterations meet an easy stretch (`alpha` =
0.95) and half a hard one (`alpha` = 0.35), the mean `alpha` is 0.65 and the formula gives 2.53 tokens an iteration
at `gamma` = 4, while the iterations yield 3.03 on average. More draft tokens pay off only when `alpha` is high and
the draft is cheap. The toy models of the second experiment below have the same distributions after every prefix:
for them the assumption holds exactly.
"""

EXPERIMENTS = [
    ("""
### Expected speed-up against acceptance rate

Speed-up over the target alone for gamma = 1, 2, 4, 8, with a draft costing c = 0.05 of the target. Below the
dotted line speculation is slower than not speculating.
""", """
alphas = [i / 50 for i in range(51)]
mine = impl.expected_speedup is not getattr(ref, "expected_speedup", None)
fig, ax = plt.subplots(figsize=(7, 4.5))
for n, gamma in enumerate((1, 2, 4, 8)):
    ax.plot(alphas, [impl.expected_speedup(a, gamma, 0.05) for a in alphas], color=f"C{n}",
            label=f"gamma = {gamma}" + (" (yours)" if mine else ""))
    if ref is not None and mine:
        ax.plot(alphas, [ref.expected_speedup(a, gamma, 0.05) for a in alphas], ":", color="k",
                label="reference" if n == 0 else None)
ax.axhline(1.0, color="gray", linestyle=":")
ax.set(xlabel="acceptance rate alpha", ylabel="expected speed-up",
       title="At c = 0.05, longer drafts pay off only at high acceptance rates.")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
"""),
    ("""
### `verify` and `speculative_generate` measured against the formula

Each drafted token is accepted with probability `alpha` = sum over v of min(p(v), q(v)), independently of the
others, so one `verify` call returns k tokens with probability alpha^(k-1) (1 - alpha) for k <= gamma and alpha^gamma
for k = gamma + 1 (every draft accepted, plus the bonus token), and `(1 - alpha^(gamma+1)) / (1 - alpha)` on
average. Left: 2,000 calls of `verify` at alpha = 0.64, gamma = 4, against those probabilities. Right: the new
tokens of `speculative_generate` (four runs of 200) per call of the target's `score` (counted by the model
itself, not taken from your stats), for toy models whose next-token distributions are the same after every
prefix, against the formula.
A measured point far from its curve is a bug the formula can show.
""", """
import torch

from grader.checks.speculative.models import V, ToyModel

p_row = torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64)  # [V] the target's distribution


def draft_row(moved):
    \"\"\"The draft's distribution: `moved` of the target's mass moved onto the last token.\"\"\"
    return (1 - moved) * p_row + moved * torch.nn.functional.one_hot(torch.tensor(V - 1), V).double()  # [V]


def alpha_of(q_row):
    return torch.minimum(p_row, q_row).sum().item()


def same_after_every_prefix(row):
    return ToyModel(row.expand(V + 1, V).clone())  # [V + 1, V]: one row per last token, and the empty prefix


gen = torch.Generator().manual_seed(0)
gamma, q_row = 4, draft_row(0.4)
counts = torch.zeros(gamma + 2)
for _ in range(2000):
    drafts = torch.multinomial(q_row, gamma, replacement=True, generator=gen).tolist()
    u = torch.rand(gamma, dtype=torch.float64, generator=gen)
    noise = torch.empty(V, dtype=torch.float64).exponential_(generator=gen)
    counts[len(impl.verify(drafts, q_row.expand(gamma, V), p_row.expand(gamma + 1, V), u, noise))] += 1
a = alpha_of(q_row)
law = [a ** (k - 1) * (1 - a) for k in range(1, gamma + 1)] + [a ** gamma]
fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
whose = "yours" if impl.verify is not getattr(ref, "verify", None) else "reference"
left.bar(range(1, gamma + 2), (counts[1:] / counts.sum()).tolist(), color="C0", label=f"verify ({whose}), 2000 calls")
left.plot(range(1, gamma + 2), law, "k_", markersize=24, mew=2, label="the formula")
left.set(xlabel="tokens one verify call returns", ylabel="fraction of calls",
         title=f"Tokens per verify call at alpha = {a:.2f}, gamma = {gamma}, against the formula.")
left.legend()
moved = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
curve = [i / 50 for i in range(5, 51)]
mine = impl.speculative_generate is not getattr(ref, "speculative_generate", None)
for n, gamma in enumerate((1, 2, 4)):
    right.plot(curve, [(1 - c ** (gamma + 1)) / (1 - c) if c < 1 else gamma + 1 for c in curve], color=f"C{n}",
               label=f"formula, gamma = {gamma}")
    for whose, module, marker in (("yours" if mine else "reference", impl, "o"), ("reference", ref, "x")):
        if module is None or (marker == "x" and not mine):
            continue
        measured = []
        for m in moved:
            made = calls = 0
            for seed in range(4):  # 4 runs of 200 tokens: a model logs what it scores, up to a bound
                target = same_after_every_prefix(p_row)
                tokens, _ = module.speculative_generate(target, same_after_every_prefix(draft_row(m)), [0], 200,
                                                        gamma, torch.Generator().manual_seed(seed))
                made, calls = made + len(tokens), calls + target.score_calls
            measured.append(made / calls)
        right.plot([alpha_of(draft_row(m)) for m in moved], measured, marker, color=f"C{n}" if marker == "o" else "k",
                   label=f"speculative_generate ({whose})" if n == 0 else None)
right.set(xlabel="acceptance rate alpha", ylabel="new tokens per target call",
          title="New tokens per target call against the formula (800 tokens a point).")
right.legend(fontsize=8)
right.grid(alpha=0.3)
plt.tight_layout()
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
