"""Records built and stored for the benchmarks and tests: no server, the service's rows.

``build`` plays random legal commands from a fixed seed through the fold (the same rows
the service writes); ``store_games`` writes such records into a DuckDB file as the
service would; ``build_store`` writes many replicas of a few templates (``bench-scale``);
``stored_games`` reads a file back for the fold rate.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import random
import time
import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import evolve
from feastlog.replay.games.fold import Table, state_hash
from feastlog.replay.record.history import begin, genesis_of, new_genesis, record_version
from feastlog.replay.record.rows import COMMAND, CURRENT_VERSION, SEED_REVEAL, Row, make_row, seal
from feastlog.service.store import Batch, NewGame, StoredGame, projection
from feastlog.service.store.duckdb import Store
from feastlog.v1 import record_pb2

PER_TOURNAMENT = 100
WRITE_BATCH = 500

NAMES = ("Ann", "Brian", "Celia", "Dev", "Eve", "Farid")


@dataclass
class Built:
    """A record and what folding it needs."""

    rows: list[Row]
    seed: bytes
    pack_bytes: bytes
    table: Table
    names: tuple[str, ...]


def build(
    kind: str = "bon-appetit",
    players: int = 3,
    seed_byte: int = 1,
    stop_after: int | None = None,
    game_id: str | None = None,
    rulings: dict[int, record_pb2.ArbiterCommand] | None = None,
    version: int = CURRENT_VERSION,
    names: Sequence[str] | None = None,
) -> Built:
    """Play random legal commands from a fixed seed; rulings go in after the given seq.

    ``version`` is the record format the rows are written in; ``names`` the seats' (by
    default the first of ``NAMES``), as given: a test may make a record no server would.
    """
    engine = games.engine(kind)
    seed = bytes([seed_byte]) * 32
    pack_bytes = engine.default_pack_bytes()
    pack = engine.load_pack(pack_bytes)
    names = tuple(names) if names is not None else NAMES[:players]
    game_id = game_id or f"g_test{seed_byte:02d}{players}"
    created_at = f"2026-01-01T00:00:{seed_byte:02d}Z"
    genesis = new_genesis(
        game_id, kind, names, {}, pack_bytes, pack, seed, created_at, version=version
    )
    first, table, _ = begin(genesis, seed, pack)
    rows = [first]
    chooser = random.Random(seed_byte)
    sent = 0
    while not fold.is_over(engine, table) and (stop_after is None or sent < stop_after):
        ruling = (rulings or {}).get(len(rows))
        if ruling is not None:
            actor, command = "arbiter", record_pb2.Command(arbiter=ruling)
        else:
            seat = chooser.choice(sorted(engine.to_act(table.game)))
            inner = chooser.choice(engine.legal_commands(table.game, seat))
            command = fold.wrap_command(engine.spec.command_field, inner)
            actor = f"seat:{seat}"
            sent += 1
        table, _ = fold.step(engine, table, actor, command)
        rows.append(
            _next(
                rows[-1],
                COMMAND,
                actor,
                command.SerializeToString(),
                table,
                f"c{len(rows)}",
                seed,
                version,
            )
        )
    if fold.is_over(engine, table):
        reveal = record_pb2.SeedReveal(server_seed=seed).SerializeToString()
        rows.append(_next(rows[-1], SEED_REVEAL, "server", reveal, table, "", seed, version))
    return Built(rows, seed, pack_bytes, table, names)


def _next(
    prev: Row,
    kind: str,
    actor: str,
    body: bytes,
    table: Table,
    command_id: str,
    seed: bytes,
    version: int,
) -> Row:
    """The row after ``prev`` in a record of format ``version``."""
    return make_row(
        prev.game_id,
        prev.seq + 1,
        kind,
        actor,
        body,
        f"2026-01-01T00:01:{prev.seq:06d}Z",
        prev.hash,
        state_hash(table),
        command_id,
        version=version,
        server_seed=seed,
    )


def games_batch(built: list[Built]) -> Batch:
    """Records as the service writes them: games, rows, and finished games' outcome rows."""
    batch = Batch()
    for b in built:
        genesis = record_pb2.Genesis.FromString(b.rows[0].body)
        batch.games.append(
            NewGame(
                b.rows[0],
                [(n, hashlib.sha256(n.encode()).hexdigest()) for n in b.names],
                b.seed,
                genesis.pack_sha256,
                genesis.game_kind,
                genesis.pack_id,
                b.pack_bytes,
            )
        )
        batch.rows += b.rows[1:]
        # a finished game's outcome rows go in with its rows, as the service writes them
        batch.outcomes += projection.rows_of_stored(
            StoredGame(tuple(b.rows), b.seed, b.pack_bytes, tuple(b.names))
        )
    return batch


def store_games(path: Path, built: list[Built]) -> None:
    """Write records into a DuckDB file as the service would."""
    store = Store(str(path))
    try:
        store.write(games_batch(built))
    finally:
        store.close()


def replica(template: Built, number: int) -> tuple[NewGame, list[Row], projection.Projected]:
    """Template ``template`` as game ``number``: a fresh id, its tournament, its chain."""
    genesis = genesis_of(template.rows[0])
    genesis.game_id = f"g_{number:016x}"
    genesis.tournament_id = f"league-{number // PER_TOURNAMENT:04d}"
    genesis.created_at = f"2026-03-01T00:00:00.{number:06d}Z"[:27] + "Z"
    version = record_version(genesis)
    rows: list[Row] = []
    prev = template.rows[0].prev_hash
    for row in template.rows:
        body = genesis.SerializeToString(deterministic=True) if row.seq == 1 else row.body
        moved = evolve(row, game_id=genesis.game_id, body=body)
        rows.append(seal(moved, prev, version, template.seed))
        prev = rows[-1].hash
    new = NewGame(
        rows[0],
        [(n, "") for n in template.names],
        template.seed,
        genesis.pack_sha256,
        genesis.game_kind,
        genesis.pack_id,
        template.pack_bytes,
    )
    return new, rows, moved_outcomes(template, genesis)


_OUTCOMES: dict[str, projection.Projected] = {}


def moved_outcomes(template: Built, genesis: Any) -> projection.Projected:
    """The template's outcome rows (folded once) with the replica's ids in them."""
    key = template.rows[0].game_id
    if key not in _OUTCOMES:
        stored = StoredGame(tuple(template.rows), template.seed, template.pack_bytes, ())
        _OUTCOMES[key] = projection.rows_of_stored(stored)
    moved: projection.Projected = []
    for table, rows in _OUTCOMES[key]:
        fresh = [[genesis.game_id, *r[1:]] for r in rows]
        if table in ("outcome_games", "outcome_seats"):  # the tournament column
            for r in fresh:
                r[2] = genesis.tournament_id
        if table == "outcome_games":
            for r in fresh:
                r[8] = genesis.created_at
        moved.append((table, fresh))
    return moved


_TEMPLATES: list[Built] = []


def _keep_templates(made: list[Built]) -> None:
    """Pool initializer: the templates a worker replicates."""
    _TEMPLATES[:] = made


def replicas(first: int, last: int) -> Batch:
    """Games ``first`` to ``last - 1`` as one write: replicas of the templates."""
    batch = Batch()
    for number in range(first, last):
        # templates in a mixed order: a cycle would line up with the workers' shares
        # (every k-th game), giving one worker all the long games
        chosen = zlib.crc32(number.to_bytes(8, "big")) % len(_TEMPLATES)
        new, rows, projected = replica(_TEMPLATES[chosen], number)
        batch.games.append(new)
        batch.rows += rows[1:]
        batch.outcomes += projected
    return batch


def build_store(path: Path, games: int, made: list[Built], workers: int = 1) -> float:
    """Write ``games`` replicas; returns the seconds it took.

    With ``workers`` > 1, worker processes seal the next batches while this one writes
    (a few batches ahead at most, so memory stays flat).
    """
    start = time.perf_counter()
    spans = [(first, min(games, first + WRITE_BATCH)) for first in range(0, games, WRITE_BATCH)]
    store = Store(str(path))
    try:
        # a replica's outcome rows are its template's with its own ids (checked by the
        # projection tests: the rows kept by the writer equal a rebuild from the log)
        if workers <= 1:
            _keep_templates(made)
            for first, last in spans:
                store.write(replicas(first, last))
        else:
            context = multiprocessing.get_context("spawn")
            with context.Pool(workers, initializer=_keep_templates, initargs=(made,)) as pool:
                ahead: deque[Any] = deque()
                for span in spans:
                    ahead.append(pool.apply_async(replicas, span))
                    if len(ahead) > workers:
                        store.write(ahead.popleft().get())
                while ahead:
                    store.write(ahead.popleft().get())
    finally:
        store.close()
    return time.perf_counter() - start


def stored_games(path: Path) -> list[StoredGame]:
    """Every game of a file no server holds."""
    store = Store(str(path), read_only=True)
    try:
        found = [store.load(g) for g in store.game_ids()]
    finally:
        store.close()
    return [s for s in found if s is not None]


def count_games(path: Path) -> tuple[int, int]:
    """(games, rows) of a file no server holds."""
    store = Store(str(path), read_only=True)
    try:
        return store.count_games()
    finally:
        store.close()


def audit_report_of(built: Built) -> Any:
    """A built record's audit report."""
    from feastlog.service.app.source import audit_stored

    return audit_stored(StoredGame(tuple(built.rows), built.seed, built.pack_bytes, built.names))
