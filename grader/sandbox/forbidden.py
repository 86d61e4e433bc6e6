"""Library calls an exercise must not use, refused in the child before the submission is imported.

Two walls: a Python name (`torch.nn.functional.scaled_dot_product_attention`) is replaced, for a message that
names it; and every operator of a family is refused at PyTorch's dispatcher, which every entry point reaches
(`torch.ops.aten...`, `torch._C._nn...`, modules that call them), by kernels registered over the real ones.
"""
from __future__ import annotations

import importlib
import re
import warnings

import torch

# The dispatch keys whose kernels do the work of an operator on CPU and CUDA (Meta kernels only compute shapes).
KEYS = ("CPU", "CUDA", "CompositeImplicitAutograd", "CompositeExplicitAutograd")

_libraries: list = []  # the registrations last while the library objects do


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
    """Refuse every aten operator whose name matches `pattern`, at each key with a kernel; the names refused."""
    matcher = re.compile(pattern)
    library = torch.library.Library("aten", "IMPL")
    refused = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": that is the point
        for name in sorted(torch._C._dispatch_get_all_op_names()):
            if not (name.startswith("aten::") and matcher.search(name)):
                continue
            for key in KEYS:
                if torch._C._dispatch_has_kernel_for_dispatch_key(name, key):
                    library.impl(name.removeprefix("aten::"), _refusal(name), key)
                    refused.append(f"{name}@{key}")
    _libraries.append(library)
    return refused


def _refusal(name: str):
    def refuse(*args, **kwargs):
        raise ForbiddenCall(f"{name} may not be used in this exercise")
    return refuse
