"""Sandbox v2, red team: the grader's environment and command line are not in the child's memory either.

/proc/PID/environ and cmdline are covered elsewhere; here the submission reads its own memory (every anonymous
and heap mapping, through ctypes, no /proc/self/mem needed) for the bait: a secret in the grader's environment
and the name of its --out file. The needles are built at run time so that the probe's source never holds them.
"""
import os
import sys
import uuid

import pytest

from grader.sandbox.policy import REPO

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

SCANNER = (REPO / "solutions" / "sampling.py").read_text() + '''

def greedy(logits):
    import ctypes, re
    prefixes = [b"hunter" + b"3-bait-", b"secret" + b"-out-", b"--" + b"seed"]
    hits = set()
    for line in open("/proc/self/maps"):
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        if "r" not in parts[1] or (len(parts) > 5 and parts[5].startswith(("/", "[v"))):
            continue
        try:
            data = ctypes.string_at(lo, hi - lo)
        except Exception:
            continue
        for p in prefixes:
            for m in re.finditer(re.escape(p) + rb"[0-9a-f]{8}", data):
                hits.add(m.group(0).decode())
    raise ValueError("SCANNED " + " ".join(sorted(hits))[:1500])
'''


@linux_only
def test_the_graders_secrets_are_not_in_the_childs_memory(tmp_path, sampling_command_messages):
    token = uuid.uuid4().hex
    out = tmp_path / f"secret-out-{token}.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "INFERGRADE_BAIT_SECRET": f"hunter3-bait-{token}"}
    found = sampling_command_messages(SCANNER, "97531", out, env, "SCANNED")
    assert not any(token[:8] in m for m in found)
