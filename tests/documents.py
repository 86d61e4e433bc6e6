"""Results documents and progress records compared without what may differ between two runs that decide alike."""


def without(value, keys: tuple[str, ...]):
    """`value` (a document, a record) with every entry named in `keys` left out, at any depth; tuples as lists."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, (list, tuple)):
        return [without(v, keys) for v in value]
    return value
