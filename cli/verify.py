"""``feastlog verify``: exported records checked alone, with no server and no database.

Its own module so that it imports neither: no gRPC, no DuckDB, only the fold.
"""

from __future__ import annotations

import sys

import click

from feastlog.cli.errors import FAILED, OK, cannot_read, unreachable
from feastlog.cli.output import echo_json, echo_lines, show_reports
from feastlog.replay.export import BadExport, read_record_file, records_in, verify_document
from feastlog.replay.tournament.export import is_tournament_export, verify_tournament


@click.command("verify")
@click.argument("files", nargs=-1, required=True)  # missing, a folder or unreadable: exit 3
@click.option("--json", "as_json", is_flag=True, help="The reports as JSON (as audit --json).")
def verify_command(files: tuple[str, ...], as_json: bool) -> None:
    """Verify exported records (.json, or export --all's .jsonl) alone; exit 1 if one fails.

    No server and no database.  A file of export --all (a .jsonl, or saved under another
    name) is read one record a line; any other file is one record.
    Every header field of a record (game id, kind, ruleset, format version, the content
    pack's sha256, the server seed) is checked against the rows it carries too, and its
    result against the fold (null only for a running, void or closed-early game).  A file,
    or a line of export --all's file, that is not a record at all: exit 3, naming it.
    """
    reports = []
    for file in files:
        try:
            text = read_record_file(file)
        except (OSError, UnicodeDecodeError) as bad:
            raise cannot_read(file, bad) from bad
        if is_tournament_export(text):
            tournament_verified(file, text, as_json)
        found = records_in(file, text)
        if not found:
            raise unreachable(f"{file}: it holds no record")
        for where, record in found:
            try:
                reports.append(verify_document(record).to_dict())
            except BadExport as bad:
                raise unreachable(f"{where}: {bad}") from bad
    show_reports(reports, as_json)
    sys.exit(OK if all(r["ok"] for r in reports) else FAILED)


def tournament_verified(file: str, text: str, as_json: bool) -> None:
    """Verify a tournament's export (its record and its games' together) and exit: 0 when
    everything verified, 1 when anything did not (each fault named), 3 when it is none."""
    try:
        report = verify_tournament(text)
    except BadExport as bad:
        raise unreachable(f"{file}: {bad}") from bad
    if as_json:
        echo_json(report.to_dict())
    else:
        verdict = "OK" if report.ok else "FAILED"
        echo_lines([f"{file}: tournament {report.tournament_id}: {verdict}"])
        echo_lines(f"  checked: {check}" for check in report.checks)
        echo_lines(f"  fault: {fault}" for fault in report.faults)
    sys.exit(OK if report.ok else FAILED)
