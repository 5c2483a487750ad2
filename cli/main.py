"""The ``feastlog`` command: serve, create and play games, replay them."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from feastlog.cli.audit_commands import AUDIT_COMMANDS, parse_viewer, replay_as
from feastlog.cli.bench import bench_command
from feastlog.cli.client import as_dict, bearer, connect, new_game, play_with_bots
from feastlog.cli.play import play_command
from feastlog.cli.replay_html import write_replay_html
from feastlog.cli.scale_bench import bench_scale_command
from feastlog.cli.season import SEASON_COMMANDS
from feastlog.cli.tournament import standings_command
from feastlog.replay import games
from feastlog.replay.engine import ARBITER, Viewer
from feastlog.replay.history import refold
from feastlog.replay.narrative import as_seen_then, header, row_lines
from feastlog.replay.record import Row
from feastlog.service.auth import KEY_ENV, OrganiserKeyError, find_organiser_key
from feastlog.service.server import CannotListen, Running, create_server, serve_forever
from feastlog.service.store import CannotOpenStore, StoreLocked
from feastlog.service.store_api import exists as store_exists
from feastlog.service.store_api import is_postgres, open_store, shown
from feastlog.service.web import serve_http
from feastlog.v1 import game_service_pb2 as pb

DEFAULT_DB = "feastlog.duckdb"
DEFAULT_ADDRESS = "127.0.0.1:50051"
DEMO_NAMES = ("Ann", "Brian", "Celia", "Dev", "Eve", "Farid")
# Why a server cannot start, each in one line: exit code 3.
CANNOT_START = (CannotOpenStore, OrganiserKeyError, CannotListen)


class FeastlogError(click.ClickException):
    """A failure reported in plain words, exit code 1."""


class Unavailable(FeastlogError):
    """The database, the organiser key or the port cannot be used: exit code 3."""

    exit_code = 3


def parse_seed(text: str | None) -> bytes:
    """A 64-hex-digit seed option as bytes (empty when not given)."""
    if not text:
        return b""
    try:
        seed = bytes.fromhex(text)
    except ValueError as bad:
        raise click.BadParameter("the seed is 64 hex digits") from bad
    if len(seed) != 32:
        raise click.BadParameter("the seed is 64 hex digits (32 bytes)")
    return seed


def require_key(explicit: str | None) -> str | None:
    """The organiser key from the option, the environment or the key file here."""
    try:
        return find_organiser_key(explicit)
    except OrganiserKeyError as refused:
        raise Unavailable(str(refused)) from refused


@click.group()
@click.version_option(package_name="feastlog")
def cli() -> None:
    """feastlog: record, replay and audit Bon Appetit!, Menu Masters and Picky Eaters games."""


@cli.command("serve")
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, help="DuckDB file.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option(
    "--port",
    default=50051,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="0 picks a free port.",
)
@click.option(
    "--http",
    "http_port",
    type=click.IntRange(0, 65535),
    help="Also serve live replay pages and a tournament board on this HTTP port (0: any).",
)
def serve_command(db_path: str, host: str, port: int, http_port: int | None) -> None:
    """Serve the gRPC API on a DuckDB file (made on first start, owner-only).

    Exit codes: 0 after a clean shutdown (SIGINT, SIGTERM), 2 for a bad option, 3 when
    the database, the organiser key or the port cannot be used (one line on stderr).
    --http adds the web pages: live replays and a tournament board.
    """
    # incidents (a failing store, a bug) go to stderr, each with the id its client was given
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    async def run() -> None:
        try:
            running = await create_server(db_path, f"{host}:{port}")
        except CANNOT_START as refused:
            raise Unavailable(str(refused)) from refused
        click.echo(f"feastlog listening on {host}:{running.port}")
        click.echo(
            f"database: {shown(db_path) if is_postgres(db_path) else Path(db_path).resolve()}"
        )
        click.echo(f"organiser key: {running.key_source}")
        if http_port is not None:
            click.echo(f"web pages on http://{host}:{await start_pages(running, host, http_port)}/")
        sys.stdout.flush()
        await serve_forever(running)

    try:
        asyncio.run(run())
    except KeyboardInterrupt:  # Ctrl-C before the server was up: nothing to drain
        raise SystemExit(130) from None


async def start_pages(running: Running, host: str, port: int) -> int:
    """Serve the web pages beside the gRPC server; a port that cannot be had stops both."""
    try:
        return await serve_http(running, host, port)
    except OSError as bad:
        await running.stop()
        raise Unavailable(
            f"cannot serve web pages on {host}:{port}: {bad.strerror or bad}"
        ) from bad


class GameKind(click.ParamType):
    """A game kind of the registry, read when the command runs (not when it is defined)."""

    name = "kind"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        """The kinds, as click shows a closed set."""
        return "[" + "|".join(games.kinds()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """The kind, if the registry has it."""
        if value in games.kinds():
            return str(value)
        self.fail(f"{value!r} is not a game kind: use {', '.join(games.kinds())}", param, ctx)


def kind_argument() -> Any:
    """The game kind argument, a closed set."""
    return click.argument("kind", type=GameKind())


@cli.command("new")
@kind_argument()
@click.option("--players", required=True, help="Comma-separated names in seat order.")
@click.option("--seed", help="Supply the server seed (64 hex digits); recorded as supplied.")
@click.option("--option", "options", multiple=True, help="Rule option KEY=VALUE.")
@click.option(
    "--pack",
    type=click.File("rb"),
    help="The organiser's own content pack (TOML); the bundled one otherwise.",
)
@click.option(
    "--seat-entropy",
    is_flag=True,
    help="Start only once every seat has sent its own entropy (feastlog join).",
)
@click.option("--tournament", default="", help="The tournament this game counts for.")
@click.option("--server", default=DEFAULT_ADDRESS, show_default=True)
@click.option("--organiser-key", envvar=KEY_ENV, help="Defaults to the key file here.")
def new_command(
    kind: str,
    players: str,
    seed: str | None,
    options: Sequence[str],
    pack: Any,
    seat_entropy: bool,
    tournament: str,
    server: str,
    organiser_key: str | None,
) -> None:
    """Create a game on a running server; prints the game id and the seat tokens."""
    key = require_key(organiser_key)
    if not key:
        raise FeastlogError(
            f"no organiser key: run this in the server's folder, or pass --organiser-key "
            f"or set {KEY_ENV}"
        )
    names = [p.strip() for p in players.split(",") if p.strip()]
    if any("=" not in o for o in options):
        raise click.BadParameter("rule options are KEY=VALUE", param_hint="--option")
    chosen = dict(o.split("=", 1) for o in options)
    pack_bytes = pack.read() if pack else b""

    async def run() -> pb.CreateGameResponse:
        async with connect(server, DEFAULT_DB, key) as conn:
            return await new_game(
                conn.stub,
                key,
                kind,
                names,
                parse_seed(seed),
                chosen,
                pack_bytes,
                seat_entropy=seat_entropy,
                tournament_id=tournament,
            )

    reply = run_rpc(run())
    click.echo(f"game {reply.game_id}")
    click.echo(f"seed commitment {reply.seed_commitment}")
    for token in reply.seat_tokens:
        click.echo(f"seat {token.seat} {token.name}: {token.token}")
    if seat_entropy:
        click.echo("the game starts once every seat has run: feastlog join GAME_ID --token TOKEN")


@cli.command("join")
@click.argument("game_id")
@click.option("--token", required=True, envvar="FEASTLOG_SEAT_TOKEN", help="The seat's token.")
@click.option("--entropy", help="Hex bytes to mix into the seed; 32 fresh random bytes if not.")
@click.option("--server", default=DEFAULT_ADDRESS, show_default=True)
def join_command(game_id: str, token: str, entropy: str | None, server: str) -> None:
    """Send a seat's entropy to a game created with --seat-entropy."""
    try:
        mine = bytes.fromhex(entropy) if entropy else os.urandom(32)
    except ValueError as bad:
        raise click.BadParameter("entropy is hex", param_hint="--entropy") from bad

    async def run() -> pb.JoinGameResponse:
        async with connect(server, DEFAULT_DB) as conn:
            request = pb.JoinGameRequest(game_id=game_id, entropy=mine)
            reply: pb.JoinGameResponse = await conn.stub.JoinGame(request, metadata=bearer(token))
            return reply

    reply = run_rpc(run())
    if reply.started:
        click.echo(f"game {game_id} has started: every seat's entropy is in")
    else:
        waiting = ", ".join(f"seat {s}" for s in reply.waiting_for)
        click.echo(f"entropy recorded; waiting for {waiting}")


def run_rpc(coroutine: Any) -> Any:
    """Run a client coroutine; a gRPC error becomes a plain message."""
    import grpc

    try:
        return asyncio.run(coroutine)
    except grpc.aio.AioRpcError as error:
        raise FeastlogError(f"{error.code().name}: {error.details()}") from error
    except CANNOT_START as refused:  # an embedded server (no --server) could not start
        raise Unavailable(str(refused)) from refused


@cli.command("demo")
@kind_argument()
@click.option("--players", "count", default=3, show_default=True, type=int)
@click.option("--seed", help="Server seed (64 hex digits); bots also play from it.")
@click.option("--server", help="A running server; without it, an embedded one on --db.")
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True)
@click.option("--seat-entropy", is_flag=True, help="Each bot seat mixes its own entropy in.")
@click.option("--tournament", default="", help="The tournament this game counts for.")
@click.option("--organiser-key", envvar=KEY_ENV)
def demo_command(
    kind: str,
    count: int,
    seed: str | None,
    server: str | None,
    db_path: str,
    seat_entropy: bool,
    tournament: str,
    organiser_key: str | None,
) -> None:
    """Bots play a complete game through the service; prints the game id and the scores."""
    names = list(DEMO_NAMES[:count])
    seed_bytes = parse_seed(seed)

    async def run() -> tuple[str, dict[str, Any]]:
        key = require_key(organiser_key) if server else organiser_key
        async with connect(server, db_path, key) as conn:
            if not conn.organiser_key:
                raise FeastlogError("no organiser key: pass --organiser-key or set " + KEY_ENV)
            reply = await new_game(
                conn.stub,
                conn.organiser_key,
                kind,
                names,
                seed_bytes,
                seat_entropy=seat_entropy,
                tournament_id=tournament,
            )
            bot_seed = int.from_bytes(seed_bytes[:8] or os.urandom(8), "big")
            tokens = [t.token for t in reply.seat_tokens]
            result = await play_with_bots(conn.stub, reply.game_id, tokens, bot_seed)
            return reply.game_id, result.view

    game_id, view = run_rpc(run())
    click.echo(f"game {game_id}")
    click.echo(format_scores(view, names))


def format_scores(view: dict[str, Any], names: Sequence[str]) -> str:
    """Final scores and winners from a finished game's view."""
    scores = view.get("scores") or []
    winners = {int(w) for w in view.get("winners") or []}
    lines = ["final scores:"]
    for seat, name in enumerate(names):
        points = int(scores[seat]) if seat < len(scores) else 0
        mark = "  (winner)" if seat in winners else ""
        lines.append(f"  {name}: {points}{mark}")
    return "\n".join(lines)


@cli.command("replay")
@click.argument("game_id", metavar="GAME_ID|EXPORT.json")
@click.option("--server", help="Ask a running server.")
@click.option(
    "--db",
    "db_path",
    default=DEFAULT_DB,
    show_default=True,
    help="Read this DuckDB file offline (when no server holds it).",
)
@click.option("--organiser-key", envvar=KEY_ENV)
@click.option("--at", "at", type=int, help="Stop at this seq and show the table after it.")
@click.option("--as", "as_viewer", help="seat:N, spectator or arbiter: see what they saw.")
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False),
    help="Write the replay page to FILE instead: one HTML file that opens from disk.",
)
def replay_command(
    game_id: str,
    server: str | None,
    db_path: str,
    organiser_key: str | None,
    at: int | None = None,
    as_viewer: str | None = None,
    html_file: str | None = None,
) -> None:
    """The game round by round in plain words (--at SEQ, --as VIEWER: as seen then).

    GAME_ID may also be a file written by ``feastlog export`` of a finished game; then
    --at and --as show what that viewer saw at that seq while the game ran (a seat: its own
    hand and private draws, the others' counts), although the finished record is public.
    --html FILE draws it instead, step by step, as --as VIEWER saw it.
    """
    if html_file:
        key = require_key(organiser_key) if server else None
        viewer = parse_viewer(as_viewer)
        click.echo(write_replay_html(game_id, html_file, viewer, server, db_path, key))
        return
    if game_id.endswith(".json") and Path(game_id).is_file():
        lines = replay_export(Path(game_id), at, parse_viewer(as_viewer))
    elif at is not None or as_viewer:
        viewer = parse_viewer(as_viewer)
        lines = replay_as(game_id, at, viewer, server, db_path, require_key(organiser_key))
    elif server:
        lines = run_rpc(replay_over_grpc(server, game_id, require_key(organiser_key)))
    else:
        lines = replay_offline(db_path, game_id)
    for line in lines:
        click.echo(line)


def replay_offline(db_path: str, game_id: str) -> list[str]:
    """Narrate a game from a DuckDB file no server holds."""
    if not store_exists(db_path):
        raise FeastlogError(f"no database at {db_path}")
    try:
        store = open_store(db_path, read_only=True)
    except StoreLocked as locked:
        raise FeastlogError(locked.message + " (or use --server)") from locked
    except CannotOpenStore as unusable:
        raise Unavailable(unusable.message) from unusable
    try:
        stored = store.load(game_id)
    finally:
        store.close()
    if stored is None:
        raise FeastlogError(f"there is no game {game_id!r} in {db_path}")
    return narrate_record(stored.rows, stored.server_seed, stored.pack_body)


def replay_export(path: Path, at: int | None = None, viewer: Viewer | None = None) -> list[str]:
    """Narrate a finished game from its exported record alone (up to ``at``, as ``viewer``)."""
    from feastlog.replay.export import BadExport, load_record

    try:
        record = load_record(path.read_text())
    except BadExport as bad:
        raise FeastlogError(f"{path}: {bad}") from bad
    if record.server_seed is None:
        raise FeastlogError(
            f"{path}: the game was still running when exported, so its seed is not revealed; "
            "replay it through the server"
        )
    if at is None and viewer is None:
        return narrate_record(record.rows, record.server_seed, record.pack_bytes)
    folded = refold(record.rows, record.server_seed, record.pack_bytes)
    try:
        return as_seen_then(folded, at, viewer or ARBITER)
    except ValueError as bad:
        raise FeastlogError(f"{path}: {bad}") from bad


def narrate_record(rows: Sequence[Row], server_seed: bytes, pack_bytes: bytes) -> list[str]:
    """Fold a record and tell it round by round."""
    folded = refold(rows, server_seed, pack_bytes)
    engine = games.engine(folded.genesis.game_kind)
    names = [s.name for s in folded.genesis.seats]
    lines = header(folded.genesis, engine)
    for row, facts in zip(folded.rows, folded.facts, strict=True):
        lines += row_lines(engine, row, facts, names)
    return lines


async def replay_over_grpc(server: str, game_id: str, key: str | None) -> list[str]:
    """Narrate a game from a running server, as the organiser when the key is known."""

    async with connect(server, DEFAULT_DB, key) as conn:
        meta = bearer(key)
        now = await conn.stub.GetView(pb.GetViewRequest(game_id=game_id), metadata=meta)
        lines: list[str] = []
        engine = None
        names: list[str] = []
        stream = conn.stub.WatchGame(
            pb.WatchGameRequest(game_id=game_id, from_seq=1), metadata=meta
        )
        async for reply in stream:
            ev = reply.event
            if ev.kind == "genesis":
                engine = games.engine(ev.genesis.game_kind)
                names = [s.name for s in ev.genesis.seats]
                lines += header(ev.genesis, engine)
            row = Row(
                game_id,
                ev.seq,
                ev.kind,
                ev.actor,
                "",
                b"",
                ev.recorded_at,
                "",
                ev.hash,
                ev.state_hash,
            )
            facts = [as_dict(f) for f in ev.facts]
            assert engine is not None
            lines += row_lines(engine, row, facts, names)
            if ev.seq >= now.seq:
                stream.cancel()
                break
        if now.viewer != "arbiter":
            lines.append(f"(seen as {now.viewer})")
        return lines


@cli.command("rules")
@kind_argument()
@click.option("--json", "as_json", is_flag=True, help="The catalogue as JSON.")
def rules_command(kind: str, as_json: bool) -> None:
    """A game's rule catalogue: every rule id, its rulebook section and what it says."""
    spec = games.engine(kind).spec
    if as_json:
        import json

        from feastlog.replay.canonical import to_plain

        click.echo(json.dumps([to_plain(r) for r in spec.rules.values()], indent=1))
        return
    click.echo(f"{spec.title}, ruleset {spec.ruleset_version}: {len(spec.rules)} rules")
    click.echo(f"rulesets folded: {', '.join(spec.rulesets)} (new games: {spec.ruleset_version})")
    for rule in spec.rules.values():
        mark = " (interpretation)" if rule.interpretation else ""
        mark += "" if rule.refuses else " (never refuses)"
        click.echo(f"{rule.id:<24} [{rule.section}]{mark} {rule.text}")
    defaults = ", ".join(f"{k}={v}" for k, v in spec.option_defaults.items())
    click.echo(f"options (defaults): {defaults}")


cli.add_command(bench_command)
cli.add_command(bench_scale_command)
cli.add_command(play_command)
cli.add_command(standings_command)
for _command in (*AUDIT_COMMANDS, *SEASON_COMMANDS):
    cli.add_command(_command)


def main() -> None:
    """Entry point of the console script."""
    cli(prog_name="feastlog")


if __name__ == "__main__":
    main()
