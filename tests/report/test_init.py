"""The public surface of `sounding.report` cannot drift unnoticed."""

from __future__ import annotations

import sounding.report

PINNED = [
    "COMPARE_SCHEMA",
    "REPORT_SCHEMA",
    "Gap",
    "Results",
    "ResultsError",
    "RunComparison",
    "RunSummary",
    "ScenarioSummary",
    "ScenarioTrials",
    "StoredTrial",
    "compare_command",
    "compare_runs",
    "html_report",
    "json_report",
    "junit_report",
    "load_results",
    "markdown_report",
    "print_comparison",
    "report_command",
    "report_document",
    "trial_id",
]


def test_the_public_names_are_pinned_and_sorted() -> None:
    assert sounding.report.__all__ == PINNED
    assert all(getattr(sounding.report, name) is not None for name in PINNED)
