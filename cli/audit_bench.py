"""``feastlog bench-audit``: audit throughput beside reading and decoding the same rows,
and the time to answer a state-at-seq query for a ~300-row game.

The games are built without a server (seeded random legal play through the fold, the
same rows the service writes) and stored in a temporary DuckDB file.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import grpc

from feastlog.v1 import record_pb2, replay_service_pb2, replay_service_pb2_grpc
from replay import fold, games
from replay.engine import Viewer
from replay.export import decoded
from replay.fold import Table, state_hash
from replay.history import begin, new_genesis
from replay.record import COMMAND, CURRENT_VERSION, SEED_REVEAL, Row, make_row
from service import projection
from service.audit_service import audit_stored
from service.replay_service import OfflineFile, state_at
from service.server import create_server
from service.store import Batch, NewGame, Store, StoredGame

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
) -> Built:
    """Play random legal commands from a fixed seed; rulings go in after the given seq.

    ``version`` is the record format the rows are written in.
    """
    engine = games.engine(kind)
    seed = bytes([seed_byte]) * 32
    pack_bytes = engine.default_pack_bytes()
    pack = engine.load_pack(pack_bytes)
    names = NAMES[:players]
    game_id = game_id or f"g_test{seed_byte:02d}{players}"
    created_at = f"2026-01-01T00:00:{seed_byte:02d}Z"
    genesis = new_genesis(
        game_id, kind, names, {}, pack_bytes, pack, seed, created_at, version=version
    )
    first, table, _ = begin(genesis, seed, pack)
    rows = [first]
    chooser = random.Random(seed_byte)
    sent = 0
    while not fold.is_over(table) and (stop_after is None or sent < stop_after):
        ruling = (rulings or {}).get(len(rows))
        if ruling is not None:
            actor, command = "arbiter", record_pb2.Command(arbiter=ruling)
        else:
            seat = chooser.choice(sorted(engine.to_act(table.game)))
            inner = chooser.choice(engine.legal_commands(table.game, seat))
            command = fold.wrap_command(engine.command_field, inner)
            actor = f"seat:{seat}"
            sent += 1
        table, _ = fold.step(table, actor, command)
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
    if fold.is_over(table):
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


def store_games(path: Path, built: list[Built]) -> None:
    """Write records into a DuckDB file as the service would."""
    store = Store(str(path))
    try:
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
        store.write(batch)
    finally:
        store.close()


def _median_ms(fn: Callable[[], object], times: int) -> float:
    """The median wall time of ``fn`` in milliseconds."""
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        spent.append((time.perf_counter() - start) * 1000)
    return statistics.median(spent)


async def _grpc_state_at_ms(path: Path, game_id: str, seq: int, times: int) -> float:
    """Median ms of ReplayService.GetStateAt as the arbiter, through a real server."""
    running = await create_server(str(path), "127.0.0.1:0")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = replay_service_pb2_grpc.ReplayServiceStub(channel)
            request = replay_service_pb2.GetStateAtRequest(
                game_id=game_id, seq=seq, viewer="seat:1"
            )
            meta = (("authorization", f"Bearer {running.organiser_key}"),)
            await stub.GetStateAt(request, metadata=meta)  # loads (folds) the game once
            spent = []
            for _ in range(times):
                start = time.perf_counter()
                await stub.GetStateAt(request, metadata=meta)
                spent.append((time.perf_counter() - start) * 1000)
            return statistics.median(spent)
    finally:
        await running.stop()


def measure(folder: Path, count: int) -> list[str]:
    """Run the measurements in ``folder``; the lines of the report."""
    path = folder / "bench.duckdb"
    # a real 300-row record, still running: a Menu Masters table of 4 after 299 commands
    long_game = build("menu-masters", players=4, seed_byte=200, stop_after=299, game_id="g_long")
    store_games(
        path, [build(players=2 + i % 3, seed_byte=i % 200) for i in range(count)] + [long_game]
    )
    store = Store(str(path), read_only=True)
    try:
        ids = store.game_ids()
        start = time.perf_counter()
        rows = 0
        for game_id in ids:
            for row in store.rows(game_id):
                decoded(row)
                rows += 1
        read_rate = rows / (time.perf_counter() - start)
        start = time.perf_counter()
        checked = 0
        for game_id in ids:
            stored = store.load(game_id)
            assert stored is not None
            report = audit_stored(stored)
            assert report.ok, report.summary()
            checked += report.rows
        audit_rate = checked / (time.perf_counter() - start)
    finally:
        store.close()
    offline = OfflineFile(str(path))
    game = offline.game("g_long")
    seq = game.last_seq // 2
    live_ms = _median_ms(lambda: state_at(game, seq, Viewer.of_seat(1)), 50)
    cold_ms = _median_ms(lambda: state_at(offline.game("g_long"), seq, Viewer.of_seat(1)), 7)
    grpc_ms = asyncio.run(_grpc_state_at_ms(path, "g_long", seq, 50))
    return [
        f"{len(ids)} stored games, {rows} rows",
        f"read + decode from DuckDB: {read_rate:,.0f} rows/s",
        f"audit (chain, seed, rules, every state hash): {audit_rate:,.0f} rows/s "
        f"({audit_rate / read_rate:.2f} of the read rate)",
        f"state at seq {seq} of a {game.last_seq}-row game, as seat:1: "
        f"{grpc_ms:.2f} ms over gRPC (GetStateAt, loaded game), {live_ms:.3f} ms of it the "
        f"in-memory lookup; {cold_ms:.1f} ms folding the file offline (CLI) (medians)",
    ]


@click.command("bench-audit")
@click.option("--games", "count", default=200, show_default=True, type=click.IntRange(min=1))
def bench_audit_command(count: int) -> None:
    """Audit throughput beside the DuckDB read rate; state-at-seq time for a 300-row game."""
    with tempfile.TemporaryDirectory() as folder:
        for line in measure(Path(folder), count):
            click.echo(line)
