"""Finding 12 of issue 8, red team: a submission that replays the public checks' answers and knows nothing else.

For each topic the solution is graded in public mode while the grader records every call the checks send to the
child, as a key: the function or method, its arguments (tensors by dtype, shape and bytes, floats exactly, grader
objects as a placeholder, generators by seed) and, for a method, every earlier call on the same object. The
replaying submission is the solution behind guards that answer a recorded call and raise RuntimeError on any
other. It must keep most of the public points (a real attack, not a broken module) and score at most 30% of the
topic in hidden mode.
"""
import hashlib
import importlib
import inspect

import pytest
import torch

from grader import topics
from grader.grading import grade
from grader.sandbox import remote
from grader.sandbox.policy import REPO

OBJECT = ("obj",)  # a grader object or a handle: the same placeholder on both sides
PUBLIC_KEPT = 0.9  # the share of the solution's public points the replay must keep in public mode
HIDDEN_MAX = (3, 10)  # the most the replay may score in hidden mode, as a share of the topic's points


def canon_key(x, other):
    """A plain, exactly comparable form of a call's argument; `other` keys what is not plain data."""
    if x is None or isinstance(x, (bool, int, str)):
        return (type(x).__name__, x)
    if isinstance(x, float):
        return ("float", x.hex())
    if isinstance(x, torch.Tensor):
        flat = x.detach().cpu().contiguous().reshape(-1)
        data = hashlib.sha256(memoryview(flat.view(torch.uint8).numpy())).hexdigest()
        return ("tensor", str(x.dtype), tuple(x.shape), data)
    if isinstance(x, (torch.dtype, torch.device)):
        return (type(x).__name__, str(x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(canon_key(e, other) for e in x))
    if isinstance(x, (set, frozenset)):
        return ("set", tuple(sorted((canon_key(e, other) for e in x), key=repr)))
    if isinstance(x, dict):
        return ("dict", tuple(sorted(((canon_key(k, other), canon_key(v, other)) for k, v in x.items()), key=repr)))
    return other(x)


def call_digest(*parts) -> str:
    """The key of one call: a digest of its parts (an earlier call's digest, the name, the canonical arguments)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


REPLAY = '''

# ---- the replay: the solution answers only the calls the public checks made; any other call raises
import functools as _functools
import hashlib
import inspect as _inspect

import torch

_KNOWN = frozenset(%r)
_depth = [0]  # > 0 while the solution runs: its calls to its own functions are not guarded


def _other(x):
    return ("generator", x.initial_seed()) if isinstance(x, torch.Generator) else %r


def _answer(key, call, *args, **kwargs):
    if not _depth[0] and key() not in _KNOWN:
        raise RuntimeError("not a call the public checks make")
    _depth[0] += 1
    try:
        return call(*args, **kwargs)
    finally:
        _depth[0] -= 1


def _function(fn, name):
    @_functools.wraps(fn)
    def replay(*args, **kwargs):
        return _answer(lambda: call_digest(name, canon_key(args, _other), canon_key(kwargs, _other)),
                       fn, *args, **kwargs)
    return replay


def _method(fn, name, first):
    @_functools.wraps(fn)
    def replay(self, *args, **kwargs):
        def key():
            before = () if first else (getattr(self, "_replay_key", None),)
            self._replay_key = call_digest(*before, name, canon_key(args, _other), canon_key(kwargs, _other))
            return self._replay_key
        return _answer(key, fn, self, *args, **kwargs)
    return replay


def _class(cls):
    methods = {n: _method(f, n, False) for n, f in _inspect.getmembers(cls, _inspect.isfunction) if n[0] != "_"}
    methods["__init__"] = _method(cls.__init__, cls.__name__, True)
    return type(cls.__name__, (cls,), {**methods, "__module__": cls.__module__, "__qualname__": cls.__qualname__})


for _name in %r:
    _value = globals()[_name]
    if not (isinstance(_value, type) and issubclass(_value, BaseException)):
        globals()[_name] = _class(_value) if isinstance(_value, type) else _function(_value, _name)
'''


class Recorder:
    """Keys of the calls the checks send to the child, taken in the grader; a method's key chains its object's."""

    def __init__(self):
        self.keys: set[str] = set()
        self.chains: dict[tuple, str] = {}     # (submission, handle) -> key of the object's latest call
        self.generators: dict[tuple, tuple] = {}
        self.seen: dict[int, object] = {}      # keeps every submission alive, so that ids are not reused

    def other(self, x):
        """The key of what is not plain data: a generator by its seed, anything else as the placeholder."""
        if isinstance(x, remote.Remote):
            return self.generators.get((id(x._sub), x._handle.ref), OBJECT)
        return OBJECT

    def key(self, before, name: str, args, kwargs) -> str:
        """Record and return the key of a call of `name`, chained after the keys in `before`."""
        key = call_digest(*before, name, canon_key(tuple(args), self.other), canon_key(dict(kwargs), self.other))
        self.keys.add(key)
        return key

    def method(self, sub, ref: int, name: str, args, kwargs) -> None:
        """A call on an object the submission built: the key chains the object's earlier calls."""
        if (id(sub), ref) in self.chains:
            self.chains[id(sub), ref] = self.key((self.chains[id(sub), ref],), name, args, kwargs)

    def trace(self, sub, factory, args, kwargs) -> None:
        """Run a toy factory here on stand-ins of the submission's objects, keying the calls it makes on them."""
        if isinstance(factory, str):
            module, _, attr = factory.rpartition(".")
            factory = getattr(importlib.import_module(module), attr)
        stand_in = {id(a): StandIn(self, sub, a._handle.ref) for a in args if isinstance(a, remote.Remote)
                    and (id(sub), a._handle.ref) in self.chains}
        if stand_in:
            factory(*[stand_in.get(id(a), a) for a in args], **kwargs)

    def request(self, original):
        """A Submission._request that keys each call before sending it."""
        def recorded(sub, message, name, args, kwargs):
            self.seen[id(sub)] = sub
            kind, target, called = message[:3]
            if kind == "call":
                key = self.key((), called, args, kwargs)
            elif kind == "method":
                self.method(sub, target, called, args, kwargs)
            elif kind == "make":
                self.trace(sub, target, args, kwargs)
            result = original(sub, message, name, args, kwargs)
            if kind == "call" and isinstance(result, remote.Remote):
                self.chains[id(sub), result._handle.ref] = key
            if kind == "make" and name == "generator":
                self.generators[id(sub), result._handle.ref] = ("generator", args[0])
            return result
        return recorded


class StandIn:
    """The submission's object as a toy factory sees it here: each method call is keyed, and answers None."""

    def __init__(self, recorder: Recorder, sub, ref: int):
        self._recorder, self._sub, self._ref = recorder, sub, ref

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self._recorder.method(self._sub, self._ref, name, args, kwargs)


def replay_source(topic: str, keys: set[str]) -> str:
    """The solution of `topic` behind guards that let through only the calls whose keys are in `keys`."""
    names = [n for n in topics.api(topic) if "." not in n]
    return ((REPO / "solutions" / f"{topic}.py").read_text() + "\n\n" + inspect.getsource(canon_key) + "\n\n"
            + inspect.getsource(call_digest) + REPLAY % (sorted(keys), OBJECT, names))


def points(doc: dict, visibility: str) -> tuple[int, int]:
    """(score, max) of the checks of one visibility in a one-topic results document."""
    checks = [c for c in doc["topics"][0]["checks"] if c["visibility"] == visibility]
    return sum(c["score"] for c in checks), sum(c["max_score"] for c in checks)


@pytest.mark.parametrize("topic", topics.all_topics())
def test_replaying_the_public_answers_scores_little_in_hidden_mode(topic, open_folder, monkeypatch):
    recorder = Recorder()
    with monkeypatch.context() as patch:
        patch.setattr(remote.Submission, "_request", recorder.request(remote.Submission._request))
        solution = grade(REPO / "solutions", [topic], hidden=False, seed=0, with_progress=False)
    solved, _ = points(solution, "public")
    assert solved > 0 and recorder.keys
    (open_folder / f"{topic}.py").write_text(replay_source(topic, recorder.keys))

    public = grade(open_folder, [topic], hidden=False, seed=0, with_progress=False)
    score, _ = points(public, "public")
    assert score >= PUBLIC_KEPT * solved, f"{topic}: the replay scored {score} public points, the solution {solved}"

    hidden = grade(open_folder, [topic], hidden=True, seed=11, with_progress=False)
    topic_doc = hidden["topics"][0]
    assert topic_doc["score"] * HIDDEN_MAX[1] <= HIDDEN_MAX[0] * topic_doc["max_score"], (
        f"{topic}: the replay scored {topic_doc['score']} of {topic_doc['max_score']} in hidden mode "
        f"(public checks {points(hidden, 'public')}, hidden checks {points(hidden, 'hidden')})")
