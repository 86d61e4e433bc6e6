"""Notebook content for decoding: beam search results against sampled continuations of a toy bigram model."""

CONCEPT = """
Sampling picks one token; **decoding** repeats that choice until the text is done. A model here is a callable
`model(tokens) -> logits[V]`: give it the prompt plus what was generated so far, get the next-token scores.
Generation stops at the end-of-sequence token (`eos`), at a stop sequence, or at `max_new_tokens` (`length`),
and says which: the finish reason tells a caller whether the answer was cut off.

**Greedy** takes the most probable token each step: cheap and deterministic, but a locally best token can lead
to a poor sequence. **Sampled** decoding draws from the filtered distribution (temperature, top-k, top-p) with
an explicit generator, so runs are reproducible. **Beam search** keeps the `num_beams` best partial sequences by
summed log-probability; finished beams are ranked by that sum divided by `length ** length_penalty`, so the
penalty decides whether short or long answers win. A **repetition penalty** pushes down tokens already seen.
"""

EXPERIMENTS = [
    ("""
### Beams against samples

A toy bigram model over five tokens (token 4 is `eos`). Beam search returns a handful of high-probability
sequences; 300 sampled continuations show what the model actually says and how often. Bars: how often each
sampled sequence came up; dots: the log-probability of each beam's sequence.
""", """
import collections
import torch

table = torch.tensor([[0.1, 2.0, 1.5, 0.2, 0.5],
                      [0.3, 0.1, 1.8, 1.2, 1.0],
                      [1.6, 0.4, 0.1, 0.9, 1.4],
                      [0.5, 1.1, 0.7, 0.1, 2.2],
                      [0.0, 0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)

def model(tokens):
    return table[tokens[-1]]

def log_prob(prompt, new):
    seq, total = list(prompt), 0.0
    for t in new:
        total += torch.log_softmax(model(seq), -1)[t].item()
        seq.append(t)
    return total

prompt = [0]
beams = impl.beam_search(model, prompt, num_beams=4, max_new_tokens=4, eos_id=4, length_penalty=1.0)
gen = torch.Generator().manual_seed(0)
samples = collections.Counter(tuple(impl.sample_decode(model, prompt, 4, gen, eos_id=4)[0]) for _ in range(300))
common = [seq for seq, _ in samples.most_common(10)]
fig, ax = plt.subplots(figsize=(11, 4.5))
ax.bar(range(len(common)), [samples[s] / 300 for s in common], color="C0", label="share of 300 samples")
ax.set_xticks(range(len(common)), ["-".join(map(str, s)) for s in common], rotation=30)
ax.set_ylabel("share of samples")
twin = ax.twinx()
for rank, (new, score) in enumerate(beams):
    x = common.index(tuple(new)) if tuple(new) in common else len(common) - 0.5 + 0.3 * rank
    twin.plot(x, log_prob(prompt, new), "o", color="C3", markersize=9)
    twin.annotate(f"beam {rank + 1}", (x, log_prob(prompt, new)), textcoords="offset points", xytext=(6, 4))
twin.set_ylabel("log-probability of a beam's sequence", color="C3")
ax.set_title("beam search (red) keeps the likeliest sequences; sampling (bars) spreads over many")
plt.tight_layout()
plt.show()
print("greedy:", impl.greedy_decode(model, prompt, 4, eos_id=4))
"""),
]
