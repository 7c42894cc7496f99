"""Reports: terminal tables, and the file formats of `registry` (JSON, JUnit, Markdown, HTML)."""

from fakepeer.report.catalog import CaseInfo, catalog_from_document, catalog_from_fixtures
from fakepeer.report.console import (
    RunProgress,
    make_console,
    print_listing,
    print_run,
    print_tally,
)
from fakepeer.report.document import (
    FORMAT,
    ReportError,
    RunInfo,
    read_document,
    run_from_document,
    to_document,
    write_document,
)
from fakepeer.report.htmlreport import to_html
from fakepeer.report.junit import to_junit
from fakepeer.report.markdown import to_markdown
from fakepeer.report.merge import Merged, merge_documents
from fakepeer.report.registry import Reporter, reporters
from fakepeer.report.tally import Cell, Status, Tally, build_tally

__all__ = [
    "FORMAT",
    "CaseInfo",
    "Cell",
    "Tally",
    "Merged",
    "ReportError",
    "Reporter",
    "RunInfo",
    "RunProgress",
    "Status",
    "build_tally",
    "catalog_from_document",
    "catalog_from_fixtures",
    "make_console",
    "merge_documents",
    "print_listing",
    "print_tally",
    "print_run",
    "read_document",
    "reporters",
    "run_from_document",
    "to_document",
    "to_html",
    "to_junit",
    "to_markdown",
    "write_document",
]
