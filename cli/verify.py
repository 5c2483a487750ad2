"""``feastlog verify``: exported records checked alone, with no server and no database.

Its own module so that it imports neither: no gRPC, no DuckDB, only the fold; and, only
with --receipts, --head or --later, the checks of the server's signatures
(``service/app/proofcheck.py``: Ed25519, through the cryptography package).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from feastlog.cli.errors import FAILED, OK, cannot_read, unreachable, usage
from feastlog.cli.output import echo_json, echo_lines, show_reports
from feastlog.replay.record.export import (
    BadExport,
    read_export,
    read_record_file,
    records_in,
    verify_document,
)
from feastlog.replay.table import casefile
from feastlog.replay.tournament.export import is_tournament_export, verify_tournament
from feastlog.v1 import record_pb2

if TYPE_CHECKING:
    from feastlog.service.app import proofcheck

T = TypeVar("T")


@click.command("verify")
@click.argument("files", nargs=-1)  # missing, a folder or unreadable: exit 3
@click.option("--json", "as_json", is_flag=True, help="The reports as JSON (as audit --json).")
@click.option(
    "--receipts",
    "receipts_file",
    metavar="FILE",
    help="Receipts a player kept (play/demo --receipts): each receipted row must be in the "
    "record, unchanged, under a signature of the record's server.",
)
@click.option(
    "--head",
    "head_file",
    metavar="FILE",
    help="A signed tree head (feastlog head): the record's rows must be in it.",
)
@click.option(
    "--later",
    "later_file",
    metavar="FILE",
    help="With --head: a later head, which must extend the first (a consistency proof).",
)
def verify_command(
    files: tuple[str, ...],
    as_json: bool,
    receipts_file: str | None,
    head_file: str | None,
    later_file: str | None,
) -> None:
    """Verify exported records (.json, or export --all's .jsonl) alone; exit 1 if one fails.

    No server and no database.  A file of export --all (a .jsonl, or saved under another
    name) is read one record a line; any other file is one record.
    Every header field of a record (game id, kind, ruleset, format version, the content
    pack's sha256, the server seed) is checked against the rows it carries too, and its
    result against the fold (null only for a running, void or closed-early game).  A file,
    or a line of export --all's file, that is not a record at all: exit 3, naming it.
    A case file (feastlog case) is checked as one: its digest, its rows' chain, the call.
    With --receipts, --head or --later, the server's signed word is held to as well (one
    line per problem, exit 1 for any).
    """
    if later_file and not head_file:
        raise usage("--later checks a later head against --head: give both")
    if not files and not later_file:
        raise usage("name the exported records to verify (or --head and --later)")
    if receipts_file or head_file:
        from feastlog.service.app import proofcheck  # signatures: only when asked for
    kept = _receipts(receipts_file) if receipts_file else None
    head = _head(head_file) if head_file else None
    problems: list[str] = []
    if head is not None and later_file:
        problems += proofcheck.check_extends(head.head, _head(later_file))
    reports = []
    cases_ok = True
    for file in files:
        try:
            text = read_record_file(file)
        except (OSError, UnicodeDecodeError) as bad:
            raise cannot_read(file, bad) from bad
        if is_tournament_export(text):
            tournament_verified(file, text, as_json)
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
                if kept is not None or head is not None:
                    problems += [f"{where}: {p}" for p in _proofs(record, kept, head)]
            except BadExport as bad:
                raise unreachable(f"{where}: {bad}") from bad
    if reports:
        show_reports(reports, as_json)
    for line in problems:
        click.echo(f"proof: {line}", err=True)
    if not problems and (kept is not None or head is not None):
        click.echo("proof: the server's signed word holds", err=True)
    sys.exit(OK if cases_ok and all(r["ok"] for r in reports) and not problems else FAILED)


def read_proof_file(path: str, read: Callable[[str, str], T]) -> T:
    """A receipts or head file read by ``read`` (``proofcheck.read_receipts`` or
    ``read_head``): exit 3 with one line when it cannot be read or is no such file."""
    from feastlog.service.app import proofcheck

    try:
        with open(path, encoding="utf-8") as file:
            return read(path, file.read())
    except (OSError, UnicodeDecodeError) as bad:
        raise cannot_read(path, bad) from bad
    except proofcheck.BadProofFile as bad:
        raise unreachable(str(bad)) from bad


def _receipts(path: str) -> list[proofcheck.Kept]:
    from feastlog.service.app import proofcheck

    return read_proof_file(path, proofcheck.read_receipts)


def _head(path: str) -> proofcheck.HeadFile:
    from feastlog.service.app import proofcheck

    return read_proof_file(path, proofcheck.read_head)


def _proofs(
    text: str, kept: list[proofcheck.Kept] | None, head: proofcheck.HeadFile | None
) -> list[str]:
    """What a record's receipts and heads say against it."""
    from feastlog.service.app import proofcheck

    document, record = read_export(text)
    if not record.rows:
        return ["the record has no rows"]
    try:
        genesis_key = record_pb2.Genesis.FromString(record.rows[0].body).server_key
    except Exception:  # a genesis that does not decode is the record's fault, reported above
        genesis_key = ""
    keys = proofcheck.server_keys(document, genesis_key)
    problems: list[str] = []
    if kept is not None:
        found, checked = proofcheck.check_receipts(record.rows, keys, record.server_seed, kept)
        problems += found
        if not checked:
            problems.append("no receipt in the receipts file is of this record's game")
    if head is not None:
        own, found = proofcheck.check_inclusion(record.rows, document, keys)
        problems += found
        if own is not None and not found:
            problems += proofcheck.check_record_in_head(own, head)
    return problems


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
