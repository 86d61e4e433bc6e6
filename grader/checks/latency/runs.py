"""Random measured runs for the hidden attribute checks: a baseline config and variants that change some settings.

Seconds are multiples of 1/8, so each median (the mean of two middle values at most) is exact in float64.
"""
import random

SETTINGS = {
    "model": ["small", "medium", "large"],
    "temperature": [0.0, 0.2, 0.7, 1.0],
    "top_p": [0.9, 0.95, 1.0],
    "prefix_cache": [False, True],
    "max_tokens": [256, 1024, 4096],
    "test_shards": [1, 2, 4, 8],
    "speculative": [False, True],
    "parallel_tools": [False, True],
    "tool_timeout": [10, 30, 60],
}


def random_config(r: random.Random) -> dict:
    """Three to seven settings with a value each."""
    keys = r.sample(sorted(SETTINGS), r.randint(3, 7))
    return {key: r.choice(SETTINGS[key]) for key in keys}


def changed_config(r: random.Random, config: dict, keys: list) -> dict:
    """`config` with each of `keys` changed: a new value, or the key added (when absent) or dropped."""
    changed = dict(config)
    for key in keys:
        if key not in changed:
            changed[key] = r.choice(SETTINGS[key])
        elif r.random() < 0.15:
            del changed[key]
        else:
            changed[key] = r.choice([v for v in SETTINGS[key] if v != config[key]])
    return changed


def random_seconds(r: random.Random, typical: float) -> list:
    """One to nine measurements around `typical` seconds, in eighths of a second."""
    return [round(r.uniform(0.9, 1.1) * typical * 8) / 8 for _ in range(r.randint(1, 9))]


def random_runs(r: random.Random, changes: int) -> tuple:
    """(baseline, variant, the changed keys) with `changes` settings changed between the two runs."""
    config = random_config(r)
    keys = r.sample(sorted(SETTINGS), changes)
    typical = r.uniform(5, 120)
    baseline = {"config": config, "seconds": random_seconds(r, typical)}
    variant = {"config": changed_config(r, config, keys), "seconds": random_seconds(r, typical * r.uniform(0.5, 1.2))}
    return baseline, variant, sorted(keys)
