"""Bug: when several settings changed, the whole saving is credited to the first of them."""


def _changed_setting(before, after):
    changed = sorted(k for k in before.keys() | after.keys() if k not in before or k not in after
                     or before[k] != after[k])
    if not changed:
        raise ValueError("no config setting changed between baseline and variant")
    return changed[0]
