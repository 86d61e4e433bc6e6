"""Library calls an exercise must not use, refused in the child before the submission is imported.

Two walls: a Python name (`torch.nn.functional.scaled_dot_product_attention`) is replaced, for a message that
names it; and every operator of a family is refused at PyTorch's dispatcher, which every entry point reaches
(`torch.ops.aten...`, `torch._C._nn...`, modules that call them), by kernels registered over the real ones.
"""
from __future__ import annotations

import ctypes
import importlib
import re
import warnings

import torch

# The dispatch keys whose kernels do the work of an operator on CPU and CUDA (Meta kernels only compute shapes).
KEYS = ("CPU", "CUDA", "CompositeImplicitAutograd", "CompositeExplicitAutograd")


class ForbiddenCall(RuntimeError):
    """Raised in place of a library call that an exercise must not use."""


def forbid(dotted: str) -> None:
    """Replace module attribute `dotted` with a function that raises ForbiddenCall."""
    module_name, _, attr = dotted.rpartition(".")
    module = importlib.import_module(module_name)

    def forbidden(*args, **kwargs):
        raise ForbiddenCall(f"{dotted} may not be used in this exercise")

    setattr(module, attr, forbidden)


def forbid_operators(pattern: str) -> list[str]:
    """Refuse every aten operator whose name matches `pattern`, at each key with a kernel; the names refused.

    The registrations last while their C++ library object does, and a submission that could reach it (a
    `torch.library.Library`, its finalizer, a list here) could reset it and bring the fused kernels back. So the
    object is made immortal (one reference no Python object holds) and nothing in Python keeps it: pybind
    objects are not tracked by `gc`, so `gc.get_objects()` does not find it either.
    """
    matcher = re.compile(pattern)
    module = torch._C._dispatch_library("IMPL", "aten", "", "", 0)
    refused = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": that is the point
        for name in sorted(torch._C._dispatch_get_all_op_names()):
            if not (name.startswith("aten::") and matcher.search(name)):
                continue
            for key in KEYS:
                if torch._C._dispatch_has_kernel_for_dispatch_key(name, key):
                    module.impl(name.removeprefix("aten::"), key, _refusal(name), False)
                    refused.append(f"{name}@{key}")
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(module))  # never freed: the refusal cannot be deregistered
    del module
    return refused


def _refusal(name: str):
    def refuse(*args, **kwargs):
        raise ForbiddenCall(f"{name} may not be used in this exercise")
    return refuse
