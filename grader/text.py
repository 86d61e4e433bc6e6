"""Text from a submission made safe to show: no terminal escapes, no control characters, no lone surrogates, no
bidi overrides, nothing XML 1.0 forbids."""
from __future__ import annotations

import re

# C0 but newline and tab (ESC starts every terminal escape), DEL, C1 (0x9b is CSI, 0x9d OSC), lone surrogates (a
# file name's undecodable bytes), the noncharacters XML 1.0 forbids, and the bidi embeddings, overrides and
# isolates that make text read in another order than it is stored (a name shown as another's).
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"[\n\t]")


def printable(text: str) -> str:
    """`text` with every control character but newline and tab, every lone surrogate, bidi control and the
    noncharacters U+FFFE and U+FFFF shown as U+FFFD."""
    return _UNSAFE.sub("\ufffd", text)


def one_line(text: str) -> str:
    """`text` printable on one line (newline and tab shown as U+FFFD too): a name, in a table or a progress bar."""
    return _LINE_BREAKS.sub("\ufffd", printable(text))


def tail(text: str, lines: int, max_bytes: int) -> str:
    """The last `lines` lines of `text`, at most `max_bytes` of UTF-8 (cut at a line start where possible)."""
    kept = text.splitlines()[-lines:]
    out = "\n".join(kept)
    data = out.encode("utf-8")
    if len(data) > max_bytes:
        out = data[-max_bytes:].decode("utf-8", "ignore")
        out = out.split("\n", 1)[1] if "\n" in out else out
    return out
