"""Bug: accepts a draft token whenever the target gives it at least the draft's probability, ignoring u."""


def _accepted_prefix(x, q, p, u):
    rows = torch.arange(x.shape[0])
    q_x, p_x = q[rows, x].double(), p[rows, x].double()
    accept = (q_x > 0) & (p_x >= q_x)
    return int(accept.long().cumprod(0).sum())
