"""feastlog beside its Python peer on the same commands: the eventsourcing library.

    python scripts/bench_peer.py [--games 64] [--pairs 3] [--kind bon-appetit]

(needs the dev install: ``pip install -e '.[dev]'``, which brings ``eventsourcing``).

The peer is what a Python team would write with eventsourcing 9 to record these games:
one aggregate per game, SQLite on a file, one commit a command, in process (no network,
no second process), its aggregate cache on and no deep copy out of it. Each command runs
the project's own fold on the aggregate (``fold.step``: every rule checked, the table
evolved) and the state hash, so both sides pay the rules; the peer pays none of
feastlog's wire, authorisation, refusal bookkeeping, hash chain, commitments or
projection.

feastlog is ``feastlog bench``'s submit-only run: a real ``feastlog serve`` on a DuckDB
file, ``--games`` games at once over gRPC, each game's commands worked out beforehand.
Both sides play the same games: built from the same supplied seeds (``build``), the same
commands in the same order within each game (the peer takes the games round-robin, one
command of each in turn, as the concurrent lanes do). The two run back to back,
alternated ``--pairs`` times, and each pair's ratio is printed with the median: a
machine whose load changes weighs on both sides of a pair alike.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from feastlog.cli.benchmarks.serving import start_server, submit_only
from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.record.history import new_genesis
from feastlog.replay.record.rows import COMMAND
from feastlog.service.bench.data import build
from feastlog.v1 import record_pb2


class PeerGame(Aggregate):
    """One game: created from its seed, then one event per accepted command."""

    @event("Created")
    def __init__(self, kind: str, names: list[str], seed_hex: str) -> None:
        engine = games.engine(kind)
        pack_bytes = engine.default_pack_bytes()
        pack = fold.loaded_pack(engine, pack_bytes)
        seed = bytes.fromhex(seed_hex)
        genesis = new_genesis(
            str(self.id), kind, names, {}, pack_bytes, pack, seed, "2026-01-01T00:00:00Z"
        )
        self.kind = kind
        self.table, _ = fold.start(genesis, seed, pack)
        self.state_hash = fold.state_hash(self.table)

    @event("CommandAccepted")
    def accept(self, actor: str, body_hex: str) -> None:
        """The project's fold on the command: raises (no event) when a rule refuses it."""
        command = record_pb2.Command.FromString(bytes.fromhex(body_hex))
        self.table, _ = fold.step(games.engine(self.kind), self.table, actor, command)
        self.state_hash = fold.state_hash(self.table)


class PeerGames(Application[Any]):
    """The games, on SQLite, one commit a command."""

    def create(self, kind: str, names: list[str], seed: bytes) -> Any:
        game = PeerGame(kind, names, seed.hex())
        self.save(game)
        return game.id

    def submit(self, game_id: Any, actor: str, body: bytes) -> None:
        game: PeerGame = self.repository.get(game_id)
        game.accept(actor, body.hex())
        self.save(game)


def planned(kind: str, count: int, players: int) -> list[Any]:
    """The games ``feastlog bench`` plans, the same seeds: (kind, names, seed, commands)."""
    out = []
    for i in range(count):
        built = build(kind, players, seed_byte=i % 250 + 1, game_id=f"g_plan{i}")
        commands = [(r.actor, r.body) for r in built.rows if r.kind == COMMAND]
        out.append((list(built.names), built.seed, commands))
    return out


def peer_rate(folder: Path, kind: str, plans: list[Any], run: int) -> tuple[int, float]:
    """(commands, seconds) for the peer playing every planned game, round-robin."""
    path = folder / f"peer{run}.sqlite"
    app = PeerGames(
        env={
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(path),
            "AGGREGATE_CACHE_MAXSIZE": str(len(plans) + 1),
            "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
        }
    )
    ids = [app.create(kind, names, seed) for names, seed, _ in plans]
    lanes = [list(commands) for _, _, commands in plans]
    done = 0
    start = time.perf_counter()
    for i in range(max(len(lane) for lane in lanes)):
        for game_id, lane in zip(ids, lanes, strict=True):
            if i < len(lane):
                actor, body = lane[i]
                app.submit(game_id, actor, body)
                done += 1
    seconds = time.perf_counter() - start
    app.close()
    return done, seconds


def feastlog_rate(folder: Path, kind: str, games_at_once: int, players: int, run: int) -> float:
    """feastlog bench's submit-only rate on the same games (a fresh server each run)."""
    key = "org_" + secrets.token_urlsafe(32)
    proc, address = start_server(folder / f"feastlog{run}.duckdb", key)
    try:
        found = asyncio.run(submit_only(address, key, kind, games_at_once, players, rounds=1))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return found.per_second


@click.command()
@click.option("--games", "games_at_once", default=64, show_default=True, type=click.IntRange(1))
@click.option("--pairs", default=3, show_default=True, type=click.IntRange(1))
@click.option("--players", default=3, show_default=True, type=click.IntRange(2, 4))
@click.option(
    "--kind",
    default="bon-appetit",
    show_default=True,
    type=click.Choice(["bon-appetit", "menu-masters", "picky-eaters"]),
)
def main(games_at_once: int, pairs: int, players: int, kind: str) -> None:
    """Alternate the peer and feastlog on the same games; print each pair's ratio."""
    plans = planned(kind, games_at_once, players)
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for run in range(pairs):
            commands, seconds = peer_rate(folder, kind, plans, run)
            peer = commands / seconds
            ours = feastlog_rate(folder, kind, games_at_once, players, run)
            ratios.append(ours / peer)
            load = os.getloadavg()[0]
            click.echo(
                f"pair {run + 1}: eventsourcing (SQLite, in process) {peer:,.0f} cmd/s "
                f"({commands} commands); feastlog (gRPC, {games_at_once} games at once) "
                f"{ours:,.0f} cmd/s; ratio {ours / peer:.2f} (load average {load:.2f})"
            )
    click.echo(
        f"median ratio feastlog / eventsourcing over {pairs} pairs: {statistics.median(ratios):.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
