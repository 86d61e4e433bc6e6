"""Bug: when the running max grows, the sum and output accumulated under the old max are not rescaled."""


def _online_softmax_step(s, vb, m, l, acc):
    """Fold one score tile into the running max, sum and output."""
    m_new = torch.maximum(m, s.amax(dim=-1))
    p = torch.exp(s - m_new[..., None])
    return m_new, l + p.sum(dim=-1), acc + p @ vb
