"""Bug: running two steps in parallel drops every edge between them, even when one needs the other's output."""


def _parallel(deps, order, a, b):
    deps = {step: [s for s in before if {step, s} != {a, b}] for step, before in deps.items()}
    order = {step: [s for s in before if {step, s} != {a, b}] for step, before in order.items()}
    return deps, order
