"""Reports: terminal tables, JSON (report.schema.json), JUnit XML, Markdown, shard merging."""

from fakepeer.report.console import RunProgress, make_console, print_listing, print_run
from fakepeer.report.document import (
    FORMAT,
    ReportError,
    RunInfo,
    read_document,
    run_from_document,
    to_document,
    write_document,
)
from fakepeer.report.junit import to_junit, write_junit
from fakepeer.report.markdown import to_markdown, write_markdown
from fakepeer.report.merge import merge_reports

__all__ = [
    "FORMAT",
    "ReportError",
    "RunInfo",
    "RunProgress",
    "make_console",
    "merge_reports",
    "print_listing",
    "print_run",
    "read_document",
    "run_from_document",
    "to_document",
    "to_junit",
    "to_markdown",
    "write_document",
    "write_junit",
    "write_markdown",
]
