"""Issue 17, finding 3: hostile uploads in a class folder. A small archive named .tar.gz that is really bz2 and
declares a terabyte, a zip whose deflate stream is corrupt, links and paths that leave the folder; a batch of them
beside good submissions ends quickly with every row written, and SIGTERM ends a batch within seconds."""
import bz2
import csv
import functools
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from grader.instructor import batch
from grader.submission import archive as unpack
from grader.sandbox.policy import REPO

SAMPLING = (REPO / "solutions" / "sampling.py").read_text()
DECLARED = 1_250_000_000_000  # 1.25 TB, as in the issue
STREAM_ZEROS = 64 * 2**20     # one bz2 stream of this many zeros compresses to under 100 bytes


def bz2_bomb(path: Path, declared: int = DECLARED) -> int:
    """A tar whose one member declares `declared` bytes of zeros, bz2-compressed and named `path`; returns the
    bytes it would really decompress to. The zeros are fed to the compressor in streamed chunks, and that stream
    is repeated (bz2 readers read concatenated streams on), so a few MiB of file decompress to `declared`."""
    member = tarfile.TarInfo("sampling.py")
    member.size = declared
    header = member.tobuf(format=tarfile.PAX_FORMAT)
    copies = declared // STREAM_ZEROS
    with path.open("wb") as f:
        f.write(bz2.compress(header))
        for _ in range(copies):
            f.write(zeros_stream())
    return len(header) + copies * STREAM_ZEROS


@functools.cache
def zeros_stream() -> bytes:
    """STREAM_ZEROS zeros as one bz2 stream, fed to the compressor 1 MiB at a time."""
    compressor = bz2.BZ2Compressor(9)
    parts = [compressor.compress(bytes(2**20)) for _ in range(STREAM_ZEROS // 2**20)]
    return b"".join(parts) + compressor.flush()


def corrupt_zip(path: Path) -> None:
    """A zip of a good sampling.py whose deflate stream starts with a reserved block type (zlib.error)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("sampling.py", SAMPLING)
    data = bytearray(path.read_bytes())
    data[30 + len("sampling.py")] = 0xFF   # first byte after the one local header: BFINAL=1, BTYPE=11
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as z, pytest.raises(zlib.error):
        z.read("sampling.py")             # what the batch met: not a BadZipFile


def tar_with(path: Path, members: list[tarfile.TarInfo]) -> None:
    with tarfile.open(path, "w:gz") as t:
        for m in members:
            t.addfile(m, io.BytesIO(SAMPLING.encode()) if m.isfile() else None)


def member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    info.size = len(SAMPLING.encode()) if kind == tarfile.REGTYPE else 0
    return info


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_a_disguised_bz2_bomb_stops_near_the_byte_budget(tmp_path):
    bomb = tmp_path / "bomb.tar.gz"
    real = bz2_bomb(bomb)
    assert bomb.stat().st_size < 4 * 2**20 and real > 10**12      # a few MiB that really hold a terabyte
    assert unpack.kind(bomb) == "bz2"
    into = tmp_path / "into"
    into.mkdir()
    started = time.monotonic()
    with pytest.raises(unpack.BadArchive, match="MiB"):
        unpack.unpack(bomb, into)
    assert time.monotonic() - started < 20
    assert folder_bytes(into) <= unpack.MAX_BYTES


def test_the_deadline_stops_an_archive_within_budget_but_slow(tmp_path):
    bomb = tmp_path / "slow.tar"
    bz2_bomb(bomb, declared=2 * unpack.MAX_BYTES)
    into = tmp_path / "into"
    into.mkdir()
    budget = unpack.Budget(max_bytes=2**40, deadline_s=0.2)   # bytes enough for all of it; time is not
    started = time.monotonic()
    with pytest.raises(unpack.BadArchive, match="longer than"):
        unpack.unpack(bomb, into, budget)
    assert time.monotonic() - started < 5


def test_a_corrupt_zip_is_that_students_error_document(tmp_path):
    upload = tmp_path / "eve.zip"
    corrupt_zip(upload)
    doc, max_scores, sources = batch.grade_one(upload, ["sampling"], hidden=False, seed=1)
    assert doc["status"] == "error" and "eve.zip" in doc["error"]
    assert max_scores["sampling"] > 0                              # what it could have scored, for grades.csv
    assert sources == {}                                           # nothing graded, nothing to compare


@pytest.mark.parametrize("bad", [
    member("sampling.py", tarfile.SYMTYPE, "/etc/passwd"),
    member("sampling.py", tarfile.LNKTYPE, "../../outside.py"),
    member("dev", tarfile.CHRTYPE),
    member("fifo", tarfile.FIFOTYPE),
    member("/tmp/absolute.py"),
    member("../escaped.py"),
    member("deep/../../escaped.py"),
], ids=["symlink", "hardlink", "device", "fifo", "absolute", "dotdot", "dotdot-inside"])
def test_links_devices_and_paths_that_leave_are_refused(tmp_path, bad):
    upload = tmp_path / "mal.tgz"
    tar_with(upload, [member("ok.py"), bad])
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(unpack.BadArchive, match=bad.name.split("/")[-1]):
        unpack.unpack(upload, into)
    assert not any(p.is_symlink() for p in tmp_path.rglob("*"))
    assert not (tmp_path / "escaped.py").exists() and not Path("/tmp/absolute.py").exists()


def test_a_symlink_then_a_file_through_it_never_writes_outside(tmp_path):
    upload = tmp_path / "mal.tar"
    outside = tmp_path / "outside"
    outside.mkdir()
    with tarfile.open(upload, "w") as t:                          # plain tar, read from its ustar magic
        t.addfile(member("exercises", tarfile.SYMTYPE, str(outside)))
        t.addfile(member("exercises/sampling.py"), io.BytesIO(SAMPLING.encode()))
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(unpack.BadArchive, match="exercises"):
        unpack.unpack(upload, into)
    assert list(outside.iterdir()) == []


def test_the_kind_comes_from_the_content_not_the_name(tmp_path):
    for name, mode, kind in (("a.zip", "w:gz", "gzip"), ("b.tgz", "w:xz", "xz"), ("c.tar.gz", "w", "tar")):
        with tarfile.open(tmp_path / name, mode) as t:
            t.addfile(member("sampling.py"), io.BytesIO(SAMPLING.encode()))
        into = tmp_path / f"into-{kind}"
        into.mkdir()
        assert unpack.kind(tmp_path / name) == kind
        assert (unpack.unpack(tmp_path / name, into) / "sampling.py").read_text() == SAMPLING
    (tmp_path / "d.zip").write_text("not an archive")
    with pytest.raises(unpack.BadArchive, match="not a zip or a tar"):
        unpack.kind(tmp_path / "d.zip")


def test_too_many_members_are_refused_while_reading(tmp_path):
    upload = tmp_path / "many.tar.gz"
    with tarfile.open(upload, "w:gz") as t:
        for i in range(6):
            t.addfile(tarfile.TarInfo(f"f{i}"), io.BytesIO(b""))
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(unpack.BadArchive, match="more than 5 files"):
        unpack.unpack(upload, into, unpack.Budget(max_members=5))
    assert len(list(into.iterdir())) == 5                          # stopped at the sixth, as it was read


def test_a_zip_directory_of_too_many_entries_is_refused_before_zipfile_reads_it(tmp_path, monkeypatch):
    """Found: a 16 MiB zip of 190,000 empty entries cost 12 s and 208 MiB, all in zipfile reading its directory,
    before the member budget was charged once."""
    upload = tmp_path / "many.zip"
    deep_zip(upload, members=6, depth=0)
    monkeypatch.setattr(unpack.zipfile, "ZipFile", None)  # reading the directory now raises TypeError
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(unpack.BadArchive, match="more than 5 files"):
        unpack.unpack(upload, into, unpack.Budget(max_members=5))


def deep_zip(path: Path, members: int, depth: int) -> None:
    """A zip of `members` empty folders, each `depth` folders deep: a few hundred bytes of name per member."""
    with zipfile.ZipFile(path, "w") as z:
        for i in range(members):
            z.writestr(f"d{i}/" + "a/" * depth, b"")


def test_a_stored_zip_inside_a_zip_is_not_counted_as_its_members(tmp_path):
    """A three-member upload whose one stored member is itself a zip of 2001 entries (a data file, a .whl, a
    torch.save checkpoint: zips all, and Python's zipfile stores by default) was refused for holding more than 2000
    files and folders: its member's bytes hold 2001 directory signatures, which the pre-count takes for its own."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        for i in range(unpack.MAX_MEMBERS + 1):
            z.writestr(f"a{i}", b"")
    upload = tmp_path / "ada.zip"
    with zipfile.ZipFile(upload, "w") as z:  # stored, as zipfile's default
        z.writestr("sampling.py", SAMPLING)
        z.writestr("data/cache.zip", inner.getvalue())
    into = tmp_path / "into"
    into.mkdir()
    unpack.unpack(upload, into)
    assert (into / "data" / "cache.zip").read_bytes() == inner.getvalue()


def test_every_folder_a_deep_name_makes_is_charged_as_a_member(tmp_path):
    upload = tmp_path / "deep.zip"
    deep_zip(upload, members=3, depth=200)   # 3 members, 603 folders: unbudgeted, 2000 such made 1.8M folders
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(unpack.BadArchive, match="more than 50 files and folders"):
        unpack.unpack(upload, into, unpack.Budget(max_members=50))
    made = sum(len(dirs) for _, dirs, _ in os.walk(into))
    assert made <= 50


def test_the_deadline_holds_for_a_zip_of_empty_members(tmp_path):
    upload = tmp_path / "empty.zip"
    deep_zip(upload, members=20, depth=1)    # nothing to inflate: no byte is ever charged
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(unpack.BadArchive, match="longer than"):
        unpack.unpack(upload, into, unpack.Budget(deadline_s=0.0))


def infergrade(*args, cwd: Path, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie that nobody reaped yet has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def rows(out: Path) -> dict[str, dict]:
    with (out / "grades.csv").open() as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def test_a_corrupt_zip_and_a_bomb_cost_seconds_and_every_student_gets_a_row(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    for name in ("ann", "zed"):
        (klass / name).mkdir()
        (klass / name / "sampling.py").write_text(SAMPLING)
    corrupt_zip(klass / "bob.zip")
    bz2_bomb(klass / "cat.tar.gz")
    out = tmp_path / "out"
    started = time.monotonic()
    run = infergrade("grade-batch", klass, "--out", out, "--topic", "sampling", "--public", "--seed", 3,
                     "--jobs", 2, cwd=tmp_path)
    try:
        _, stderr = run.communicate(timeout=300)    # the bomb alone would take hours to decompress whole
    finally:
        run.kill()
    took = time.monotonic() - started
    print(f"batch of 4 (2 good, corrupt zip, bz2 bomb): {took:.1f} s; the bomb was refused after "
          f"{json.loads((out / 'cat.json').read_text())['duration_s']:.1f} s")
    assert run.returncode == 1, stderr                                    # two could not be graded
    found = rows(out)
    assert sorted(found) == ["ann", "bob", "cat", "zed"]
    assert found["ann"]["status"] == found["zed"]["status"] == "completed"
    assert float(found["ann"]["total"]) == float(found["ann"]["max"]) > 0
    for bad in ("bob", "cat"):
        assert found[bad]["status"] == "error" and found[bad]["reason"]
        assert float(found[bad]["max"]) == float(found["ann"]["max"])    # the maximum is kept, not 0/0
        assert json.loads((out / f"{bad}.json").read_text())["duration_s"] < 20   # each stopped in seconds


def test_sigterm_ends_a_batch_within_seconds_with_what_was_graded(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "ann").mkdir()
    (klass / "ann" / "sampling.py").write_text(SAMPLING)
    for name in ("bob", "cy"):       # every call sleeps: each check waits for its timeout
        (klass / name).mkdir()
        (klass / name / "sampling.py").write_text(SAMPLING + "\nimport time\n"
                                                  "def top_p_filter(*a, **k):\n    time.sleep(600)\n")
    out = tmp_path / "out"
    run = infergrade("grade-batch", klass, "--out", out, "--topic", "sampling", "--public", "--seed", 3,
                     "--jobs", 1, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 240
        while not (out / "ann.json").exists() and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
        assert (out / "ann.json").exists(), "ann was never graded"
        time.sleep(2)                                                    # bob's checks are under way
        assert run.poll() is None
        workers = [int(pid) for pid in Path(f"/proc/{run.pid}/task/{run.pid}/children").read_text().split()]
        sent = time.monotonic()
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        run.kill()
    print(f"SIGTERM to exit: {took:.1f} s")
    assert run.returncode == 128 + signal.SIGTERM, stderr
    assert took < 10 and workers
    time.sleep(1)
    assert not [pid for pid in workers if alive(pid)]                   # the workers (and their zygotes) too
    resume = shlex.join(["infergrade", "grade-batch", str(klass), "--out", str(out), "--resume"])
    assert resume in stderr
    found = rows(out)
    assert found["ann"]["status"] == "completed"
    assert found["bob"]["status"] == found["cy"]["status"] == "interrupted"
