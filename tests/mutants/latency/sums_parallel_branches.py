"""Bug: the steps run one after another, so the task takes the sum of every duration, parallel branches added up."""


def schedule(durations, deps, order=None):
    clock, times = 0.0, {}
    for step in _topological_order(_waits(durations, deps, order)):
        times[step] = (clock, clock + durations[step])
        clock += durations[step]
    return {step: times[step] for step in durations}
