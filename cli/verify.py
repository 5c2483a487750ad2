"""``feastlog verify``: exported records checked alone, with no server and no database.

Its own module so that it imports neither: no gRPC, no DuckDB, only the fold.
"""

from __future__ import annotations

import json
import sys

import click

from feastlog.cli.errors import FAILED, OK, cannot_read, unreachable
from feastlog.cli.output import show_reports
from feastlog.replay import casefile
from feastlog.replay.export import BadExport, read_record_file, records_in, verify_document


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
    A case file (feastlog case) is checked as one: its digest, its rows' chain, the call.
    """
    reports = []
    cases_ok = True
    for file in files:
        try:
            text = read_record_file(file)
        except (OSError, UnicodeDecodeError) as bad:
            raise cannot_read(file, bad) from bad
        case = _case(text)
        if case is not None:
            faults = casefile.check(case)
            cases_ok = cases_ok and not faults
            _show_case(file, case, faults, as_json)
            continue
        found = records_in(file, text)
        if not found:
            raise unreachable(f"{file}: it holds no record")
        for where, record in found:
            try:
                reports.append(verify_document(record).to_dict())
            except BadExport as bad:
                raise unreachable(f"{where}: {bad}") from bad
    if reports:
        show_reports(reports, as_json)
    sys.exit(OK if cases_ok and all(r["ok"] for r in reports) else FAILED)


def _case(text: str) -> dict[str, object] | None:
    """The file as a case file, or None when it is none (then it is read as a record)."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested too deep: read as a record
        return None
    return document if casefile.is_case(document) else None


def _show_case(file: str, case: dict[str, object], faults: list[str], as_json: bool) -> None:
    """A case file's verdict: one line, then each fault."""
    if as_json:
        click.echo(
            json.dumps({"file": file, "case_file": True, "ok": not faults, "faults": faults})
        )
        return
    call = case.get("call")
    number = call.get("call") if isinstance(call, dict) else "?"
    verdict = "verifies" if not faults else "does NOT verify"
    click.echo(f"{file}: case file of call {number} in {case.get('game_id')}: {verdict}")
    for fault in faults:
        click.echo(f"  {fault}")
