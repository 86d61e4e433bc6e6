"""The warm checking process a notebook kernel talks to: one JSON request a line on stdin, one results line out.

A kernel never forks the sandbox's zygote itself (it runs threads); it starts this process once and keeps it.
"""
from __future__ import annotations

import json
import os
import sys

from grader.sandbox.zygote import shared

PROTOCOL = os.fdopen(os.dup(1), "w")  # the replies; anything else printed goes to stderr
os.dup2(2, 1)
shared()  # the warm zygote's interpreter imports torch while this one does

import torch  # noqa: E402
from pathlib import Path  # noqa: E402

from grader import language  # noqa: E402
from grader.sandbox import limits  # noqa: E402
from grader.learner.select_checks import check_units  # noqa: E402


def main() -> None:
    language.choose(sys.argv[1] if len(sys.argv) > 1 else None)  # the notebook's language, else the environment's
    torch.set_num_threads(1)
    limits.cap_grader_memory()
    for line in sys.stdin:  # until the kernel goes (end of input)
        request = json.loads(line)
        units = set(request["units"]) if request["units"] is not None else None
        doc = check_units(Path(request["folder"]), request["topic"], units)
        PROTOCOL.write(json.dumps(doc) + "\n")
        PROTOCOL.flush()


if __name__ == "__main__":
    main()
