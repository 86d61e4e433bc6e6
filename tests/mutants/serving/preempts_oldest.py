"""Bug: recompute preemption evicts the running request admitted first, not the one admitted last."""


def _victim(running):
    return running[0]
