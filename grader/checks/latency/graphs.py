"""Random task graphs for the hidden latency checks (and the project's tests), drawn from a `random.Random`.

Every duration is a dyadic fraction, so every sum of them is exact in float64: a tie between two chains is an
exact tie, which the contract's tie rule decides, and never an artefact of rounding that a submission summing in
another order would see differently. `tied` tasks use quarter seconds from 0 to 3 (ties and zero-second steps are
common); the others use multiples of 2**-16 s up to 60 s (ties are rare, and a difference between two chains
is at least 2**-16 s, far above the 1e-9 relative tolerance).

Step names are a letter, a digit and a letter ("k7q"): all of one length, so no name holds another, and unlike
any word a message might use.
"""
import random
import string

# What broken_task breaks, as a failure message names it (said through tr, in the reader's language)
FAULTS = ["cycle", "self", "unknown need", "unknown step", "unknown order", "negative"]


def step_names(r: random.Random, n: int) -> list:
    """`n` distinct step names in random order."""
    names = set()
    while len(names) < n:
        names.add(r.choice(string.ascii_lowercase) + r.choice(string.digits) + r.choice(string.ascii_lowercase))
    return r.sample(sorted(names), n)


def duration(r: random.Random, tied: bool) -> float:
    """A step's seconds: quarter seconds in [0, 3] when `tied`, else multiples of 2**-16 in (0, 60]."""
    return r.randint(0, 12) / 4 if tied else r.randint(1, 60 * 2**16) / 2**16


def random_task(r: random.Random, tied: bool, size: tuple = (1, 12)) -> tuple:
    """(durations, deps, order) of a random DAG: edges only from earlier to later steps of a hidden order.

    Some steps have no `deps` entry, some an empty list; `order` is None in about a quarter of the tasks, and
    some of its edges repeat a `deps` edge.
    """
    names = step_names(r, r.randint(*size))  # in topological order
    density = r.uniform(0.1, 0.6)
    deps, order = {}, {}
    for i, step in enumerate(names):
        needed = [b for b in names[:i] if r.random() < density]
        awaited = [b for b in names[:i] if r.random() < density / 3 and (b not in needed or r.random() < 0.2)]
        if needed or r.random() < 0.3:
            deps[step] = needed
        if awaited:
            order[step] = awaited
    durations = {step: duration(r, tied) for step in r.sample(names, len(names))}
    deps = {step: deps[step] for step in r.sample(list(deps), len(deps))}
    return durations, deps, (None if not order and r.random() < 0.5 or r.random() < 0.25 else order)


def waits_of(durations: dict, deps: dict, order: dict | None) -> dict:
    """{step: every step it waits for}, through deps and order."""
    waits = {step: set() for step in durations}
    for edges in (deps, order or {}):
        for step, before in edges.items():
            waits.setdefault(step, set()).update(before)
    return waits


def ancestors(edges: dict, step) -> set:
    """Every step `step` waits for through `edges` {step: [steps]}, directly or through others."""
    found, frontier = set(), list(edges.get(step, []))
    while frontier:
        before = frontier.pop()
        if before not in found:
            found.add(before)
            frontier.extend(edges.get(before, []))
    return found


def steps_on_cycles(durations: dict, deps: dict, order: dict | None) -> list:
    """The steps that wait for themselves through some cycle."""
    waits = waits_of(durations, deps, order)
    return sorted(step for step in waits if step in ancestors(waits, step))


def dependent_pairs(deps: dict) -> list:
    """Every [a, b] where a needs b's output, directly or through other steps."""
    return [[step, needed] for step in deps for needed in sorted(ancestors(deps, step))]


def independent_pairs(durations: dict, deps: dict, order: dict | None) -> list:
    """Pairs [a, b] that what_if may run in parallel: the order edges first (whose dropping can save time), then
    any two steps where neither needs the other's output."""
    needs = {step: ancestors(deps, step) for step in durations}
    free = [[a, b] for a in durations for b in durations if a < b and a not in needs[b] and b not in needs[a]]
    ordered = [[a, b] for a, before in (order or {}).items() for b in before if [min(a, b), max(a, b)] in free]
    return ordered + free


def broken_task(r: random.Random) -> tuple:
    """(durations, deps, order, the names a ValueError may give, what is wrong, the task before the break) of a task
    with no schedule: the last, a valid (durations, deps, order), differs from it by one edge, step or sign."""
    durations, deps, order = random_task(r, tied=False, size=(2, 10))
    valid = (dict(durations), {step: list(before) for step, before in deps.items()},
             None if order is None else {step: list(before) for step, before in order.items()})
    order = dict(order or {})
    names = list(durations)
    kind = r.choice(FAULTS)
    if kind == "cycle":  # a waits for b through deps and b for a through deps or order
        a, b = r.sample(names, 2)
        deps[a] = deps.get(a, []) + [b]
        edges = deps if r.random() < 0.5 else order
        edges[b] = edges.get(b, []) + [a]
        return durations, deps, order, steps_on_cycles(durations, deps, order), kind, valid
    if kind == "self":
        step = r.choice(names)
        order[step] = order.get(step, []) + [step]
        return durations, deps, order, [step], kind, valid
    ghost = next(s for s in step_names(r, len(names) + 1) if s not in durations)
    if kind == "negative":
        step = r.choice(names)
        durations[step] = -durations[step]
        return durations, deps, order, [step, "durations"], kind, valid
    if kind == "unknown step":
        deps[ghost] = r.sample(names, r.randint(1, 2))
    else:
        edges = deps if kind == "unknown need" else order
        step = r.choice(names)
        edges[step] = edges.get(step, []) + [ghost]
    return durations, deps, order, [ghost], kind, valid
