"""A season for analysts: every game of a file as Parquet tables (docs/data.md).

``export_parquet`` reads the log in one ordered scan per worker (``service/app/bulk.py``),
as ``export --all`` does, gathers each game's pieces into an in-memory DuckDB and has
DuckDB's own Parquet writer write one file a table into a folder
(``service/store/duckdb/parquet.py`` holds the columns and runs the SQL):

- ``games``: every game with rows (running ones too: the game list is public);
- ``rows``: every row's public columns (no body: a spectator sees as much);
- ``commands``: the decoded commands of public games, and of tournament records (whose
  rows hold nothing secret);
- ``refusals``: the refused commands of public games, as anyone may see them then;
- ``outcomes``: per seat, the result of every finished game (the outcomes projection's
  ``outcome_seats``; a result is public as soon as the game ends, held back or not);
- one table per game kind's projection table (``bids`` of Bon Appetit!, ...), of public
  games only.

What is public is the visibility policy's (``replay.record.visibility``): a game is
public once its seed is revealed, unless it is held back (a supplied seed while another
game dealt from it has not ended).  Nothing hidden reaches a file: a running or held-back
game's commands, refusals, seed and per-kind tables are never written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from feastlog.replay.games.engine import SPECTATOR, MalformedCommand, PackError, RuleViolation
from feastlog.replay.record.export import decoded
from feastlog.replay.record.history import genesis_of
from feastlog.replay.record.rows import COMMAND, SEED_REVEAL, Row
from feastlog.replay.record.visibility import Release, sees_refusal
from feastlog.replay.tournament.record import is_tournament
from feastlog.service.app import bulk
from feastlog.service.store import StoredGame, projection
from feastlog.service.store.duckdb.parquet import PREFIX, Gathered
from feastlog.service.store.port import EventStore, open_store
from feastlog.v1 import record_pb2, tournament_record_pb2

RUNNING, FINISHED = "running", "finished"  # a game held back: "held" (the store's)
BATCH = 500  # games gathered between two inserts


@dataclass
class Pieces:
    """One game's rows for each table, as a worker found them (sent back whole).

    ``commands`` and ``kinds`` are kept only if the game turns out public: whether a
    finished game with a supplied seed is held back is asked of the store afterwards.
    """

    game_id: str
    game: list[Any] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    commands: list[list[Any]] = field(default_factory=list)
    outcomes: list[list[Any]] = field(default_factory=list)
    kinds: list[tuple[str, list[list[Any]]]] = field(default_factory=list)
    rounds: list[list[Any]] = field(default_factory=list)  # a tournament's published tables
    over: bool = False
    supplied: bool = False
    tournament: bool = False
    broken: bool = False


def seat_of(actor: str) -> int | None:
    """The seat of an actor ``seat:N`` (None for the arbiter, the server, ...)."""
    name, colon, number = actor.partition(":")
    if name == "seat" and colon and number.isdigit():
        return int(number)
    return None


def named(message: Any) -> tuple[str, str]:
    """(family, action) of a command: the Command's game oneof (``bon_appetit``,
    ``arbiter``, ``call``, ``clock``) and the inner message's own oneof (``bid``, ``note``),
    or the family again when it has none; a tournament's: (``tournament``, its action)."""
    if isinstance(message, tournament_record_pb2.TournamentCommand):
        return "tournament", message.WhichOneof("action") or ""
    family = message.WhichOneof("game") or ""
    if not family:
        return "", ""
    inner = getattr(message, family)
    for oneof in inner.DESCRIPTOR.oneofs:
        which = inner.WhichOneof(oneof.name)
        if which:
            return family, which
    return family, family


def command_row(game_id: str, kind: str, row: Row, tournament: bool) -> list[Any]:
    """A command row of the ``commands`` table (the command as protobuf JSON)."""
    message: Any = (
        tournament_record_pb2.TournamentCommand.FromString(row.body)
        if tournament
        else record_pb2.Command.FromString(row.body)
    )
    family, action = named(message)
    text = json.dumps(decoded(row, tournament), sort_keys=True, separators=(",", ":"))
    return [game_id, kind, row.seq, row.actor, seat_of(row.actor), family, action, text,
            row.recorded_at]  # fmt: skip


def published(game_id: str, row: Row) -> list[list[Any]]:
    """(game, round, table) of each game a tournament's ``publish`` row names."""
    command = tournament_record_pb2.TournamentCommand.FromString(row.body)
    if command.WhichOneof("action") != "publish":
        return []
    publish = command.publish
    return [[g, publish.round, t] for t, g in enumerate(publish.game_ids, 1)]


def pieces(stored: StoredGame) -> Pieces:
    """Everything one game gives the tables (a module-level function: sent to workers).

    A row body that does not decode, or a record that does not fold, leaves the game out
    (``broken``: ``audit --all`` names what is wrong)."""
    rows = stored.rows
    try:
        genesis = genesis_of(rows[0])
        return _pieces(stored, genesis)
    except (DecodeError, MalformedCommand, PackError, RuleViolation, ValueError, LookupError):
        return Pieces(rows[0].game_id if rows else "", broken=True)


def _pieces(stored: StoredGame, genesis: record_pb2.Genesis) -> Pieces:
    """``pieces`` of a game whose genesis decodes."""
    rows, game_id, kind = stored.rows, genesis.game_id, genesis.game_kind
    tournament = is_tournament(genesis)
    over = rows[-1].kind == SEED_REVEAL
    found = Pieces(game_id, over=over, supplied=genesis.seed_supplied, tournament=tournament)
    found.rows = [
        [game_id, r.seq, r.kind, r.actor, seat_of(r.actor), r.recorded_at, r.prev_hash, r.hash,
         r.state_hash, r.commitment or None]
        for r in rows
    ]  # fmt: skip
    commands = [r for r in rows if r.kind == COMMAND]
    if over or tournament:  # kept only if public (a tournament's rows hold nothing secret)
        found.commands = [command_row(game_id, kind, r, tournament) for r in commands]
    if tournament:
        found.rounds = [p for r in commands for p in published(game_id, r)]
    moves = sum(1 for r in commands if seat_of(r.actor) is not None)
    result: list[Any] = [None, None, None, None]
    if over and not tournament:
        projected = dict(projection.rows_of_stored(stored))
        ended = projected["outcome_games"][0]
        seats = projected["outcome_seats"]
        found.outcomes = seats
        scored = ended[6]
        points = [s[5] for s in seats] if scored else None
        result = [ended[5], scored, ended[7] if scored else None, points]
        found.kinds = [(n, r) for n, r in projected.items() if n not in projection.GENERIC_TABLES]
    found.game = [
        game_id, kind, genesis.ruleset_version, genesis.record_version or 1,
        genesis.tournament_id or None, len(genesis.seats), [s.name for s in genesis.seats],
        genesis.created_at, FINISHED if over else RUNNING, over, len(rows), moves,
        rows[-1].recorded_at if over else None,
        record_pb2.SeedReveal.FromString(rows[-1].body).server_seed.hex() if over else None,
        *result,
    ]  # fmt: skip
    return found


@dataclass(frozen=True)
class Written:
    """What an export wrote: games, public ones, running ones, left out; rows per table."""

    games: int
    public: int
    running: int
    broken: int
    tables: dict[str, int]


def _nothing(done: int) -> None:
    """A progress callback that shows nothing."""


def public_refusals(
    store: EventStore, game_ids: Iterable[str], kinds: dict[str, str]
) -> list[list[Any]]:
    """The refused commands of public games, as anyone may see them (a command sent with
    another game's seat token is that game's: left out)."""
    public = Release(over=True)
    found = []
    for game_id in game_ids:
        for r in store.rejections(game_id):
            if sees_refusal(SPECTATOR, r.actor, public):
                found.append(
                    [game_id, kinds[game_id], r.after_seq, r.actor, seat_of(r.actor), r.status,
                     r.reason, r.rule_id or None, r.message, r.recorded_at]
                )  # fmt: skip
    return found


def tables_of(batch: Sequence[Pieces]) -> dict[str, list[list[Any]]]:
    """The rows of a batch of games, table by table."""
    found: dict[str, list[list[Any]]] = {"games": [p.game for p in batch]}
    for p in batch:
        for name, rows in (
            ("rows", p.rows),
            ("commands", p.commands),
            ("outcomes", p.outcomes),
            ("rounds", p.rounds),
            *((n.removeprefix(PREFIX), r) for n, r in p.kinds),
        ):
            found.setdefault(name, []).extend(rows)
    return found


def export_parquet(
    db_path: str,
    folder: str,
    workers: int | None,
    advance: Callable[[int], None] = _nothing,
) -> Written:
    """Write every game of a file no server holds as Parquet tables into ``folder`` (made
    if missing; files of the same names are replaced)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    gathered: Gathered | None = None  # made once the workers run (a fork needs one thread)
    waiting: list[Pieces] = []
    finished: list[str] = []  # public
    supplied: list[str] = []  # finished with a supplied seed: public unless held back
    kinds: dict[str, str] = {}
    running = broken = 0
    try:
        for found in bulk.over_games(
            db_path, pieces, workers or bulk.default_workers(), "", advance
        ):
            gathered = gathered or Gathered()
            if found.broken:
                broken += 1
                continue
            kinds[found.game_id] = found.game[1]
            running += not found.over
            if found.over and not found.tournament:
                (supplied if found.supplied else finished).append(found.game_id)
            waiting.append(found)
            if len(waiting) >= BATCH:
                gathered.add(tables_of(waiting))
                waiting = []
        gathered = gathered or Gathered()
        gathered.add(tables_of(waiting))
        store = open_store(db_path, read_only=True)
        try:
            held = {g for g in supplied if store.twins_running(g) > 0}
            shown = finished + [g for g in supplied if g not in held]
            gathered.held_back(sorted(held))
            gathered.add({"refusals": public_refusals(store, shown, kinds)})
        finally:
            store.close()
        tables = gathered.write(out)
    finally:
        if gathered is not None:
            gathered.close()
    return Written(len(kinds), len(shown), running, broken, tables)
