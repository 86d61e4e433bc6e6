"""Hidden reference for the latency topic: the critical path of an agent task, what-ifs, first output, attribution.

Written for clarity, in float64 Python arithmetic. A task is a DAG of steps: `durations` {step: seconds}, `deps`
{step: [steps whose output it needs]} and an optional `order` {step: [steps it merely waits for]}. A step starts
when every step it waits for (through either kind of edge) has ended. Sums that decide the critical path compare
with the contract's relative tolerance of 1e-9, so a tie of exact decimals (0.1 + 0.2 against 0.3) is a tie.
"""
import statistics

REL_TOL = 1e-9
CHANGE_KINDS = ("remove", "shorten", "parallel")


def reaches(value, target):
    """Whether a sum `value` reaches `target` within the contract's relative tolerance (sums never exceed it)."""
    return value >= target - REL_TOL * abs(target)


def predecessors(durations, deps, order=None):
    """{step: every step it waits for}, in `durations` order; ValueError naming an unknown or negative step."""
    for step, seconds in durations.items():
        if seconds < 0:
            raise ValueError(f"durations[{step!r}] must be >= 0 seconds, got {seconds}")
    waits = {step: [] for step in durations}
    for name, edges in (("deps", deps), ("order", order or {})):
        for step, awaited in edges.items():
            if step not in durations:
                raise ValueError(f"{name} names step {step!r}, which has no duration")
            for before in awaited:
                if before not in durations:
                    raise ValueError(f"{name}[{step!r}] names step {before!r}, which has no duration")
                if before not in waits[step]:
                    waits[step].append(before)
    return waits


def topological_order(waits):
    """The steps, each after every step it waits for (Kahn's algorithm); ValueError naming a cycle's steps."""
    remaining = {step: len(before) for step, before in waits.items()}
    followers = {step: [] for step in waits}
    for step, before in waits.items():
        for b in before:
            followers[b].append(step)
    ready = [step for step, count in remaining.items() if count == 0]
    ordered = []
    while ready:
        step = ready.pop()
        ordered.append(step)
        for follower in followers[step]:
            remaining[follower] -= 1
            if remaining[follower] == 0:
                ready.append(follower)
    if len(ordered) < len(waits):
        raise ValueError(f"the steps wait for each other in a cycle: {' -> '.join(find_cycle(waits, ordered))}")
    return ordered


def find_cycle(waits, ordered):
    """One cycle among the steps Kahn's algorithm could not order, as [a, b, ..., a] (a waits for b, ...)."""
    done = set(ordered)
    step = next(s for s in waits if s not in done)
    seen = []
    while step not in seen:  # every unordered step waits for some other unordered step: walk until one repeats
        seen.append(step)
        step = next(b for b in waits[step] if b not in done)
    return seen[seen.index(step):] + [step]


def schedule(durations, deps, order=None):
    """Each step's earliest (start, end): it starts when the last step it waits for has ended."""
    waits = predecessors(durations, deps, order)
    times = {}
    for step in topological_order(waits):
        start = max((times[before][1] for before in waits[step]), default=0.0)
        times[step] = (start, start + float(durations[step]))
    return {step: times[step] for step in durations}


def longest_tails(durations, waits):
    """{step: the longest sum of durations from the step (itself included) to a step nothing waits for}."""
    followers = {step: [] for step in waits}
    for step, before in waits.items():
        for b in before:
            followers[b].append(step)
    tail = {}
    for step in reversed(topological_order(waits)):
        tail[step] = float(durations[step]) + max((tail[f] for f in followers[step]), default=0.0)
    return tail, followers


def critical_path(durations, deps, order=None):
    """(the end of the last step, the lexicographically smallest longest chain from a start to that end)."""
    times = schedule(durations, deps, order)
    total = max((end for _, end in times.values()), default=0.0)
    if not durations:
        return total, []
    waits = predecessors(durations, deps, order)
    tail, followers = longest_tails(durations, waits)
    # build the smallest chain greedily: each next step is the smallest one from which the chain can still
    # reach the total; a chain ends exactly at a step that nothing waits for
    starts = [step for step in durations if not waits[step]]
    step = min(s for s in starts if reaches(tail[s], total))
    path, so_far = [step], float(durations[step])
    while followers[step]:
        step = min(f for f in followers[step] if reaches(so_far + tail[f], total))
        path.append(step)
        so_far += float(durations[step])
    return total, path


def needs_output(deps, step, other):
    """Whether `step` needs `other`'s output through `deps`, directly or through other steps."""
    stack, seen = list(deps.get(step, [])), set()
    while stack:
        needed = stack.pop()
        if needed == other:
            return True
        if needed not in seen:
            seen.add(needed)
            stack.extend(deps.get(needed, []))
    return False


def known_step(durations, step, what):
    """`step`, or ValueError naming it (and `what`) when it has no duration."""
    if step not in durations:
        raise ValueError(f"{what} names step {step!r}, which has no duration")
    return step


def changed_task(durations, deps, order, change):
    """(durations, deps, order) after one change: remove a step, shorten one, or drop an order edge."""
    if not isinstance(change, dict) or len(change.keys() & set(CHANGE_KINDS)) != 1:
        raise ValueError(f"change must hold exactly one of {CHANGE_KINDS}, got {change!r}")
    deps = {step: list(needed) for step, needed in deps.items()}
    order = {step: list(awaited) for step, awaited in (order or {}).items()}
    if "remove" in change:
        gone = known_step(durations, change["remove"], "change['remove']")
        inherited_deps, inherited_order = deps.pop(gone, []), order.pop(gone, [])
        for edges in (deps, order):
            for step, before in edges.items():
                if gone in before:  # the dependents of the removed step wait for what it waited for
                    before.remove(gone)
                    before.extend(b for b in inherited_deps if b not in before)
                    order.setdefault(step, []).extend(b for b in inherited_order if b not in order[step])
        return {s: d for s, d in durations.items() if s != gone}, deps, order
    if "shorten" in change:
        step = known_step(durations, change["shorten"], "change['shorten']")
        seconds = change.get("seconds")
        if seconds is None or not 0 <= seconds <= durations[step]:
            raise ValueError(f"change['seconds'] must be in [0, {durations[step]}] for step {step!r}, got {seconds}")
        return {**durations, step: seconds}, deps, order
    pair = change["parallel"]
    if len(pair) != 2 or pair[0] == pair[1]:
        raise ValueError(f"change['parallel'] must name two different steps, got {pair!r}")
    a, b = (known_step(durations, step, "change['parallel']") for step in pair)
    if needs_output(deps, a, b) or needs_output(deps, b, a):
        raise ValueError(f"steps {a!r} and {b!r} cannot run in parallel: one needs the other's output")
    for step, other in ((a, b), (b, a)):
        if other in order.get(step, []):
            order[step].remove(other)
    return durations, deps, order


def what_if(durations, deps, change, order=None):
    """{"total", "saving", "path"} after one change, the saving measured against the unchanged task."""
    before, _ = critical_path(durations, deps, order)
    total, path = critical_path(*changed_task(durations, deps, order, change))
    return {"total": total, "saving": before - total, "path": path}


def first_output(durations, deps, visible, order=None):
    """When the first user-visible step ends (the earliest end among the steps in `visible`)."""
    times = schedule(durations, deps, order)
    if not visible:
        raise ValueError("visible must name at least one step")
    return min(times[known_step(durations, step, "visible")][1] for step in visible)


def measured_run(run, name):
    """(config, seconds) of one measured run; ValueError naming what is missing or negative."""
    if not isinstance(run, dict) or not isinstance(run.get("config"), dict):
        raise ValueError(f"{name} must be a dict with a 'config' dict")  # noqa: TRY004 - the contract's error
    seconds = run.get("seconds")
    if not seconds:
        raise ValueError(f"{name}['seconds'] must hold at least one measurement")
    if any(s < 0 for s in seconds):
        raise ValueError(f"{name}['seconds'] must all be >= 0, got {list(seconds)}")
    return run["config"], [float(s) for s in seconds]


def attribute(baseline, variant):
    """{"changed": the one setting that differs, "median_saving": median(baseline) - median(variant)}."""
    before, before_seconds = measured_run(baseline, "baseline")
    after, after_seconds = measured_run(variant, "variant")
    missing = object()
    changed = sorted(key for key in before.keys() | after.keys()
                     if before.get(key, missing) != after.get(key, missing))
    if len(changed) != 1:
        named = ", ".join(map(repr, changed)) if changed else "no setting"
        raise ValueError(f"exactly one config setting may change between baseline and variant; changed: {named}")
    return {"changed": changed[0],
            "median_saving": statistics.median(before_seconds) - statistics.median(after_seconds)}
