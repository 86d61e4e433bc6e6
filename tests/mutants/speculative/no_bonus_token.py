"""Bug: when every draft token is accepted, returns only the drafts and forgets the bonus token from p[g]."""


def verify(draft_tokens, q, p, u, noise):
    x = _draft_tensor(draft_tokens, q, p, u, noise)
    n = _accepted_prefix(x, q, p, u)
    if n == x.shape[0]:
        return x.tolist()
    return x[:n].tolist() + [_race(_residual(p[n], q[n]), noise)]
