"""A warm zygote with torch and numpy imported that forks one sandboxed child per check.

The zygote is a fresh interpreter (`python -I -c BOOT`), never a fork of the grader: a fork would carry the
grader's whole memory into every child, its command line (the class-wide --seed, the --out path), its environment
and the frames of whatever started it (multiprocessing's start-up frame in a grade-batch worker holds the parent's
argv and working folder), readable from a submission by `sys._getframe()`, `gc` or a scan of its own memory. It
costs one more `import torch` per grader process, which runs beside the grader's own start-up.

Children start in milliseconds with everything imported and compute on one thread (an OpenMP pool does not
survive a fork). A child's socket is passed to the grader with SCM_RIGHTS; the zygote also reaps children and
reports how they ended.
"""
from __future__ import annotations

import atexit
import gc
import json
import os
import pickle
import resource
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import grader
from grader.sandbox import cgroup, environment, namespaces, walls

# run by the fresh interpreter: argv[1] is its end of the socket, argv[2] the grader's sys.path (in JSON)
BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[2]); "
        "from grader.sandbox.zygote import main; main(int(sys.argv[1]))")
# what of the grader's environment the zygote keeps: what the dynamic loader, torch, CUDA and Triton read
ENVIRONMENT = ("PATH", "HOME", "LANG", "TZ", "LD_LIBRARY_PATH")
ENVIRONMENT_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "TORCH_", "TRITON_", "OMP_", "MKL_", "OPENBLAS_")


def _wire():
    """child.py (the framing of every message, and what a child runs): imported on first use, since it imports
    torch, so that starting the zygote costs the grader nothing while its own `import torch` runs beside it."""
    from grader.sandbox import child

    return child


_shared: list[Zygote] = []


def shared() -> Zygote:
    """The process's zygote, started on first use and again if it died; ended when the process exits."""
    if _shared and not _shared[0].alive():
        _shared.clear()
    if not _shared:
        _shared.append(Zygote())
        atexit.register(_shared[0].close)
    return _shared[0]


class ZygoteGone(RuntimeError):
    """The zygote died: a grader failure, reported as an internal error of the checks it stops."""


class Zygote:
    """The grader's handle on the zygote process."""

    def __init__(self, namespaces: bool = True, prelude: str = ""):
        """Start the zygote (it imports torch meanwhile; the first spawn waits for it). `prelude`: Python the
        zygote runs before it serves (tests use it to stand in for a kernel that refuses a wall)."""
        self.namespaces = namespaces
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # the grader's packages, however installed, and its sys.path but the working folder (`python -m`), whose
        # listing the zygote's import system would keep in memory: the --out folder, say
        path = [str(Path(grader.__file__).parent.parent), *(p for p in sys.path if p not in ("", os.getcwd()))]
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", BOOT, str(theirs.fileno()), json.dumps(path)], pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL, env=zygote_environment(os.environ), start_new_session=True)
        theirs.close()
        self.pid, self.sock = self.process.pid, ours
        hello = pickle.dumps({"namespaces": namespaces, "prelude": prelude, "parent": os.getpid()})
        ours.sendall(struct.pack("<Q", len(hello)) + hello)  # child.send's framing, without importing child.py

    def spawn(self, config: dict, template: bool = False) -> tuple[int, socket.socket]:
        """Fork a child that serves `config` (with `template`, a topic's template: template.py); returns its pid
        (its process group) and the grader's socket."""
        try:
            _wire().send(self.sock, pickle.dumps(("template" if template else "spawn", config)))
            msg, fds, _, _ = socket.recv_fds(self.sock, 64, 1)
            (pid,) = struct.unpack("<q", msg)
        except (OSError, struct.error) as exc:
            raise ZygoteGone(f"the sandbox's zygote process is gone ({exc}); no check can run") from None
        return pid, socket.socket(fileno=fds[0])

    def reap(self, pid: int, grace: float = 0.0) -> tuple[int | None, bool]:
        """Kill the child's whole process group; its wait status, or None where it had not ended on its own, and
        whether the kernel killed in its memory cgroup for passing the cap.

        `grace` seconds are given to a child that is already ending, so that its own status is reported.
        """
        try:
            _wire().send(self.sock, pickle.dumps(("reap", (pid, grace))))
            status, ended, memory = struct.unpack("<qqq", _wire().recv(self.sock))
        except (OSError, struct.error, TypeError) as exc:
            raise ZygoteGone(f"the sandbox's zygote process is gone ({exc})") from None
        return (status if ended else None), bool(memory)

    def discard(self, pid: int) -> None:
        """Kill the child's process group; the zygote collects it later."""
        try:
            _wire().send(self.sock, pickle.dumps(("discard", (pid, 0.0))))
        except OSError:
            pass  # a zygote that is gone took its children with it

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        self.sock.close()
        self.process.wait()


def zygote_environment(environ) -> dict:
    """The part of the grader's environment the zygote starts with: no tokens, paths or settings of the grader
    (children replace even this with a minimal one, but a string once in memory can be found there)."""
    return {k: v for k, v in environ.items() if k in ENVIRONMENT or k.startswith(ENVIRONMENT_PREFIXES)}


def main(fd: int) -> None:
    """The fresh interpreter's entry: import what children use, then serve the grader on socket `fd`."""
    import grader.toys  # noqa: F401 - children unpickle toys without reading grader files

    namespaces.die_with_parent()
    os.umask(0o022)  # the sandboxes' roots open to their unprivileged user, whatever the umask of who ran the grader
    sys.argv, sys.orig_argv = [environment.NAME.decode()], [environment.NAME.decode()]
    sock = socket.socket(fileno=fd)
    frame = _wire().recv(sock)
    settings = pickle.loads(frame) if frame is not None else {"parent": None}
    if os.getppid() != settings["parent"]:  # the grader ended before the death signal was asked for
        os._exit(0)
    exec(settings["prelude"], {})  # noqa: S102 - the grader's own code (tests)
    _wire().take_factories()
    gc.freeze()  # what is imported now is permanent: cheap collections, fewer copied pages in children
    try:
        _zygote_main(sock, settings["namespaces"], cgroup.Cgroups(cgroup.find(), settings["parent"], cgroup.find_cpu()))
    finally:
        os._exit(0)


def _zygote_main(sock: socket.socket, use_namespaces: bool, cgroups: cgroup.Cgroups) -> None:
    """Serve spawn, reap and discard requests; remove each child's memory cgroup once it is reaped.

    A spawned child is reaped only when the grader asks for it (reap) or gave it up (discard): until then it stays
    a zombie that holds its pid, so no later child can take that pid (pid_max may be 32768) and be mistaken for it.
    Orphans it adopts are reaped at once and forgotten.
    """
    namespaces.adopt_orphans()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C or SIGTERM is the grader's to handle: it ends us
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    spawned: set[int] = set()  # not yet reaped: each holds its pid (and its process group's id)
    discarded: set[int] = set()  # of those, the ones whose status nobody will ask for
    while True:
        frame = _wire().recv(sock)
        if frame is None:
            _end_all(spawned)
            for pid in spawned:
                cgroups.remove(pid)
            cgroups.sweep(wait=5.0)
            return
        _collect(spawned, discarded, cgroups)
        kind, arg = pickle.loads(frame)
        if kind in ("spawn", "template"):
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            pid = os.fork()
            if pid == 0:
                sock.close()
                ours.close()
                _child_main(theirs, arg, use_namespaces, cgroups, kind == "template")
            theirs.close()
            spawned.add(pid)
            socket.send_fds(sock, [struct.pack("<q", pid)], [ours.fileno()])
            ours.close()
        elif kind == "discard" and arg[0] in spawned:
            _kill_group(arg[0])
            discarded.add(arg[0])
        elif kind == "reap":
            pid, grace = arg
            assert pid in spawned and pid not in discarded, "reaped a child the zygote no longer holds"
            deadline = time.monotonic() + grace
            while not (ended := _has_ended(pid)) and time.monotonic() < deadline:
                time.sleep(0.002)
            _kill_group(pid)  # the unreaped leader still holds the group's id: only its own group is hit
            status = os.waitpid(pid, 0)[1]
            spawned.remove(pid)
            memory = cgroups.killed_for_memory(pid)
            cgroups.remove(pid)
            _wire().send(sock, struct.pack("<qqq", status, ended, memory))


def _has_ended(pid: int) -> bool:
    """Whether the child `pid` has ended, without reaping it."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _end_all(spawned: set[int]) -> None:
    """The grader is done: kill every child's process group and every adopted orphan, and reap them all."""
    for pid in spawned:
        _kill_group(pid)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.01)


def _children() -> list[int]:
    """This process's children, zombies and adopted orphans included (Linux /proc)."""
    pids = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return pids


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _collect(spawned: set[int], discarded: set[int], cgroups: cgroup.Cgroups) -> None:
    """Reap every orphan and every discarded child that has ended (removing its cgroup); spawned children wait for
    the grader."""
    for pid in _children():
        if pid in spawned and pid not in discarded:
            continue
        try:
            if os.waitpid(pid, os.WNOHANG)[0] and pid in discarded:  # an orphan is reaped and forgotten
                spawned.discard(pid)
                discarded.discard(pid)
                cgroups.remove(pid)
        except ChildProcessError:  # reaped meanwhile
            pass
    cgroups.sweep()


def _child_main(sock: socket.socket, config: dict, use_namespaces: bool, cgroups: cgroup.Cgroups,
                as_template: bool) -> None:
    """Move into a memory and a cpu cgroup of its own (where they can be made: a topic's template holds them for all
    its checks), become a session leader (the group the zygote kills), wipe what the process tells about the grader,
    and serve from behind the walls (see walls.py for the processes between here and the submission)."""
    code, output = 0, -1
    try:
        held = cgroups.enter(config.get("memory_bytes"))  # before any other process of the sandbox exists
        config = {**config, "memory_cgroup": held, "cpu_cgroup": cgroups.enter_cpu()}
        os.setsid()
        namespaces.die_with_parent()
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        keep = sock.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 4096)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        output = os.open(os.path.join(config["tmpdir"], "output.txt"), os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        watch = os.open(os.path.join(config["tmpdir"], "watch"), os.O_RDWR | os.O_NOFOLLOW)
        config["cpu_procs"] = cgroups.procs() if config["cpu_cgroup"] == "v1" else None  # for cgroup.join
        environment.scrub(config["tmpdir"], config.get("env", {}))
        report = {**walls.enter(sock, output, watch, config, use_namespaces, as_template), "memory_cgroup": held,
                  "cpu_cgroup": cgroup.held(config["cpu_cgroup"])}
        _wire().serve(sock, output, config, report)
    except BaseException as exc:  # noqa: BLE001 - a child never returns into the zygote's loop
        code = 70
        _wire().say_failed(output, exc)
    finally:
        os._exit(code)
