"""Model answer for the latency topic: schedule an agent task's steps, find its critical path, try one change at a
time, time the first visible output, and attribute a measured saving to the one setting that changed."""
import statistics

TOLERANCE = 1e-9  # the contract's relative tolerance: sums of exact decimals that tie mathematically are ties


def _waits(durations, deps, order):
    """{step: the steps it waits for, needed or merely ordered}; ValueError naming a step without a duration."""
    for step, seconds in durations.items():
        if seconds < 0:
            raise ValueError(f"durations[{step!r}] must be >= 0, got {seconds}")
    waits = {step: set() for step in durations}
    for name, edges in (("deps", deps), ("order", order or {})):
        for step, before in edges.items():
            for named in (step, *before):
                if named not in durations:
                    raise ValueError(f"{name} names step {named!r}, which has no duration")
            waits[step].update(before)
    return waits


def _topological_order(waits):
    """Steps with every step they wait for first (depth-first); ValueError naming a step on a cycle."""
    ordered, state = [], {}  # state: "open" while a step's waits are being visited, "done" after
    for root in waits:
        stack = [(root, iter(sorted(waits[root])))] if root not in state else []
        state.setdefault(root, "open")
        while stack:
            step, pending = stack[-1]
            before = next(pending, None)
            if before is None:
                stack.pop()
                state[step] = "done"
                ordered.append(step)
            elif state.get(before) == "open":
                raise ValueError(f"step {before!r} waits for itself through a cycle of steps")
            elif before not in state:
                state[before] = "open"
                stack.append((before, iter(sorted(waits[before]))))
    return ordered


def schedule(durations, deps, order=None):
    """Each step's earliest (start, end): a step starts when everything it waits for has ended."""
    waits = _waits(durations, deps, order)
    times = {}
    for step in _topological_order(waits):
        start = max((times[before][1] for before in waits[step]), default=0.0)
        times[step] = (start, start + durations[step])
    return {step: times[step] for step in durations}


def _close(a, b):
    """Equal within the contract's relative tolerance."""
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b))


def critical_path(durations, deps, order=None):
    """(end of the last step, the lexicographically smallest longest chain from a start to a final step)."""
    times = schedule(durations, deps, order)
    total = max((end for _, end in times.values()), default=0.0)
    waits = _waits(durations, deps, order)
    followers = {step: [] for step in durations}
    for step, before in waits.items():
        for b in before:
            followers[b].append(step)
    # longest[s] / best[s]: the longest duration from s to a final step, and the smallest chain that takes it
    longest, best = {}, {}
    for step in reversed(_topological_order(waits)):
        longest[step] = durations[step] + max((longest[f] for f in followers[step]), default=0.0)
        rest = [best[f] for f in followers[step] if _close(durations[step] + longest[f], longest[step])]
        best[step] = [step] + min(rest, default=[])
    chains = [best[step] for step in durations if not waits[step] and _close(longest[step], total)]
    return total, min(chains, default=[])


def _needs(deps, step, other):
    """Whether `step` needs `other`'s output, directly or through other steps' outputs."""
    seen, frontier = set(), [step]
    while frontier:
        for needed in deps.get(frontier.pop(), []):
            if needed == other:
                return True
            if needed not in seen:
                seen.add(needed)
                frontier.append(needed)
    return False


def _known(durations, step, what):
    """`step` when it has a duration, else ValueError naming it."""
    if step not in durations:
        raise ValueError(f"{what} names step {step!r}, which has no duration")
    return step


def _remove(durations, deps, order, gone):
    """The task without `gone`: whoever waited for it now waits for what it waited for."""
    durations = {s: d for s, d in durations.items() if s != gone}
    new_deps, new_order = {}, {}
    for step in durations:
        needed, awaited = list(deps.get(step, [])), list(order.get(step, []))
        if gone in needed:
            needed = [s for s in needed if s != gone] + list(deps.get(gone, []))
            awaited += order.get(gone, [])
        if gone in awaited:
            awaited = [s for s in awaited if s != gone] + list(deps.get(gone, [])) + list(order.get(gone, []))
        new_deps[step], new_order[step] = needed, awaited
    return durations, new_deps, new_order


def _parallel(deps, order, a, b):
    """The edges with any order edge between a and b dropped; ValueError when one needs the other's output."""
    if _needs(deps, a, b) or _needs(deps, b, a):
        raise ValueError(f"{a!r} and {b!r} cannot run in parallel: one needs the other's output")
    order = {step: [s for s in before if {step, s} != {a, b}] for step, before in order.items()}
    return deps, order


def _apply(durations, deps, order, change):
    """(durations, deps, order) after one change; ValueError naming a bad change."""
    kinds = [kind for kind in ("remove", "shorten", "parallel") if kind in change]
    if len(kinds) != 1:
        raise ValueError(f"change must have exactly one of 'remove', 'shorten', 'parallel', got {change!r}")
    if kinds == ["remove"]:
        return _remove(durations, deps, order, _known(durations, change["remove"], "change['remove']"))
    if kinds == ["shorten"]:
        step = _known(durations, change["shorten"], "change['shorten']")
        seconds = change.get("seconds")
        if seconds is None or not 0 <= seconds <= durations[step]:
            raise ValueError(f"change['seconds'] must be between 0 and {durations[step]}, got {seconds}")
        return {**durations, step: seconds}, deps, order
    pair = list(change["parallel"])
    if len(pair) != 2 or pair[0] == pair[1]:
        raise ValueError(f"change['parallel'] must name two different steps, got {pair!r}")
    a, b = (_known(durations, step, "change['parallel']") for step in pair)
    return (durations, *_parallel(deps, order, a, b))


def what_if(durations, deps, change, order=None):
    """The total, the saving against the unchanged task, and the critical path after one change."""
    old_total, _ = critical_path(durations, deps, order)
    total, path = critical_path(*_apply(durations, deps, order or {}, change))
    return {"total": total, "saving": old_total - total, "path": path}


def first_output(durations, deps, visible, order=None):
    """When the first step the user can see ends: not when the whole task ends."""
    times = schedule(durations, deps, order)
    if len(visible) == 0:
        raise ValueError("visible must name at least one step")
    return min(times[_known(durations, step, "visible")][1] for step in visible)


def _seconds(run, name):
    """The measured seconds of a run; ValueError naming an empty or negative list."""
    seconds = run["seconds"]
    if len(seconds) == 0 or min(seconds) < 0:
        raise ValueError(f"{name}['seconds'] must be a non-empty list of seconds >= 0, got {seconds!r}")
    return seconds


def _changed_setting(before, after):
    """The one config key whose value differs; ValueError naming the keys when more than one, or none, differ."""
    changed = sorted(k for k in before.keys() | after.keys() if k not in before or k not in after
                     or before[k] != after[k])
    if len(changed) != 1:
        raise ValueError(f"change one setting at a time: {len(changed)} config keys differ {changed}")
    return changed[0]


def attribute(baseline, variant):
    """The setting that changed and the median time it saved (positive: the variant is faster)."""
    baseline_seconds, variant_seconds = _seconds(baseline, "baseline"), _seconds(variant, "variant")
    key = _changed_setting(baseline["config"], variant["config"])
    saving = statistics.median(baseline_seconds) - statistics.median(variant_seconds)
    return {"changed": key, "median_saving": float(saving)}
