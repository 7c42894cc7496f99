"""Known failures, one list per SDK, applied once after the run (as protobuf's runner does).

A list file holds one fixture id per line, optionally followed by `# reason`; lines that start
with `#` and blank lines are comments. One file may hold the lists of several SDKs, each under a
`[LABEL]` line (the SDK's `--sdk` text); lines before the first `[LABEL]` apply to every SDK.

Results keep their raw outcome while the run plays; `apply` turns a listed failure into `xfail`
and a listed pass into `xpass` afterwards. A listed pass, and a listed id that names no loaded
fixture, fail the run unless `--lenient`; `--update-failures` rewrites the lists to what the run
saw (atomically: a reader never sees half a file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fakepeer import atomic
from fakepeer.session.outcomes import FAILING, Outcome, apply_known_failure
from fakepeer.session.results import CaseResult, RunResult, SdkRun

EVERY_SDK = ""  # the section of a list file that applies to every SDK
_SECTION = re.compile(r"^\[(?P<label>.+)\]$")


class KnownFailuresError(ValueError):
    """A list that cannot be read or written: the message names the file and line."""


@dataclass
class KnownList:
    """The ids listed for one SDK (id -> reason, possibly empty), the file they came from, and
    the `[section]` of that file (EVERY_SDK for a plain list)."""

    path: Path
    entries: dict[str, str] = field(default_factory=dict)
    section: str = EVERY_SDK


@dataclass
class KnownFailures:
    """Every list given on the command line, by SDK label (EVERY_SDK for unlabelled ones)."""

    lists: dict[str, KnownList] = field(default_factory=dict)

    def for_sdk(self, label: str) -> KnownList | None:
        return self.lists.get(label) or self.lists.get(EVERY_SDK)

    def __bool__(self) -> bool:
        return bool(self.lists)


def parse_list(text: str, path: Path) -> dict[str, dict[str, str]]:
    """Section label -> (id -> reason); raise KnownFailuresError naming `path:line`."""
    sections: dict[str, dict[str, str]] = {EVERY_SDK: {}}
    current = sections[EVERY_SDK]
    for number, line in enumerate(text.splitlines(), start=1):
        entry, _, reason = line.partition("#")
        entry = entry.strip()
        if not entry:
            continue
        section = _SECTION.match(entry)
        if section:
            current = sections.setdefault(section["label"], {})
            continue
        if any(char.isspace() for char in entry):
            raise KnownFailuresError(
                f"{path}:{number}: expected one fixture id (then an optional '# reason'), "
                f"got {entry!r}"
            )
        current[entry] = reason.strip()
    return sections


def read_lists(specs: Sequence[str], labels: Sequence[str]) -> KnownFailures:
    """The lists named by `--known-failures` values: `FILE` or `LABEL=FILE`.

    `LABEL=` is recognized only when LABEL is one of the run's SDK labels, so a path with `=`
    in it still works. A file's `[LABEL]` sections give lists to those SDKs.
    """
    known = KnownFailures()
    for spec in specs:
        label, path = _split_spec(spec, labels)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise KnownFailuresError(f"cannot read --known-failures {path}: {exc}") from None
        for section, entries in parse_list(text, path).items():
            if not entries and section == EVERY_SDK:
                continue
            target = label if section == EVERY_SDK else section
            if target in known.lists:
                raise KnownFailuresError(
                    f"--known-failures {path}: the SDK {target or '(every SDK)'!r} already has "
                    f"a list ({known.lists[target].path})"
                )
            known.lists[target] = KnownList(path, entries, section)
        if label not in known.lists and all(other.path != path for other in known.lists.values()):
            known.lists[label] = KnownList(path)  # an empty list (comments only), still updatable
    _check_sections(known, labels)
    return known


def _check_sections(known: KnownFailures, labels: Sequence[str]) -> None:
    """A `[LABEL]` section that names no `--sdk` is an error: a changed path in CI must not
    detach a list silently (every case of that SDK would fail, or worse, a list be ignored)."""
    for label, listed in known.lists.items():
        if listed.section != EVERY_SDK and label not in labels:
            given = ", ".join(repr(text) for text in labels) or "none"
            raise KnownFailuresError(
                f"--known-failures {listed.path}: section [{label}] matches no --sdk "
                f"(the SDKs are {given}); rename the section to the --sdk text"
            )


def _split_spec(spec: str, labels: Sequence[str]) -> tuple[str, Path]:
    for label in sorted(labels, key=len, reverse=True):
        if spec.startswith(label + "="):
            return label, Path(spec[len(label) + 1 :])
    return EVERY_SDK, Path(spec)


def apply(run: RunResult, known: KnownFailures) -> None:
    """Set every case's outcome from its raw outcome and its SDK's list (once, after the run)."""
    for sdk in run.sdks:
        listed = known.for_sdk(sdk.label)
        entries = listed.entries if listed else {}
        for case in sdk.results:
            # a case not run (or that the bench failed on) did not fail for its listed reason
            listed_here = case.id in entries and not (case.not_run or case.internal)
            failing_pass = run.strict and case.warned
            case.outcome = apply_known_failure(case.raw_outcome, listed_here, failing_pass)


def is_listed(known: KnownFailures, label: str, ident: str) -> bool:
    """Whether the SDK's list names this case (a known failure, which --maxfail does not count)."""
    listed = known.for_sdk(label)
    return listed is not None and ident in listed.entries


def problems(known: KnownFailures, corpus_ids: Iterable[str]) -> list[str]:
    """Listed ids that name no loaded fixture: each fails the run unless `--lenient`."""
    loaded = set(corpus_ids)
    found = []
    for label, listed in known.lists.items():
        for ident in sorted(set(listed.entries) - loaded):
            owner = f" (for {label})" if label else ""
            found.append(f"{listed.path}{owner} lists {ident}, which is not a loaded fixture")
    return found


def update(run: RunResult, known: KnownFailures, corpus_ids: Iterable[str]) -> list[Path]:
    """Rewrite each list to the run's raw failures; ids not run this time are kept as they are.

    Reasons and comment lines already written are kept, in place; a new entry's reason is its
    first finding (or the first line of its failure). Ids that name no loaded fixture are
    dropped. Returns the files written.
    """
    loaded = set(corpus_ids)
    by_file: dict[Path, dict[str, dict[str, str]]] = {}
    for label, listed in known.lists.items():
        by_file.setdefault(listed.path, {})[listed.section] = _updated(
            listed, _runs_for(run, known, label), loaded
        )
    for path, sections in by_file.items():
        try:
            original = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            original = ""
        write_atomically(path, rewrite_lists(original, sections))
    return list(by_file)


def rewrite_lists(original: str, sections: Mapping[str, Mapping[str, str]]) -> str:
    """`original` with each section's ids set to `sections`: comments, blank lines and the lines
    of entries still listed stay as written; dropped entries go; new ones end their section."""
    kept: list[tuple[str, str | None]] = []  # (section, line); line None marks a section's end
    current = EVERY_SDK
    seen: set[str] = {EVERY_SDK}
    for line in original.splitlines():
        entry = line.partition("#")[0].strip()
        header = _SECTION.match(entry) if entry else None
        if header:
            kept.append((current, None))
            current = header["label"]
            seen.add(current)
        elif entry and entry not in sections.get(current, {}):
            continue
        kept.append((current, line))
    kept.append((current, None))
    out: list[str] = []
    written = {(section, line.partition("#")[0].strip()) for section, line in kept if line}
    for section, line in kept:
        if line is not None:
            out.append(line)
            continue
        new = sections.get(section, {})
        out += [_entry_line(i, new[i]) for i in sorted(new) if (section, i) not in written]
    for label in sorted(set(sections) - seen):
        out.append(f"[{label}]")
        out += [_entry_line(i, sections[label][i]) for i in sorted(sections[label])]
    return "\n".join(out) + "\n" if out else ""


def _entry_line(ident: str, reason: str) -> str:
    reason = reason.replace("\n", " ")
    return f"{ident}  # {reason}" if reason else ident


def _runs_for(run: RunResult, known: KnownFailures, label: str) -> list[SdkRun]:
    if label != EVERY_SDK:
        return [sdk for sdk in run.sdks if sdk.label == label]
    return [sdk for sdk in run.sdks if sdk.label not in known.lists]


def _updated(listed: KnownList, runs: list[SdkRun], loaded: set[str]) -> dict[str, str]:
    ran = {case.id: case for sdk in runs for case in sdk.results}
    entries = {i: reason for i, reason in listed.entries.items() if i in loaded and i not in ran}
    for ident, case in ran.items():
        if case.not_run or case.internal:  # no verdict: the entry stays as it was
            if ident in listed.entries:
                entries[ident] = listed.entries[ident]
        elif case.raw_outcome in FAILING:
            entries[ident] = listed.entries.get(ident) or finding_of(case)
    return entries


def finding_of(case: CaseResult) -> str:
    """What a list's reason says of a failure: its first finding (`/value: expected 1, got
    2`), else the first line of its reason (`crashed: ...`)."""
    first = next((f for f in case.findings if not f.consequence), None)
    if first is None:
        return _first_line(case.reason)
    return _first_line(f"{first.pointer or '(root)'}: {first.message}")


def failures_of(run: RunResult) -> dict[str, dict[str, str]]:
    """`--write-failures`: every SDK's raw failures, one section per SDK when there are several."""
    sections = {}
    for sdk in run.sdks:
        label = EVERY_SDK if len(run.sdks) == 1 else sdk.label
        sections[label] = {
            case.id: finding_of(case)
            for case in sdk.results
            if case.raw_outcome in (Outcome.FAIL, Outcome.ERROR)
            and not (case.not_run or case.internal)  # no verdict, never a failure
        }
    return sections


def _first_line(text: str, limit: int = 100) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def format_lists(sections: Mapping[str, Mapping[str, str]], header: str = "") -> str:
    """The list-file text: an optional `#` header, then each section's ids sorted."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for label in sorted(sections, key=lambda label: (label != EVERY_SDK, label)):
        if label != EVERY_SDK:
            lines.append(f"[{label}]")
        lines += [_entry_line(i, sections[label][i]) for i in sorted(sections[label])]
    return "\n".join(lines) + "\n"


def write_atomically(path: Path, text: str) -> None:
    """Write through `fakepeer.atomic` (temporary file, fsync, rename); KnownFailuresError when
    it cannot."""
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise KnownFailuresError(f"cannot write {path}: {exc}") from None
