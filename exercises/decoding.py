"""Decoding exercise: turn a language model into text — greedy, sampled and beam-searched generation, stop
control, the repetition penalty, and telling a complete program from a truncated one.

A model is a callable `model(tokens) -> Tensor[V]`: give it the prompt followed by the tokens generated so far (a
list of int token ids) and it returns the logits of the next token. The checks' models are served by the grader:
each call is a round trip, so call the model once per new token (once per live beam and step in beam search).

Sampling: you may reuse your own sampling exercise with `import sampling` (your sampling.py, from this folder;
the grader puts the folder on sys.path). Without a sampling.py, or with its functions still raising
NotImplementedError, that import or those calls fail and so do the checks that reach them: import it inside the
function, or write the filtering here (temperature, then top-k, then top-p, then softmax, as in sampling.py).

Bad arguments raise ValueError with a message that names the argument, e.g. "max_new_tokens must be >= 1, got 0".
Run `infergrade check decoding` after each edit; `infergrade hint decoding.<function>` when stuck.
"""
import torch


def greedy_decode(model, prompt: list[int], max_new_tokens: int, eos_id: int | None = None,
                  stop=(), min_new_tokens: int = 0) -> tuple[list[int], str]:
    """Generate by taking the most probable next token (the lowest id on ties) at every step.

    Stops at the first of these, checked after each new token in this order:
    - "eos": the token is `eos_id` (it stays in the output);
    - "stop": the new tokens now end with one of the `stop` sequences (each a tuple of token ids). Only new tokens
      count: a match that needs prompt tokens is no match. The matched tokens are removed from the output; when
      several stop sequences end there, the longest is removed;
    - "length": `max_new_tokens` tokens have been generated.
    Removing the stop tokens is this exercise's convention, as OpenAI and vLLM cut a `stop` string out of the
    returned text. Others differ: a token of vLLM's `stop_token_ids` stays in the returned token ids (the text leaves
    it out unless `include_stop_str_in_output` is set), and Hugging Face's `stop_strings` leave the string in.

    Until `min_new_tokens` new tokens exist, eos may not be chosen: its logit counts as -inf at those steps. Stop
    sequences still end the output early. This is Hugging Face's rule (MinNewTokensLengthLogitsProcessor: eos only).
    vLLM's `min_tokens` holds back more: eos, every id of its `stop_token_ids`, and stop strings, which it ignores
    until the minimum is reached.

    Args:
        model: callable, model(prompt + new_tokens) -> [V] logits.
        prompt: token ids (may be empty).
        max_new_tokens: >= 1.
        eos_id: the end-of-sequence id, or None for no eos.
        stop: stop sequences, each a non-empty tuple (or list) of token ids.
        min_new_tokens: 0 <= min_new_tokens <= max_new_tokens.
    Returns:
        (new_tokens, finish_reason): the new tokens only, as a list of ints, and "eos", "stop" or "length".
    Raises:
        ValueError: max_new_tokens < 1, an empty stop sequence, or min_new_tokens outside [0, max_new_tokens] (the
            message names the argument).
    """
    raise NotImplementedError("TODO: greedy_decode: append the argmax token until eos, a stop sequence or the limit")


def sample_decode(model, prompt: list[int], max_new_tokens: int, generator: torch.Generator,
                  temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                  eos_id: int | None = None, stop=(), min_new_tokens: int = 0) -> tuple[list[int], str]:
    """Generate by drawing each token from the filtered next-token distribution.

    The same loop and the same eos / stop / length / min_new_tokens rules as greedy_decode; each token is drawn from the
    distribution sampling.py's `filtered_probs(logits, temperature, top_k, top_p)` gives (temperature, then
    top-k, then top-p, then softmax). Every random number comes from `generator` (e.g.
    `torch.multinomial(probs, 1, generator=generator)`), never from torch's global generator, so the same
    generator state gives the same output.

    Args:
        generator: a torch.Generator, the only source of randomness.
        temperature: > 0.
        top_k: None or >= 1.
        top_p: None or in (0, 1].
        (the others as in greedy_decode)
    Returns:
        (new_tokens, finish_reason) as in greedy_decode.
    Raises:
        ValueError: a bad max_new_tokens, stop, min_new_tokens, temperature, top_k or top_p (the message names it).
    """
    raise NotImplementedError("TODO: sample_decode: draw each token from the filtered distribution with generator")


def beam_search(model, prompt: list[int], num_beams: int, max_new_tokens: int, eos_id: int | None = None,
                length_penalty: float = 1.0) -> list[tuple[list[int], float]]:
    """Keep the most probable partial sequences (beams) instead of one.

    Start with one live beam (no new tokens, log-probability 0). At each step there are
    k = num_beams - len(finished) slots: extend every live beam by every token (log-probability = the beam's
    summed log-probability + log_softmax of the model's logits), rank all candidates by that sum (ties: the
    earlier live beam, then the lower token id) and keep the top k. Kept candidates that end in `eos_id` are
    finished; the others are the next live beams. Stop when no slot or no live beam is left, or after
    `max_new_tokens` steps, when the live beams are finished too.

    A finished beam's score is its summed log-probability of the new tokens (eos included) divided by
    (number of new tokens) ** length_penalty: 0 ranks by total probability, 1 by probability per token.
    With num_beams >= V ** max_new_tokens this is an exhaustive search.

    This shrinking beam is the textbook rule. Hugging Face's `generate` differs: it keeps num_beams live beams
    until its `early_stopping` setting says the finished ones cannot be beaten.

    Args:
        num_beams, max_new_tokens: >= 1.
        eos_id: the end-of-sequence id, or None.
        length_penalty: any float.
    Returns:
        The finished beams as (new_tokens, score) pairs, best score first (equal scores: finished earlier first).
    Raises:
        ValueError: num_beams < 1 or max_new_tokens < 1.
    """
    raise NotImplementedError("TODO: beam_search: extend, rank, keep num_beams - finished, normalise by length")


def apply_repetition_penalty(logits: torch.Tensor, seen_tokens, penalty: float) -> torch.Tensor:
    """Make tokens that already appeared less likely (Keskar et al. 2019; Hugging Face's
    RepetitionPenaltyLogitsProcessor).

    For each distinct seen token, once however often it appeared: a negative logit is multiplied by `penalty`, a
    positive one divided by it (a zero logit stays 0). penalty > 1 discourages repetition, < 1 encourages it.

    Args:
        logits: [V] float tensor, or [B, V] for a batch.
        seen_tokens: for [V] logits a sequence of token ids; for [B, V] one sequence per row (a list of B lists,
            or a [B, T] LongTensor).
        penalty: > 0.
    Returns:
        A new tensor of the same shape and dtype (the input is left unchanged).
    Raises:
        ValueError: penalty <= 0, a seen id outside [0, V), or a batch whose seen_tokens has the wrong number of
            rows (the message names the argument).
    """
    raise NotImplementedError("TODO: apply_repetition_penalty: multiply negative, divide positive seen logits")


def completion_status(text: str, finish_reason: str) -> str:
    """Whether a model's answer holds a complete Python program: "complete", "truncated" or "invalid".

    The code: a fence is a line that starts, after at most three spaces (CommonMark), with three backticks; with an
    even number of fences the code is the body of the last fenced block (the lines between the last two fences,
    taken as they are), with none it is the whole text (unfenced text is taken as code).

    "truncated" (judged first) when:
    - finish_reason is a provider's word for hitting the token limit: "length" (OpenAI Chat, vLLM, Hugging Face's
      TGI and Inference API; transformers' generate returns no finish reason), "max_tokens" and
      "model_context_window_exceeded" (Anthropic's stop_reason: its output limit, and the model's context window
      filled), "MAX_TOKENS" (Gemini), "max_output_tokens" (OpenAI Responses' incomplete_details.reason). The answer
      was cut, even if what came back parses;
    - a fence is left open (an odd number of fences);
    - the code ends inside an unclosed bracket, or inside a string (a one-line string counts when nothing but
      whitespace follows its opening quote's line; triple-quoted strings may span lines);
    - the code ends after a line continuation (its last significant character is a backslash);
    - the code's last logical line ends, comments aside, with ':' (a block opener with no body);
    - Python's own REPL test calls it unfinished: `codeop.compile_command(code, "<answer>", "exec")` returns None
      (a `try` with no `except`, a decorator with no `def`).
    Brackets, quotes and colons inside strings or comments do not count.
    "invalid" when it is otherwise not valid Python (`compile(code, ..., "exec")` fails); else "complete".

    This is a heuristic with limits: `~~~` fences are not recognised; the string scan does not know that since
    Python 3.12 an f-string may reuse its own quote inside braces (f"{d["k"]}"), and whether such code compiles
    depends on the Python that runs the check; code that parses may still be cut or wrong.

    Args:
        text: the model's answer.
        finish_reason: why generation stopped ("eos", "stop", "length", or a provider's own word).
    Returns:
        "complete", "truncated" or "invalid".
    Raises:
        ValueError: text or finish_reason is not a str.
    """
    raise NotImplementedError("TODO: completion_status: find the code, look for signs of truncation, then compile")
