"""The grader's requests reach the child as they were sent: a plain tensor by its raw bytes, anything else by torch's
own reduction, each with its type, dtype, shape, strides, values and grad flag, and one object sent twice arriving
as one object (grader/sandbox/request_pickle.py)."""
import pickle

import pytest
import torch

from grader.sandbox import request_pickle
from grader.sandbox.codec import Handle

x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
PLAIN = {"matrix": x, "row": x[0].clone(), "scalar": torch.tensor(2.5), "bool": torch.tensor([True, False]),
         "int8": torch.arange(-3, 3, dtype=torch.int8), "bfloat16": torch.ones(2, 2, dtype=torch.bfloat16),
         "empty": torch.zeros(0, 3), "empty_inner": torch.zeros(3, 0, 2), "three_dims": torch.ones(2, 3, 4)}
OTHER = {"transposed": x.T, "row_view": x[1], "every_other_row": x[::2], "needs_grad": torch.ones(2, requires_grad=True),
         "parameter": torch.nn.Parameter(torch.ones(2)), "odd_strides": torch.empty_strided((3, 1), (1, 5)).fill_(1.0),
         "conjugate": torch.ones(2, dtype=torch.complex64).conj()}


@pytest.mark.parametrize("name", [*PLAIN, *OTHER])
def test_a_request_carries_each_tensor_as_it_was(name):
    sent = {**PLAIN, **OTHER}[name]
    generator = torch.Generator().manual_seed(7)
    message = ("call", None, "f", (sent, generator, torch.float32, Handle(3, "Cache")), {"again": [sent]})
    kind, target, fn, args, kwargs = pickle.loads(request_pickle.dumps(message))
    got = args[0]
    assert (kind, target, fn, args[2], args[3]) == ("call", None, "f", torch.float32, Handle(3, "Cache"))
    assert type(got) is type(sent) and got.dtype == sent.dtype and got.shape == sent.shape
    assert got.stride() == sent.stride() and got.requires_grad == sent.requires_grad
    assert got.is_conj() == sent.is_conj() and torch.equal(got.detach().resolve_conj(), sent.detach().resolve_conj())
    assert kwargs["again"][0] is got
    assert torch.equal(args[1].get_state(), generator.get_state())


def test_only_plain_tensors_take_the_raw_bytes_way():
    assert all(request_pickle._plain(t) for t in PLAIN.values())
    assert not any(request_pickle._plain(t) for t in OTHER.values())


def test_a_received_tensor_is_the_childs_own_to_write():
    got = pickle.loads(request_pickle.dumps(x))
    got[0, 0] = -1.0
    assert x[0, 0] == 0.0 and got[0, 0] == -1.0
