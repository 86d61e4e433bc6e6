"""A topic's template: PID 1 of the sandbox, behind the namespaces, that forks one submission's process per check.

What this changes at the trust boundary (walls.py keeps the layers; this is how a topic's checks share them):

- One sandbox per topic. The chain to PID 1 (first process, unsharer, PID 1 with its private root and watchdog)
  is built once per topic; PID 1 runs only the grader's code, never the submission's. For each check a fresh
  process is forked that takes the walls itself (a new IPC namespace, the uid drop, no capabilities, Landlock,
  rlimits, seccomp) and then imports the submission: every check starts from the same just-forked state, and
  import-time code of one check (MAP_SHARED memory, open descriptors, processes) is never in the next one's
  ancestry. The check's process is a copy of the forker's memory, not PID 1's: PID 1's interpreter changes with
  every check it serves (its collector's counts, its heap, the frames it read), and a copy of it told a check how
  many ran before it and, through what PID 1 did for them (the watchdog's samples), something of what they did. The
  forker is forked by PID 1 once the root is built and does nothing else but fork, with its collector off: it
  forks a middle process, which forks the check's and exits, so that the check's process, orphaned, is PID 1's
  child, as the watchdog needs; it then gets its socket, output file and settings from PID 1 (`_deliver`).
- Nothing a check can read counts the checks before it: PID 1 and the forker are invisible to it (their counters
  moved with every check: procfs.py), the /proc it sees is mounted anew for it, and the timestamps of the root,
  the submission's copy and the masks are made new before it (restamp.py).
- Nothing a check does reaches the next: before each check PID 1 kills every other process of the namespace
  but the forker (watchdog.kill_others) and reaps them; unmounts the check's /tmp and mounts a new tmpfs of the
  same caps (what was mounted below /tmp, a submission or venv under the host's /tmp, is moved over unchanged,
  with the folders leading to it as they were built, found by mount id wherever a check renamed them:
  mounts.renew_tmp); empties the output file, which each check writes through a description of its own (no offset
  or flag of an earlier check's); zeroes the watchdog's page (peaks, kill reason, cap); and sets the namespace's
  last pid back to 1, so that no check's pids tell how many processes the checks before it ran. Each check's
  process enters an IPC namespace of its own (SysV memory and queues disabled again in it, POSIX queues gone with
  it).
  /dev/shm does not exist in the private root, whose skeleton and submission copy are read-only.
- A check's socket to the grader is a new socketpair made by PID 1 for that check; the grader's end goes up over
  PID 1's control socket with SCM_RIGHTS, so no bytes left by an earlier check can desync the framing. The
  submission's process never holds the control socket or the watchdog's page.
- What stays shared between the checks of a topic: the network namespace (loopback only, no capability to
  configure it; every socket ends with its process), the UTS namespace (no capability to change it), the
  read-only root, and PID 1's memory, which a check's process sees a copy of as it was at its fork and can
  neither write (ptrace and process_vm_* are refused by seccomp and by the uid and capability drop) nor signal;
  the forker's memory, which a check's process is a copy of, is as it was when the sandbox was built.
- Where the template cannot be built (no namespaces, a refused user namespace or id map, no private root), it
  says so and the grader starts one full chain per check, as before (pool.ChildPool).

Control protocol (grader -> PID 1, frames of child.py): ("check", config) forks the check's process and answers
with its namespace pid and the grader's socket (SCM_RIGHTS); ("end", grace) waits up to `grace` s for it to end,
kills every process of the namespace, answers (wait status, whether it ended on its own), then reaps them.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import socket
import struct
import time

from grader.sandbox import cgroup, environment, mounts, namespaces, procfs, stamps, watchdog
from grader.sandbox.forker import Forker

CLONE_NEWIPC = namespaces.CLONE_NEWIPC
ENDED = struct.Struct("<qq")  # (wait status, whether it ended on its own)
PID = struct.Struct("<q")


def _wire():
    from grader.sandbox import child

    return child


def refuse(control: socket.socket, reason: str) -> None:
    """Say that no template can be built here (the grader starts a chain per check instead), and exit."""
    try:
        _wire().send(control, pickle.dumps(("refused", reason)))
    finally:
        os._exit(0)


def serve_checks(control: socket.socket, status_w: int, watch_fd: int, output_fd: int, config: dict,
                 uid: int | None, reached: dict) -> None:
    """As PID 1 of the namespace: build the private root, then serve the grader's check and end requests until
    it closes the control socket; never returns."""
    namespaces.die_with_parent()
    os.close(status_w)  # the first process reports nothing per check: the grader hears it from here
    os.setpgid(0, 0)  # see walls._namespace_init: a group of its own, never orphaned
    offered = cgroup.offer_first()  # under a v1 memory cgroup its death on a kill for memory ends the sandbox
    root = os.path.join(config["tmpdir"], "root")
    try:
        os.makedirs(root, exist_ok=True)
        mounts.build_root(root, config["bound_read_only"], config["devices"], config["submission_dir"],
                          config["tmp_bytes"], config["tmp_files"], config["hidden"])
        layout, made_once = mounts.tmp_layout(), stamps.made_once()
        watchdog.PROC = f"/proc/self/fd/{procfs.private_view(mounts.HELD)}"  # PID 1's own view: every process
        _restart_pids()  # tried once here: where the kernel refuses it, each check gets a chain of its own
    except OSError as exc:
        refuse(control, f"the private root could not be built ({exc})")
    forker = Forker(lambda sock, output, check, realtime: _run_check(sock, output, {**config, **check}, uid,
                                                                      {**reached, "watchdog_realtime": realtime}),
                    offered, config.get("cpu_procs"))
    if config.get("cpu_procs") is not None:
        os.close(config["cpu_procs"])  # the forker's now: PID 1 stays out of the cgroup
    namespaces.hide()  # from a check of its uid (procfs.py), as the forker hides itself
    try:
        _wire().send(control, pickle.dumps(("template", None)))
        while (frame := _wire().recv(control)) is not None:
            kind, check = pickle.loads(frame)  # the grader's own requests
            assert kind == "check", f"a check starts with 'check', not {kind!r}"
            _clear_namespace(output_fd, watch_fd, config, layout, made_once)
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            # the output file opened anew: an open file description of the check's own, whose offset and flags
            # (O_APPEND cleared, a seek to the size limit) end with the check
            output = os.open(f"/proc/self/fd/{output_fd}", os.O_WRONLY | os.O_APPEND)
            inner = forker.spawn(check, [theirs.fileno(), output])
            theirs.close()
            os.close(output)
            socket.send_fds(control, [PID.pack(inner)], [ours.fileno()])
            ours.close()
            ended = _guard_check(control, inner, watch_fd, check["memory_bytes"])
            if ended is None:
                break
            _wire().send(control, ENDED.pack(*ended))
            _kill_namespace()  # reaped while the grader reads the answer, before the next check is forked
    finally:
        _kill_namespace()
        os._exit(0)


def _clear_namespace(output_fd: int, watch_fd: int, config: dict, layout: list, made_once: list[str]) -> None:
    """Before a check: no process of an earlier one, a new empty /tmp, a new /proc, new times on what the sandbox
    made once, an empty output file, the watchdog's page zeroed (see the module)."""
    _kill_namespace()
    procfs.renew(mounts.HELD)
    _restart_pids()
    mounts.renew_tmp(config["tmp_bytes"], config["tmp_files"], layout)
    stamps.restamp(made_once)
    os.ftruncate(output_fd, 0)
    os.utime(output_fd, ns=(0, 0))  # its change time now; its access time no longer the grader's last read
    watchdog.restart_page(watch_fd)


def _end_namespace() -> None:
    """Send every process of the namespace but PID 1's own SIGKILL (watchdog.kill_others), reaping none."""
    watchdog.kill_others()


def _kill_namespace(inner: int | None = None) -> int | None:
    """Kill every process of the namespace but PID 1's own and reap them all; the wait status of `inner` if it
    was among them."""
    _end_namespace()
    status = None
    while _children() - watchdog.KEEPERS:
        pid, reaped = os.waitpid(-1, 0)
        status = reaped if pid == inner else status
    return status


def _children() -> set[str]:
    """PID 1's children, ended ones included, and those it adopts as their parents end."""
    with open(f"{watchdog.PROC}/1/task/1/children") as f:
        return set(f.read().split())


def _restart_pids() -> None:
    """As PID 1, with no other process left but the forker (pid 2): the namespace hands out pid 3 next for every
    check, as a namespace of the check's own would the same pid, so that no check's pid tells how many processes the
    checks before it ran."""
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write("1")


def _guard_check(control: socket.socket, inner: int, watch_fd: int, memory_bytes: int | None):
    """Watch the check's processes until the grader ends the check: (wait status, 1 if it ended on its own, else
    0); None when the grader closed the control socket."""
    guard = watchdog.Guard(watch_fd, memory_bytes)
    try:
        status = guard.until_ended(inner, wake=control.fileno())
        if status is not None:  # it ended on its own: what it left running goes now, not when the grader asks
            _kill_namespace()
        frame = _wire().recv(control)
        if frame is None:
            return None
        kind, grace = pickle.loads(frame)
        assert kind == "end", f"a check ends with 'end', not {kind!r}"
        if status is None and grace > 0:
            status = guard.until_ended(inner, until=time.monotonic() + grace)
    finally:
        guard.close()
    _end_namespace()  # answered now: the reaping (freeing what was killed) follows, before the next request
    if status is not None:
        return status, 1
    try:
        pid, reaped = os.waitpid(inner, os.WNOHANG)  # an end of its own that came before the kill
    except ChildProcessError:
        pid, reaped = 0, 0
    return (reaped if pid == inner else signal.SIGKILL.value, 0)  # else the status of a kill by SIGKILL


def _run_check(sock: socket.socket, output_fd: int, config: dict, uid: int | None, reached: dict) -> None:
    """In the check's fresh process (forked by the forker, which gave back PID 1's OOM offer): its own IPC
    namespace, the uid and capability drop, then serve (child.py: Landlock, rlimits, seccomp, the import); never
    returns."""
    from grader.sandbox import walls

    code = 0
    try:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        namespaces.leave_realtime()  # the forker left it, and joined the sandbox's v1 cpu cgroup, for every check
        _private_ipc()
        if uid:
            namespaces.become(uid)
        namespaces.drop_capabilities()
        namespaces.let_init_read()  # after both: a process that loses capabilities stops being dumpable
        environment.scrub(config["tmpdir"], config.get("env", {}))  # this check's environment
        report = {**reached, "private_root": True, "watchdog": True, "host_uid": walls.host_uid(), "template": True,
                  "memory_cgroup": config.get("memory_cgroup"), "cpu_cgroup": cgroup.held(config.get("cpu_cgroup"))}
        _wire().serve(sock, output_fd, config, report)
    except BaseException as exc:  # noqa: BLE001 - never back into PID 1's loop
        code = 70
        _wire().say_failed(output_fd, exc)
    finally:
        os._exit(code)


def _private_ipc() -> None:
    """An IPC namespace of this check's own, with System V memory and queues disabled in it as in the first."""
    if namespaces.libc().unshare(CLONE_NEWIPC) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"a new IPC namespace: {os.strerror(errno)}")
    mounts.disable_sysv_ipc("")
