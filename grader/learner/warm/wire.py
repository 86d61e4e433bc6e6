"""The warm grader's messages: a 4-byte length, then one JSON object (never pickle), with descriptors passed beside
the first bytes of a request (SCM_RIGHTS); and who is at the other end of the socket (SO_PEERCRED)."""
from __future__ import annotations

import json
import os
import socket
import struct

LENGTH = struct.Struct(">I")
MAX_BYTES = 2**20  # a request carries an environment and a command line; a reply, one exit code
CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


class WireError(OSError):
    """A message that is not one: cut short, too long, not a JSON object, or with descriptors it should not carry."""


def send(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    """`message` as one frame, with `fds` passed beside its first bytes."""
    data = json.dumps(message).encode()
    frame = LENGTH.pack(len(data)) + data
    if fds:
        frame = frame[socket.send_fds(sock, [frame], list(fds)):]
    if frame:  # (sendall of nothing still sends, and fails once the other end has answered and closed)
        sock.sendall(frame)


def recv(sock: socket.socket, max_fds: int = 0) -> tuple[dict, list[int]] | None:
    """The next message and the descriptors beside it, None at the end of the stream; WireError for anything else
    (descriptors received in excess are closed)."""
    head, fds, flags, _ = socket.recv_fds(sock, LENGTH.size, max(max_fds, 1))
    try:
        if flags & socket.MSG_CTRUNC or len(fds) > max_fds:
            raise WireError("more descriptors than a request carries")
        if not head:
            return None
        head += _exactly(sock, LENGTH.size - len(head))
        (length,) = LENGTH.unpack(head)
        if length > MAX_BYTES:
            raise WireError(f"a message of {length} bytes")
        message = json.loads(_exactly(sock, length))
        if not isinstance(message, dict):
            raise WireError("a message that is not a JSON object")
        return message, fds
    except (WireError, ValueError, OSError) as exc:
        for fd in fds:
            _close(fd)
        raise exc if isinstance(exc, WireError) else WireError(str(exc)) from None


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise WireError("the message was cut short")
        data += chunk
    return bytes(data)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def peer(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end, as the kernel recorded them when it connected."""
    pid, uid, _ = CREDENTIALS.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, CREDENTIALS.size))
    return pid, uid
