"""JUnit XML (`--junit`): one testsuite per SDK, one testcase per fixture.

CI systems render each testsuite separately, so every SDK of a multi-SDK run gets its own; the
suite's properties carry the SDK's command, its capabilities and its column of the tally.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from fakepeer.report.fleet import diverging, pair_headline
from fakepeer.report.registry import Reporter
from fakepeer.report.tally import Tally, tally_from_json
from fakepeer.session.outcomes import INVARIANT_NOTE

_MAX_TEXT = 20_000
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TALLY = ("tests", "failures", "errors", "skipped", "time")


def to_junit(document: dict) -> ET.ElementTree:
    """The JUnit tree of a JSON report document."""
    root = ET.Element("testsuites", name="ryusen-conform")
    totals = dict.fromkeys(_TALLY, 0.0)
    category_tally = tally_from_json(document["matrix"])
    for sdk in document["sdks"]:
        suite = ET.SubElement(root, "testsuite", name=sdk["label"])
        pairs = [p for p in document.get("fleet") or () if p["label"] == sdk["label"]]
        _add_properties(
            suite, sdk, category_tally, document.get("order") or {}, _versions(document), pairs
        )
        tally = dict.fromkeys(_TALLY, 0.0)
        for case in sdk["cases"]:
            element = ET.SubElement(
                suite,
                "testcase",
                classname=f"{sdk['label']}.{case['category']}",
                name=case["id"],
                time=f"{case['duration']:.6f}",
            )
            tally["tests"] += 1
            tally["time"] += case["duration"]
            kind = _add_outcome(element, case)
            if kind:
                tally[kind] += 1
        for key, value in tally.items():
            suite.set(key, _number(key, value))
            totals[key] += value
    if document.get("list_problems"):
        _add_list_problems(root, document, totals)
    for key, value in totals.items():
        root.set(key, _number(key, value))
    ET.indent(root)
    return ET.ElementTree(root)


def _add_list_problems(root: ET.Element, document: dict, totals: dict[str, float]) -> None:
    """One failing testcase per --known-failures problem, so a CI test view that shows only
    testcases still shows why the run failed (a warning, as <system-out>, under --lenient)."""
    problems = document["list_problems"]
    suite = ET.SubElement(root, "testsuite", name="known-failure lists")
    failures = 0
    for problem in problems:
        element = ET.SubElement(suite, "testcase", classname="known-failures", name=_clip(problem))
        element.set("time", "0.000000")
        if document.get("lenient"):
            ET.SubElement(element, "system-out").text = _clip(f"warning: {problem}")
        else:
            ET.SubElement(element, "failure", message=_clip(problem), type="known-failures")
            failures += 1
    counts = {"tests": len(problems), "failures": failures, "errors": 0, "skipped": 0, "time": 0}
    for key, value in counts.items():
        suite.set(key, _number(key, value))
        totals[key] += value


def _number(key: str, value: float) -> str:
    return f"{value:.6f}" if key == "time" else str(int(value))


def _versions(document: dict) -> list[tuple[str, str]]:
    """The bench, corpus and protocol versions the verdicts come from."""
    corpus = document.get("corpus") or {}
    facts = [("ryusen-conform", document["tool"]["version"])]
    if corpus:
        facts += [("corpus", corpus["version"]), ("corpus.fingerprint", corpus["fingerprint"])]
    return [*facts, ("protocol", document["protocol_version"])]


def _add_properties(
    suite: ET.Element,
    sdk: dict,
    tally: Tally,
    order: dict,
    versions: list[tuple[str, str]],
    fleet: list[dict],
) -> None:
    properties = ET.SubElement(suite, "properties")
    caps = sdk["capabilities"]
    facts = [
        *versions,
        ("command", " ".join(sdk["command"])),
        ("capabilities", "(never registered)" if caps is None else ",".join(caps)),
    ]
    if order.get("shuffle_seed") is not None:
        facts.append(("shuffle_seed", str(order["shuffle_seed"])))
    if order.get("isolate"):
        facts.append(("isolate", "true"))
    facts += [(f"category.{c}", tally.cell(c, sdk["label"]).text) for c in tally.categories]
    facts.append(("total", tally.totals[sdk["label"]].text))
    facts.append(("warnings", str(sdk["summary"].get("warnings", 0))))
    for pair in fleet:  # a fleet pair's suite: its section of the report, as properties
        facts.append(("fleet", pair_headline(pair)))
        facts += [(f"fleet.{scenario}", shown) for scenario, shown in diverging(pair).items()]
    for name, value in facts:
        ET.SubElement(properties, "property", name=name, value=_clip(value))


def _add_outcome(element: ET.Element, case: dict) -> str | None:
    outcome, reason = case["outcome"], case["reason"]
    stderr = f"SDK stderr (tail):\n{case['stderr_tail']}" if case["stderr_tail"] else ""
    details = "\n\n".join(part for part in (case["diff_text"], stderr) if part)
    if outcome == "fail":
        kind = "fail" if case["fails_run"] else "warning"
        if case.get("fails_run_by_invariant"):
            kind, reason = "invariant", f"{reason} ({INVARIANT_NOTE})"
        node = ET.SubElement(element, "failure", message=_clip(reason), type=kind)
        node.text = _clip(details)
        return "failures"
    if outcome == "error":
        node = ET.SubElement(element, "error", message=_clip(reason), type="error")
        node.text = _clip(details)
        return "errors"
    if outcome == "skip":
        ET.SubElement(element, "skipped", message=_clip(reason))
        return "skipped"
    if outcome == "xfail":
        ET.SubElement(element, "skipped", message=_clip(f"known failure: {reason}"))
        return "skipped"
    if outcome == "pass" and case.get("warned"):
        # differences in recommended parts only: a passing testcase that shows them, or a
        # failure under --strict (where warnings fail the run)
        if case["fails_run"]:
            node = ET.SubElement(element, "failure", message=_clip(reason), type="warning")
            node.text = _clip(details)
            return "failures"
        ET.SubElement(element, "system-out").text = _clip(f"warning: {reason}\n\n{details}")
        return None
    if outcome == "xpass":
        message = "unexpected pass of a known failure"
        if case["fails_run"]:
            ET.SubElement(element, "failure", message=message, type="xpass")
            return "failures"
        ET.SubElement(element, "system-out").text = message
    return None


def _clip(text: str) -> str:
    """Keep the tail of long text and drop characters XML 1.0 cannot carry."""
    text = text if len(text) <= _MAX_TEXT else "..." + text[-_MAX_TEXT:]
    return _NOT_XML.sub("\ufffd", text)


def _render(document: dict) -> str:
    tree = to_junit(document)
    return (
        "<?xml version='1.0' encoding='utf-8'?>\n"
        + ET.tostring(tree.getroot(), encoding="unicode")
        + "\n"
    )


REPORTER = Reporter(
    name="junit",
    options=("--junit",),
    help="Write JUnit XML (one testsuite per SDK) to PATH.",
    noun="JUnit XML",
    render=_render,
    order=20,
)
