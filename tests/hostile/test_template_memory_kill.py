"""One sandbox per topic (template.py), red team: a check that passes its topic's memory cgroup is told so, whatever
process the kernel picks.

Under cgroup v1 there is no memory.oom.group: PID 1 of the sandbox offers itself first to the OOM killer
(cgroup.offer_first, oom_score_adj 1000), so that its death ends the whole namespace. The template PID 1 offers
itself before it forks the checks, and each check's process inherited the 1000: the kernel then kills the largest
process of the cgroup, the check's, and PID 1 lives on. The check was reported as "killed (SIGKILL), most likely for
running out of memory" (a crash) with no memory kill recorded, and a check whose worker the kernel killed waited on
it until its timeout (tests/hostile/test_watchdog_under_load.py). Skipped where no memory cgroup can be made.
"""
import sys

import pytest

from grader.sandbox.failures import ChildFailure

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

GIB = 2**30
PROBES = '''
import numpy as np

def ping():
    return True

def fill(tmp_mib, gib):
    """Write `tmp_mib` MiB of files in /tmp (counted by the cgroup, in no process's resident size), then hold `gib`
    GiB in this process, every page written."""
    for i in range(tmp_mib):
        with open(f"/tmp/ballast-{i}", "wb") as f:
            f.write(b"x" * (2**20 - 1))  # files stay below the 1 MiB file size limit
    block = np.ones(int(gib * 2**30), dtype=np.uint8)
    return int(block[::4096].sum())
'''


def test_a_check_past_its_topics_memory_cgroup_is_told_it_passed_the_cap(topic_checks_of):
    topic_checks = topic_checks_of(PROBES, GIB // 2)
    first = topic_checks()
    assert first.ping() is True
    if first.isolation.get("memory_cgroup") is None:
        pytest.skip("no memory cgroup can be made here (not root, or no writable memory controller)")
    assert first.isolation["template"], "the check must run in its topic's sandbox"
    with pytest.raises(ChildFailure, match=r"together held more than [\d.]+ GiB of memory"):
        # 0.2 GiB of files and 0.4 GiB resident: past the cgroup's 0.5 GiB, below the address space limit and the
        # watchdog's cap (its first sample + 0.5 GiB of resident memory): the kernel alone ends it
        first.fill(200, 0.4)
    assert first._child.killed_for_memory
    first.close()
    second = topic_checks()  # the topic's next check runs, in a new sandbox
    assert second.ping() is True and second.isolation["template"]
    assert second._child.sandbox is not first._child.sandbox
    second.close()
