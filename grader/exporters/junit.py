"""JUnit XML: one testsuite per topic, one testcase per check."""
from __future__ import annotations

import xml.etree.ElementTree as ET


def to_junit(doc: dict) -> str:
    root = ET.Element("testsuites", name="infergrade", time=f"{doc['duration_s']:.3f}")
    for topic in doc["topics"]:
        checks = topic["checks"]
        suite = ET.SubElement(root, "testsuite", name=topic["id"], tests=str(len(checks)),
                              failures=_count(checks, "failed", "not_started"),
                              errors=_count(checks, "error", "timeout", "interrupted"),
                              skipped=_count(checks, "skipped"), time=f"{topic['duration_s']:.3f}")
        if topic["status"] == "error" and topic["message"] and not checks:
            case = ET.SubElement(suite, "testcase", classname=topic["id"], name="import")
            ET.SubElement(case, "error", message=topic["message"])
        for c in checks:
            case = ET.SubElement(suite, "testcase", classname=topic["id"], name=c["id"].split(".", 1)[1],
                                 time=f"{c['duration_s']:.3f}")
            ET.SubElement(case, "properties").extend(
                ET.Element("property", name=k, value=str(c[k])) for k in ("score", "max_score", "seed", "misconception"))
            tag = {"failed": "failure", "not_started": "failure", "error": "error", "timeout": "error",
                   "interrupted": "error", "skipped": "skipped"}.get(c["status"])
            if tag:
                ET.SubElement(case, tag, message=c["message"].splitlines()[0] if c["message"] else c["status"]).text = \
                    c["message"]
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _count(checks: list[dict], *statuses: str) -> str:
    return str(sum(c["status"] in statuses for c in checks))
