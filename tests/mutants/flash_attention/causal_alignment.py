"""Bug: top-left causal alignment (query i sees keys j <= i), wrong whenever Tq < Tk."""


def _causal_mask(rows, cols, tq, tk):
    """[len(rows), len(cols)] bool: query i may see key j."""
    return cols[None, :] <= rows[:, None]
