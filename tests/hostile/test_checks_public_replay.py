"""Finding 12 of issue 8 and finding 5 of issue 25, red team: a submission that replays the public checks' answers
and knows nothing else.

For each topic the solution is graded in public mode while the grader records every call the checks send to the
child, as a key: the function or method, its arguments (tensors by dtype, shape and bytes, floats exactly, grader
objects as a placeholder, generators by seed) and, for a method, every earlier call on the same object; and what
each function answered. The replaying submission is the solution behind guards that answer a recorded call and
give one of two things for any other: a ValueError whose message names every argument (the refuser: it earns every
check that only sends invalid input), or the function's most common public answer (the constant: it earns every
check that always expects one answer, pick_effort's None say), a ValueError where the function never returned a
value it can write down. It must keep most of the public points (a real attack, not a broken module) and score at
most 30% of each topic, and 5% of all the hidden checks' points, in hidden mode.
"""
import hashlib
import importlib
import inspect
import math
from collections import Counter

import pytest
import torch

from grader import topics
from grader.grading import grade
from grader.sandbox import remote
from grader.sandbox.policy import REPO

OBJECT = ("obj",)  # a grader object or a handle: the same placeholder on both sides
PUBLIC_KEPT = 0.9  # the share of the solution's public points the replay must keep in public mode
HIDDEN_MAX = (3, 10)  # the most the replay may score in hidden mode, as a share of the topic's points
ALL_HIDDEN_MAX = (5, 100)  # the most it may score on the hidden checks of all topics, as a share of their points
LITERAL_ELEMENTS = 4096  # the largest tensor the constant replay writes into its source
CATEGORIES = 4  # a function with at most this many distinct public answers is tried with each in turn
DEADLINE_S = 1200  # a replay grade's deadline: failing checks shrink slowly, and a check cut short earns nothing


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

# ---- the replay: the solution answers only the calls the public checks made; any other call answers a
# constant, or raises ValueError naming its arguments
import functools as _functools
import hashlib
import inspect as _inspect

import torch

_KNOWN = frozenset(%r)
_CONSTANT = %r  # name -> the source of what an unknown call of it returns; absent: it raises ValueError
_depth = [0]  # > 0 while the solution runs: its calls to its own functions are not guarded


def _other(x):
    return ("generator", x.initial_seed()) if isinstance(x, torch.Generator) else %r


def _answer(key, name, call, head, args, kwargs):
    if not _depth[0] and key() not in _KNOWN:
        if name in _CONSTANT:
            return eval(_CONSTANT[name], {"torch": torch})
        raise ValueError(f"{name}: not a call the public checks make: {_named(call, head, args, kwargs)}")
    _depth[0] += 1
    try:
        return call(*head, *args, **kwargs)
    finally:
        _depth[0] -= 1


def _named(call, head, args, kwargs):
    """The arguments' names, then each one's value (a tensor by its shape): a message cut at 2000 characters
    still names them all."""
    try:
        bound = _inspect.signature(call).bind(*head, *args, **kwargs).arguments
    except TypeError:
        bound = {"args": args, "kwargs": kwargs}
    bound = {k: v for k, v in bound.items() if k != "self"}
    shown = {k: f"Tensor{list(v.shape)}" if isinstance(v, torch.Tensor) else repr(v)[:400] for k, v in bound.items()}
    return ", ".join(bound) + "; " + ", ".join(f"{k}={v}" for k, v in shown.items())


def _function(fn, name):
    @_functools.wraps(fn)
    def replay(*args, **kwargs):
        return _answer(lambda: call_digest(name, canon_key(args, _other), canon_key(kwargs, _other)),
                       name, fn, (), args, kwargs)
    return replay


def _method(fn, name, first):
    @_functools.wraps(fn)
    def replay(self, *args, **kwargs):
        def key():
            before = () if first else (getattr(self, "_replay_key", None),)
            self._replay_key = call_digest(*before, name, canon_key(args, _other), canon_key(kwargs, _other))
            return self._replay_key
        return _answer(key, name, fn, (self,), args, kwargs)
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
        self.answers: dict[str, Counter] = {}  # function or method name -> Counter of its returned values' sources

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
            if kind in ("call", "method") and literal(result) is not None:
                self.answers.setdefault(called, Counter())[literal(result)] += 1
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


def literal(x) -> str | None:
    """Python source that evaluates to a value equal to `x` (torch imported), or None where there is none."""
    if x is None or isinstance(x, (bool, int, str)):
        return repr(x)
    if isinstance(x, float):
        return repr(x) if math.isfinite(x) else f"float({str(x)!r})"
    if isinstance(x, (list, tuple)):
        items = [literal(e) for e in x]
        if None in items:
            return None
        return f"[{', '.join(items)}]" if isinstance(x, list) else f"({''.join(i + ', ' for i in items)})"
    if isinstance(x, dict):
        pairs = [(literal(k), literal(v)) for k, v in x.items()]
        return None if any(None in pair for pair in pairs) else "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(x, torch.Tensor) and x.numel() <= LITERAL_ELEMENTS and not x.is_complex():
        return f"torch.tensor({literal(x.tolist())}, dtype={x.dtype}).reshape({tuple(x.shape)})"
    return None


def constants(topic: str, recorder: Recorder) -> list[tuple[dict[str, str], set[str] | None]]:
    """What the constant replays answer an unknown call: per replay, a dict (name -> source) and the functions and
    classes whose checks it is graded on (None: all). The k-th replay gives each function or method its k-th most
    common public answer that can be written down where it has at most CATEGORIES of them (None, 'length', a
    level's name: each is some check's one expected answer), its most common one otherwise, so that from k = 1 on
    only the checks of functions with a k-th answer can score otherwise; a class's unknown construction builds an
    object that skips its __init__."""
    ranked = {name: [answer for answer, _ in counts.most_common()] for name, counts in recorder.answers.items()}
    api = topics.api(topic)
    classes = {name: "None" for name, (signature, _) in api.items() if signature.startswith("class ")}
    unit = {name.rpartition(".")[2]: name.partition(".")[0] for name in api}  # a method counts as its class
    replays = []
    for k in range(max([len(r) for r in ranked.values() if len(r) <= CATEGORIES], default=1)):
        answers = {name: r[k] if len(r) <= CATEGORIES and k < len(r) else r[0] for name, r in ranked.items()}
        changed = {unit.get(name, name) for name, r in ranked.items() if 0 < k < len(r) <= CATEGORIES}
        replays.append(({**answers, **classes}, changed if k else None))
    return replays


def replay_source(topic: str, keys: set[str], constant: dict[str, str]) -> str:
    """The solution of `topic` behind guards that let through only the calls whose keys are in `keys`, and answer
    others from `constant` (name -> source of the answer) or else with a ValueError naming the arguments."""
    names = [n for n in topics.api(topic) if "." not in n]
    return ((REPO / "solutions" / f"{topic}.py").read_text() + "\n\n" + inspect.getsource(canon_key) + "\n\n"
            + inspect.getsource(call_digest) + REPLAY % (sorted(keys), constant, OBJECT, names))


def points(doc: dict, visibility: str) -> tuple[int, int]:
    """(score, max) of the checks of one visibility in a one-topic results document."""
    checks = [c for c in doc["topics"][0]["checks"] if c["visibility"] == visibility]
    return sum(c["score"] for c in checks), sum(c["max_score"] for c in checks)


def replays(topic: str, folder) -> dict[str, dict]:
    """The hidden-mode results documents (seed 11) of the refusing replay of `topic` and of each constant one (on
    the checks where it can score otherwise than the first), written in `folder`, by name; the refusing one checked
    first to keep most of the solution's public points in public mode (the replays differ only on calls the public
    checks never make)."""
    recorder = Recorder()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(remote.Submission, "_request", recorder.request(remote.Submission._request))
        solution = grade(REPO / "solutions", [topic], hidden=False, seed=0, with_progress=False)
    solved, _ = points(solution, "public")
    assert solved > 0 and recorder.keys
    (folder / f"{topic}.py").write_text(replay_source(topic, recorder.keys, {}))
    score, _ = points(grade(folder, [topic], hidden=False, seed=0, with_progress=False, deadline_s=DEADLINE_S),
                      "public")
    assert score >= PUBLIC_KEPT * solved, f"{topic}: the replay scored {score} public points, the solution {solved}"
    docs = {"refusing": grade(folder, [topic], hidden=True, seed=11, with_progress=False, deadline_s=DEADLINE_S)}
    for k, (constant, functions) in enumerate(constants(topic, recorder)):
        (folder / f"{topic}.py").write_text(replay_source(topic, recorder.keys, constant))
        docs[f"constant {k}"] = grade(folder, [topic], hidden=True, seed=11, with_progress=False,
                                      deadline_s=DEADLINE_S, only=functions)
    return docs


def best_scores(docs: dict[str, dict]) -> dict[str, tuple[int, int, str]]:
    """check id -> (the most any replay scored on it, its points, its visibility): a memoriser may pick, for each
    function, the replay that serves it best."""
    best = {}
    for doc in docs.values():
        for c in doc["topics"][0]["checks"]:
            kept = best.get(c["id"], (0,))[0]
            best[c["id"]] = (max(kept, c["score"]), c["max_score"], c["visibility"])
    return best


@pytest.mark.parametrize("topic", topics.all_topics())
def test_replaying_the_public_answers_scores_little_in_hidden_mode(topic, open_folder):
    """At most 30% of the topic in hidden mode, and at most 5% of its hidden checks' points, which holds the
    memoriser to 5% of all topics' hidden points together."""
    best = best_scores(replays(topic, open_folder))
    earned = {c: score for c, (score, _, _) in best.items() if score}
    score, most = sum(s for s, _, _ in best.values()), sum(m for _, m, _ in best.values())
    hidden = [(s, m) for s, m, visibility in best.values() if visibility == "hidden"]
    hidden_score, hidden_most = sum(s for s, _ in hidden), sum(m for _, m in hidden)
    assert score * HIDDEN_MAX[1] <= HIDDEN_MAX[0] * most, (
        f"{topic}: the replays scored {score} of {most} in hidden mode, on {earned}")
    assert hidden_score * ALL_HIDDEN_MAX[1] <= ALL_HIDDEN_MAX[0] * hidden_most, (
        f"{topic}: the replays scored {hidden_score} of the hidden checks' {hidden_most} points, on {earned}")
