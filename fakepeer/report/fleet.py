"""The fleet section of a report: for each pair of SDKs run as a fleet (an SDK run labelled
`A+B (fleet)`), each lifecycle scenario's outcome as `@fleet` and `@rolling`, and the pair's
`fleet.publication`.

Every report shows a pair's cases as it shows any SDK's; this section puts them side by side by
scenario, so "which scenarios diverge when these two SDKs share a run" reads in one place. It is
derived from the results alone, so `merge` keeps it.
"""

from __future__ import annotations

from fakepeer.session.results import RunResult, SdkRun

#: What a fleet pair's SDK run label ends with (`server.fleet_suite`).
FLEET_SUFFIX = " (fleet)"
PUBLICATION_ID = "fleet.publication"


def fleet_runs(run: RunResult) -> list[SdkRun]:
    return [sdk for sdk in run.sdks if sdk.label.endswith(FLEET_SUFFIX)]


def fleet_section(run: RunResult) -> list[dict]:
    """One entry per pair: its label, publication outcome, and per scenario its outcomes."""
    pairs = []
    for sdk in fleet_runs(run):
        scenarios: dict[str, dict[str, str]] = {}
        publication = None
        for case in sdk.results:
            if case.id == PUBLICATION_ID:
                publication = case.outcome.value
                continue
            scenario, _, variant = case.id.rpartition("@")
            scenarios.setdefault(scenario, {})[variant] = case.outcome.value
        pairs.append(
            {
                "label": sdk.label,
                "pair": sdk.label.removesuffix(FLEET_SUFFIX).split("+"),
                "publication": publication,
                "scenarios": dict(sorted(scenarios.items())),
            }
        )
    return pairs


def pair_headline(pair: dict) -> str:
    """One line for a pair of the section (console, JUnit, HTML say it the same way)."""
    scenarios = pair["scenarios"]
    passing = sum(1 for outcomes in scenarios.values() if _holds(outcomes))
    return (
        f"fleet {pair['label'].removesuffix(FLEET_SUFFIX)}: publication "
        f"{pair['publication'] or 'not run'}; {passing}/{len(scenarios)} scenarios pass "
        "(or skip) as every fleet variant"
    )


def diverging(pair: dict) -> dict[str, str]:
    """Each scenario some fleet variant did not pass, with its outcome per variant."""
    return {
        scenario: ", ".join(f"@{variant} {outcome}" for variant, outcome in outcomes.items())
        for scenario, outcomes in pair["scenarios"].items()
        if not _holds(outcomes)
    }


def _holds(outcomes: dict[str, str]) -> bool:
    return set(outcomes.values()) <= {"pass", "skip"}


def fleet_lines(run: RunResult) -> list[str]:
    """The console's fleet section: per pair, the counts and every scenario that did not pass
    in some fleet variant (with its outcome per variant)."""
    lines = []
    for pair in fleet_section(run):
        lines.append(pair_headline(pair))
        lines += [f"  {scenario}: {shown}" for scenario, shown in diverging(pair).items()]
    return lines
