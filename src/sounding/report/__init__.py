"""Reports of a stored run (JUnit XML, JSON, Markdown, HTML) and comparisons of two runs."""

import typing as _typing

from sounding._lazy import lazy_names as _lazy_names

if _typing.TYPE_CHECKING:
    from sounding.report._command import report_command
    from sounding.report._compare import (
        COMPARE_SCHEMA,
        Gap,
        RunComparison,
        compare_command,
        compare_runs,
        print_comparison,
    )
    from sounding.report._html import html_report, trial_id
    from sounding.report._json import REPORT_SCHEMA, json_report, report_document
    from sounding.report._junit import junit_report
    from sounding.report._load import (
        Results,
        ResultsError,
        RunSummary,
        ScenarioSummary,
        ScenarioTrials,
        StoredTrial,
        load_results,
    )
    from sounding.report._markdown import markdown_report

# each name, by the module that defines it: a module loads when one of its names is first
# used, so `sounding run`, which prints to the terminal only, never loads the report writers
_HOMES = {
    "report_command": "_command",
    **dict.fromkeys(
        (
            "COMPARE_SCHEMA",
            "Gap",
            "RunComparison",
            "compare_command",
            "compare_runs",
            "print_comparison",
        ),
        "_compare",
    ),
    **dict.fromkeys(("html_report", "trial_id"), "_html"),
    **dict.fromkeys(("REPORT_SCHEMA", "json_report", "report_document"), "_json"),
    "junit_report": "_junit",
    **dict.fromkeys(
        (
            "Results",
            "ResultsError",
            "RunSummary",
            "ScenarioSummary",
            "ScenarioTrials",
            "StoredTrial",
            "load_results",
        ),
        "_load",
    ),
    "markdown_report": "_markdown",
}


__getattr__ = _lazy_names(__name__, _HOMES)


__all__ = [
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
