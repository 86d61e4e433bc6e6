"""Bug: accepts a draft token when u < q(x) / p(x), the acceptance ratio upside down."""


def _accepted_prefix(x, q, p, u):
    rows = torch.arange(x.shape[0])
    q_x, p_x = q[rows, x].double(), p[rows, x].double()
    accept = (q_x > 0) & (u.double() < q_x / p_x)
    return int(accept.long().cumprod(0).sum())
