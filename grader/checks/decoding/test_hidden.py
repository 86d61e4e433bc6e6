"""Hidden decoding checks: random n-gram and one-hot models, stop sequences, beam settings, logits and cut
programs drawn from the seed, compared with the live reference; the sampling law with a fresh seed, prompt and
token order; randomness from the generator only; bad arguments."""
import random

from grader.checks.decoding import draws
from grader.checks.decoding.distribution import expect_filtered_law, expect_own_generator, random_law_case
from grader.checks.decoding.expect import (decoded, expect_beams, expect_decoded, expect_names, expect_penalized,
                                           expect_status, offer)
from grader.checks.decoding.models import NGramModel, PrefixModel
from grader.engine import check, fail, reference, tr


@check("greedy_random_models", points=6, hint="greedy_decode",
       title="greedy_decode on random n-gram models with random eos ids, stop sequences and limits")
def test_greedy_random_models(sub, seed):
    r, ref = random.Random(seed), reference("decoding")
    for _ in range(25):
        vocab, order, model_seed = draws.ngram_spec(r)
        prompt, n = draws.prompt_for(r, vocab), r.randint(1, 15)
        free, _ = ref.greedy_decode(NGramModel(vocab, order, model_seed), prompt, n)
        eos_id, stop = draws.eos_for(r, free, vocab), draws.stops_from(r, free, vocab)
        expected = ref.greedy_decode(NGramModel(vocab, order, model_seed), prompt, n, eos_id, stop)
        result = sub.greedy_decode(offer(sub, NGramModel(vocab, order, model_seed)), prompt, n, eos_id, stop)
        expect_decoded(result, expected, tr("greedy_decode on a random n-gram model"), stop)


@check("min_new_tokens_random", points=4, hint="greedy_decode",
       title="greedy_decode and sample_decode with random min_new_tokens on random models whose eos comes early")
def test_min_new_tokens_random(sub, seed):
    r, ref = random.Random(seed), reference("decoding")
    generator = sub.generator(seed)
    for _ in range(12):                                  # random n-gram models; eos: the first token greedy writes
        vocab, order, model_seed = draws.ngram_spec(r)
        prompt, n = draws.prompt_for(r, vocab), r.randint(1, 12)
        free, _ = ref.greedy_decode(NGramModel(vocab, order, model_seed), prompt, n)
        eos_id, stop, least = free[0], draws.stops_from(r, free, vocab), r.randint(0, n)
        expected, early = (ref.greedy_decode(NGramModel(vocab, order, model_seed), prompt, n, eos_id, stop, m)
                           for m in (least, 0))
        result = sub.greedy_decode(offer(sub, NGramModel(vocab, order, model_seed)), prompt, n, eos_id, stop, least)
        expect_decoded(result, expected, tr("greedy_decode on a random n-gram model, min_new_tokens={least}",
                                            least=least), stop, early)
    # Sampled cases, sized by models.EagerEosModel: at the largest temperature drawn (3) a correct sampler leaves
    # the greedy answer with probability < exp(-200 / 3) < 1e-28 per step, under 12 * 14 * 1e-28 < 2e-26 in all;
    # one that ignores min_new_tokens writes eos first with probability > 1 - 1e-28 (caught where min >= 1).
    for _ in range(12):                                  # sampled, on models whose eos is the likeliest token
        case, settings = draws.eager_case(r), draws.filters(r)
        args = (case["prompt"], case["max_new_tokens"])
        expected, early = (ref.greedy_decode(draws.eager_model(case), *args, case["eos"], case["stop"], m)
                           for m in (case["min_new_tokens"], 0))
        result = sub.sample_decode(offer(sub, draws.eager_model(case)), *args, generator, **settings,
                                   eos_id=case["eos"], stop=case["stop"], min_new_tokens=case["min_new_tokens"])
        expect_decoded(result, expected, tr("sample_decode on a model whose eos is the likeliest token, "
                                            "min_new_tokens={least}", least=case['min_new_tokens']), case["stop"],
                       early)


@check("greedy_bad_arguments", points=2, hint="greedy_decode",
       title="greedy_decode rejects a limit below 1, an empty stop sequence and a min_new_tokens outside "
             "[0, max_new_tokens], naming the argument, and answers the valid arguments beside them")
def test_greedy_bad_arguments(sub, seed):
    r, ref = random.Random(seed), reference("decoding")
    model = offer(sub, NGramModel(4, 2, seed))
    for _ in range(3):
        expect_names("max_new_tokens", tr("greedy_decode with max_new_tokens < 1"), sub.greedy_decode, model, [1],
                     -r.randint(0, 5))
        stop = [(r.randrange(4),)] * r.randint(0, 2) + [()]
        expect_names("stop", tr("greedy_decode with an empty stop sequence"), sub.greedy_decode, model, [1], 4,
                     None, tuple(stop))
        n = r.randint(1, 6)
        least = r.choice([-r.randint(1, 3), n + r.randint(1, 3)])
        expect_names("min_new_tokens", tr("greedy_decode with min_new_tokens outside [0, max_new_tokens]"),
                     sub.greedy_decode, model, [1], n, None, (), least)
        # valid arguments beside them, answered as the reference answers: refusing every call fails here
        free, _ = ref.greedy_decode(NGramModel(4, 2, seed), [1], n)
        stop, least = draws.stops_from(r, free, 4), r.randint(0, n)
        expected = ref.greedy_decode(NGramModel(4, 2, seed), [1], n, None, stop, least)
        expect_decoded(sub.greedy_decode(model, [1], n, None, stop, least), expected,
                       tr("greedy_decode with valid arguments beside them (min_new_tokens={least})", least=least),
                       stop)


@check("sample_random_one_hot", points=5, hint="sample_decode",
       title="sample_decode on random one-hot models with random filters, eos ids and stop sequences")
def test_sample_random_one_hot(sub, seed):
    r, ref = random.Random(seed), reference("decoding")
    generator = sub.generator(seed)
    for _ in range(20):
        case, settings = draws.script_case(r), draws.filters(r)
        args = (case["prompt"], case["max_new_tokens"])
        expected = ref.greedy_decode(draws.script_model(case), *args, case["eos_id"], case["stop"])
        result = sub.sample_decode(offer(sub, draws.script_model(case)), *args, generator, **settings,
                                   eos_id=case["eos_id"], stop=case["stop"])
        expect_decoded(result, expected, tr("sample_decode on a random one-hot model"), case["stop"])


@check("sample_distribution_fresh_seed", points=5, hint="sample_decode",
       title="sample_decode's tokens follow the filtered distribution of random logits, temperature, top-k and "
             "top-p, for a fresh seed, prompt and length")
def test_sample_distribution_fresh_seed(sub, seed):
    # Every setting drawn from the seed, the law computed live by the reference: false fail <= 1e-6 for every law,
    # and a draw is kept only when each wrong sampler passes with probability <= 1e-6 (distribution.py).
    case = random_law_case(random.Random(seed))
    law = reference("decoding").filtered_law(case["logits"], **case["settings"])
    expect_filtered_law(sub, case["logits"], case["settings"], case["prompt"], case["max_new_tokens"], seed, law)


@check("sample_generator_only", points=2, hint="sample_decode",
       title="sample_decode's output depends on its generator only, not on global random state or a generator "
             "of its own; bad filters")
def test_sample_generator_only(sub, seed):
    r = random.Random(seed)
    spec, prompt, settings = draws.ngram_spec(r, (5, 9), (2, 3)), [1], draws.filters(r)
    settings["top_k"], settings["top_p"] = None, None

    def run() -> list:
        generator = sub.generator(seed)
        return [decoded(sub.sample_decode(offer(sub, NGramModel(*spec)), prompt, 10, generator, **settings),
                        tr("sample_decode on a random n-gram model"))[0] for _ in range(3)]

    first = run()
    sub.restart(global_seed=seed + 1)
    if run() != first:
        fail(tr("sample_decode with a generator seeded alike gave different tokens in two processes whose global "
                "random generators were seeded differently: draw only from the generator you are given"))
    expect_own_generator(sub, seed)
    model = offer(sub, NGramModel(*spec))
    generator = sub.generator(seed)
    for name, filtering in (("temperature", (-r.random(), None, None)), ("top_k", (1.0, 0, None)),
                            ("top_p", (1.0, None, 1 + r.random())), ("top_p", (1.0, None, 0.0))):
        expect_names(name, tr("sample_decode with a bad {name}", name=name), sub.sample_decode, model, prompt, 4,
                     generator, *filtering)


def expect_random_beams(sub, seed: int, draw, count: int) -> None:
    """The submission's beam_search equals the reference's (and is not unnormalised) on `count` cases that
    draw(r) makes from one random.Random(seed), each drawn after the one before is checked."""
    r, ref = random.Random(seed), reference("decoding")
    for _ in range(count):
        case = draw(r)
        spec, args = case["spec"], (case["prompt"], case["num_beams"], case["max_new_tokens"], case["eos_id"])
        expected = ref.beam_search(PrefixModel(*spec), *args, case["length_penalty"])
        unnormalised = ref.beam_search(PrefixModel(*spec), *args, 0.0) if case["length_penalty"] != 0.0 else None
        result = sub.beam_search(offer(sub, PrefixModel(*spec)), *args, case["length_penalty"])
        expect_beams(result, expected, tr("beam_search on a random model"), unnormalised)


@check("beam_random_exhaustive", points=4, hint="beam_search",
       title="beam_search with num_beams >= V ** max_new_tokens equals exhaustive search on random models")
def test_beam_random_exhaustive(sub, seed):
    expect_random_beams(sub, seed, draws.exhaustive_case, 8)


@check("beam_random_narrow", points=5, hint="beam_search",
       title="beam_search with few beams, random eos ids and length penalties on random models")
def test_beam_random_narrow(sub, seed):
    expect_random_beams(sub, seed, draws.narrow_case, 12)


@check("beam_bad_arguments", points=1, hint="beam_search",
       title="beam_search rejects num_beams or max_new_tokens below 1, naming the argument, and answers 1 of each")
def test_beam_bad_arguments(sub, seed):
    r, ref = random.Random(seed), reference("decoding")
    model = offer(sub, PrefixModel(3, seed))
    expect_names("num_beams", tr("beam_search with num_beams < 1"), sub.beam_search, model, [0], -r.randint(0, 3),
                 2)
    expect_names("max_new_tokens", tr("beam_search with max_new_tokens < 1"), sub.beam_search, model, [0], 2,
                 -r.randint(0, 3))
    # the smallest valid values beside them, answered as the reference answers: refusing every call fails here
    for num_beams, max_new_tokens in ((1, r.randint(1, 3)), (r.randint(1, 4), 1)):
        expect_beams(sub.beam_search(model, [0], num_beams, max_new_tokens),
                     ref.beam_search(PrefixModel(3, seed), [0], num_beams, max_new_tokens),
                     tr("beam_search with num_beams={num_beams}, max_new_tokens={max_new_tokens}",
                        num_beams=num_beams, max_new_tokens=max_new_tokens))


@check("repetition_penalty_random", points=4, hint="apply_repetition_penalty",
       title="apply_repetition_penalty on random [V] and [B, V] logits, float32 and float64, repeated ids")
def test_repetition_penalty_random(sub, seed, rng):
    r, ref = random.Random(seed), reference("decoding")
    for _ in range(20):
        logits, seen, penalty = draws.penalty_case(r, rng)
        rows = [seen] if logits.dim() == 1 else [list(map(int, row)) for row in seen]
        expected = ref.apply_repetition_penalty(logits, seen, penalty)
        expect_penalized(sub.apply_repetition_penalty(logits, seen, penalty), expected, logits, rows, penalty,
                         tr("apply_repetition_penalty on random logits"))


@check("repetition_penalty_bad_arguments", points=1, hint="apply_repetition_penalty",
       title="apply_repetition_penalty rejects a penalty <= 0, naming it, and answers small positive ones")
def test_repetition_penalty_bad_arguments(sub, seed, rng):
    r, ref = random.Random(seed), reference("decoding")
    logits, seen, _ = draws.penalty_case(r, rng)
    rows = [seen] if logits.dim() == 1 else [list(map(int, row)) for row in seen]
    for penalty, valid in ((0.0, r.uniform(0.05, 0.5)), (-r.uniform(0.1, 2.0), 1.0)):
        expect_names("penalty", tr("apply_repetition_penalty with penalty <= 0"), sub.apply_repetition_penalty,
                     logits, seen, penalty)
        # a valid penalty beside it, answered as the reference answers: refusing every call fails here
        expect_penalized(sub.apply_repetition_penalty(logits, seen, valid),
                         ref.apply_repetition_penalty(logits, seen, valid), logits, rows, valid,
                         tr("apply_repetition_penalty with penalty={penalty:.4g}", penalty=valid))


def expect_statuses(sub, answers: list) -> None:
    """completion_status on each (text, finish_reason) equals the reference's."""
    ref = reference("decoding")
    for text, reason in answers:
        expect_status(sub.completion_status(text, reason), ref.completion_status(text, reason),
                      ref.completion_status(text, "stop"), tr("completion_status on a cut model answer"), reason)


@check("completion_status_random_cuts", points=7, hint="completion_status",
       title="completion_status on real programs cut at random points, bare or fenced, with random finish reasons")
def test_completion_status_random_cuts(sub, seed):
    r = random.Random(seed)
    expect_statuses(sub, [draws.cut_answer(r) for _ in range(60)])


@check("completion_status_random_answers", points=3, hint="completion_status",
       title="completion_status on whole programs, edited into invalid ones or followed by another fenced block")
def test_completion_status_random_answers(sub, seed):
    r = random.Random(seed)
    expect_statuses(sub, [draws.varied_answer(r) for _ in range(30)])
