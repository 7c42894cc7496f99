"""JUnit XML (`--junit`): one testsuite per SDK, one testcase per fixture.

CI systems render each testsuite separately, so every SDK of a multi-SDK run gets its own; the
suite's properties carry the SDK's command, its capabilities and its column of the matrix.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from fakepeer import atomic
from fakepeer.report.matrix import Matrix, build_matrix
from fakepeer.session.outcomes import Outcome
from fakepeer.session.results import CaseResult, RunResult, SdkRun

_MAX_TEXT = 20_000
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def to_junit(run: RunResult) -> ET.ElementTree:
    root = ET.Element("testsuites", name="ryusen-conform")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    matrix = build_matrix(run)
    for sdk in run.sdks:
        suite = ET.SubElement(root, "testsuite", name=sdk.label)
        _add_properties(suite, sdk, matrix)
        tally = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
        for case in sdk.results:
            element = ET.SubElement(
                suite,
                "testcase",
                classname=f"{sdk.label}.{case.category}",
                name=case.id,
                time=f"{case.duration:.6f}",
            )
            tally["tests"] += 1
            tally["time"] += case.duration
            kind = _add_outcome(element, case, run.strict)
            if kind:
                tally[kind] += 1
        for key, value in tally.items():
            suite.set(key, f"{value:.6f}" if key == "time" else str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, f"{value:.6f}" if key == "time" else str(value))
    ET.indent(root)
    return ET.ElementTree(root)


def _add_properties(suite: ET.Element, sdk: SdkRun, matrix: Matrix) -> None:
    properties = ET.SubElement(suite, "properties")
    caps = "(never registered)" if sdk.capabilities is None else ",".join(sdk.capabilities)
    facts = [("command", " ".join(sdk.command)), ("capabilities", caps)]
    facts += [(f"category.{c}", matrix.cell(c, sdk.label).text) for c in matrix.categories]
    facts.append(("total", matrix.totals[sdk.label].text))
    for name, value in facts:
        ET.SubElement(properties, "property", name=name, value=_clip(value))


def _add_outcome(element: ET.Element, case: CaseResult, strict: bool) -> str | None:
    details = "\n\n".join(part for part in (case.diff, _stderr(case)) if part)
    if case.outcome is Outcome.FAIL:
        warning = case.is_warning(strict)
        node = ET.SubElement(
            element, "failure", message=_clip(case.reason), type="warning" if warning else "fail"
        )
        node.text = _clip(details)
        return "failures"
    if case.outcome is Outcome.ERROR:
        node = ET.SubElement(element, "error", message=_clip(case.reason), type="error")
        node.text = _clip(details)
        return "errors"
    if case.outcome is Outcome.SKIP:
        ET.SubElement(element, "skipped", message=_clip(case.reason))
        return "skipped"
    if case.outcome is Outcome.XFAIL:
        ET.SubElement(element, "skipped", message=_clip(f"known failure: {case.reason}"))
        return "skipped"
    if case.outcome is Outcome.XPASS:
        if strict:
            ET.SubElement(
                element, "failure", message="unexpected pass of a known failure", type="xpass"
            )
            return "failures"
        ET.SubElement(element, "system-out").text = "unexpected pass of a known failure"
    return None


def _stderr(case: CaseResult) -> str:
    return f"SDK stderr (tail):\n{case.stderr_tail}" if case.stderr_tail else ""


def _clip(text: str) -> str:
    """Keep the tail of long text and drop characters XML 1.0 cannot carry."""
    text = text if len(text) <= _MAX_TEXT else "..." + text[-_MAX_TEXT:]
    return _NOT_XML.sub("\ufffd", text)


def write_junit(run: RunResult, path: Path) -> None:
    with atomic.replacing(path) as stream:
        to_junit(run).write(stream, encoding="utf-8", xml_declaration=True)
