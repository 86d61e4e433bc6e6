"""Objects the grader builds inside the sandboxed child (seeded generators, state readers, pure toy models).

The sandbox imports this package before it forks, so a child never reads grader files from disk.
"""
import torch

from grader.toys import bigram, logits, paged_kv  # noqa: F401


def generator(seed: int) -> torch.Generator:
    """A CPU torch.Generator seeded with `seed`."""
    return torch.Generator().manual_seed(seed)
