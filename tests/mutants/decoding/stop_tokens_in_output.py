"""Bug: generation ends at a stop sequence, but the stop sequence's tokens stay in the output."""


def _drop_stop(new, length):
    return new
