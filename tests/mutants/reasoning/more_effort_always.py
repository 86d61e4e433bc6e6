"""Bug: when no effort level reaches the target, the most expensive level is chosen instead of None."""
_solution_pick = pick_effort


def pick_effort(results, min_accuracy):
    choice = _solution_pick(results, min_accuracy)
    if choice is None:
        return max(results, key=lambda level: sum(r["tokens"] for r in results[level]))
    return choice
