"""Grader objects a submission calls through the channel (toy models): the child holds only a proxy.

The object lives in the grader, so its call counts, logs and random streams are the grader's: a submission can
call it, but cannot reach it to rewrite a counter. Each call comes back as a "callback" frame while the grader
waits for a reply; its arguments arrive through the allowlisting codec like any other reply.
"""
from __future__ import annotations

import torch

from grader.sandbox import child

# What a served object may raise back into the child, by name: the errors of a bad argument.
ANSWERED_ERRORS = ("ValueError", "TypeError", "IndexError")
# Items (tensor elements, list entries) all the arguments of one call may hold, checked before the object sees them:
# far past any toy model's argument (a prefix of at most 4096 tokens), far below what costs the grader (a 60 MiB
# uint8 tensor of tokens became a 500 MiB list in the grader before a model checked its length).
MAX_ARGUMENT_ITEMS = 1 << 16


class Served:
    """`obj`, offered to the submission with the methods it may call (`"__call__"` for a callable model)."""

    def __init__(self, obj, methods: tuple[str, ...], name: str):
        assert methods and all(isinstance(m, str) for m in methods)
        self.obj, self.methods, self.name = obj, tuple(methods), name

    def __reduce__(self):
        return (child.GraderObject, (id(self), self.methods, self.name))

    def answer(self, method: str, args: list, kwargs: dict) -> tuple:
        """('ok', value) or ('raised', (error name, message)) for one call the submission made."""
        if method not in self.methods:
            return "raised", ("AttributeError", f"{self.name} has no method {method!r}")
        try:
            return "ok", getattr(self.obj, method)(*args, **kwargs)
        except (ValueError, TypeError, IndexError) as exc:
            return "raised", (type(exc).__name__, str(exc))
        except Exception as exc:  # noqa: BLE001 - the arguments are the submission's: its error, never the grader's
            # (int(inf) is an OverflowError, a huge tensor a MemoryError...). Only the type name goes back: the
            # message of an error nobody planned for may carry the grader's own state.
            return "raised", ("ValueError", f"{self.name}.{method} could not use its arguments "
                                            f"({type(exc).__name__})")


def _items(x) -> int:
    """How many items `x` holds, counting tensor elements and the entries of lists, tuples and dicts."""
    if isinstance(x, torch.Tensor):
        return x.numel()
    if isinstance(x, (list, tuple)):
        return len(x) + sum(_items(e) for e in x)
    if isinstance(x, dict):
        return len(x) + sum(_items(v) for v in x.values())
    return 1


def answer(served: dict[int, Served], payload) -> tuple:
    """The reply to one callback frame `[ref, method, args, kwargs]` from the child (untrusted)."""
    if not (isinstance(payload, list) and len(payload) == 4 and isinstance(payload[1], str)
            and isinstance(payload[2], list) and isinstance(payload[3], dict)
            and all(isinstance(k, str) for k in payload[3])):
        return "raised", ("TypeError", "malformed call to a grader object")
    ref, method, args, kwargs = payload
    target = served.get(ref) if isinstance(ref, int) else None
    if target is None:
        return "raised", ("TypeError", "no such grader object")
    if _items(args) + _items(kwargs) > MAX_ARGUMENT_ITEMS:
        return "raised", ("ValueError", f"the arguments to {target.name}.{method} hold more than "
                                        f"{MAX_ARGUMENT_ITEMS} items, far more than any check needs")
    return target.answer(method, args, kwargs)
