"""Bug: finished beams are scored and ranked by their summed log-probability, never divided by their length."""


def _beam_score(total_logp, length, length_penalty):
    return total_logp
