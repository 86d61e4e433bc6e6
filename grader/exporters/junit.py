"""JUnit XML: one testsuite per topic, one testcase per check, totals on <testsuites>.

Unimplemented functions ("not started") are failures that say so, never errors: errors are for crashes and hangs.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

FAILURES = ("failed", "not_started")
ERRORS = ("error", "timeout", "interrupted")
# What XML 1.0 forbids (its Char production: tab, newline, carriage return, U+0020-U+D7FF, U+E000-U+FFFD,
# U+10000-U+10FFFF): ElementTree writes it raw, and the file is then no XML any reader parses.
NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def to_junit(doc: dict) -> str:
    every = [c for topic in doc["topics"] for c in topic["checks"]]
    root = ET.Element("testsuites", name="infergrade", tests=str(len(every)),
                      failures=_count(every, *FAILURES), errors=_count(every, *ERRORS),
                      skipped=_count(every, "skipped"), time=f"{doc['duration_s']:.3f}")
    for topic in doc["topics"]:
        checks = topic["checks"]
        suite = ET.SubElement(root, "testsuite", name=topic["id"], tests=str(len(checks)),
                              failures=_count(checks, *FAILURES), errors=_count(checks, *ERRORS),
                              skipped=_count(checks, "skipped"), time=f"{topic['duration_s']:.3f}")
        if topic["status"] == "error" and topic["message"] and not checks:
            case = ET.SubElement(suite, "testcase", classname=topic["id"], name="import")
            ET.SubElement(case, "error", message=topic["message"])
        for c in checks:
            case = ET.SubElement(suite, "testcase", classname=topic["id"], name=c["id"].split(".", 1)[1],
                                 time=f"{c['duration_s']:.3f}")
            ET.SubElement(case, "properties").extend(
                ET.Element("property", name=k, value=str(c[k]))
                for k in ("score", "max_score", "seed", "misconception") if c[k] is not None)
            tag = {"failed": "failure", "not_started": "failure", "error": "error", "timeout": "error",
                   "interrupted": "error", "skipped": "skipped"}.get(c["status"])
            if tag:
                ET.SubElement(case, tag, message=c["message"].splitlines()[0] if c["message"] else c["status"]).text = \
                    c["message"]
    for element in root.iter():  # results.build made the strings printable; a document read back may not be
        element.text = element.text and NOT_XML.sub("", element.text)
        element.attrib = {k: NOT_XML.sub("", v) for k, v in element.attrib.items()}
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _count(checks: list[dict], *statuses: str) -> str:
    return str(sum(c["status"] in statuses for c in checks))
