"""Bug: caches every token of the sequence even in layers that only keep the last sliding_window tokens."""


def _sliding_layers(config: dict) -> int:
    return 0
