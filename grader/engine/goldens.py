"""Stored reference outputs for public checks, so the student bundle needs no reference.

`golden(key, compute)` returns the stored value; while goldens are being regenerated (`infergrade goldens`) it
runs `compute` and records the result instead.
"""
from __future__ import annotations

from pathlib import Path

import torch

CHECKS_DIR = Path(__file__).resolve().parent.parent / "checks"


class Goldens:
    """The goldens of one topic, loaded once, or being recorded."""

    def __init__(self, topic: str, record: bool):
        self.topic, self.record = topic, record
        self.path = CHECKS_DIR / topic / "goldens.pt"
        self.values: dict = {}
        if not record and self.path.exists():
            self.values = torch.load(self.path, weights_only=True)

    def get(self, key: str, compute):
        if self.record:
            value = compute()
            assert key not in self.values or same(self.values[key], value), \
                f"golden {key!r} recorded twice with different values"
            self.values[key] = value
            return value
        if key not in self.values:
            raise LookupError(f"golden {key!r} of topic {self.topic} is missing: run `infergrade goldens {self.topic}`")
        return self.values[key]

    def save(self) -> None:
        torch.save(self.values, self.path)


def same(a, b) -> bool:
    """Exact equality of nested goldens (tensors by dtype, shape and value)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


_active: dict[str, Goldens] = {}
_current: list[str] = [""]


def activate(topic: str, record: bool) -> None:
    """Make `topic`'s goldens the ones `golden()` reads (called by the engine before each check)."""
    if topic not in _active or _active[topic].record != record:
        _active[topic] = Goldens(topic, record)
    _current[0] = topic


def start_recording(topic: str) -> None:
    _active[topic] = Goldens(topic, record=True)


def recorded(topic: str) -> Goldens:
    return _active[topic]


def golden(key: str, compute):
    """The stored reference value `key` of the running check's topic."""
    return _active[_current[0]].get(key, compute)


def reference(topic: str):
    """The reference module of `topic`, imported only when asked for (hidden checks, regenerating goldens)."""
    import importlib
    return importlib.import_module(f"reference.{topic}")
