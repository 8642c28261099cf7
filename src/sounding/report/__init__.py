"""Reports of a stored run (one renderer each: JUnit XML, JSON, Markdown, HTML),
comparisons of two runs, and the agreement of a run's judges with people."""

from sounding.report._agreement import agreement_command, print_agreement
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
from sounding.report._markdown import markdown_report
from sounding.report._renderers import renderers

__all__ = [
    "COMPARE_SCHEMA",
    "REPORT_SCHEMA",
    "Gap",
    "RunComparison",
    "agreement_command",
    "compare_command",
    "compare_runs",
    "html_report",
    "json_report",
    "junit_report",
    "markdown_report",
    "print_agreement",
    "print_comparison",
    "renderers",
    "report_command",
    "report_document",
    "trial_id",
]
