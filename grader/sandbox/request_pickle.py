"""How the grader's requests travel to the child: pickle (the grader is the trusted side), with each plain tensor as
its raw bytes rather than through torch's own reduction, which saves and loads a whole storage per tensor (about
0.3 ms a request on each side, thousands of times in a hidden grade)."""
from __future__ import annotations

import io
import pickle

import torch


class _Pickler(pickle.Pickler):
    """Pickle, with plain tensors (`_plain`) reduced to `tensor` and their bytes."""

    def reducer_override(self, obj):
        if not (isinstance(obj, torch.Tensor) and _plain(obj)):
            return NotImplemented  # a view, a subclass, grad...: torch's reduction keeps all of it
        # [numel * itemsize] bytes, the tensor's whole storage (torch's reduction sends each tensor's storage alone
        # too: two tensors of one request never share one in the child either way)
        return tensor, (obj.dtype, tuple(obj.shape), obj.reshape(-1).view(torch.uint8).numpy().tobytes())


def _plain(t: torch.Tensor) -> bool:
    """A dense CPU tensor that owns its whole storage, laid out as `torch.empty` lays it out, with nothing else
    attached: what `tensor` rebuilds exactly."""
    return (type(t) is torch.Tensor and t.layout == torch.strided and t.device.type == "cpu" and not t.requires_grad
            and t.storage_offset() == 0 and t.stride() == _row_major(t.shape)
            and t.untyped_storage().nbytes() == t.numel() * t.element_size()
            and not (t.is_conj() or t.is_neg() or t.is_quantized or t.__dict__))


def _row_major(shape: torch.Size) -> tuple[int, ...]:
    """The strides `torch.empty(shape)` has."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def dumps(message) -> bytes:
    """`message` pickled, plain tensors as raw bytes."""
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(message)
    return out.getvalue()


def tensor(dtype: torch.dtype, shape: tuple, data: bytes) -> torch.Tensor:
    """The tensor `dumps` sent: a fresh, writable one of `dtype` and `shape` holding `data`."""
    made = torch.empty(shape, dtype=dtype)
    if data:
        made.reshape(-1).view(torch.uint8).copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))
    return made
