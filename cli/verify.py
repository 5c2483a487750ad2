"""``feastlog verify``: an exported record checked alone, with no server and no database.

Its own module so that it imports neither: no gRPC, no DuckDB, only the fold.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from feastlog.cli.errors import FAILED, OK, cannot_read, unreachable
from feastlog.cli.output import show_reports
from feastlog.replay.export import BadExport, verify_document


@click.command("verify")
@click.argument("file")  # missing, a folder or unreadable: exit 3, as for every record
@click.option("--json", "as_json", is_flag=True, help="The report as JSON (as audit --json).")
def verify_command(file: str, as_json: bool) -> None:
    """Verify an exported record with no server and no database; exit 1 if it fails.

    Every header field of the file (game id, kind, ruleset, format version, the content
    pack's sha256, the server seed) is checked against the record it carries too.
    """
    try:
        text = Path(file).read_text()
    except (OSError, UnicodeDecodeError) as bad:
        raise cannot_read(file, bad) from bad
    try:
        report = verify_document(text)
    except BadExport as bad:
        raise unreachable(f"{file}: {bad}") from bad
    show_reports([report.to_dict()], as_json)
    sys.exit(OK if report.ok else FAILED)
