"""Red team: where the grader is not root, the submission's process has the uid of the sandbox's PID 1 (one uid is
mapped) and no capabilities, which is all `prlimit64` asks to change another process's limits: a check lowered
PID 1's open-file limit to 16, and PID 1 (the watchdog, or a topic's template) could no longer work. The seccomp
filter now allows prlimit64 on the calling process only (pid 0, as glibc's setrlimit and getrlimit pass it)."""
import os
import resource
import sys

import pytest

from grader.sandbox import seccomp

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="seccomp is Linux's")


def in_filtered_child(probe) -> int:
    """Run `probe` in a forked process behind the filter; its exit code."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = 98 if not seccomp.install() else probe()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_process_behind_the_filter_cannot_change_another_process_limits():
    parent = os.getpid()

    def lower_the_parents_limit() -> int:
        try:
            resource.prlimit(parent, resource.RLIMIT_NOFILE, (16, 16))
        except PermissionError:
            return 0
        return 1

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    code = in_filtered_child(lower_the_parents_limit)
    if code == 98:
        pytest.skip("this kernel refuses seccomp filters")
    assert code == 0 and resource.getrlimit(resource.RLIMIT_NOFILE) == before


def test_its_own_limits_still_change():
    def lower_its_own() -> int:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(64, hard), hard))
        resource.prlimit(0, resource.RLIMIT_STACK)
        return 0 if resource.getrlimit(resource.RLIMIT_NOFILE)[0] == min(64, hard) else 1

    code = in_filtered_child(lower_its_own)
    if code == 98:
        pytest.skip("this kernel refuses seccomp filters")
    assert code == 0
