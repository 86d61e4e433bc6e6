"""The course's exercise on one prompt: fix the logits, compare five strategies, then draw once and many times.

After "The capital of France is", a toy model scores six tokens (LOGITS). Each strategy turns them into the
probabilities below (reference `filtered_probs`, rounded; tests/topics/test_sampling.py recomputes every figure):

    strategy            " Paris"  " a"    " the"  " located"  " Lyon"  " not"
    temperature 0.5      0.829    0.112   0.041   0.015       0.002    0.000
    top_k 2              0.731    0.269   0       0           0        0
    top_p 0.8            0.629    0.231   0.140   0           0        0
    temperature 1.0      0.557    0.205   0.124   0.075       0.028    0.010
    temperature 1.5      0.426    0.219   0.157   0.112       0.058    0.030

Ranked by how often they say " Paris", the strategies come in this order. One draw each cannot rank them: with
the noise in ONE_DRAW_NOISE, the exponential race picks " a" at temperature 0.5 (0.112 / 0.15 = 0.748 beats
0.829 / 2.2 = 0.377) and " Paris" at temperature 1.5 (0.426 / 0.7 = 0.608 beats 0.157 / 0.5 = 0.313), so that
single draw ranks 1.5 above 0.5, although 0.5 says " Paris" 0.829 / 0.426 = 1.9 times as often.

DRAWS = 10,000 draws per strategy do rank them: with the false-fail budget 1e-6 split over the five rows
(frequencies.py), the accepted counts of " Paris" are 8079..8495, 7072..7545, 6023..6545, 5298..5846 and
3984..4530, disjoint intervals in the order of the probabilities, so any accepted answer ranks all five right.
"""
import torch

VOCAB = (" Paris", " a", " the", " located", " Lyon", " not")
LOGITS = torch.tensor([3.0, 2.0, 1.5, 1.0, 0.0, -1.0], dtype=torch.float64)
STRATEGIES = (  # (name, temperature, top_k, top_p), most " Paris" first
    ("temperature 0.5", 0.5, None, None),
    ("top_k 2", 1.0, 2, None),
    ("top_p 0.8", 1.0, None, 0.8),
    ("temperature 1.0", 1.0, None, None),
    ("temperature 1.5", 1.5, None, None),
)
ONE_DRAW = (0, 4)  # the strategies drawn once: temperature 0.5 and temperature 1.5
ONE_DRAW_NOISE = torch.tensor([[2.2, 0.15, 0.9, 1.3, 0.6, 0.4],  # Exp(1) noise of temperature 0.5's draw
                               [0.7, 1.1, 0.5, 2.0, 0.3, 1.6]],  # and of temperature 1.5's draw
                              dtype=torch.float64)
DRAWS = 10_000


def strategy_probs(ref) -> torch.Tensor:
    """[strategies, V] float64: the probabilities each strategy samples from (`ref` is the reference module)."""
    return torch.stack([ref.filtered_probs(LOGITS, t, k, p) for _, t, k, p in STRATEGIES])
