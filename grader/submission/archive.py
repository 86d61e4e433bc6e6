"""Unpack one uploaded archive into an empty folder, within budgets that hold whatever the archive declares.

The kind is read from the first bytes, never from the name (a `.tar.gz` may be bz2). Every byte is counted as
it comes out of the decompressor, with a byte budget, a member budget and a deadline checked on every read, so a
small archive that declares terabytes stops after about MAX_BYTES of output. Only regular files and folders are
written, each inside the target folder: no links, devices, absolute paths or `..`.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import tarfile
import time
import zipfile
from pathlib import Path, PurePosixPath

MAX_ARCHIVE_BYTES = 16 * 2**20  # the upload itself (a zip's directory is read whole before any member)
MAX_BYTES = 64 * 2**20  # decompressed: every member's bytes, and a tar's headers too
MAX_MEMBERS = 2000
DEADLINE_S = 60.0
CHUNK = 2**16

MAGIC = {b"PK\x03\x04": "zip", b"PK\x05\x06": "zip", b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}
DECOMPRESSORS = {"gzip": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"), "bz2": bz2.BZ2File, "xz": lzma.LZMAFile}
ZIP_DIRECTORY_ENTRY = b"PK\x01\x02"
ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}  # inflate is bounded per read; bz2 and lzma are not


class BadArchive(ValueError):
    """An archive that is not unpacked: unreadable, too large, too slow, or with a member that leaves it."""


class Budget:
    """Bytes, members and time left to one archive; each `spend_*` raises BadArchive once one runs out."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_members: int = MAX_MEMBERS,
                 deadline_s: float = DEADLINE_S):
        self.bytes_left, self.members_left = max_bytes, max_members
        self.max_bytes, self.max_members, self.deadline_s = max_bytes, max_members, deadline_s
        self.deadline = time.monotonic() + deadline_s

    def spend_bytes(self, n: int) -> None:
        self.bytes_left -= n
        if self.bytes_left < 0:
            raise BadArchive(f"it unpacks to more than {self.max_bytes // 2**20} MiB")
        if time.monotonic() > self.deadline:
            raise BadArchive(f"unpacking it took longer than {self.deadline_s:g} s")

    def spend_member(self) -> None:
        self.members_left -= 1
        if self.members_left < 0:
            raise BadArchive(f"it holds more than {self.max_members} files and folders")
        if time.monotonic() > self.deadline:  # a zip of empty members never charges a byte
            raise BadArchive(f"unpacking it took longer than {self.deadline_s:g} s")


class CountedReader:
    """A read-only stream over `inner` (a decompressor) that charges every byte it returns to `budget`."""

    def __init__(self, inner, budget: Budget):
        self.inner, self.budget = inner, budget

    def read(self, n: int = -1) -> bytes:
        data = self.inner.read(CHUNK if n is None or n < 0 else min(n, CHUNK))  # never one unbounded read
        self.budget.spend_bytes(len(data))
        return data


def kind(archive: Path) -> str:
    """'zip', 'tar' or the compression of a tar ('gzip', 'bz2', 'xz'), from the first bytes of `archive`."""
    with archive.open("rb") as f:
        head = f.read(512)
    for magic, name in MAGIC.items():
        if head.startswith(magic):
            return name
    if head[257:262] == b"ustar":
        return "tar"
    raise BadArchive("it is not a zip or a tar archive (plain, gzip, bz2 or xz), whatever its name says")


def unpack(archive: Path, into: Path, budget: Budget | None = None) -> Path:
    """Write the files of `archive` into the empty folder `into`; raises BadArchive saying what is wrong."""
    budget = budget or Budget()
    size = archive.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise BadArchive(f"the archive is {size / 2**20:.1f} MiB, more than {MAX_ARCHIVE_BYTES // 2**20} MiB")
    found = kind(archive)
    if found == "zip":
        _unpack_zip(archive, into, budget)
    else:
        with archive.open("rb") as raw:
            _unpack_tar(raw if found == "tar" else DECOMPRESSORS[found](raw), into, budget)
    return into


def _unpack_tar(stream, into: Path, budget: Budget) -> None:
    """Read the tar as a stream ('r|': no seeking back): headers and data both come through the budget."""
    with tarfile.open(fileobj=CountedReader(stream, budget), mode="r|") as tar:
        for member in tar:
            budget.spend_member()
            if member.isdir():
                _make_folders(into, _target(into, member.name), budget)
            elif member.type in (tarfile.REGTYPE, tarfile.AREGTYPE) and not member.sparse:
                source = tar.extractfile(member)
                assert source is not None, "a regular member always has data"
                target = _target(into, member.name)
                _make_folders(into, target.parent, budget)
                _write(source, target, None)  # charged as the stream was read
            else:
                raise BadArchive(f"{member.name!r} is a link, a device or a sparse file, not a plain file")


def _directory_signatures(archive: Path) -> int:
    """How many directory entry signatures the bytes that zipfile reads as the central directory hold, found as
    zipfile finds them (its end record reader, and its offsets, zip64 included); 0 where it finds no end record."""
    if not hasattr(zipfile, "_EndRecData"):  # private to zipfile: where a Python lacks it, count the whole file
        return archive.read_bytes().count(ZIP_DIRECTORY_ENTRY)
    with archive.open("rb") as f:
        end = zipfile._EndRecData(f)
        if end is None:
            return 0  # zipfile refuses it itself
        size, offset = end[zipfile._ECD_SIZE], end[zipfile._ECD_OFFSET]
        start = end[zipfile._ECD_LOCATION] - size  # where zipfile reads from: concat + offset in _RealGetContents
        if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
            start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
        f.seek(max(start, 0))
        return f.read(size).count(ZIP_DIRECTORY_ENTRY)


def _unpack_zip(archive: Path, into: Path, budget: Budget) -> None:
    # zipfile reads the whole central directory into objects before any member, however many its end record
    # declares: a 16 MiB zip of 190,000 empty entries cost 12 s and 208 MiB. Every directory entry starts with its
    # signature, so counting the signature in the bytes zipfile will read as the directory bounds the entries from
    # above before zipfile sees one (not in the whole file: a stored member that is itself a zip holds them too).
    if _directory_signatures(archive) > budget.max_members:
        raise BadArchive(f"it holds more than {budget.max_members} files and folders")
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            budget.spend_member()
            mode = info.external_attr >> 16
            if mode & 0o170000 not in (0, 0o100000, 0o040000):
                raise BadArchive(f"{info.filename!r} is a link or a device, not a plain file")
            if info.is_dir():
                _make_folders(into, _target(into, info.filename), budget)
                continue
            if info.compress_type not in ZIP_METHODS:
                raise BadArchive(f"{info.filename!r} is compressed with method {info.compress_type}: "
                                 f"zip it again with the usual deflate")
            target = _target(into, info.filename)
            _make_folders(into, target.parent, budget)
            with z.open(info) as source:
                _write(source, target, budget)  # charged as it is inflated


def _target(into: Path, name: str) -> Path:
    """Where member `name` goes inside `into`; refuses a name that is absolute, empty or climbs out."""
    path = PurePosixPath(name)
    if not name or "\x00" in name or "\\" in name or path.is_absolute() or ".." in path.parts:
        raise BadArchive(f"{name!r} would be written outside the archive's folder")
    return into.joinpath(*path.parts)


def _make_folders(into: Path, folder: Path, budget: Budget) -> None:
    """Make `folder` inside `into` one missing folder at a time, each charged as a member: a name 900 folders
    deep is one member of the archive, and 2000 of them made 1.8 million folders with no byte charged."""
    current = into
    for part in folder.relative_to(into).parts:
        current = current / part
        if not current.is_dir():  # nothing unpacked is a link, so this is a folder made here or nothing
            budget.spend_member()
            current.mkdir()


def _write(source, target: Path, budget: Budget | None) -> None:
    """Copy `source` to a new plain file `target` in chunks, each charged to `budget` (if given) as it is read."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(CHUNK):
            if budget is not None:
                budget.spend_bytes(len(chunk))
            out.write(chunk)
