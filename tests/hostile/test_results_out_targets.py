"""Where the results go: `--out` naming a device or a FIFO is written into, never replaced (as root,
`grade --out /dev/null` turned the machine's /dev/null into a regular 0600 file); `-` is the standard output; a
results file gets the mode of any new file (0666 less the umask). Devices and FIFOs are made in a temporary
folder, never the real /dev/null."""
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grader import output
from grader.instructor import batch
from grader.results import problems
from grader.instructor.selftest import SOLUTIONS_DIR

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's grader, from any working folder
NULL = os.makedev(1, 3)  # the null device's numbers on Linux


def infergrade(*args, cwd: Path, umask: int = 0o022) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=600, preexec_fn=lambda: os.umask(umask))


def null_device(path: Path) -> Path:
    """A null device node at `path` (root only)."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root (the attack itself needs root: a non-root grader cannot "
                    "replace /dev/null)")
    os.mknod(path, stat.S_IFCHR | 0o666, NULL)
    return path


def is_null_device(path: Path) -> bool:
    info = os.lstat(path)
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == NULL


def test_grade_out_to_a_null_device_leaves_it_a_device(tmp_path):
    node = null_device(tmp_path / "null")
    done = infergrade("grade", "--submission", SOLUTIONS_DIR, "--topic", "kv_cache", "--seed", 1, "--out", node,
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert is_null_device(node)
    assert os.listdir(tmp_path) == ["null"]  # no temporary file left beside it


def test_check_out_to_a_fifo_writes_into_it(tmp_path):
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    os.link(fifo, tmp_path / "same-fifo")  # the same FIFO under a second name: the reader can be released
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = infergrade("check", "kv_cache", "--submission", SOLUTIONS_DIR, "--out", fifo, cwd=tmp_path)
    reader.join(timeout=30)
    if reader.is_alive():  # nothing was written into the FIFO: end the reader's wait
        os.close(os.open(tmp_path / "same-fifo", os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    doc = json.loads(received[0])
    assert problems(doc) == [] and doc["score"] == doc["max_score"] > 0


def test_grade_out_dash_is_standard_output(tmp_path):
    done = infergrade("grade", "--submission", SOLUTIONS_DIR, "--topic", "kv_cache", "--seed", 1, "--out", "-",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert problems(doc) == [] and doc["score"] == doc["max_score"] > 0
    assert os.listdir(tmp_path) == []  # no file named '-'


def test_check_out_dash_leaves_standard_output_to_the_results(tmp_path):
    """Found: `check --out -` printed its summary on stdout after the JSON, so the output was not JSON."""
    done = infergrade("check", "kv_cache", "--submission", SOLUTIONS_DIR, "--out", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert problems(doc) == [] and doc["score"] == doc["max_score"] > 0
    assert "kv_cache" in done.stderr  # the summary people read is still shown


def test_a_results_file_gets_the_mode_the_umask_gives(tmp_path):
    out = tmp_path / "results.json"
    done = infergrade("grade", "--submission", SOLUTIONS_DIR, "--topic", "kv_cache", "--seed", 1, "--out", out,
                      cwd=tmp_path, umask=0o027)
    assert done.returncode == 0, done.stderr[-2000:]
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~0o027  # group may read, others not: not mkstemp's 0600


def test_a_batch_result_named_by_a_device_leaves_it_a_device(tmp_path):
    node = null_device(tmp_path / "alice.json")
    batch.write_results({"score": 1}, node)
    assert is_null_device(node) and os.listdir(tmp_path) == ["alice.json"]


def test_a_fifo_that_nobody_reads_is_an_error_within_seconds_not_a_hang(tmp_path):
    """Opening a FIFO for writing waits for a reader; after the run the grader records SIGTERM and Ctrl-C rather
    than stopping, so a FIFO that nobody opens held `check --out FIFO` forever, past SIGTERM."""
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    write = ("import sys; from pathlib import Path; from grader import output; "
             "output.write_text('{}', Path(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", write, str(fifo)], cwd=tmp_path, env=ENV, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0
    assert "results.fifo" in done.stderr and "read" in done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("name", ["/dev/fd/{fd}", "/proc/self/fd/{fd}"])
def test_a_descriptor_name_is_written_through_never_replaced(tmp_path, name):
    """`--out /dev/stdout` with the output redirected to a file: /dev/stdout -> /proc/self/fd/1 -> the file, and
    the results were renamed over the link in /dev (as root, the machine lost /dev/stdout; otherwise the write
    failed). A name of the grader's own descriptor is written to that descriptor, as it is open: at its offset.
    (A link elsewhere, even one named dev/stdout, is replaced: test_results_linked_targets.py.)"""
    log = tmp_path / "log"
    with log.open("w") as f:
        f.write("before\n")
        f.flush()
        output.write_text("{}\n", Path(name.format(fd=f.fileno())))
    assert log.read_text() == "before\n{}\n"
    assert os.listdir(tmp_path) == ["log"]


def test_a_block_device_is_refused(tmp_path):
    """A block device (a disk) is never a results file; a link to one (left in /tmp by someone else) is replaced,
    never followed."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = tmp_path / "disk"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 255))  # a loop device number: nothing is written to it
    (tmp_path / "results.json").symlink_to(node)
    with pytest.raises(OSError, match="disk"):
        output.write_text("{}\n", node)
    output.write_text("{}\n", tmp_path / "results.json")
    assert stat.S_ISBLK(os.lstat(node).st_mode)
    assert not (tmp_path / "results.json").is_symlink() and (tmp_path / "results.json").read_text() == "{}\n"
