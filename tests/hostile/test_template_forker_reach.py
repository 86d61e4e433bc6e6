"""One sandbox per topic (template.py), red team: a check cannot slow or stop the forker, nor PID 1, for the checks
after it.

The forker left the real-time class and shares the checks' cpu cgroup (forker.py): a check that lowered its priority
(nice 19, SCHED_IDLE, one CPU, the idle I/O class) would slow the start of every later check, which inherits them
too. Where the grader is not root, a check has PID 1's and the forker's uid, which the kernel's own test for these
calls accepts; they are refused because both keep capabilities the check has not (the kernel lets no process
reschedule one with more capabilities than its own). Signals are another matter: on a kernel whose Landlock cannot
scope them (ABI below 6: Linux before 6.12, most distributions' kernels today), such a check may stop or kill the
forker. A stopped forker is continued with the check's end (watchdog.kill_others), before the next check is forked;
a killed one ends the sandbox at the next fork, and that check gets a chain of its own (pool.ChildPool).
"""
import sys

import pytest

from tests.hostile.conftest import ONE_UID

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace walls are Linux's")

FORKER = 2  # PID 1 forks it first, with the namespace's pid counter set back to 1 (template._restart_pids)

PROBES = '''
import ctypes, os, signal, time

libc = ctypes.CDLL(None, use_errno=True)
IOPRIO_SET = {"x86_64": 251, "aarch64": 30}[os.uname().machine]

def _ioprio_idle(pid):
    if libc.syscall(IOPRIO_SET, 1, pid, 3 << 13) != 0:  # IOPRIO_WHO_PROCESS, the idle class
        raise OSError(ctypes.get_errno(), "ioprio_set")

def demote(pid):
    """Lower `pid`'s scheduling every way a process may lower another's; the ways the kernel let through."""
    calls = {"nice": lambda: os.setpriority(os.PRIO_PROCESS, pid, 19),
             "idle": lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)),
             "one cpu": lambda: os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))}),
             "idle io": lambda: _ioprio_idle(pid)}
    done = []
    for name, call in calls.items():
        try:
            call()
            done.append(name)
        except OSError:
            pass
    return done

def demote_own_child():
    """The same on a child of this check (the probe's control: each way works where the kernel allows it)."""
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    try:
        return demote(child)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)

def signal_forker(number):
    """Send the forker (pid %(forker)d) signal `number`; whether the kernel let it through."""
    assert os.getpid() != %(forker)d, "this check's process is not the forker"
    try:
        os.kill(%(forker)d, number)
        return True
    except OSError:
        return False

def ping():
    return os.getuid()
''' % {"forker": FORKER}

# Landlock as a kernel before 6.12 has it: no scope for signals (ABI 5)
UNSCOPED = ("from grader.sandbox import landlock\n"
            "_abi = landlock.landlock_abi\n"
            "landlock.landlock_abi = lambda: min(_abi(), 5)\n")


@pytest.mark.parametrize("prelude", ["", ONE_UID], ids=["two-uids", "one-uid"])
def test_a_check_cannot_lower_the_scheduling_of_pid_1_or_the_forker(topic_checks_of, prelude):
    check = topic_checks_of(PROBES, prelude=prelude)()
    assert check.ping() == (0 if prelude else 65534) and check.isolation["template"]
    assert check.demote_own_child() == ["nice", "idle", "one cpu", "idle io"]  # the probe can do what it tries
    assert check.demote(1) == []
    assert check.demote(FORKER) == []
    check.close()


def test_a_forker_stopped_by_a_check_forks_the_next_check(topic_checks_of):
    next_check = topic_checks_of(PROBES, one_uid=True, prelude=UNSCOPED)
    first = next_check()
    assert first.ping() == 0 and first.isolation["template"] and first.isolation["landlock_abi"] <= 5
    assert first.signal_forker(19), "the check could not stop the forker: the test would prove nothing"  # SIGSTOP
    first.close()
    second = next_check()
    assert second.ping() == 0
    assert second._child.sandbox is first._child.sandbox  # the same template: its forker forked this check
    second.close()


def test_a_forker_killed_by_a_check_leaves_the_next_check_a_child_of_its_own(topic_checks_of):
    next_check = topic_checks_of(PROBES, one_uid=True, prelude=UNSCOPED)
    first = next_check()
    assert first.ping() == 0 and first.isolation["template"]
    assert first.signal_forker(9), "the check could not kill the forker: the test would prove nothing"  # SIGKILL
    first.close()
    for _ in range(2):
        later = next_check()
        assert later.ping() == 0
        assert not later.isolation.get("template")  # a chain of its own: the sandbox ended at the failed fork
        later.close()
