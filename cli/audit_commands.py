"""``feastlog`` commands for arbiters and reviewers: export, verify, audit, explain,
whatif, rejections, rule, stats, bench-audit; and ``replay --at/--as``.

Each works through a running server (``--server``) or offline on a DuckDB file no server
holds (``--db``); ``verify`` needs neither: it checks an exported file on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
import grpc
from google.protobuf import json_format

from feastlog.cli.audit_bench import bench_audit_command
from feastlog.cli.client import as_dict, bearer, open_channel
from feastlog.cli.season import audit_all, export_all, workers_option
from feastlog.replay import games
from feastlog.replay.audit import AuditReport, summary_line
from feastlog.replay.engine import ARBITER, Viewer
from feastlog.replay.export import BadExport, verify_document
from feastlog.replay.narrative import check_viewer, header, row_lines
from feastlog.replay.record import Row
from feastlog.service.auth import KEY_ENV, ORGANISER, OrganiserKeyError, find_organiser_key
from feastlog.service.errors import KNOWN, describe
from feastlog.service.offline import OfflineFile, answer
from feastlog.service.reads import audit_stored
from feastlog.service.servicers.convert import rejection_message
from feastlog.service.store_api import exists as store_exists
from feastlog.service.store_api import open_store
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc

T = TypeVar("T")
DEFAULT_DB = "feastlog.duckdb"


class AuditError(click.ClickException):
    """A failure reported in plain words, exit code 1."""


def source_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--server, --db and --organiser-key."""
    command = click.option("--organiser-key", envvar=KEY_ENV, help="Defaults to the key file.")(
        command
    )
    command = click.option(
        "--db", "db_path", default=DEFAULT_DB, show_default=True, help="Read a file offline."
    )(command)
    return click.option("--server", help="Ask a running server instead of reading --db.")(command)


def rpc(server: str, key: str | None, call: Callable[[grpc.aio.Channel, Any], Any]) -> Any:
    """Run ``call(channel, metadata)`` against a server; gRPC errors become plain messages."""

    async def run() -> Any:
        async with open_channel(server) as channel:
            return await call(channel, bearer(find_organiser_key(key)))

    try:
        return asyncio.run(run())
    except grpc.aio.AioRpcError as error:
        raise AuditError(f"{error.code().name}: {error.details()}") from error
    except OrganiserKeyError as refused:
        raise AuditError(str(refused)) from refused


def offline(fn: Callable[[], T]) -> T:
    """Run offline work; service errors become plain messages."""
    try:
        return fn()
    except KNOWN as error:
        raise AuditError(describe(error)[2]) from error


def echo_json(value: Any) -> None:
    """Print JSON with sorted keys."""
    click.echo(json.dumps(value, indent=1, sort_keys=True))


def parse_viewer(text: str | None) -> Viewer | None:
    """``seat:N``, ``spectator`` or ``arbiter`` (None when not given)."""
    if not text:
        return None
    try:
        return Viewer.parse(text)
    except ValueError as bad:
        raise click.BadParameter(str(bad)) from bad


def replay_as(
    game_id: str, at: int | None, viewer: Viewer | None, server: str | None, db_path: str, key: Any
) -> list[str]:
    """The game up to ``at`` in words as ``viewer`` saw it, then the table at ``at``."""
    if server:
        request = rpb.StreamReplayRequest(
            game_id=game_id, to_seq=at or 0, viewer=str(viewer) if viewer else ""
        )

        async def call(channel: grpc.aio.Channel, meta: Any) -> list[Any]:
            stub = rpb_grpc.ReplayServiceStub(channel)
            return [r.event async for r in stub.StreamReplay(request, metadata=meta)]

        events = rpc(server, key, call)
        genesis = events[0].genesis
        rows = [(e.seq, e.kind, e.actor, [as_dict(f) for f in e.facts]) for e in events]
        view, seen_as = as_dict(events[-1].view), request.viewer or "caller"
    else:
        source, seen_as = OfflineFile(db_path), str(viewer or ARBITER)
        found = offline(
            lambda: answer(source.replay(ORGANISER, game_id, 1, at or 0, seen_as))
        ).steps
        genesis, view = source.folded(game_id).genesis, found[-1].view
        rows = [(s.row.seq, s.row.kind, s.row.actor, list(s.facts)) for s in found]
    if viewer is not None:
        try:
            check_viewer(genesis, viewer)
        except ValueError as bad:
            raise AuditError(str(bad)) from bad
    engine = games.engine(genesis.game_kind)
    names = [s.name for s in genesis.seats]
    lines = header(genesis, engine)
    for seq, kind, actor, facts in rows:
        row = Row(game_id, seq, kind, actor, "", b"", "", "", "", "")
        lines += row_lines(engine, row, facts, names)
    lines.append(f"-- the table after seq {rows[-1][0]}, as {seen_as} --")
    return lines + json.dumps(view, indent=1, sort_keys=True).splitlines()


@click.command("export")
@click.argument("game_id", required=False)
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False))
@click.option("--all", "all_games", is_flag=True, help="Every game of --db, one a line (.jsonl).")
@workers_option
@source_options
def export_command(
    game_id: str | None,
    output: str,
    all_games: bool,
    workers: int | None,
    server: str | None,
    db_path: str,
    organiser_key: str | None,
) -> None:
    """Write a game's portable record (the seed only once revealed) to FILE.

    With --all, every game of a file no server holds goes to FILE as JSON Lines (one
    record a line), which ``feastlog import`` takes.
    """
    if bool(game_id) == all_games:
        raise click.UsageError("give a GAME_ID or --all")
    if all_games:
        if server:
            raise click.UsageError("export --all reads a file (--db), not a server")
        written, complete, broken = export_all(db_path, output, workers)
        click.echo(f"wrote {output}: {written} games, {complete} complete (seed revealed)")
        if broken:
            raise AuditError(f"{broken} game(s) left out: a row does not decode (see audit --all)")
        return
    assert game_id is not None
    if server:

        async def call(channel: grpc.aio.Channel, meta: Any) -> Any:
            stub = rpb_grpc.ReplayServiceStub(channel)
            return await stub.ExportRecord(rpb.ExportRecordRequest(game_id=game_id), metadata=meta)

        reply = rpc(server, organiser_key, call)
        text, complete = reply.content.decode(), reply.complete
    else:
        exported = offline(lambda: answer(OfflineFile(db_path).export(ORGANISER, game_id)))
        text, complete = exported.text, exported.complete
    Path(output).write_text(text)
    state = "complete, seed revealed" if complete else "game still running: no seed"
    click.echo(f"wrote {output} ({state})")


@click.command("verify")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
def verify_command(file: str, as_json: bool) -> None:
    """Verify an exported record with no server and no database; exit 1 if it fails."""
    try:
        report = verify_document(Path(file).read_text())
    except BadExport as bad:
        raise AuditError(str(bad)) from bad
    show_reports([report.to_dict()], as_json)
    sys.exit(0 if report.ok else 1)


def report_dict(message: apb.AuditReport) -> dict[str, Any]:
    """An AuditReport message as the same dict ``AuditReport.to_dict`` gives."""
    found: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    for fault in found["faults"]:
        fault["kind"] = fault["kind"].removeprefix("FAULT_KIND_").lower()
        fault["seq"] = int(fault["seq"])
    for key in ("rows", "commands_checked", "first_bad_seq"):
        found[key] = int(found[key])
    found["first_bad_seq"] = found["first_bad_seq"] or None
    return found


def show_reports(reports: Sequence[dict[str, Any]], as_json: bool) -> None:
    """Print reports: JSON, or one line each and a total."""
    if as_json:
        echo_json(reports if len(reports) != 1 else reports[0])
        return
    for found in reports:
        click.echo(summary_line(found))
    if len(reports) > 1:
        bad = sum(1 for r in reports if not r["ok"])
        click.echo(f"{len(reports)} games, {len(reports) - bad} verified, {bad} failed")


def progress(length: int, label: str) -> Any:
    """A progress bar on stderr (stdout stays clean for --json)."""
    bar: Any = click.progressbar(length=length, label=label, file=sys.stderr)
    return bar


def audit_offline(db_path: str, game_ids: Sequence[str]) -> list[AuditReport]:
    """Verify games read from a DuckDB file, with a progress bar for many."""

    def run() -> list[AuditReport]:
        if not store_exists(db_path):
            raise AuditError(f"no database at {db_path}")
        store = open_store(db_path, read_only=True)
        try:
            ids = list(game_ids) or store.game_ids()
            reports = []
            with progress(len(ids), "verifying") as bar:
                for game_id in ids:
                    stored = store.load(game_id)
                    if stored is None:
                        raise AuditError(f"there is no game {game_id!r} in {db_path}")
                    reports.append(audit_stored(stored))
                    bar.update(1)
            return reports
        finally:
            store.close()

    return offline(run)


def audit_server(server: str, key: str | None, game_id: str | None) -> list[dict[str, Any]]:
    """Verify one game or all through a running server."""

    async def call(channel: grpc.aio.Channel, meta: Any) -> list[dict[str, Any]]:
        stub = apb_grpc.AuditServiceStub(channel)
        if game_id:
            reply = await stub.VerifyGame(apb.VerifyGameRequest(game_id=game_id), metadata=meta)
            return [report_dict(reply.report)]
        found: list[dict[str, Any]] = []
        with contextlib.ExitStack() as stack:
            bar = None
            async for each in stub.VerifyAllGames(apb.VerifyAllGamesRequest(), metadata=meta):
                bar = bar or stack.enter_context(progress(int(each.total), "verifying"))
                found.append(report_dict(each.report))
                bar.update(1)
        return found

    result: list[dict[str, Any]] = rpc(server, key, call)
    return result


@click.command("audit")
@click.argument("game_id", required=False)
@click.option(
    "--all",
    "all_games",
    is_flag=True,
    help="Every game on the server (organiser key) or in the file.",
)
@click.option("--json", "as_json", is_flag=True, help="The reports as JSON.")
@workers_option
@source_options
def audit_command(
    game_id: str | None,
    all_games: bool,
    as_json: bool,
    workers: int | None,
    server: str | None,
    db_path: str,
    organiser_key: str | None,
) -> None:
    """Verify stored records from the log alone; exit 0 when all verify, 1 when any fails.

    Offline, --all spreads the games over --workers processes (default: every core) and
    says how fast it went beside one plain scan that reads and decodes the same rows.
    """
    if bool(game_id) == all_games:
        raise click.UsageError("give a GAME_ID or --all")
    if server:
        reports = audit_server(server, organiser_key, game_id)
    elif all_games:
        reports, speed = audit_all(db_path, workers)
        click.echo(speed.line("audit"), err=True)
    else:
        reports = [r.to_dict() for r in audit_offline(db_path, [game_id] if game_id else [])]
    show_reports(reports, as_json)
    sys.exit(0 if all(r["ok"] for r in reports) else 1)


@click.command("explain")
@click.argument("game_id")
@click.argument("seq", type=int)
@click.option("--json", "as_json", is_flag=True)
@source_options
def explain_command(
    game_id: str,
    seq: int,
    as_json: bool,
    server: str | None,
    db_path: str,
    organiser_key: str | None,
) -> None:
    """One row: command, sender, time, rule checks with rulebook text, values, state change."""
    if server:

        async def call(channel: grpc.aio.Channel, meta: Any) -> Any:
            stub = apb_grpc.AuditServiceStub(channel)
            request = apb.ExplainEventRequest(game_id=game_id, seq=seq)
            return await stub.ExplainEvent(request, metadata=meta)

        reply = rpc(server, organiser_key, call)
        found, lines = as_dict(reply.explanation), list(reply.lines)
    else:
        explained = offline(lambda: answer(OfflineFile(db_path).explain(ORGANISER, game_id, seq)))
        found, lines = explained.found, explained.lines
    if as_json:
        echo_json(found)
    else:
        click.echo("\n".join(lines))


def parse_command(text: str, kind: str) -> record_pb2.Command:
    """A command from JSON: a ``feastlog.v1.Command``, or the game's own command message."""
    try:
        return json_format.Parse(text, record_pb2.Command())
    except json_format.ParseError:
        pass
    command = record_pb2.Command()
    field = games.engine(kind).spec.command_field
    try:
        json_format.Parse(text, getattr(command, field))
    except json_format.ParseError as bad:
        raise click.BadParameter(f"not a command: {bad}") from bad
    return command


@click.command("whatif")
@click.argument("game_id")
@click.argument("seq", type=int)
@click.argument("command_json", metavar="COMMAND")
@click.option("--as", "actor", help="seat:N or arbiter; default the actor of the row at SEQ.")
@click.option("--json", "as_json", is_flag=True)
@source_options
def whatif_command(
    game_id: str,
    seq: int,
    command_json: str,
    actor: str | None,
    as_json: bool,
    server: str | None,
    db_path: str,
    organiser_key: str | None,
) -> None:
    """COMMAND (JSON) in place of row SEQ: legal or not (which rule), and its facts."""
    if server:

        async def call(channel: grpc.aio.Channel, meta: Any) -> Any:
            first = await rpb_grpc.ReplayServiceStub(channel).GetStateAt(
                rpb.GetStateAtRequest(game_id=game_id, seq=1), metadata=meta
            )
            command = parse_command(command_json, first.event.genesis.game_kind)
            request = apb.WhatIfRequest(
                game_id=game_id, seq=seq, actor=actor or "", command=command
            )
            return await apb_grpc.AuditServiceStub(channel).WhatIf(request, metadata=meta)

        found = as_dict(rpc(server, organiser_key, call).details)
    else:
        source = OfflineFile(db_path)
        command = parse_command(
            command_json, offline(lambda: source.folded(game_id)).genesis.game_kind
        )
        found = offline(
            lambda: answer(source.what_if(ORGANISER, game_id, seq, actor or "", command))
        ).found
    if as_json:
        echo_json(found)
    elif found["legal"]:
        click.echo(f"legal at seq {seq}; it would have brought about:")
        click.echo("\n".join(f"  {line}" for line in found["narrative"]))
    else:
        rule = found.get("rule_id") or f"malformed {found.get('field', '')}"
        click.echo(f"not legal at seq {seq}: {rule}: {found['message']}")
        if found.get("text"):
            click.echo(f"  {found['rule_id']} ({found['section']}): {found['text']}")


@click.command("rejections")
@click.argument("game_id")
@click.option("--json", "as_json", is_flag=True)
@source_options
def rejections_command(
    game_id: str, as_json: bool, server: str | None, db_path: str, organiser_key: str | None
) -> None:
    """Refused commands of a game: seat, time, rule id and message."""
    if server:

        async def call(channel: grpc.aio.Channel, meta: Any) -> Any:
            stub = apb_grpc.AuditServiceStub(channel)
            request = apb.ListRejectionsRequest(game_id=game_id)
            return await stub.ListRejections(request, metadata=meta)

        shown = list(rpc(server, organiser_key, call).rejections)
    else:
        source = OfflineFile(db_path)
        found = offline(lambda: answer(source.rejections(ORGANISER, game_id)))
        shown = [rejection_message(r) for r in found]
    rows = [json_format.MessageToDict(r, preserving_proto_field_name=True) for r in shown]
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        click.echo(
            f"after seq {r.get('after_seq', 0)} {r['recorded_at']} {r['actor']}: "
            f"{r.get('rule_id') or r['reason']}: {r['message']}"
        )
    click.echo(f"{len(rows)} rejected command{'s' if len(rows) != 1 else ''}")


RULINGS = ("note", "adjust", "forfeit", "void", "close")


def ruling_of(what: str, reason: str, seat: int | None, points: int, text: str) -> Any:
    """The ArbiterCommand for a ruling named on the command line."""
    ruling = record_pb2.ArbiterCommand(reason=reason)
    if what in ("adjust", "forfeit") and seat is None:
        raise click.UsageError(f"a {what} ruling needs --seat")
    if what == "note":
        ruling.note.text = text or reason
    elif what == "adjust":
        ruling.score_adjustment.seat, ruling.score_adjustment.points = seat or 0, points
    elif what == "forfeit":
        ruling.forfeit.seat = seat or 0
    elif what == "void":
        ruling.void_game.SetInParent()
    else:
        ruling.close_game.SetInParent()
    return ruling


@click.command("rule")
@click.argument("game_id")
@click.argument("what", type=click.Choice(RULINGS))
@click.option("--reason", required=True, help="Why: recorded in the chain.")
@click.option("--seat", type=int, help="The seat an adjustment or forfeit is about.")
@click.option("--points", type=int, default=0, help="Points to add (negative to take).")
@click.option("--text", default="", help="A note's text (default: the reason).")
@click.option("--server", required=True, help="The server holding the game.")
@click.option("--organiser-key", envvar=KEY_ENV, help="Defaults to the key file here.")
def rule_command(
    game_id: str,
    what: str,
    reason: str,
    seat: int | None,
    points: int,
    text: str,
    server: str,
    organiser_key: str | None,
) -> None:
    """Append an arbiter ruling (note, adjust, forfeit, void, close); nothing earlier changes."""
    ruling = ruling_of(what, reason, seat, points, text)

    async def call(channel: grpc.aio.Channel, meta: Any) -> Any:
        stub = apb_grpc.AuditServiceStub(channel)
        request = apb.SubmitRulingRequest(
            game_id=game_id, command_id=uuid.uuid4().hex, ruling=ruling
        )
        return await stub.SubmitRuling(request, metadata=meta)

    reply = rpc(server, organiser_key, call)
    click.echo(f"ruling recorded at seq {reply.seq} (hash {reply.hash})")


@click.command("stats")
@click.option("--tournament", default="", help="Only this tournament's games.")
@click.option("--json", "as_json", is_flag=True)
@source_options
def stats_command(
    tournament: str, as_json: bool, server: str | None, db_path: str, organiser_key: str | None
) -> None:
    """Per game kind: games played, win rate by seat position, a game-specific figure.

    SQL over the outcomes projection, which the server keeps current as games end.
    """
    if server:

        async def call(channel: grpc.aio.Channel, meta: Any) -> Any:
            stub = tpb_grpc.TournamentServiceStub(channel)
            return await stub.GetStats(tpb.GetStatsRequest(tournament_id=tournament), metadata=meta)

        found = [
            {
                "game_kind": k.game_kind,
                "games": k.games,
                "win_rate_by_seat": list(k.win_rate_by_seat),
                "figure": k.figure,
                "value": k.value if k.HasField("value") else None,
            }
            for k in rpc(server, organiser_key, call).kinds
        ]
    else:
        source = OfflineFile(db_path)
        found = [vars(k) for k in offline(lambda: answer(source.stats(tournament)))]
    if as_json:
        echo_json(found)
        return
    for k in found:
        rates = ", ".join(f"seat {i}: {r:.0%}" for i, r in enumerate(k["win_rate_by_seat"]))
        value = "n/a" if k["value"] is None else f"{k['value']:.2f}"
        click.echo(
            f"{k['game_kind']}: {k['games']} games; wins by seat {rates}; {k['figure']} {value}"
        )


AUDIT_COMMANDS = (
    export_command,
    verify_command,
    audit_command,
    explain_command,
    whatif_command,
    rejections_command,
    rule_command,
    stats_command,
    bench_audit_command,
)

__all__ = ["AUDIT_COMMANDS", "replay_as"]
