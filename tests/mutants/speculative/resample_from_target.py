"""Bug: after a rejection, draws the replacement token from the target's p instead of the residual max(0, p - q)."""


def _residual(p_i, q_i):
    return p_i.double()
