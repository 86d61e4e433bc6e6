"""What crosses from the untrusted child to the grader: an allowlisting encoding, never pickle.

The child encodes plain data (None, bool, int, float, str, list, tuple, dict, torch.Tensor) as a JSON tree
plus raw tensor buffers; everything else becomes an `Opaque` marker naming its type. The parent decodes with
`json` and `torch.frombuffer` only, so nothing the child sends can run code in the grader.
"""
from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass

import torch

from grader.text import printable

MAX_MESSAGE_BYTES = 64 * 2**20  # 30x the largest reply a check asks for (a 2 MiB attention output)
MAX_TREE_BYTES = 8 * 2**20  # the JSON part (tensors travel as raw buffers): parsing costs ~30x its size
MAX_DEPTH = 64
MAX_INT_DIGITS = 40  # far past any count or size an exercise returns; a longer one cannot meet a float comparison
MAX_DIMS = 16
MAX_SAME_HASH = 8  # keys of one dict with one hash: ints k * (2**61 - 1) all hash to 0, and n of them cost n**2 / 2

TENSOR_DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
              torch.int16, torch.int8, torch.uint8, torch.bool)
}


@dataclass(frozen=True)
class Opaque:
    """A value of a type the codec does not carry: only its type name and a short repr arrive."""
    type_name: str
    text: str

    def __repr__(self) -> str:
        return f"<{self.type_name} {self.text}>"


@dataclass(frozen=True)
class Handle:
    """A reference to an object that lives in the child (an instance of a submission's class)."""
    ref: int
    type_name: str


class DecodeError(ValueError):
    """The child sent something that is not a well-formed message."""


class TooLarge(DecodeError):
    """A frame longer than its reader's limit, refused from its length before any byte of it is read."""

    def __init__(self, size: int, limit: int):
        self.size, self.limit = size, limit
        super().__init__(f"message of {size} bytes, over the limit of {limit} bytes")


def _type_name(x) -> str:
    t = type(x)
    return t.__qualname__ if t.__module__ in ("builtins", None) else f"{t.__module__}.{t.__qualname__}"


def encode(value, register=None) -> bytes:
    """Child side: encode `value`; objects are registered as handles when `register` (obj -> int) accepts them."""
    blobs: list[bytes] = []

    def walk(x, depth):
        if depth > MAX_DEPTH:
            return ["opaque", _type_name(x), "nested too deeply"]
        if x is None or isinstance(x, bool):
            return ["v", x]
        if isinstance(x, str):
            return ["s", str(x)]
        if isinstance(x, int):
            return ["i", str(int(x))]
        if isinstance(x, float):
            return ["f", repr(float(x))]
        if type(x).__module__ == "numpy" and hasattr(x, "item") and getattr(x, "ndim", 1) == 0:
            return walk(x.item(), depth + 1)
        if isinstance(x, torch.Tensor):
            return tensor(x)
        if isinstance(x, (list, tuple)):
            tag = "t" if isinstance(x, tuple) else "l"
            return [tag, [walk(e, depth + 1) for e in x]]
        if isinstance(x, dict):
            return ["d", [[walk(k, depth + 1), walk(v, depth + 1)] for k, v in x.items()]]
        if register is not None:
            ref = register(x)
            if ref is not None:
                return ["h", ref, _type_name(x)]
        return ["opaque", _type_name(x), _short_repr(x)]

    def tensor(x: torch.Tensor):
        name = str(x.dtype).removeprefix("torch.")
        if name not in TENSOR_DTYPES or x.is_sparse or x.is_quantized or x.is_complex():
            return ["opaque", f"torch.Tensor[{name}]", f"shape {list(x.shape)}"]
        x = x.detach().to("cpu").contiguous()
        blobs.append(x.reshape(-1).view(torch.uint8).numpy().tobytes() if x.numel() else b"")
        return ["T", name, list(x.shape), len(blobs) - 1]

    tree = json.dumps(walk(value, 0), allow_nan=False).encode()
    parts = [struct.pack("<I", len(tree)), tree, struct.pack("<I", len(blobs))]
    for b in blobs:
        parts += [struct.pack("<Q", len(b)), b]
    return b"".join(parts)


def _short_repr(x) -> str:
    try:
        text = repr(x)
    except Exception:
        text = "?"
    return text[:120]


def decode(data: bytes):
    """Parent side: decode a message from the child, trusting nothing in it."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise DecodeError("message too large")
    try:
        (n,) = struct.unpack_from("<I", data, 0)
        if n > MAX_TREE_BYTES:
            raise DecodeError("message structure too large")
        tree = json.loads(data[4:4 + n])
        pos = 4 + n
        (count,) = struct.unpack_from("<I", data, pos)
        pos += 4
        blobs = []
        for _ in range(count):
            (size,) = struct.unpack_from("<Q", data, pos)
            pos += 8
            if pos + size > len(data):
                raise DecodeError("truncated tensor data")
            blobs.append(data[pos:pos + size])
            pos += size
    except (struct.error, json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DecodeError(f"malformed message: {exc}") from None
    return _build(tree, blobs, 0)


def _build(node, blobs, depth):
    if depth > MAX_DEPTH + 1 or not isinstance(node, list) or not node or not isinstance(node[0], str):
        raise DecodeError("malformed value")
    tag, args = node[0], node[1:]
    if tag == "v" and len(args) == 1 and (args[0] is None or isinstance(args[0], bool)):
        return args[0]
    if tag == "s" and len(args) == 1 and isinstance(args[0], str):
        return args[0]
    if tag == "i" and len(args) == 1 and isinstance(args[0], str) and len(args[0]) > MAX_INT_DIGITS:
        raise DecodeError(f"an integer of more than {MAX_INT_DIGITS} digits")
    if tag == "i" and len(args) == 1 and isinstance(args[0], str):
        try:
            return int(args[0])
        except ValueError:
            raise DecodeError("malformed int") from None
    if tag == "f" and len(args) == 1 and isinstance(args[0], str) and len(args[0]) <= 40:
        try:
            return float(args[0])
        except ValueError:
            raise DecodeError("malformed float") from None
    if tag in ("l", "t") and len(args) == 1 and isinstance(args[0], list):
        items = [_build(e, blobs, depth + 1) for e in args[0]]
        return tuple(items) if tag == "t" else items
    if tag == "d" and len(args) == 1 and isinstance(args[0], list):
        out, hashes = {}, {}
        for pair in args[0]:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise DecodeError("malformed dict")
            key = _build(pair[0], blobs, depth + 1)
            try:
                h = hash(key)
            except TypeError:
                raise DecodeError("unhashable dict key") from None
            hashes[h] = hashes.get(h, 0) + 1  # distinct hashes: a hash of an int hash is itself, no collision here
            if hashes[h] > MAX_SAME_HASH:
                raise DecodeError(f"a dict with more than {MAX_SAME_HASH} keys of one hash (quadratic to build)")
            out[key] = _build(pair[1], blobs, depth + 1)
        return out
    if tag == "T" and len(args) == 3:
        return _tensor(*args, blobs)
    if tag == "h" and len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], str):
        return Handle(args[0], printable(args[1][:200]))
    if tag == "opaque" and len(args) == 2 and all(isinstance(a, str) for a in args):
        return Opaque(printable(args[0][:200]), printable(args[1][:200]))
    raise DecodeError(f"unknown value tag {tag!r}")


def _tensor(dtype_name, shape, index, blobs) -> torch.Tensor:
    dtype = TENSOR_DTYPES.get(dtype_name) if isinstance(dtype_name, str) else None
    if dtype is None or not isinstance(shape, list) or len(shape) > MAX_DIMS or \
            not all(isinstance(s, int) and 0 <= s < 2**40 for s in shape):
        raise DecodeError("malformed tensor header")
    if not isinstance(index, int) or not 0 <= index < len(blobs):
        raise DecodeError("tensor data missing")
    blob = blobs[index]
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(blob) != math.prod(shape) * itemsize:
        raise DecodeError("tensor size does not match its shape")
    if not blob:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(blob), dtype=dtype).reshape(shape)
