"""Hostile submission: lists the grader's checkout. In the README's layout (`python3 -m venv .venv` inside the
checkout) the private root made the checkout's folder to bind the venv below it, and a child could list it and its
parents (seeing `.venv` and the folders above); only Landlock, where the kernel has it, stopped that. The root's
own folders on the way to what is bound can be passed through but not listed."""
import os
import sys

import pytest

from grader.sandbox.policy import REPO
from grader.sandbox.zygote import Zygote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the private root is Linux's")

PROBES = '''
import os, sys

def listings(paths):
    """What each folder lists, or the name of the error that stopped it."""
    out = {}
    for path in paths:
        try:
            out[path] = sorted(os.listdir(path))
        except OSError as exc:
            out[path] = type(exc).__name__
    return out

def prefix():
    return sys.prefix
'''


def folders_above(path: str) -> list[str]:
    """`path`'s parent folders, nearest first, without the root."""
    out = []
    while (path := os.path.dirname(path)) not in ("/", ""):
        out.append(path)
    return out


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "no-landlock"])
def test_a_child_lists_nothing_of_the_checkout_or_the_folders_above_the_venv(open_folder, sandboxed, landlock):
    refused = Zygote(prelude="" if landlock else  # as on a kernel without Landlock
                     "from grader.sandbox import landlock\nlandlock.restrict_filesystem = lambda *a, **k: 0\n")
    try:
        sub = sandboxed(PROBES, folder=open_folder, zygote_=refused)
        prefix = sub.prefix()
        if not sub.isolation.get("private_root"):
            pytest.skip("the kernel refused a private root here")
        if landlock and not sub.isolation["landlock_abi"]:
            pytest.skip("the kernel has no Landlock here")
        assert landlock or sub.isolation["landlock_abi"] == 0  # the refusal took
        seen = sub.listings([str(REPO), *folders_above(prefix)])
        sub.close()
    finally:
        refused.close()
    listed = {path: names for path, names in seen.items() if isinstance(names, list)}
    assert listed == {}, listed
