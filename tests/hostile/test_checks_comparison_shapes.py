"""A comparison never passes by broadcasting the submission's value: `within` broadcast a reply of shape [0, *S]
against an expected [*S] to an empty comparison, which nothing fails, and a single number against a constant
tensor. Today's checks test shapes first; the helper holds without them."""
import torch

from grader.engine.close import within


def test_an_empty_reply_is_not_within_a_non_empty_expected_value():
    expected = torch.randn(3, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert not within(torch.empty(0, 3, 5, dtype=torch.float64), expected)
    assert not within(torch.empty(0), 1.0)


def test_a_reply_is_not_broadcast_up_to_the_expected_shape():
    assert not within(torch.tensor(0.5), torch.full((4,), 0.5))
    assert not within(torch.tensor([0.5]), torch.full((4,), 0.5))


def test_the_expected_value_still_broadcasts_to_the_reply():
    assert within(torch.tensor([1.0, 1.0 + 1e-7]), 1.0, atol=1e-6)     # every row sums to 1
    assert within(torch.full((2, 3), 2.0), torch.tensor([2.0, 2.0, 2.0]))
    assert within(torch.empty(0), torch.empty(0))
