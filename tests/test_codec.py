"""The allowlisting codec: plain data round-trips; nothing else gets through, and nothing runs code."""
import json
import math
import pickle
import struct

import numpy as np
import pytest
import torch

from grader.sandbox import codec


def roundtrip(value):
    return codec.decode(codec.encode(value))


@pytest.mark.parametrize("value", [
    None, True, False, 0, -7, 2**80, 1.5, float("inf"), float("-inf"), "text", "", [1, [2, "x"]], (1, (2.0,)),
    {"a": 1, 2: [3], (1, 2): None}, [], (), {},
])
def test_plain_values_roundtrip_with_their_types(value):
    out = roundtrip(value)
    assert out == value and type(out) is type(value)


def test_nan_roundtrips():
    assert math.isnan(roundtrip(float("nan")))


@pytest.mark.parametrize("dtype", list(codec.TENSOR_DTYPES.values()))
def test_tensors_roundtrip_exactly(dtype):
    x = (torch.arange(24, dtype=torch.float64).reshape(2, 3, 4) - 5).to(dtype)
    y = roundtrip(x)
    assert y.dtype == dtype and y.shape == x.shape and torch.equal(y, x)


def test_non_contiguous_and_empty_tensors():
    x = torch.arange(12.0).reshape(3, 4).t()
    assert torch.equal(roundtrip(x), x)
    assert roundtrip(torch.empty(0, 5)).shape == (0, 5)


def test_unknown_types_arrive_as_opaque_with_their_type_name():
    out = roundtrip([np.zeros(3), object(), torch.zeros(2, dtype=torch.complex64)])
    assert [o.type_name for o in out] == ["numpy.ndarray", "object", "torch.Tensor[complex64]"]


def test_numpy_scalars_become_python_numbers():
    assert roundtrip(np.int64(3)) == 3 and type(roundtrip(np.int64(3))) is int


def test_a_pickle_is_refused():
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))
    with pytest.raises(codec.DecodeError):
        codec.decode(pickle.dumps(Evil()))


def frame(tree, blobs=()):
    data = json.dumps(tree).encode()
    out = struct.pack("<I", len(data)) + data + struct.pack("<I", len(blobs))
    for b in blobs:
        out += struct.pack("<Q", len(b)) + b
    return out


@pytest.mark.parametrize("tree,blobs", [
    (["x", 1], ()),                                  # unknown tag
    (["T", "float32", [2], 0], (b"\0" * 4,)),        # size does not match the shape
    (["T", "object", [1], 0], (b"\0" * 8,)),         # dtype not allowed
    (["T", "float32", [1], 3], (b"\0" * 4,)),        # blob index out of range
    (["T", "float32", [-1], 0], (b"",)),             # negative dimension
    (["i", "12abc"], ()),                            # not an int
    (["f", "1.0e"], ()),                             # not a float
    (["d", [[["l", []], ["v", None]]]], ()),         # unhashable key
    ("just a string", ()),
])
def test_malformed_messages_raise_decode_error(tree, blobs):
    with pytest.raises(codec.DecodeError):
        codec.decode(frame(tree, blobs))


def test_truncated_message_raises_decode_error():
    data = codec.encode(torch.zeros(10))
    with pytest.raises(codec.DecodeError):
        codec.decode(data[:-3])


def test_deep_nesting_is_refused():
    tree = ["v", None]
    for _ in range(200):
        tree = ["l", [tree]]
    with pytest.raises(codec.DecodeError):
        codec.decode(frame(tree))


def test_a_recursion_bomb_is_refused():
    data = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(codec.DecodeError):
        codec.decode(struct.pack("<I", len(data)) + data + struct.pack("<I", 0))


def test_an_oversized_structure_is_refused_before_parsing():
    data = b"[" + b"[]," * (codec.MAX_TREE_BYTES // 3) + b"[]]"
    with pytest.raises(codec.DecodeError, match="too large"):
        codec.decode(struct.pack("<I", len(data)) + data + struct.pack("<I", 0))
