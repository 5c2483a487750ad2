"""Log-tree positions on PostgreSQL are given after the commit, in batches, by whichever
node holds the placement lock (``service/store/postgres/placing.py``): nodes committing
at once get gapless, unique positions in one order that every node reads the same; a
commit that no placement saw is placed at the next start; no placement covers a row
twice; only placed rows are ever read by position or as leaves."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import psycopg
import pytest

from feastlog.replay.proof.signed import leaf_hash_of
from feastlog.replay.record.rows import Row
from feastlog.service.store import Batch, StoreUnavailable
from feastlog.service.store.postgres import SCHEMA_NAME, PgStore
from feastlog.service.store.postgres.follow import Follower
from feastlog.service.store.postgres.placing import PLACEMENT_LOCK, place
from feastlog.service.store.postgres.writes import write_rows
from feastlog.service.store.stream import Committed
from feastlog.service.store.writer import Database
from feastlog.v1 import game_service_pb2 as pb
from tests.faults import kill_before_placing
from tests.serverutil import ProcessServer, bearer, create, stub, view_of

NODES, COMMITS, ROWS = 3, 40, 3  # per node: commits of ROWS rows each


def row(game_id: str, seq: int) -> Row:
    """A stored row (the store keeps what it is given: no rules here)."""
    return Row(game_id, seq, "command", "seat:0", f"c{seq}", b"x", "t", "p", f"h{seq}", "s")


@pytest.fixture
def stores(postgres: str) -> Iterator[list[PgStore]]:
    opened = [PgStore(postgres, pool_size=2) for _ in range(NODES)]
    yield opened
    for store in opened:
        store.close()


def commit_unplaced(dsn: str, rows: list[Row]) -> None:
    """A commit as a node writes it, with no placement after it (the node died there)."""
    with psycopg.connect(dsn) as con, con.transaction(), con.cursor() as cursor:
        cursor.execute(f"SET search_path TO {SCHEMA_NAME}".encode())
        write_rows(cursor, Batch(rows=rows))


def test_nodes_committing_at_once_get_gapless_positions_in_one_order(
    stores: list[PgStore],
) -> None:
    firsts: dict[str, list[int]] = {}
    start = threading.Barrier(NODES)

    def node(k: int) -> None:
        start.wait()
        game = f"g{k}"
        taken = firsts.setdefault(game, [])
        for c in range(COMMITS):  # each node its own game, seq on from the last commit
            rows = [row(game, c * ROWS + i + 1) for i in range(ROWS)]
            first = stores[k].write(Batch(rows=rows))
            assert first is not None
            taken.append(first)

    threads = [threading.Thread(target=node, args=(k,)) for k in range(NODES)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = NODES * COMMITS * ROWS
    seen = [s.rows_from(0, 10 * total) for s in stores]
    assert seen[0] == seen[1] == seen[2]  # one order, whichever node reads it
    placed = seen[0]
    assert [p for p, _ in placed] == list(range(total))  # gapless, each position once
    assert len({(r.game_id, r.seq) for _, r in placed}) == total  # each row once
    for k in range(NODES):  # each game's rows in seq order; each commit's rows together
        game = f"g{k}"
        mine = [(p, r.seq) for p, r in placed if r.game_id == game]
        assert [q for _, q in mine] == list(range(1, COMMITS * ROWS + 1))
        for c, first in enumerate(firsts[game]):
            assert [p for p, _ in mine[c * ROWS : (c + 1) * ROWS]] == list(
                range(first, first + ROWS)
            )
    assert stores[0].leaves(0, 10 * total) == [leaf_hash_of(r) for _, r in placed]
    with psycopg.connect(stores[0].dsn) as con:
        size = con.execute(f"SELECT size FROM {SCHEMA_NAME}.log_tree".encode()).fetchone()
        left = con.execute(f"SELECT count(*) FROM {SCHEMA_NAME}.log_pending".encode()).fetchone()
    assert size == (total,) and left == (0,)


def test_a_commit_no_placement_saw_is_placed_at_the_next_start(postgres: str) -> None:
    store = PgStore(postgres)
    try:
        assert store.write(Batch(rows=[row("g", 1), row("g", 2)])) == 0
        commit_unplaced(postgres, [row("g", 3), row("h", 1)])
        # committed, not placed: in the game, never read by position or as a leaf
        assert [r.seq for r in store.rows("g")] == [1, 2, 3]
        assert [p for p, _ in store.rows_from(0)] == [0, 1]
        assert len(store.leaves(0)) == 2
        assert store.leaf_position("g", 3) is None
    finally:
        store.close()
    again = PgStore(postgres)  # a start places what a dead node left pending
    try:
        placed = again.rows_from(0)
        assert [(p, r.game_id, r.seq) for p, r in placed] == [
            (0, "g", 1),
            (1, "g", 2),
            (2, "g", 3),
            (3, "h", 1),
        ]
        assert again.leaves(0) == [leaf_hash_of(r) for _, r in placed]
        assert again.write(Batch(rows=[row("g", 4)])) == 4
    finally:
        again.close()


def test_a_node_placing_places_another_nodes_pending_commit(postgres: str) -> None:
    store = PgStore(postgres)
    try:
        commit_unplaced(postgres, [row("a", 1)])
        assert store.write(Batch(rows=[row("b", 1)])) == 1  # "a 1" placed first, in its turn
        assert store.leaf_position("a", 1) == 0
    finally:
        store.close()


def test_no_placement_covers_a_row_twice(postgres: str) -> None:
    PgStore(postgres).close()  # the schema
    for k in range(20):
        commit_unplaced(postgres, [row(f"g{k}", 1), row(f"g{k}", 2)])
    results: list[dict[tuple[str, int], int]] = []
    start = threading.Barrier(4)

    def placing() -> None:
        with psycopg.connect(postgres) as con:
            con.execute(f"SET search_path TO {SCHEMA_NAME}".encode())
            start.wait()
            with con.transaction(), con.cursor() as cursor:
                results.append(place(cursor))

    threads = [threading.Thread(target=placing) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    placed = [key for found in results for key in found]
    assert sorted(placed) == sorted((f"g{k}", 1) for k in range(20))  # each commit once
    store = PgStore(postgres)
    try:
        assert [p for p, _ in store.rows_from(0)] == list(range(40))
    finally:
        store.close()


def test_each_nodes_stream_has_every_row_once_in_log_order(postgres: str) -> None:
    """Two nodes commit at once; each node's stream, woken by the placements' notices
    alone (no catch-up asked by hand), publishes every row once, by position."""
    asyncio.run(_two_streams(postgres))


def recorder(into: list[tuple[int, str, int]]) -> Callable[[Committed], None]:
    """A stream subscriber noting (position, game id, seq) of every row published."""

    def note(commit: Committed) -> None:
        into.extend((commit.position + i, r.game_id, r.seq) for i, r in enumerate(commit.rows))

    return note


def woken(db: Database) -> Callable[[str, int], None]:
    """What a notice does on a node: its stream reads what was placed (as a server's)."""
    return lambda game_id, seq: db.catch_up()


async def _two_streams(dsn: str) -> None:
    loop = asyncio.get_running_loop()
    dbs = [Database(PgStore(dsn, pool_size=2)) for _ in range(2)]
    seen: list[list[tuple[int, str, int]]] = [[], []]
    followers = []
    for k, db in enumerate(dbs):
        db.start_stream(0)
        db.stream.subscribe("test", recorder(seen[k]))
        db.start()
        follower = Follower(dsn, loop, woken(db), db.catch_up)
        follower.start()
        followers.append(follower)
    for follower in followers:
        assert await asyncio.to_thread(follower.listening.wait, 10)

    async def node(k: int) -> None:
        for c in range(COMMITS):
            rows = [row(f"n{k}", c * ROWS + i + 1) for i in range(ROWS)]
            await dbs[k].commit(Batch(rows=rows))

    try:
        await asyncio.gather(node(0), node(1))
        total = 2 * COMMITS * ROWS
        for _ in range(200):  # the last placement's notice on its way
            if all(len(s) >= total for s in seen):
                break
            await asyncio.sleep(0.05)
        placed = await asyncio.to_thread(dbs[0].store.rows_from, 0, 10 * total)
        logged = [(p, r.game_id, r.seq) for p, r in placed]
        assert [p for p, _, _ in logged] == list(range(total))
        assert seen[0] == seen[1] == logged
    finally:
        for follower in followers:
            await asyncio.to_thread(follower.stop)
        for db in dbs:
            await db.close()


KEY = "org_test-organiser-key-0123456789abcdef"
ANSWERED = 4  # commands answered before the one killed between its commit and placement


def test_kill_9_between_commit_and_placement_loses_nothing_acknowledged(postgres: str) -> None:
    server = ProcessServer(postgres, KEY, prelude=kill_before_placing(1))
    client = stub(server.address)
    game = create(client, KEY, "bon-appetit", ["Ann", "Bo", "Cy"], seed=bytes(32))
    tokens = [t.token for t in game.seat_tokens]
    answered: dict[int, str] = {}

    def send() -> None:
        view = view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))
        seat = int(view["to_act"][0])
        legal = client.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=game.game_id), metadata=bearer(tokens[seat])
        )
        request = pb.SubmitCommandRequest(
            game_id=game.game_id, command_id=f"c{len(answered)}", command=legal.commands[0]
        )
        reply = client.SubmitCommand(request, metadata=bearer(tokens[seat]))
        answered[reply.seq] = reply.hash

    for _ in range(ANSWERED):  # each placed in its own commit: the lock was free
        send()
    # another node placing: the next commit holds without waiting, its placement after it
    with psycopg.connect(postgres, autocommit=True) as placing:
        placing.execute("SELECT pg_advisory_lock(hashtext(%s))", [PLACEMENT_LOCK])
        with pytest.raises(grpc.RpcError):  # the server dies before it places
            send()
        server.proc.wait(timeout=10)
    assert sorted(answered) == list(range(2, ANSWERED + 2))
    store = PgStore(postgres, read_only=True)  # reading places nothing
    try:
        rows = store.rows(game.game_id)
        assert len(rows) == ANSWERED + 2  # the killed command's commit held, unplaced
        assert [p for p, _ in store.rows_from(0)] == list(range(ANSWERED + 1))
    finally:
        store.close()
    again = ProcessServer(postgres, KEY)  # its start places the commit left pending
    try:
        store = PgStore(postgres, read_only=True)
        try:
            placed = store.rows_from(0)
            leaves = store.leaves(0)
        finally:
            store.close()
        assert [(p, r.seq) for p, r in placed] == [(p, p + 1) for p in range(ANSWERED + 2)]
        assert leaves == [leaf_hash_of(r) for r in rows]
        for seq, hash_ in answered.items():
            assert rows[seq - 1].hash == hash_  # every acknowledged row, as acknowledged
        seen = stub(again.address).GetView(pb.GetViewRequest(game_id=game.game_id))
        assert seen.seq == ANSWERED + 2
    finally:
        again.terminate()


def test_a_failed_placement_is_made_again_before_the_commit_is_answered(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from feastlog.service.store.postgres import log as pg_log

    placing = pg_log.position_of
    failures = [psycopg.OperationalError("the connection was lost")]

    def flaky(con: psycopg.Connection[Any], first: Row) -> int:
        if failures:
            raise failures.pop()
        return placing(con, first)

    monkeypatch.setattr(pg_log, "position_of", flaky)
    monkeypatch.setattr(pg_log, "place_in_commit", lambda cursor, first: None)  # a node placing
    monkeypatch.setattr(pg_log, "PLACE_AGAIN", (0.0,))
    store = PgStore(postgres)
    try:
        assert store.write(Batch(rows=[row("g", 1), row("g", 2)])) == 0  # placed again
        failures.extend([psycopg.OperationalError("down")] * 2)  # and again: given up
        with pytest.raises(StoreUnavailable):
            store.write(Batch(rows=[row("g", 3)]))
        assert store.leaf_position("g", 3) is None  # committed, waiting for a placement
        assert store.write(Batch(rows=[row("g", 4)])) == 3  # the next placement places it
        assert [(p, r.seq) for p, r in store.rows_from(0)] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    finally:
        store.close()
