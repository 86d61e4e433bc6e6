"""Attacks on the grader's one copy of a submission (`snapshot`): the folder raced while it is copied (with a thread
that swaps as fast as inotify would let it, and at fixed points between listing and reading), a very deep or very
wide folder, FIFOs, devices and sockets inside, a file that grows while it is read, names with newlines and escape
sequences, modes that lock the sandbox's user out, and the copy's own folder: found by no other user, removed at the
end, on Ctrl-C and, after a kill, at the next start."""
import hashlib
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from grader.grading import grade
from grader.instructor.selftest import SOLUTIONS_DIR
from grader.sandbox import folders, mounts
from grader.submission.folder import resolve_submission
from grader.submission.opening import BadInput
from grader.submission.snapshot import of_folder
from grader.topics import EXERCISES_DIR

STUB = (EXERCISES_DIR / "kv_cache.py").read_bytes()
ANSWER = (SOLUTIONS_DIR / "kv_cache.py").read_bytes()
REPO = Path(__file__).resolve().parents[2]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def stub(tmp_path):
    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / "kv_cache.py").write_bytes(STUB)
    (folder / "impl").mkdir()
    (folder / "impl" / "helper.py").write_bytes(b"X = 1\n")
    return folder


def test_a_thread_swapping_files_and_folders_for_links_never_gets_the_answer_copied(stub, tmp_path):
    """While snapshots are taken, a thread swaps kv_cache.py for a link to the model answer, impl/ for a link to
    solutions/, and the whole folder for a link to solutions/, back and forth: each snapshot is refused or holds the
    student's own bytes, never the answer's."""
    stop = threading.Event()

    def swap():
        while not stop.is_set():
            for real, link, target in ((stub / "kv_cache.py", tmp_path / "file-link", SOLUTIONS_DIR / "kv_cache.py"),
                                       (stub / "impl", tmp_path / "folder-link", SOLUTIONS_DIR),
                                       (stub, tmp_path / "top-link", SOLUTIONS_DIR)):
                aside = real.with_name(real.name + ".aside")
                link.unlink(missing_ok=True)
                link.symlink_to(target)
                os.rename(real, aside)
                os.rename(link, real)       # the link in the real one's place
                time.sleep(0.0005)
                os.rename(real, link)
                os.rename(aside, real)      # and back
    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes = {"refused": 0, "copied": 0, "missing": 0}
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            try:
                with of_folder(stub) as snapshot:
                    copied = {p.relative_to(snapshot.folder).as_posix(): p.read_bytes()
                              for p in snapshot.folder.rglob("*") if p.is_file()}
                    assert not any(p.is_symlink() for p in snapshot.folder.rglob("*"))
                    assert ANSWER not in copied.values() and "__init__.py" not in copied  # solutions/ has one
                    assert snapshot.files == {name: sha(data) for name, data in copied.items()}
                    outcomes["copied" if copied.get("kv_cache.py") == STUB else "missing"] += 1
            except BadInput as exc:  # met as a link, or between two renames
                assert "symbolic link" in str(exc) or "does not exist" in str(exc), exc
                outcomes["refused"] += 1
    finally:
        stop.set()
        swapper.join()
    assert outcomes["refused"] > 0 and outcomes["copied"] > 0, outcomes  # the race was really run both ways


def swap_after_looking(monkeypatch, name: str, swap) -> None:
    """Run `swap` once, right after the walk has looked at the entry `name` (listed, lstat taken, not yet read)."""
    real = mounts._looked_at
    done = []

    def looked_then_swap(folder, entry):
        found = real(folder, entry)
        if entry == name and not done:
            done.append(entry)
            swap()
        return found
    monkeypatch.setattr(mounts, "_looked_at", looked_then_swap)


def test_a_file_swapped_for_a_link_between_listing_and_reading_is_refused(stub, monkeypatch):
    def swap():
        (stub / "kv_cache.py").unlink()
        (stub / "kv_cache.py").symlink_to(SOLUTIONS_DIR / "kv_cache.py")
    swap_after_looking(monkeypatch, "kv_cache.py", swap)
    with pytest.raises(BadInput, match="kv_cache.py"):
        of_folder(stub)


def test_a_folder_swapped_for_a_link_between_listing_and_opening_is_refused(stub, monkeypatch):
    def swap():
        (stub / "impl").rename(stub.parent / "impl.aside")
        (stub / "impl").symlink_to(SOLUTIONS_DIR)
    swap_after_looking(monkeypatch, "kv_cache.py", swap)  # the files of a folder are looked at before its folders
    with pytest.raises(BadInput, match="impl"):
        of_folder(stub)


def test_a_file_replaced_by_another_between_listing_and_reading_is_left_out(stub, monkeypatch):
    def swap():
        (stub / "kv_cache.py").rename(stub.parent / "old.py")
        (stub / "kv_cache.py").write_bytes(STUB + b"# another file\n" * 10000)
    swap_after_looking(monkeypatch, "kv_cache.py", swap)
    with of_folder(stub) as snapshot:
        assert "kv_cache.py" not in snapshot.files and not (snapshot.folder / "kv_cache.py").exists()


def test_a_file_that_grows_while_it_is_copied_is_cut_at_the_size_it_was_listed_with(stub, monkeypatch):
    def grow():
        with open(stub / "kv_cache.py", "ab") as f:
            f.write(b"\n# grown after listing\n" * 100000)
    swap_after_looking(monkeypatch, "kv_cache.py", grow)
    with of_folder(stub) as snapshot:
        assert (snapshot.folder / "kv_cache.py").read_bytes() == STUB
        assert snapshot.files["kv_cache.py"] == sha(STUB)


def test_fifos_devices_and_sockets_inside_are_left_out_without_blocking(stub):
    os.mkfifo(stub / "fifo.py")
    os.mkfifo(stub / "impl" / "fifo.py")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(stub / "socket.py"))
        if os.geteuid() == 0:  # a student cannot make a device; a root test can stand for one
            os.mknod(stub / "device.py", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        started = time.monotonic()
        with of_folder(stub) as snapshot:
            assert snapshot.files == {"kv_cache.py": sha(STUB), "impl/helper.py": sha(b"X = 1\n")}
        assert time.monotonic() - started < 5


def nested(top: Path, depth: int) -> Path:
    """A chain of `depth` folders named d below `top` (made through descriptors: its path is past PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = below
    with open(os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f:
        f.write(b"DEEP = 1\n")
    return top


def remove_nested(top: Path) -> None:
    """Remove the chain of folders named d below `top` one level at a time (shutil.rmtree, and so pytest's own
    clean-up of old temporary folders, recurses once per level and fails on it)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while "d" in os.listdir(fd):
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            for name in os.listdir(below):
                if name == "d":
                    os.rename("d", "d.next", src_dir_fd=below, dst_dir_fd=fd)
                else:
                    os.unlink(name, dir_fd=below)
            os.close(below)
            os.rmdir("d", dir_fd=fd)
            if "d.next" in os.listdir(fd):
                os.rename("d.next", "d", src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)


def test_a_very_deep_folder_is_walked_only_to_the_depth_budget(stub):
    """2,100 folders deep (past PATH_MAX, past Python's recursion limit, which made `grade` end in a RecursionError
    without a results file): copied within SUBMISSION_DEPTH, with as many descriptors open at most."""
    nested(stub, 2100)
    try:
        started = time.monotonic()
        with of_folder(stub) as snapshot:
            assert set(snapshot.files) == {"kv_cache.py", "impl/helper.py"}
        assert time.monotonic() - started < 5
    finally:
        remove_nested(stub)
    (stub.parent / "shallow").mkdir()
    shallow = nested(stub.parent / "shallow", mounts.SUBMISSION_DEPTH)
    with of_folder(shallow) as snapshot:
        assert set(snapshot.files) == {"/".join(["d"] * mounts.SUBMISSION_DEPTH + ["deep.py"])}


def test_a_very_wide_folder_costs_little(stub):
    for i in range(50000):
        (stub / f"junk{i:05}").touch()
    started = time.monotonic()
    with of_folder(stub) as snapshot:
        assert snapshot.files["kv_cache.py"] == sha(STUB) and len(snapshot.files) == mounts.SUBMISSION_FILES
    assert time.monotonic() - started < 15


def test_names_with_newlines_and_escapes_are_copied_and_quoted_in_refusals(tmp_path):
    folder = tmp_path / "a\nb\x1b]0;title\x07"
    folder.mkdir()
    (folder / "kv_cache.py").write_bytes(STUB)
    (folder / "odd\n\x1b[31m.py").write_bytes(b"Y = 2\n")
    with of_folder(folder) as snapshot:
        assert snapshot.files["odd\n\x1b[31m.py"] == sha(b"Y = 2\n")
        assert (snapshot.folder / "odd\n\x1b[31m.py").read_bytes() == b"Y = 2\n"
    (folder / "\x1b]52;c;bGluaw==\x07.py").symlink_to(SOLUTIONS_DIR / "kv_cache.py")
    with pytest.raises(BadInput) as refused:
        of_folder(folder)
    assert "\x1b" not in str(refused.value) and "\n" not in str(refused.value) and "\\x1b]52" in str(refused.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's user is another user only where the grader is root")
def test_a_folder_the_sandbox_user_cannot_read_is_graded_from_a_copy_it_can(stub, monkeypatch):
    """Files of mode 0600 in a folder of 0700, copied under umask 077: the copy is readable by nobody, the rest of
    the machine cannot find it."""
    (stub / "kv_cache.py").write_bytes(ANSWER)
    for path in (stub / "kv_cache.py", stub / "impl" / "helper.py"):
        path.chmod(0o600)
    stub.chmod(0o700)
    old = os.umask(0o077)
    try:
        with resolve_submission(stub)[0] as snapshot:
            holder = snapshot.folder.parent
            assert stat.S_IMODE(holder.stat().st_mode) == 0o711 and len(snapshot.folder.name) == 32
            assert stat.S_IMODE((snapshot.folder / "kv_cache.py").stat().st_mode) == 0o644
            doc = grade(snapshot, ["kv_cache"], hidden=False, seed=0, with_progress=False)
    finally:
        os.umask(old)
    assert doc["status"] == "completed" and doc["score"] == doc["max_score"] > 0, doc.get("error")


def copies() -> set[str]:
    """This process's copies of submissions now."""
    return {p.name for p in Path(tempfile.gettempdir()).glob(f"{folders.CHILD_FOLDER}{os.getpid()}-submission-*")}


def test_the_copy_is_removed_after_grading_and_on_ctrl_c(stub, monkeypatch):
    before = copies()
    doc = grade(stub, ["kv_cache"], hidden=False, seed=0, with_progress=False)
    assert doc["status"] == "completed" and copies() == before
    from grader import grading

    def interrupted(*args, **kwargs):
        assert copies() - before  # the copy exists while the checks run
        raise KeyboardInterrupt
    monkeypatch.setattr(grading, "run_checks", interrupted)
    doc = grade(stub, ["kv_cache"], hidden=False, seed=0, with_progress=False)
    assert doc["status"] == "interrupted" and copies() == before


def test_a_killed_runs_copy_is_swept_at_the_next_start(stub):
    """A grader killed (SIGKILL) while it holds a copy leaves it; the next run's first sandbox removes it."""
    code = ("import os, sys; from pathlib import Path; from grader.submission.snapshot import of_folder; "
            "s = of_folder(Path(sys.argv[1])); print(s.folder, flush=True); os.kill(os.getpid(), 9)")
    done = subprocess.run([sys.executable, "-c", code, str(stub)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    left = Path(done.stdout.strip())
    assert done.returncode == -9 and (left / "kv_cache.py").read_bytes() == STUB
    assert folders.remove_stale_folders() >= 1 and not left.exists() and not left.parent.exists()
