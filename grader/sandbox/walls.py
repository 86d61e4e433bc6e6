"""The walls around a submission, applied in order, each reporting what it reached (the results record it).

    child's first process (host namespaces: writes the id maps, reports how the submission ended)
      -> unsharer (new user, mount, PID, network, IPC and UTS namespaces)
        -> PID 1 of the new PID namespace, in a process group of its own (builds the private root, then watches
           every process of the namespace against summed caps: watchdog.py; our code only; its death ends them all;
           in the real-time class where the grader is root, so that no load on the host starves it)
          -> the submission's process: unprivileged uid, then Landlock, rlimits and seccomp

Every step is best effort: where the kernel refuses one, the child goes on behind the others and says so.

One sandbox per topic: where all of them are reached, this chain is built once per topic (`as_template`) and PID 1
forks the submission's process anew for each check, clearing the namespace between checks; template.py says what
that changes at the trust boundary. Where a wall the template needs is refused, each check gets a chain of its own.
"""
from __future__ import annotations

import os
import signal
import struct

from grader.sandbox import (cgroup, environment, landlock, limits, mounts, namespaces, procfs, seccomp, template,
                            watchdog)

STATUS = struct.Struct("<q")


def enter(sock, output_fd: int, watch_fd: int, config: dict, use_namespaces: bool, as_template: bool = False) -> dict:
    """Called in the child's first process; returns only in the submission's process, with the report so far.

    `watch_fd` is the watchdog's shared page (see watchdog.py): only PID 1 keeps it. In every process above the
    submission's this function ends with `os._exit`, mirroring how it ended. `as_template`: PID 1 becomes the
    topic's template (template.py) and this never returns; where a wall it needs is refused, it says so on `sock`.
    """
    if as_template and not use_namespaces:
        template.refuse(sock, "namespaces are off")
    if not use_namespaces:
        os.close(watch_fd)
        cgroup.join(config.get("cpu_procs"))
        if os.getuid() == 0:
            namespaces.become(namespaces.NOBODY)
        return {**namespaces.NONE, "private_root": False, "watchdog": False, "host_uid": os.getuid()}
    # The processes above the submission's ignore SIGHUP: a submission that leaves a process group of this session
    # orphaned with a stopped member makes the kernel send SIGHUP to the whole group, with no permission check.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    namespaces.take_realtime()  # for PID 1, the watchdog; the submission's process leaves it
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    status_r, status_w = os.pipe()
    unsharer = os.fork()
    if unsharer:
        for fd in (ready_w, go_r, status_w, output_fd, watch_fd):
            os.close(fd)
        sock.close()
        _map_ids(unsharer, ready_r, go_w)
        reported = os.read(status_r, STATUS.size)
        if len(reported) == STATUS.size:  # mirrored now, not after the namespaces are torn down (seconds on a
            _mirror(STATUS.unpack(reported)[0])  # loaded host); the zygote ends the rest of the process group
        _, status = os.waitpid(unsharer, 0)
        _mirror(status)
    for fd in (ready_r, go_w, status_r):
        os.close(fd)
    namespaces.die_with_parent()
    reached = namespaces.unshare_all()
    os.write(ready_w, b"1" if reached["user_namespace"] else b"0")
    os.close(ready_w)
    answer = os.read(go_r, 16).decode()
    os.close(go_r)
    if as_template and not (reached["user_namespace"] and answer.isdigit()):
        template.refuse(sock, "the kernel refused a user namespace or its id maps")
    if not reached["user_namespace"]:
        os.close(status_w)  # this process is the submission's: its status reaches the first one by waitpid
        os.close(watch_fd)
        namespaces.leave_realtime()
        cgroup.join(config.get("cpu_procs"))
        if os.getuid() == 0:  # never root towards the host, walls or not
            namespaces.become(namespaces.NOBODY)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        return {**reached, "private_root": False, "watchdog": False, "host_uid": os.getuid()}
    if not answer.isdigit():
        os.write(output_fd, b"\ninfergrade: the grader could not write the sandbox's id maps\n")
        os._exit(70)  # in a user namespace without id maps the host would still see the grader's uid: refuse
    uid = int(answer) or None
    init = os.fork()
    if init:
        sock.close()
        for fd in (output_fd, status_w, watch_fd):
            os.close(fd)
        os.waitpid(init, 0)
        os._exit(0)
    if as_template:
        template.serve_checks(sock, status_w, watch_fd, output_fd, config, uid, reached)
    return {**reached, **_namespace_init(sock, status_w, watch_fd, config, uid)}


def _map_ids(unsharer: int, ready_r: int, go_w: int) -> None:
    """Wait until the unsharer is in its namespaces, write its id maps, and tell it which uid to take."""
    answer = b"-"
    if os.read(ready_r, 1) == b"1":
        try:
            uid = namespaces.write_maps(unsharer, os.getuid(), os.getgid())
            answer = str(uid).encode() if uid is not None else b"0"
        except OSError:
            answer = b"-"
    os.close(ready_r)
    os.write(go_w, answer)
    os.close(go_w)


def _namespace_init(sock, status_w: int, watch_fd: int, config: dict, uid: int | None) -> dict:
    """As PID 1: build the private root, fork the submission's process and return in it; here, reap all (and,
    with the private root's own /proc, watch all), report the submission's status, and exit."""
    namespaces.die_with_parent()
    # A process group of its own for the namespace: no submission process shares the first process's group, so
    # none can leave that group orphaned with a stopped member, which makes the kernel send it SIGHUP. This group
    # is never orphaned: PID 1's parent is in another group of the same session.
    os.setpgid(0, 0)
    root = os.path.join(config["tmpdir"], "root")
    try:
        os.makedirs(root, exist_ok=True)
        mounts.build_root(root, config["bound_read_only"], config["devices"], config["submission_dir"],
                          config["tmp_bytes"], config["tmp_files"], config["hidden"])
        view = procfs.private_view(mounts.HELD)  # the root's /proc shows PID 1 none of a process made undumpable
        watchdog.PROC = f"/proc/self/fd/{view}"
        private_root = True
    except OSError:
        private_root, view = False, None
    inner = os.fork()
    if inner == 0:
        os.close(status_w)
        os.close(watch_fd)
        if view is not None:
            os.close(view)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        realtime = namespaces.leave_realtime()  # PID 1 keeps it
        cgroup.join(config.get("cpu_procs"))  # PID 1 stays out: its share is the real-time class, where root
        if uid:  # never root towards the host, even where the private root could not be built
            namespaces.become(uid)
        namespaces.drop_capabilities()  # where the grader is not root: uid 0 here, but with no power over the root
        namespaces.let_init_read()  # after both: a process that loses capabilities stops being dumpable
        return {"private_root": private_root, "watchdog": private_root, "host_uid": host_uid(),
                "watchdog_realtime": private_root and realtime}
    sock.close()
    if config.get("cpu_procs") is not None:
        os.close(config["cpu_procs"])
    if private_root:  # /proc is the namespace's own: every process PID 1 reads is the submission's
        status = watchdog.guard(inner, watch_fd, config["memory_bytes"])
    else:
        os.close(watch_fd)
        while (reaped := os.waitpid(-1, 0))[0] != inner:  # PID 1 also reaps the namespace's orphans
            pass
        status = reaped[1]
    os.write(status_w, STATUS.pack(status))
    os._exit(0)


def host_uid() -> int:
    """The uid this process has towards the host, read from its user namespace's map."""
    inside = os.getuid()
    try:
        with open("/proc/self/uid_map") as f:
            for line in f:
                first, host, count = map(int, line.split())
                if first <= inside < first + count:
                    return host + inside - first
    except (OSError, ValueError):
        pass
    return inside


def restrict(config: dict, private_root: bool) -> dict:
    """In the submission's process: its one writable folder, then Landlock, rlimits and seccomp; returns what
    they reached. Seccomp comes last: it forbids what the others need to set themselves up."""
    home = "/tmp" if private_root else config["tmpdir"]
    environment.point_home(home)
    namespaces.no_new_privileges()  # whatever else holds: no setuid program can raise the submission's rights
    abi = landlock.restrict_filesystem(config["read_roots"], [home, "/dev/null", *config["devices"]],
                                       config["hidden"], config["submission_dir"])
    report = {"landlock_abi": abi, **limits.apply_rlimits(config["memory_bytes"], config["output_bytes"]),
              **limits.share_cpu(cgroup.held(config.get("cpu_cgroup")) is not None), "proc_hidepid": procfs.hides()}
    report["seccomp"] = seccomp.install()
    if private_root:
        report["tmp_bytes"], report["tmp_files"] = config["tmp_bytes"], config["tmp_files"]
    return report


def _mirror(status: int) -> None:
    """End this process the way the submission's process ended, so that the zygote sees the same status."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
        except OSError:  # glibc refuses its own signals 32 and 33 (thread cancellation, set*id): ask the kernel
            _default_action(sig)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)


RT_SIGACTION = {"x86_64": 13, "aarch64": 134}  # the syscall's number per machine


def _default_action(sig: int) -> None:
    """Give `sig` its default action (for a real-time signal: end the process) through the raw syscall."""
    import ctypes
    import platform

    lib = namespaces.libc()
    number = RT_SIGACTION.get(platform.machine())
    if lib is not None and number is not None:
        default = ctypes.create_string_buffer(32)  # the kernel's sigaction, all zero: SIG_DFL, no flags, no mask
        lib.syscall(number, sig, default, None, 8)
