"""Replies larger than their check accepts are refused from their length, before the grader reads, decodes or
converts a byte of them: the grader's memory stays low and each check fails naming the reply's size and the budget.

Before the budget, speculative_generate returning a 48 Mi-element int8 tensor took the grader to 3.2 GiB and 66 s.
"""
import json
import re
import struct
import subprocess
import sys

import pytest
import torch

from grader.sandbox import codec
from grader.sandbox.policy import REPO
from grader.sandbox.connection import REPLY_BYTES

# function of speculative.py -> the expression it returns instead of its answer
ATTACKS = {
    "speculative_generate": "(torch.zeros(48 * 2**20, dtype=torch.int8), {})",  # the attack
    "verify": "'x' * 2**25",  # a huge string
    # a few MiB only, in functions few checks call: the child encodes them slowly on a loaded machine, within the
    # call's timeout
    "expected_speedup": "list(range(3 * 2**16))",  # a huge list
    "acceptance_rate": "{str(i): {'v': ['y' * 64]} for i in range(2**15)}",  # nested dicts
}
GRADE = """
import json, resource, sys
from pathlib import Path
from grader.grading import grade
doc = grade(Path(sys.argv[1]), ["speculative"], hidden=False, seed=0, with_progress=False, deadline_s=900)
print(json.dumps({"peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "checks": [c for t in doc["topics"] for c in t["checks"]]}))
"""
PEAK_BYTES = 2**30  # the grader alone (torch, pytest, the checks) stays near 0.5 GiB


def test_oversized_replies_are_refused_before_they_are_read(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    source = (REPO / "solutions" / "speculative.py").read_text()
    for function, value in ATTACKS.items():
        source += f"\n\ndef {function}(*args, **kwargs):\n    return {value}\n"
    (folder / "speculative.py").write_text(source)
    done = subprocess.run([sys.executable, "-c", GRADE, str(folder)], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["peak_bytes"] < PEAK_BYTES, f"the grader peaked at {report['peak_bytes'] / 2**20:.0f} MiB"
    for function, value in ATTACKS.items():
        size = len(codec.encode(("ok", eval(value, {"torch": torch}))))  # what the child sends back
        assert size > REPLY_BYTES
        refused = [c for c in report["checks"] if re.search(rf"^{function}\(.* sent back a reply of {size} bytes "
                                                           rf".*the {REPLY_BYTES} bytes", c["message"])]
        assert refused, f"no check refused the {size}-byte reply of {function}"
        assert all(c["status"] == "failed" and c["score"] == 0 and not c["internal_error"] for c in refused)


def colliding_keys_frame(n: int) -> bytes:
    """A reply whose dict has `n` int keys of one hash (multiples of 2**61 - 1 all hash to 0): built as a Python
    dict it costs n**2 / 2 comparisons; the frame stays under the reply budget."""
    tree = ["d", [[["i", str(i * (2**61 - 1))], ["v", None]] for i in range(1, n + 1)]]
    raw = json.dumps(tree, separators=(",", ":")).encode()
    return struct.pack("<I", len(raw)) + raw + struct.pack("<I", 0)


def test_a_dict_of_colliding_keys_is_refused_not_built():
    """Decoding runs in the grader, outside every call's timeout: 10,000 such keys took 2.4 s, the 45,000 a 2 MiB
    reply holds about a minute per frame."""
    frame = colliding_keys_frame(45_000)
    assert len(frame) <= REPLY_BYTES
    with pytest.raises(codec.DecodeError):
        codec.decode(frame)
    few = codec.decode(colliding_keys_frame(3))  # a few keys of one hash are a dict (hash(-1) == hash(-2))
    assert sorted(few) == [i * (2**61 - 1) for i in (1, 2, 3)]
