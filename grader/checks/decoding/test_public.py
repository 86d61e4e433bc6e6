"""Public decoding checks: scripted stops, a seeded trigram model, token frequencies, the loop lesson,
hand-worked and exhaustive beam search, the repetition penalty's sign rule, and a corpus of model answers;
answers from the goldens."""
import torch

from grader import toys
from grader.checks.decoding import models
from grader.checks.decoding.cases import (
    BEAM_CASES,
    MIN_CASES,
    SAMPLE_LOGITS,
    SAMPLE_SETTINGS,
    STOP_CASES,
    beam_model,
    case_text,
    eager_eos_model,
    script_model,
)
from grader.checks.decoding.corpus import CASES
from grader.checks.decoding.distribution import LOOP_RUNS, PUBLIC_TOKENS, expect_filtered_law, public_law
from grader.checks.decoding.expect import (
    beams,
    decoded,
    expect_beams,
    expect_decoded,
    expect_names,
    expect_penalized,
    expect_status,
    offer,
)
from grader.engine import check, fail, golden, reference, tr

ONE_HOT_FILTERS = {"temperature": 0.7, "top_k": 3, "top_p": 0.9}
LOOP_PROMPT = [1, 2, 3]                          # "I think that"
LOOP_ROUNDS = LOOP_PROMPT * 4                    # twelve more words of the loop


def stored_stop_case(i: int) -> tuple:
    """The golden answer to STOP_CASES[i] (greedy and sampled decoding agree on a one-hot model)."""
    _, prompt, script, n, eos_id, stop = STOP_CASES[i]
    return golden(f"stops.{i}", lambda: reference("decoding").greedy_decode(script_model(prompt, script), prompt,
                                                                            n, eos_id, stop))


@check("greedy_stops", points=2, hint="greedy_decode",
       title="greedy_decode with eos, stop sequences (spanning steps, partly matched, overlapping) and the limit")
def test_greedy_stops(sub):
    for i, (label, prompt, script, n, eos_id, stop) in enumerate(STOP_CASES):
        what = tr("{call} on a model that writes {script} ({label})", call=case_text('greedy_decode', prompt, n, eos_id,
                  stop), script=script, label=tr(label))
        result = sub.greedy_decode(offer(sub, script_model(prompt, script)), prompt, n, eos_id, stop)
        expect_decoded(result, stored_stop_case(i), what, stop)


@check("greedy_trigram_model", points=1, hint="greedy_decode",
       title="greedy_decode on a seeded trigram model, and ValueErrors that name max_new_tokens and stop")
def test_greedy_trigram_model(sub):
    for eos_id, stop in ((None, ()), (0, ()), (None, ((4, 1), (2,)))):
        expected = golden(f"trigram.{eos_id}.{stop}", lambda e=eos_id, s=stop: reference("decoding").greedy_decode(
            models.NGramModel(6, 3, 11), [1, 2], 12, e, s))
        what = tr("greedy_decode(model, prompt=[1, 2], max_new_tokens=12, eos_id={eos_id}, stop={stop}) on the trigram "
                  "model NGramModel(vocab=6, order=3, seed=11) of grader/checks/decoding/models.py", eos_id=eos_id,
                  stop=stop)
        expect_decoded(sub.greedy_decode(offer(sub, models.NGramModel(6, 3, 11)), [1, 2], 12, eos_id, stop),
                       expected, what, stop)
    model = offer(sub, models.NGramModel(6, 3, 11))
    expect_names("max_new_tokens", "greedy_decode(model, [1, 2], max_new_tokens=0)", sub.greedy_decode, model,
                 [1, 2], 0)
    expect_names("stop", "greedy_decode(model, [1, 2], 5, None, stop=((),))", sub.greedy_decode, model, [1, 2], 5,
                 None, ((),))


@check("sample_one_hot_stops", points=1, hint="sample_decode",
       title="sample_decode on one-hot models: the same eos, stop and length rules as greedy_decode")
def test_sample_one_hot_stops(sub):
    generator = sub.make(toys.generator, 5)
    extra = ", generator, temperature=0.7, top_k=3, top_p=0.9"
    for i, (label, prompt, script, n, eos_id, stop) in enumerate(STOP_CASES):
        what = tr("{call} on a one-hot model writing {script} ({label})", call=case_text('sample_decode', prompt, n,
                  eos_id, stop, extra), script=script, label=tr(label))
        result = sub.sample_decode(offer(sub, script_model(prompt, script)), prompt, n, generator,
                                   **ONE_HOT_FILTERS, eos_id=eos_id, stop=stop)
        expect_decoded(result, stored_stop_case(i), what, stop)


def stored_min_case(i: int) -> dict:
    """The golden answers to MIN_CASES[i]: with its min_new_tokens, and with 0 (what ignoring it gives)."""
    _, prompt, script, n, eos_id, stop, least = MIN_CASES[i]
    def compute() -> dict:
        ref = reference("decoding")
        return {m: ref.greedy_decode(eager_eos_model(prompt, script), prompt, n, eos_id, stop, m) for m in {least, 0}}
    return golden(f"min_new_tokens.{i}", compute)


@check("greedy_min_new_tokens", points=2, hint="greedy_decode",
       title="greedy_decode holds eos back until min_new_tokens new tokens exist (stop sequences still apply); a bad "
             "min_new_tokens raises ValueError naming it")
def test_greedy_min_new_tokens(sub):
    for i, (label, prompt, script, n, eos_id, stop, least) in enumerate(MIN_CASES):
        answers = stored_min_case(i)
        what = tr("{call} on a model whose eos (0) is the likeliest token at every step, {script} the next ({label})",
                  call=case_text('greedy_decode', prompt, n, eos_id, stop, min_new_tokens=least), script=script,
                  label=tr(label))
        result = sub.greedy_decode(offer(sub, eager_eos_model(prompt, script)), prompt, n, eos_id, stop, least)
        expect_decoded(result, answers[least], what, stop, answers[0] if least else None)
    model = offer(sub, eager_eos_model([1], [2, 3]))
    for least, n in ((-1, 4), (5, 4)):
        expect_names("min_new_tokens", f"greedy_decode(model, [1], max_new_tokens={n}, min_new_tokens={least})",
                     sub.greedy_decode, model, [1], n, 0, (), least)


@check("sample_min_new_tokens", points=1, hint="sample_decode",
       title="sample_decode holds eos back until min_new_tokens new tokens exist, as greedy_decode does")
def test_sample_min_new_tokens(sub):
    # Sized (models.EagerEosModel): at temperature 0.7 a correct sampler takes another token than the greedy one
    # with probability < exp(-200 / 0.7) < 1e-124 per step, so it fails these 7 cases (at most 8 steps each) with
    # probability < 56e-124; one that ignores min_new_tokens writes eos at once with probability > 1 - 1e-124.
    generator = sub.make(toys.generator, 6)
    extra = ", generator, temperature=0.7, top_k=3, top_p=0.9"
    for i, (label, prompt, script, n, eos_id, stop, least) in enumerate(MIN_CASES):
        answers = stored_min_case(i)
        what = tr("{call} on a model whose eos (0) is the likeliest token at every step by a factor exp(200 / 0.7), "
                  "{script} the next ({label})", call=case_text('sample_decode', prompt, n, eos_id, stop, extra, least),
                  script=script, label=tr(label))
        result = sub.sample_decode(offer(sub, eager_eos_model(prompt, script)), prompt, n, generator,
                                   **ONE_HOT_FILTERS, eos_id=eos_id, stop=stop, min_new_tokens=least)
        expect_decoded(result, answers[least], what, stop, answers[0] if least else None)


@check("sample_first_token_frequencies", points=2, hint="sample_decode",
       title="sample_decode's tokens follow the filtered distribution (temperature, top-k, top-p)")
def test_sample_first_token_frequencies(sub):
    # 50 runs of 3 tokens, exact binomial test per token: false fail <= 1e-6; each wrong sampler passes with
    # probability < 5.2e-11 (the calculation is in grader/checks/decoding/distribution.py)
    expect_filtered_law(sub, SAMPLE_LOGITS, SAMPLE_SETTINGS, [3], PUBLIC_TOKENS, 2024,
                        golden("first_token_law", public_law))


@check("sampling_leaves_the_loop", points=1, hint="sample_decode",
       title="sampling at temperature 1 leaves the loop 'I think that I think that ...' that greedy never leaves")
def test_sampling_leaves_the_loop(sub):
    sub.set_timeout(30)
    generator = sub.make(toys.generator, 7)
    what = tr("sample_decode(loop model, prompt {prompt!r}, max_new_tokens=12, generator, eos_id=0)",
              prompt=models.words(LOOP_PROMPT))
    outputs = []
    for _ in range(LOOP_RUNS):
        tokens, _ = decoded(sub.sample_decode(offer(sub, models.loop_model()), LOOP_PROMPT, 12, generator,
                                              eos_id=0), what)
        outputs.append(tokens)
    if all(tokens == LOOP_ROUNDS for tokens in outputs):
        fail(tr("{what}, run {runs} times, always returned {loop!r}: a sampler leaves this loop in some run except "
                "with probability < 6e-9 (each run repeats it with probability 0.04)", what=what, runs=LOOP_RUNS,
                loop=models.words(LOOP_ROUNDS)))


def stored_beams(key: str, model_fn, prompt, num_beams, max_new_tokens, eos_id, length_penalty) -> dict:
    """The golden beams, and those the same search gives without length normalisation."""
    def compute() -> dict:
        ref = reference("decoding")
        return {lp: ref.beam_search(model_fn(), prompt, num_beams, max_new_tokens, eos_id, lp)
                for lp in {length_penalty, 0.0}}
    return golden(key, compute)


def expect_beam_case(sub, key: str, model_fn, name: str, prompt, num_beams, n, eos_id, length_penalty) -> list:
    """The submission's beam_search must match the golden; returns what it returned."""
    answers = stored_beams(key, model_fn, prompt, num_beams, n, eos_id, length_penalty)
    what = (f"beam_search({name}, prompt={prompt}, num_beams={num_beams}, max_new_tokens={n}, eos_id={eos_id}, "
            f"length_penalty={length_penalty})")
    result = sub.beam_search(offer(sub, model_fn()), prompt, num_beams, n, eos_id, length_penalty)
    expect_beams(result, answers[length_penalty], what, answers[0.0] if length_penalty != 0.0 else None)
    return beams(result, what)


@check("beam_hand_worked", points=2, hint="beam_search",
       title="beam_search on a hand-worked table: finished beams keep their slots, length_penalty 0, 1 and 2")
def test_beam_hand_worked(sub):
    name = tr("the hand-worked model BEAM_PROBS of grader/checks/decoding/cases.py")
    for num_beams, n, eos_id, lp in BEAM_CASES:
        expect_beam_case(sub, f"hand.{num_beams}.{n}.{eos_id}.{lp}", beam_model, name, [], num_beams, n, eos_id, lp)


@check("beam_exhaustive", points=1, hint="beam_search",
       title="beam_search with num_beams = V ** max_new_tokens returns every sequence, best first")
def test_beam_exhaustive(sub):
    name = tr("PrefixModel(vocab=3, seed=4) of grader/checks/decoding/models.py")
    for lp in (1.0, 2.0):
        expect_beam_case(sub, f"exhaustive.{lp}", lambda: models.PrefixModel(3, 4), name, [1], 27, 3, 0, lp)


@check("beam_finds_the_loop", points=1, hint="beam_search",
       title="beam search finds the loop: the most probable sequence is 'I think that I think that ...'")
def test_beam_finds_the_loop(sub):
    found = expect_beam_case(sub, "loop", models.loop_model, tr("the loop model"), LOOP_PROMPT, 4, 12, 0, 1.0)
    if found[0][0] != LOOP_ROUNDS:
        fail(tr("beam_search on the loop model: the best beam is {best!r}, expected the loop",
                best=models.words(found[0][0])))


def stored_penalty(key: str, logits: torch.Tensor, seen, penalty: float) -> torch.Tensor:
    """The golden penalised logits."""
    return golden(key, lambda: reference("decoding").apply_repetition_penalty(logits, seen, penalty))


PENALTY_LOGITS = torch.tensor([2.0, -1.5, 0.0, 0.5, -3.0, 1.0, -0.25, 4.0])
PENALTY_CASES = [  # (logits, seen_tokens, penalty)
    (PENALTY_LOGITS.double(), [0, 1, 2, 1, 1, 4], 1.3),
    (PENALTY_LOGITS, [6, 7, 3, 3], 2.0),
    (PENALTY_LOGITS.double(), [0, 1, 4, 5], 0.5),
    (PENALTY_LOGITS.double(), [], 1.3),
    (torch.stack([PENALTY_LOGITS, -PENALTY_LOGITS]).double(), [[0, 1, 1], [0, 1, 2, 7]], 1.5),
]


@check("repetition_penalty_sign_rule", points=1, hint="apply_repetition_penalty",
       title="apply_repetition_penalty: negative logits times the penalty, positive ones divided, zero unchanged")
def test_repetition_penalty_sign_rule(sub):
    for i, (logits, seen, penalty) in enumerate(PENALTY_CASES):
        expected = stored_penalty(f"penalty.{i}", logits, seen, penalty)
        rows = [seen] if logits.dim() == 1 else seen
        what = (f"apply_repetition_penalty(logits={logits.tolist()} {str(logits.dtype).removeprefix('torch.')}, "
                f"seen_tokens={seen}, penalty={penalty})")
        expect_penalized(sub.apply_repetition_penalty(logits, seen, penalty), expected, logits, rows, penalty, what)
    expect_names("penalty", "apply_repetition_penalty(logits, [0], penalty=0.0)", sub.apply_repetition_penalty,
                 PENALTY_LOGITS, [0], 0.0)


@check("repetition_penalty_leaves_the_loop", points=1, hint="apply_repetition_penalty",
       title="greedy decoding with apply_repetition_penalty(penalty=2) leaves the loop and answers")
def test_repetition_penalty_leaves_the_loop(sub):
    expected = golden("loop.penalised", lambda: penalised_greedy(
        lambda logits, seen: reference("decoding").apply_repetition_penalty(logits, seen, 2.0)))
    got = penalised_greedy(lambda logits, seen: sub.apply_repetition_penalty(logits, seen, 2.0))
    if got != expected:
        said = dict(prompt=models.words(LOOP_PROMPT), expected=models.words(expected), got=models.words(got))
        if got[:len(LOOP_PROMPT)] == LOOP_PROMPT:
            fail(tr("greedy decoding of the loop model from {prompt!r}, each step's logits (the log-probabilities, all "
                    "negative) passed through apply_repetition_penalty(logits, prompt + new tokens, 2.0): expected "
                    "{expected!r}, got {got!r}: the penalty made the seen words likelier", **said),
                 "repetition_penalty_sign")
        fail(tr("greedy decoding of the loop model from {prompt!r}, each step's logits (the log-probabilities, all "
                "negative) passed through apply_repetition_penalty(logits, prompt + new tokens, 2.0): expected "
                "{expected!r}, got {got!r}", **said))


def penalised_greedy(penalise) -> list[int]:
    """Greedy decoding of the loop model (12 words at most, eos 0), here in the grader, through `penalise`."""
    model, new = models.loop_model(), []
    for _ in range(12):
        logits = penalise(model(LOOP_PROMPT + new), LOOP_PROMPT + new)
        if not isinstance(logits, torch.Tensor) or logits.shape != (len(models.LOOP_WORDS),):
            fail(tr("apply_repetition_penalty(loop logits [9], seen_tokens, 2.0) returned {type}, expected a [9] "
                    "tensor", type=type(logits).__name__))
        new.append(int(torch.argmax(logits)))
        if new[-1] == 0:
            break
    return new


def stored_status(key: str, text: str, finish_reason: str) -> dict:
    """The golden status, and the status the structure alone gives (finish_reason "stop")."""
    return golden(key, lambda: {"status": reference("decoding").completion_status(text, finish_reason),
                                "structural": reference("decoding").completion_status(text, "stop")})


def shown(text: str) -> str:
    """A model answer as it reads in a message (long ones shortened in the middle)."""
    return repr(text) if len(text) <= 160 else repr(text[:70]) + " ... " + repr(text[-70:])


@check("completion_status_corpus", points=3, hint="completion_status",
       title=f"completion_status on {len(CASES)} model answers: complete, cut (bracket, string, backslash, colon, "
             f"fence, try or decorator), each provider's token-limit word, fences indented up to three spaces, invalid")
def test_completion_status_corpus(sub):
    for i, (label, text, reason) in enumerate(CASES):
        expected = stored_status(f"corpus.{i}", text, reason)
        expect_status(sub.completion_status(text, reason), expected["status"], expected["structural"],
                      tr("{call} ({label})", call=f"completion_status({shown(text)}, {reason!r})", label=tr(label)),
                      reason)


@check("completion_status_of_generated_code", points=1, hint="completion_status",
       title="the code model's answer cut by max_new_tokens or a stop sequence is truncated; after eos complete")
def test_completion_status_of_generated_code(sub):
    settings = [(n, ()) for n in (6, 9, 12, 20, 28, 36, 38, 60)] + [(60, ((21,),))]
    for n, stop in settings:
        case = golden(f"code.{n}.{stop}", lambda n=n, stop=stop: generated_case(n, stop))
        what = tr("completion_status(text, {reason!r}) where text = {text} is the code model's greedy answer with "
                  "max_new_tokens={n}, stop={stop}", reason=case['reason'], text=shown(case['text']), n=n, stop=stop)
        expect_status(sub.completion_status(case["text"], case["reason"]), case["status"], case["structural"],
                      what, case["reason"])


def generated_case(n: int, stop: tuple) -> dict:
    """The reference's greedy answer of the code model, as text, with its finish reason and statuses."""
    ref = reference("decoding")
    tokens, reason = ref.greedy_decode(models.code_model([]), [], n, 0, stop)
    text = models.code_text(tokens)
    return {"text": text, "reason": reason, "status": ref.completion_status(text, reason),
            "structural": ref.completion_status(text, "stop")}

