"""Text from a submission made safe to show: no terminal escapes, no control characters, no lone surrogates, nothing
XML 1.0 forbids."""
from __future__ import annotations

import re

_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """`text` with every control character but newline and tab, every lone surrogate and the noncharacters
    U+FFFE and U+FFFF shown as U+FFFD."""
    return _UNSAFE.sub("\ufffd", text)


def tail(text: str, lines: int, max_bytes: int) -> str:
    """The last `lines` lines of `text`, at most `max_bytes` of UTF-8 (cut at a line start where possible)."""
    kept = text.splitlines()[-lines:]
    out = "\n".join(kept)
    data = out.encode("utf-8")
    if len(data) > max_bytes:
        out = data[-max_bytes:].decode("utf-8", "ignore")
        out = out.split("\n", 1)[1] if "\n" in out else out
    return out
