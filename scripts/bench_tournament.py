"""Tournament benchmarks (report only; nothing asserts a speed).

    python -m scripts.bench_tournament [--players 1024] [--history 7] [--runs 3]

1. pairing round ``history + 1`` of ``--players`` players in tables of 4, after
   ``history`` rounds made up from a seed (random tables and points, so every pair's
   meetings and every seat count are there as in a real event): ``pairing.propose``
   (CP-SAT, its groups of standing, the solver's deterministic time limit per group);
2. the standings with every tiebreak for that event;
3. publishing a round of ``--players / 4`` tables (256 for 1,024 players): every game and
   the publish row in one commit, through the tournament use case on a DuckDB file.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from feastlog.replay.tournament import pairing
from feastlog.replay.tournament.fold import apply, begin
from feastlog.replay.tournament.standings import places_of, standings
from feastlog.replay.tournament.state import Tournament
from feastlog.service.app.application import Application
from feastlog.service.app.auth import Caller, Credentials
from feastlog.service.store.port import open_store
from feastlog.service.store.writer import Database
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb

KEY = "org_bench-tournament-organiser-key-0123456789"
NOW = "2026-12-02T00:00:00Z"


def made_up_event(players: int, rounds: int, seed: int) -> Tournament:
    """A tournament after ``rounds`` rounds of random tables of 4 and random points."""
    options = {"table_sizes": "4", "rounds": str(rounds + 1), "game_kind": "bon-appetit"}
    state = begin(record_pb2.Genesis(game_id="t_bench", game_kind="tournament", options=options))
    names = [f"player-{i:04d}" for i in range(players)]
    for name in names:
        state = apply(state, tpb.TournamentCommand(register=tpb.RegisterPlayer(name=name)))
    rng = random.Random(seed)
    for number in range(1, rounds + 1):
        order = names[:]
        rng.shuffle(order)
        tables = [order[i : i + 4] for i in range(0, len(order), 4)]
        propose = tpb.ProposePairing(
            round=number, tables=[tpb.PairedTable(players=t) for t in tables], method="fixed"
        )
        state = apply(state, tpb.TournamentCommand(propose=propose))
        ids = [f"g_{number:02d}{t:06d}" for t in range(len(tables))]
        state = apply(
            state, tpb.TournamentCommand(publish=tpb.PublishRound(round=number, game_ids=ids))
        )
        for t, table in enumerate(tables, start=1):
            points = [rng.randrange(40) for _ in table]
            best = max(points)
            result = tpb.TableResult(
                round=number,
                table=t,
                game_id=ids[t - 1],
                points=points,
                places=places_of(points, [s for s, p in enumerate(points) if p == best]),
            )
            state = apply(state, tpb.TournamentCommand(result=result))
    return state


async def publish_once(players: int, folder: Path) -> float:
    """Seconds to publish one round of ``players / 4`` tables on a new DuckDB file."""
    store = open_store(str(folder / f"bench-{time.monotonic_ns()}.duckdb"))
    db = Database(store)
    db.start()
    credentials = Credentials(KEY, store.seat_of_token, store.arbiter_of_key)
    app = Application(db, credentials)
    await app.start()
    try:
        organiser: Caller = credentials.caller([("authorization", f"Bearer {KEY}")])
        names = [f"player-{i:04d}" for i in range(players)]
        options = {"table_sizes": "4", "rounds": "1", "pairing": "fixed"}
        made = await app.tournaments.create_tournament(organiser, options, names[:64], NOW)
        tid = made.state.tournament_id
        for name in names[64:]:
            register = tpb.TournamentCommand(register=tpb.RegisterPlayer(name=name))
            await app.tournaments.command(organiser, tid, register, NOW)
        tables = [names[i : i + 4] for i in range(0, players, 4)]
        await app.tournaments.pair(organiser, tid, tables, [], NOW)
        start = time.perf_counter()
        await app.tournaments.publish(organiser, tid, NOW)
        return time.perf_counter() - start
    finally:
        await app.drain()
        await db.close()


def main() -> None:
    """Run each benchmark ``--runs`` times and print the seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1024)
    parser.add_argument("--history", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    state = made_up_event(args.players, args.history, seed=1)
    seed = bytes(range(32))
    timings = []
    for run in range(args.runs):
        pairing._DERIVED.clear()  # each run derives again
        start = time.perf_counter()
        found = pairing.propose(state, seed)
        timings.append(time.perf_counter() - start)
        print(
            f"pairing run {run + 1}: {timings[-1]:.2f} s, {len(found.tables)} tables, "
            f"objective {found.objective}, {found.status}",
            flush=True,
        )
    print(
        f"pairing {args.players} players after {args.history} rounds: "
        f"median {statistics.median(timings):.2f} s"
    )
    timings = []
    for _ in range(args.runs):
        start = time.perf_counter()
        standings(state)
        timings.append(time.perf_counter() - start)
    print(f"standings with tiebreaks: {', '.join(f'{t:.3f}' for t in timings)} s")
    with tempfile.TemporaryDirectory() as folder:
        timings = [asyncio.run(publish_once(args.players, Path(folder))) for _ in range(args.runs)]
    print(
        f"publishing {args.players // 4} tables in one commit: "
        + ", ".join(f"{t:.2f}" for t in timings)
        + " s"
    )


if __name__ == "__main__":
    main()
