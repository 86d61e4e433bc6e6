"""Bug: every arrived request is admitted at once; max_num_seqs never limits the batch."""


def _seats(running, policy, max_num_seqs):
    if policy == "static" and running:
        return 0
    return 10 ** 6
