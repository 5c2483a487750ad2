"""``feastlog`` commands for arbiters and reviewers: export, audit, explain, whatif,
rejections, rule and stats.

Each works through the server found beside the file (or ``--server``), or offline on a
DuckDB file no server holds; ``verify`` (``cli/verify.py``) needs neither.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from feastlog.cli.errors import FAILED, OK, REFUSED, CliError, cannot_write, output_file, usage
from feastlog.cli.output import Bounded, echo_json, echo_lines, show_reports
from feastlog.cli.season import workers_option
from feastlog.cli.session import command_from_json, connected
from feastlog.cli.target import connection_options, require_file, target_of
from feastlog.client import data
from feastlog.replay.games.engine import Viewer, how_many
from feastlog.v1 import record_pb2

SEQ = Bounded(1)
SEAT = Bounded(0, 2**31 - 1)
POINTS = Bounded(-(2**31), 2**31 - 1)


def parse_viewer(text: str | None) -> Viewer | None:
    """``seat:N``, ``spectator`` or ``arbiter`` (None when not given)."""
    if not text:
        return None
    try:
        return Viewer.parse(text)
    except ValueError as bad:
        raise click.BadParameter(str(bad), param_hint="--as") from bad


@click.command("export")
@click.argument("game_id", required=False)
@click.option("-o", "--output", "output", required=True)  # a folder: exit 3, as a write fails
@click.option("--all", "all_games", is_flag=True, help="Every game, one a line (.jsonl).")
@click.option(
    "--format",
    "form",
    type=click.Choice(["json", "parquet"]),
    default="json",
    show_default=True,
    help="parquet (with --all): analysts' tables, one file each, into the folder -o names "
    "(docs/data.md).",
)
@workers_option
@connection_options
def export_command(
    game_id: str | None,
    output: str,
    all_games: bool,
    form: str,
    workers: int | None,
    **connection: Any,
) -> None:
    """Write a game's portable record (the seed only once revealed) to FILE.

    With --all, every game of a file no server holds goes to FILE as JSON Lines (one
    record a line), which ``feastlog import`` takes.  With --all --format parquet, the
    games of a file go to the folder FILE as Parquet tables (docs/data.md).
    """
    if bool(game_id) == all_games:
        raise click.UsageError("give a GAME_ID or --all")
    if form == "parquet":
        if not all_games:
            raise usage("--format parquet writes every game's tables: give --all")
        export_parquet(output, workers, target_of(connection))
        return
    output_file(output)
    target = target_of(connection)
    if all_games:
        with connected(target) as client:
            try:
                written, complete, broken = client.export_all(output, workers)
            except OSError as bad:
                if bad.filename != output:
                    raise
                raise cannot_write(output, bad) from bad
        click.echo(
            f"wrote {output}: {how_many(written, 'game')}, {complete} complete (seed revealed)"
        )
        if broken:
            left_out = how_many(broken, "game")
            raise CliError(f"{left_out} left out: a row does not decode (see audit --all)", FAILED)
        return
    assert game_id is not None
    with connected(target) as client:
        text, complete = client.export(game_id)
    try:
        Path(output).write_text(text)
    except OSError as bad:
        raise cannot_write(output, bad) from bad
    state = "complete, seed revealed" if complete else "game still running: no seed"
    click.echo(f"wrote {output} ({state})")


def export_parquet(folder: str, workers: int | None, target: Any) -> None:
    """Every game of a file as Parquet tables in ``folder`` (``--db FILE``).  A file its
    server holds is exported from a backup that server makes beside it (``feastlog
    backup``: every game committed before it began), removed once the tables are written."""
    with connected(target) as client:
        if client.local:
            db_path = require_file(client.db)
            _parquet_of(db_path, folder, workers)
            return
        if not target.announced:
            raise usage(
                "--format parquet reads a file: give --db FILE (its server, if one holds it, "
                "makes a copy beside it to read), not --server"
            )
        beside = Path(client.db).resolve().parent
        with tempfile.TemporaryDirectory(prefix=".feastlog-parquet-", dir=beside) as scratch:
            copy = str(Path(scratch) / "season.duckdb")
            client.rpc.backup(copy)
            _parquet_of(copy, folder, workers)


def _parquet_of(db_path: str, folder: str, workers: int | None) -> None:
    """Every game of a file no server holds as Parquet tables in ``folder``."""
    from feastlog.cli.season import offline_file, progress
    from feastlog.service.app import bulk, parquet, season

    with offline_file():
        games, _ = season.count(db_path)
        chosen = bulk.workers_for(workers, games)
        try:
            with progress(games, "exporting") as bar:
                written = parquet.export_parquet(db_path, folder, chosen, bar.update)
        except OSError as bad:
            if not bad.filename or not folder.startswith(str(bad.filename)):
                raise  # not the folder (or one it is in) that could not be written
            raise cannot_write(str(bad.filename), bad) from bad
    counts = ", ".join(f"{name} {n:,}" for name, n in written.tables.items())
    click.echo(
        f"wrote {folder}: {how_many(written.games, 'game')}, {written.public} public, "
        f"{written.running} running; rows per table: {counts}"
    )
    if written.broken:
        left_out = how_many(written.broken, "game")
        raise CliError(f"{left_out} left out: a row does not decode (see audit --all)", FAILED)


@click.command("audit")
@click.argument("game_id", required=False)
@click.option(
    "--all",
    "all_games",
    is_flag=True,
    help="Every game on the server (organiser key) or in the file.",
)
@click.option("--json", "as_json", is_flag=True, help="The reports as JSON (as verify --json).")
@workers_option
@connection_options
def audit_command(
    game_id: str | None, all_games: bool, as_json: bool, workers: int | None, **connection: Any
) -> None:
    """Verify stored records from the log alone; exit 0 when all verify, 1 when any fails.

    Offline, --all spreads the games over --workers processes (default: every core) and
    says how fast it went beside one plain scan that reads and decodes the same rows.
    """
    if bool(game_id) == all_games:
        raise click.UsageError("give a GAME_ID or --all")
    with connected(target_of(connection)) as client:
        reports = client.audit_all(workers) if all_games else [client.audit(game_id or "")]
    show_reports(reports, as_json)
    sys.exit(OK if all(r["ok"] for r in reports) else FAILED)


@click.command("explain")
@click.argument("game_id")
@click.argument("seq", type=SEQ)
@click.option("--json", "as_json", is_flag=True)
@connection_options
def explain_command(game_id: str, seq: int, as_json: bool, **connection: Any) -> None:
    """One row: command, sender, time, rule checks with rulebook text, values, state change."""
    with connected(target_of(connection)) as client:
        told = client.rpc.explain(client.game(game_id), seq)
        found, lines = data.as_dict(told.explanation), list(told.lines)
    if as_json:
        echo_json(found)
    else:
        echo_lines(lines)


@click.command("whatif")
@click.argument("game_id")
@click.argument("seq", type=Bounded(2))
@click.argument("command_json", metavar="COMMAND")
@click.option("--as", "actor", help="seat:N or arbiter; default the actor of the row at SEQ.")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def whatif_command(
    game_id: str, seq: int, command_json: str, actor: str | None, as_json: bool, **connection: Any
) -> None:
    """COMMAND (JSON) in place of row SEQ: legal or not (which rule), and its facts.

    Exit 0 when it would have been legal; 4 (refused) when not, saying which rule.
    """
    with connected(target_of(connection)) as client:
        found = client.what_if(
            game_id, seq, actor or "", lambda kind: command_from_json(command_json, kind)
        )
    if as_json:
        echo_json(found)
        if not found["legal"]:
            sys.exit(REFUSED)
    elif found["legal"]:
        click.echo(f"legal at seq {seq}; it would have brought about:")
        echo_lines(f"  {line}" for line in found["narrative"])
    else:
        rule = found.get("rule_id") or f"malformed {found.get('field', '')}"
        echo_lines([f"not legal at seq {seq}: {rule}: {found['message']}"])
        if found.get("text"):
            click.echo(f"  {found['rule_id']} ({found['section']}): {found['text']}")
        sys.exit(REFUSED)  # it would have been refused: exit 4, as the exit codes say


@click.command("rejections")
@click.argument("game_id")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def rejections_command(game_id: str, as_json: bool, **connection: Any) -> None:
    """Refused commands of a game: seat, time, rule id and message."""
    with connected(target_of(connection)) as client:
        rows = [data.rejection(r) for r in client.rpc.rejections(client.game(game_id))]
    if as_json:
        echo_json(rows)
        return
    echo_lines(
        f"after seq {r['after_seq']} {r['recorded_at']} {r['actor']}: "
        f"{r['rule_id'] or r['reason']}: {r['message']}"
        for r in rows
    )
    click.echo(how_many(len(rows), "rejected command"))


RULINGS = ("note", "adjust", "forfeit", "void", "close", "rewind", "pause", "resume")
VERDICTS = {"upheld": record_pb2.CALL_VERDICT_UPHELD, "denied": record_pb2.CALL_VERDICT_DENIED}
SEQ = Bounded(1, 2**63 - 1)


def ruling_of(
    what: str,
    reason: str,
    seat: int | None,
    points: int | None,
    text: str,
    to_seq: int | None = None,
) -> record_pb2.ArbiterCommand:
    """The ArbiterCommand for a ruling named on the command line."""
    ruling = record_pb2.ArbiterCommand(reason=reason)
    if what == "rewind" and to_seq is None:
        raise usage("a rewind needs --to-seq (the row whose state play goes back to)")
    if what in ("adjust", "forfeit") and seat is None:
        raise usage(
            "an adjust ruling needs --seat" if what == "adjust" else "a forfeit needs --seat"
        )
    if what == "adjust" and points is None:
        raise usage("an adjust ruling needs --points (negative to take points away)")
    unused = [
        option
        for option, given, takes in (
            ("--seat", seat is not None, ("adjust", "forfeit")),
            ("--points", points is not None, ("adjust",)),
            ("--text", bool(text), ("note",)),
            ("--to-seq", to_seq is not None, ("rewind",)),
        )
        if given and what not in takes
    ]
    if unused:  # dropped without a word, a typo's ruling would be recorded as another
        raise usage(f"a {what} ruling takes no {' or '.join(unused)}")
    if what == "note":
        ruling.note.text = text or reason
    elif what == "adjust":
        ruling.score_adjustment.seat, ruling.score_adjustment.points = seat or 0, points or 0
    elif what == "forfeit":
        ruling.forfeit.seat = seat or 0
    elif what == "rewind":
        ruling.rewind.to_seq = to_seq or 0
    elif what == "pause":
        ruling.pause_clocks.SetInParent()
    elif what == "resume":
        ruling.resume_clocks.SetInParent()
    elif what == "void":
        ruling.void_game.SetInParent()
    else:
        ruling.close_game.SetInParent()
    return ruling


@click.command("rule")
@click.argument("game_id")
@click.argument("what", type=click.Choice(RULINGS))
@click.option("--reason", required=True, help="Why: recorded in the chain.")
@click.option("--seat", type=SEAT, help="The seat an adjustment or forfeit is about.")
@click.option("--points", type=POINTS, help="Points to add (negative to take); adjust needs it.")
@click.option("--text", default="", help="A note's text (default: the reason).")
@click.option("--to-seq", type=SEQ, help="A rewind's target: play goes on from after this row.")
@click.option("--call", "answers", type=SEQ, help="The call (its seq) this ruling answers.")
@click.option("--verdict", type=click.Choice(sorted(VERDICTS)), help="The answer to --call.")
@connection_options
def rule_command(
    game_id: str,
    what: str,
    reason: str,
    seat: int | None,
    points: int | None,
    text: str,
    to_seq: int | None,
    answers: int | None,
    verdict: str | None,
    **connection: Any,
) -> None:
    """Append a ruling (note, adjust, forfeit, void, close, rewind); nothing earlier changes.

    pause and resume stop and restart every seat's clock in a game with clocks.
    The record says who ruled: the organiser, or the named arbiter whose key was used.
    With --call ID --verdict upheld|denied it answers a seat's call. A rewind returns the
    game to its state after --to-seq; the seat moves after it stay in the record,
    superseded by the ruling.
    """
    ruling = ruling_of(what, reason, seat, points, text, to_seq)
    if (answers is None) != (verdict is None):
        raise usage("--call and --verdict go together: which call, and upheld or denied")
    if answers is not None and verdict is not None:
        ruling.answers_call, ruling.verdict = answers, VERDICTS[verdict]
    with connected(target_of(connection), writes=True, creates=False) as client:
        seq, digest = client.rule(game_id, ruling)
    click.echo(f"ruling recorded at seq {seq} (hash {digest})")


@click.command("stats")
@click.option("--tournament", default="", help="Only this tournament's games.")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def stats_command(tournament: str, as_json: bool, **connection: Any) -> None:
    """Per game kind: games played, win rate by seat position, a game-specific figure.

    SQL over the outcomes projection, which the server keeps current as games end.
    """
    with connected(target_of(connection)) as client:
        found = data.stats(client.rpc.stats(tournament))
    if as_json:
        echo_json(found)
        return
    for k in found:
        rates = ", ".join(f"{i}: {r:.0%}" for i, r in enumerate(k["win_rate_by_seat"]))
        value = "n/a" if k["value"] is None else f"{k['value']:.2f}"
        click.echo(
            f"{k['game_kind']}: {how_many(k['games'], 'game')}; win rate by seat: {rates}; "
            f"{k['figure']} {value}"
        )
