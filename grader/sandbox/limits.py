"""Per-process limits of the child (address space, file size, core dumps, CPU time) and reading sizes from /proc."""
from __future__ import annotations

import os
import resource

OPEN_FILES = 256
PROCESSES = 256
GRADER_DATA_BYTES = 6 * 2**30  # the grader's own heap: about 0.3 GiB used; decoding caps keep replies far below
# CPU time a check's process may use, its threads together: twice a topic's default share of the run's deadline
# (pool.DEADLINE_PER_TOPIC) on one CPU, where checks compute on one thread; SIGXCPU there, SIGKILL 5 s later
CPU_SECONDS = 120
NICE = 10  # a check's priority where it has no cpu cgroup of its own: below the grader's, whose timing it would skew


def status_bytes(pid: int | str, field: str) -> int | None:
    """A size from /proc/PID/status (`VmSize`: virtual size, `VmHWM`: peak resident); None where unknown."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def apply_rlimits(memory_bytes: int | None, output_bytes: int) -> dict:
    """Cap address space `memory_bytes` above the current size (None: no cap), output file size, core dumps."""
    limits = {}
    try:
        if memory_bytes is not None:
            cap = (status_bytes("self", "VmSize") or 0) + memory_bytes
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            limits["address_space_headroom_bytes"] = memory_bytes  # the setting; the cap itself varies by run
    except (OSError, ValueError):
        pass
    resource.setrlimit(resource.RLIMIT_FSIZE, (output_bytes, output_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    limits["open_files"] = OPEN_FILES
    if os.getuid() != 0:  # counted per user (and user namespace); root is not bound by it
        resource.setrlimit(resource.RLIMIT_NPROC, (PROCESSES, PROCESSES))
        limits["processes"] = PROCESSES
    limits["output_bytes"] = output_bytes
    return limits


def share_cpu(own_cgroup: bool) -> dict:
    """Cap the CPU time of the check's process (CPU_SECONDS); where it has no cpu cgroup of its own (cgroup.py) and
    the kernel does not group its sandbox's threads by session either (autogroup), lower its priority (NICE), so
    that its threads do not starve the grader's processes; what of these held."""
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))
    report = {"cpu_seconds": CPU_SECONDS, "autogroup": _autogroup()}
    if own_cgroup or report["autogroup"]:
        return report
    nice = max(NICE, os.getpriority(os.PRIO_PROCESS, 0))  # never above the grader's own (no privilege for it)
    os.setpriority(os.PRIO_PROCESS, 0, nice)
    return {**report, "nice": nice}


def _autogroup() -> bool:
    """Whether the kernel schedules each session's threads as one group (each sandbox is a session of its own)."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def cap_grader_memory() -> None:
    """Cap the grader's own data (heap and private mappings): a reply or a check gone wrong ends in a MemoryError,
    reported as a grader error in the results, never in the host running out of memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = GRADER_DATA_BYTES if hard == resource.RLIM_INFINITY else min(GRADER_DATA_BYTES, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
