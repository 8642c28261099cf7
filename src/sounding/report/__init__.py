"""Reports of a stored run (one renderer each: JUnit XML, JSON, Markdown, HTML) and of records
scored in bulk (JUnit XML, HTML),
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
from sounding.report._renderers import bulk_renderers, renderers

# isort: split
# last: a run's renderers register in the order of their modules above (html, json, ...)
from sounding.report._bulk import BULK_SCHEMA, bulk_document, print_bulk

__all__ = [
    "BULK_SCHEMA",
    "COMPARE_SCHEMA",
    "REPORT_SCHEMA",
    "Gap",
    "RunComparison",
    "agreement_command",
    "bulk_document",
    "bulk_renderers",
    "compare_command",
    "compare_runs",
    "html_report",
    "json_report",
    "junit_report",
    "markdown_report",
    "print_agreement",
    "print_bulk",
    "print_comparison",
    "renderers",
    "report_command",
    "report_document",
    "trial_id",
]
