"""Notebook content for decoding: beam search results against sampled continuations of a toy bigram model."""

CONCEPT = """
Sampling picks one token; **decoding** repeats that choice until the text is done. A model here is a callable
`model(tokens) -> logits[V]`: give it the prompt plus what was generated so far, get the next-token scores.
Generation stops at the end-of-sequence token (`eos`), at a stop sequence, or at `max_new_tokens` (`length`),
and says which: the finish reason tells a caller whether the answer was cut off. Every provider has its own word
for that cut (`length` at OpenAI Chat, vLLM and Hugging Face's TGI and Inference API, though transformers'
`generate` returns no finish reason at all; Anthropic's `max_tokens`, and its `model_context_window_exceeded` when
the context window fills first; Gemini's `MAX_TOKENS`; OpenAI Responses' `max_output_tokens`), and code that came
back after one is a prefix, even when it parses.

`min_new_tokens` works the other way, and systems differ on what it holds back. This exercise follows Hugging
Face (`MinNewTokensLengthLogitsProcessor`): until that many new tokens exist, eos's logit is `-inf`, and nothing
else changes, so a stop sequence may still end the output sooner. vLLM's `min_tokens` holds back more: eos, every
id of its `stop_token_ids`, and its stop strings, which it ignores until the minimum is reached.

Whether a stop sequence stays in the output is a convention, not a law: this exercise removes it, as OpenAI and
vLLM cut a `stop` string out of the returned text. A token of vLLM's `stop_token_ids` stays in the returned token
ids, while the text leaves it out unless `include_stop_str_in_output` is set; Hugging Face's `stop_strings` leave
the string in the output.

**Greedy** takes the most probable token each step: cheap and deterministic, but a locally best token can lead
to a poor sequence. **Sampled** decoding draws from the filtered distribution (temperature, top-k, top-p) with
an explicit generator, so runs are reproducible. **Beam search** keeps the best partial sequences by summed
log-probability; finished beams are ranked by that sum divided by `length ** length_penalty`, so the penalty
decides whether short or long answers win. An early eos does not win whatever follows: a finished beam is
compared with the others by its length-normalised score. Here a finished beam keeps its slot and the live beam
shrinks (`num_beams - finished`), the textbook rule; Hugging Face's `generate` instead keeps `num_beams` live
beams and stops by its `early_stopping` setting, so the two can return different beams. A **repetition
penalty** pushes down tokens already seen.

**Different models take different controls.** The parameters each interface names, as the installed SDKs'
create methods and config types list them (openai 3.57, anthropic 2.16, google-genai 3.6, transformers 5.24;
vLLM's `SamplingParams` as its source reads in December 2026); a dash means the interface names none:

| control | OpenAI Chat Completions | OpenAI Responses | Anthropic Messages | Gemini | Hugging Face `generate` | vLLM |
|---|---|---|---|---|---|---|
| temperature | `temperature` | `temperature` | — | `temperature` | `temperature` | `temperature` |
| top-p | `top_p` | `top_p` | — | `top_p` | `top_p` | `top_p` |
| top-k | — | — | — | `top_k` | `top_k` | `top_k` |
| frequency and presence penalties | `frequency_penalty`, `presence_penalty` | — | — | `frequency_penalty`, `presence_penalty` | — | `frequency_penalty`, `presence_penalty` |
| repetition penalty (this exercise's) | — | — | — | — | `repetition_penalty` | `repetition_penalty` |
| stop strings | `stop` | — | `stop_sequences` | `stop_sequences` | `stop_strings` | `stop` |
| minimum length | — | — | — | — | `min_new_tokens` | `min_tokens` |
| output limit | `max_completion_tokens`, `max_tokens` (deprecated) | `max_output_tokens` | `max_tokens` | `max_output_tokens` | `max_new_tokens` | `max_tokens` |

OpenAI has no top-k, and its penalties are additive (the frequency penalty subtracts a fixed amount from a
token's logit for each time it already occurred, the presence penalty a fixed amount once it has occurred at all),
not the multiplicative repetition penalty of this exercise; its reasoning models reject
`temperature` and `top_p` altogether (its reasoning guide lists what they do not support). Gemini, Hugging Face
and vLLM take top-k. Anthropic's earlier SDKs took `temperature`, `top_p` and `top_k`; anthropic 2.16's
`messages.create` names none of them. A setting that works with one model may be refused, or mean something else,
with the next: read the parameter list of the model and interface you call.
"""

SETUP = """
import collections
import torch

table = torch.tensor([[0.1, 2.0, 1.5, 0.2, 0.5],
                      [0.3, 0.1, 1.8, 1.2, 1.0],
                      [1.6, 0.4, 0.1, 0.9, 1.4],
                      [0.5, 1.1, 0.7, 0.1, 2.2],
                      [0.0, 0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)


def model(tokens):
    \"\"\"A toy bigram model over five tokens (token 4 is eos): the logits after the last token.\"\"\"
    return table[tokens[-1]]
"""

EXPERIMENTS = [
    ("""
### Beams against samples

A toy bigram model over five tokens (token 4 is `eos`). Beam search returns a handful of high-probability
sequences; 300 sampled continuations show what the model actually says and how often. Bars: how often each
sampled sequence came up; dots: the log-probability of each beam's sequence.
""", """
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
sampler = "your" if impl.sample_decode is not getattr(ref, "sample_decode", None) else "the reference's"
mine = impl.beam_search is not getattr(ref, "beam_search", None)
fig, ax = plt.subplots(figsize=(11, 4.5))
ax.bar(range(len(common)), [samples[s] / 300 for s in common], color="C0",
       label=f"share of 300 samples of {sampler} sample_decode")
ax.set_xticks(range(len(common)), ["-".join(map(str, s)) for s in common], rotation=30)
ax.set_ylabel("share of samples")
twin = ax.twinx()


def place(new, rank):
    return common.index(tuple(new)) if tuple(new) in common else len(common) - 0.5 + 0.3 * rank


for rank, (new, score) in enumerate(beams):
    twin.plot(place(new, rank), log_prob(prompt, new), "o", color="C3", markersize=9,
              label=f"beams of {'your' if mine else 'the reference'} beam_search" if rank == 0 else None)
    twin.annotate(f"beam {rank + 1}", (place(new, rank), log_prob(prompt, new)), textcoords="offset points",
                  xytext=(6, 4))
if ref is not None and mine:
    theirs = ref.beam_search(model, prompt, num_beams=4, max_new_tokens=4, eos_id=4, length_penalty=1.0)
    for rank, (new, score) in enumerate(theirs):
        twin.plot(place(new, rank), log_prob(prompt, new), "kx", markersize=9, mew=2,
                  label="beams of the reference" if rank == 0 else None)
twin.set_ylabel("log-probability of a beam's sequence", color="C3")
twin.margins(y=0.15)  # room above the top beam for its label
handles, labels = ax.get_legend_handles_labels()
more, their_labels = twin.get_legend_handles_labels()
ax.legend(handles + more, labels + their_labels, loc="upper right", fontsize=8)
ax.set_title("Beam search (red) keeps the likeliest sequences; sampling (bars) spreads over many.")
plt.tight_layout()
plt.show()
print("greedy:", impl.greedy_decode(model, prompt, 4, eos_id=4))
"""),
    ("""
### Holding eos back

The same model from token 2, where eos (token 4) is a likely next token. With `min_new_tokens` the answer cannot
end before that many new tokens: the bars show how long 300 sampled answers are (at most 8 tokens) for each
setting. An answer that ends with eos now holds at least `min_new_tokens + 1` tokens: nothing left of the dashed
line occurs; the rest of each distribution is the model's own.
""", """
settings = [0, 2, 4]
mine = impl.sample_decode is not getattr(ref, "sample_decode", None)


def answer_lengths(module, least):
    gen = torch.Generator().manual_seed(1)
    return collections.Counter(len(module.sample_decode(model, [2], 8, gen, eos_id=4, min_new_tokens=least)[0])
                               for _ in range(300))


fig, axes = plt.subplots(1, len(settings), figsize=(12, 3.8), sharey=True)
for ax, least in zip(axes, settings):
    lengths = answer_lengths(impl, least)
    ax.bar(list(lengths), [lengths[n] / 300 for n in lengths], color="C0",
           label=f"{'your' if mine else 'the reference'} sample_decode")
    if ref is not None and mine:
        theirs = answer_lengths(ref, least)
        ax.plot(list(theirs), [theirs[n] / 300 for n in theirs], "k_", markersize=14, mew=2, label="the reference")
    ax.axvline(least + 0.5, color="k", linestyle="--")
    ax.set_xlim(0.4, 8.6)
    ax.set_title(f"With min_new_tokens={least},\\nthe shortest answer has {min(lengths)} tokens.", fontsize=10)
    ax.set_xlabel("new tokens (eos included)")
axes[0].set_ylabel("share of 300 answers")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()
"""),
]

CLOSING = """
A decoding strategy controls the distribution a token is drawn from; it does not verify a fact. A stop rule or a
finish reason says where the output ended and whether it was cut, not whether the answer is right;
`completion_status` says a program is complete Python, not that it works (run its tests for that). A beam finds
a sequence the model finds likely, and a likely sequence is neither more natural nor more often correct: beam
search happily finds "I think that I think that ...". `min_new_tokens` forces length, not content, and a
repetition penalty changes which words come, not whether they are accurate. A low temperature, or greedy
decoding, removes some of the run-to-run random variation and nothing more: it does not make up for source code
the agent never read, it does not repair a tool call that failed, and it does not steady an unstable environment
whose tests pass on one run and fail on the next. None of this checks a fact, and none of it replaces evaluating
the answers.
"""
