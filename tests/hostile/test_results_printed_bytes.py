"""Sandbox v4, red team: what a submission prints breaks no export.

A failed public check shows the last lines the submission printed. The submission writes raw bytes to its
descriptors: a CDATA end, NUL and other control characters, a terminal escape, invalid UTF-8 (a lone surrogate's
bytes, a cut sequence), noncharacters and an XML close tag, then returns a wrong answer. The JSON, Gradescope and
JUnit results must all be valid documents that still show the check's failure (and JSON, the output).
"""
import json
import xml.etree.ElementTree as ET

from click.testing import CliRunner

from grader.cli import main
from grader.sandbox.policy import REPO

ODD_OUTPUT = r'''

import os as _os


def greedy(logits):
    for fd in (1, 2):
        _os.write(fd, b"]]></system-out><x>\x00\x01\x1b[2J\xed\xa0\x80\xe2\x82 \xef\xbf\xbe\xef\xbf\xbf done\n")
    return 0
'''


def test_odd_bytes_printed_by_the_submission_break_no_export(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "sampling.py").write_text((REPO / "solutions" / "sampling.py").read_text() + ODD_OUTPUT)
    for fmt in ("json", "gradescope", "junit"):
        out = tmp_path / f"results.{fmt}"
        result = CliRunner().invoke(main, ["grade", "--submission", str(folder), "--topic", "sampling", "--seed", "1",
                                           "--out", str(out), "--format", fmt], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        raw = out.read_bytes()
        assert b"\x00" not in raw and b"\x1b" not in raw
        if fmt == "junit":                                             # JUnit carries no output
            failed = [c for c in ET.fromstring(raw).iter("testcase") if c.find("failure") is not None]
            assert any("greedy" in c.get("name", "") for c in failed)
        else:
            text = raw.decode("utf-8")
            assert "done" in text and "got 0" in text                  # the output and the failure, made safe
            json.loads(text)
