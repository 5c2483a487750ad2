"""Failing writes: one bad write fails only its own commands; the cause stays in the server log.

Failures are injected beneath the store, in the DuckDB connection, so the store's own
translation, rollback and the group-commit writer run as they do when a disk fails.  The
connection is wedged in this process, so these servers keep their store here rather than in
a child process (``tests/store/test_store_process.py`` fails writes through the child).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import grpc
import pytest

from feastlog.replay.games import engine as engine_of
from feastlog.replay.games.fold import state_hash
from feastlog.replay.record.history import begin, new_genesis
from feastlog.service.store import Batch, NewGame, Rejection, StoreConflict, StoreUnavailable
from feastlog.service.store.duckdb import Store
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from tests.botutil import KINDS, PLAYERS, Ack, check_stored, refolded_state_hash
from tests.serverutil import (
    ThreadedServer,
    bearer,
    create,
    error_info,
    play_to_end,
    stub,
    view_of,
)

CAUSE = "injected: could not write block 4711 of the database file"


class FlakyConnection:
    """A DuckDB connection whose writes of one game fail, as a failing disk's would.

    ``lose_ack`` commits that game's transaction and then fails, as when the connection
    drops after the commit: the write is in the log though the writer was told otherwise.
    A write is a transaction (BEGIN … COMMIT) or, when it is one statement, that
    statement alone (DuckDB commits it as its own transaction).
    """

    def __init__(self, real: duckdb.DuckDBPyConnection, game_id: str, lose_ack: bool = False):
        self.real = real
        self.game_id = game_id
        self.lose_ack = lose_ack
        self.failing = True
        self.gate: threading.Event | None = None  # holds the next transaction until set
        self.entered = threading.Event()
        self.transactions: list[set[str]] = []  # the games of each attempted events INSERT
        self._mine = False
        self._open = False  # inside BEGIN … COMMIT
        self.calls: list[str] = []

    def execute(self, sql: str, params: Any = None) -> Any:
        """Run a statement, failing the chosen game's writes."""
        self.calls.append(sql.split(" (")[0])
        if sql == "BEGIN TRANSACTION" or (not self._open and sql.startswith("INSERT")):
            self.entered.set()  # a write begins
            if self.gate is not None:
                self.gate.wait(timeout=30)
                self.gate = None
            self._mine = False
            self._open = sql == "BEGIN TRANSACTION"
        if sql.startswith("INSERT INTO events"):
            if isinstance(params, Appending):  # appended rows, not an INSERT's columns
                values = [v for row in params.rows for v in row]
            else:
                values = [v for column in params for v in column]  # each column is one list
            self.transactions.append({v for v in values if isinstance(v, str) and v[:2] == "g_"})
            self._mine = self.failing and self.game_id in values
            if self._mine and not self.lose_ack:
                raise duckdb.IOException(CAUSE)
            if self._mine and not self._open:  # its own transaction: committed, then lost
                self._run(sql, params)
                self.failing = False  # one lost acknowledgement is enough
                raise duckdb.IOException(CAUSE)
        if sql in ("COMMIT", "ROLLBACK"):
            self._open = False
        if sql == "COMMIT" and self._mine:
            self.real.execute(sql)
            self.failing = False
            raise duckdb.IOException(CAUSE)
        return self._run(sql, params)

    def _run(self, sql: str, params: Any) -> Any:
        if isinstance(params, Appending):
            return params.real.flush()
        return self.real.execute(sql) if params is None else self.real.execute(sql, params)

    def appender(self, table: str, columns: list[str] | None = None) -> Appending:
        """The store's appender for ``table``, whose flushes fail as this connection's
        inserts do."""
        return Appending(self, table, self.real.appender(table, columns=columns))

    def executemany(self, sql: str, params: Any) -> Any:
        """Noted, so a test can tell it was used."""
        self.calls.append("executemany")
        return self.real.executemany(sql, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class Appending:
    """A real appender whose flush goes through ``FlakyConnection.execute`` as an
    ``INSERT INTO <table>`` carrying the rows, so it fails where an insert would."""

    def __init__(self, con: FlakyConnection, table: str, real: duckdb.Appender) -> None:
        self.con, self.table, self.real = con, table, real
        self.rows: list[Any] = []

    def append_rows(self, rows: Any) -> None:
        """Buffer rows, in the real appender too."""
        self.rows = list(rows)
        self.real.append_rows(self.rows)

    def flush(self) -> None:
        """Apply the rows: through the flaky connection's decision, then for real."""
        try:
            self.con.execute(f"INSERT INTO {self.table} (appended)", self)
        finally:
            self.rows = []

    def clear(self) -> None:
        """Drop the buffered rows."""
        self.rows = []
        self.real.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def wedge(server: ThreadedServer, game_id: str, lose_ack: bool = False) -> FlakyConnection:
    """Put a flaky connection under the running server's store."""
    store = server.running.db.store
    assert isinstance(store, Store)  # a DuckDB file's connection is what is wedged
    flaky = FlakyConnection(store.con, game_id, lose_ack)
    server.call(server.running.db.call(setattr, store, "con", flaky))
    return flaky


def unwedge(server: ThreadedServer, flaky: FlakyConnection) -> None:
    """Give the store its real connection back."""
    store = server.running.db.store
    server.call(server.running.db.call(setattr, store, "con", flaky.real))


def some_move(client: Any, game_id: str, tokens: list[str]) -> tuple[str, record_pb2.Command]:
    """A seat to act and its first legal command."""
    view = view_of(client.GetView(pb.GetViewRequest(game_id=game_id)))
    for seat in (int(s) for s in view["to_act"]):
        legal = client.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[seat])
        )
        if legal.commands:
            return tokens[seat], legal.commands[0]
    raise AssertionError("nobody can move")


def first_legal(client: Any, game_id: str, token: str) -> record_pb2.Command:
    """The first legal command of a seat."""
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(token)
    )
    return legal.commands[0]


def wait_for(condition: Callable[[], bool]) -> None:
    """Poll until ``condition`` holds (a test fails by timeout only if the server is stuck)."""
    for _ in range(3000):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("the condition never held")


def test_a_failing_write_fails_only_its_own_games_commands(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    server = ThreadedServer(tmp_path / "flaky.duckdb", store_process=False)
    try:
        client = stub(server.address)
        games = [create(client, server.key, kind, PLAYERS[kind]) for kind in KINDS * 2]
        tokens = {g.game_id: [t.token for t in g.seat_tokens] for g in games}
        bad, first, *others = [g.game_id for g in games]
        flaky = wedge(server, bad)
        flaky.gate, flaky.entered = threading.Event(), threading.Event()

        def send(game_id: str) -> tuple[pb.SubmitCommandRequest, Any]:
            token, command = some_move(client, game_id, tokens[game_id])
            request = pb.SubmitCommandRequest(
                game_id=game_id, command_id=uuid.uuid4().hex, command=command
            )
            return request, client.SubmitCommand.future(request, metadata=bearer(token))

        # one command holds the writer; the others, the bad game's among them, queue up
        # behind it and go in one group commit
        sent = {first: send(first)}
        wait_for(flaky.entered.is_set)
        sent |= {g: send(g) for g in [*others, bad]}
        wait_for(lambda: server.running.db.queued == len(games) - 1)
        flaky.gate.set()
        replies = {g: call.result(timeout=30) for g, (_, call) in sent.items() if g != bad}
        with pytest.raises(grpc.RpcError) as failed:
            sent[bad][1].result(timeout=30)
        merged = [t for t in flaky.transactions if bad in t and len(t) > 1]
        unwedge(server, flaky)

        # the store's failure reaches the client as UNAVAILABLE with an incident id only
        error = failed.value
        assert error.code() == grpc.StatusCode.UNAVAILABLE
        info = error_info(error)
        incident = info.metadata["incident_id"]
        assert info.reason == "STORE_UNAVAILABLE" and incident.startswith("inc_")
        assert incident in str(error.details()) and "4711" not in str(error.details())
        assert "rollback" not in str(error.details())
        logged = [r.getMessage() for r in caplog.records if incident in r.getMessage()]
        assert logged and CAUSE in logged[0]

        # the other games' commands shared the failed group commit, and were recorded
        assert merged and len(merged[0]) == len(games) - 1
        for game_id, reply in replies.items():
            assert reply.seq == 2 and not reply.replayed, game_id
        # the bad game was not written, and is not wedged: the same command goes through
        request = sent[bad][0]
        token = next(t for t in tokens[bad] if _may_send(client, request, t))
        again = client.SubmitCommand(request, metadata=bearer(token))
        assert (again.seq, again.replayed) == (2, False)
        play_to_end(client, bad, tokens[bad], seed=1)
        assert view_of(client.GetView(pb.GetViewRequest(game_id=bad)))["over"]
        assert_memory_is_the_log(server, [g.game_id for g in games])
        db = server.running.db
        for game_id, reply in replies.items():
            stored = server.call(db.call(db.store.load, game_id))
            request = sent[game_id][0]
            assert stored is not None
            assert check_stored(stored, [Ack(game_id, request.command_id, 2, reply.hash)]) == []
    finally:
        server.stop()


def _may_send(client: Any, request: pb.SubmitCommandRequest, token: str) -> bool:
    """Whether ``token``'s seat has ``request``'s command among its legal ones."""
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=request.game_id), metadata=bearer(token)
    )
    return request.command in legal.commands


def assert_memory_is_the_log(server: ThreadedServer, game_ids: list[str]) -> None:
    """Every game's rows in memory are its rows in the store; the store refolds to the same."""
    db, live_games = server.running.db, server.running.app.live
    for game_id in game_ids:
        live = server.call(live_games.get(game_id))
        stored = server.call(db.call(db.store.load, game_id))
        assert stored is not None, game_id
        assert [r.hash for r in live.rows] == [r.hash for r in stored.rows], game_id
        assert refolded_state_hash(stored) == state_hash(live.table)
        assert check_stored(stored, []) == []


def test_a_write_the_log_has_but_memory_missed_is_reloaded_not_wedged(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "lost-ack.duckdb", store_process=False)
    try:
        client = stub(server.address)
        game = create(client, server.key, "bon-appetit", PLAYERS["bon-appetit"])
        tokens = [t.token for t in game.seat_tokens]
        ann_bid, brian_bid = (first_legal(client, game.game_id, t) for t in tokens[:2])
        flaky = wedge(server, game.game_id, lose_ack=True)
        bid = pb.SubmitCommandRequest(game_id=game.game_id, command_id="ann-1", command=ann_bid)
        with pytest.raises(grpc.RpcError) as lost:
            client.SubmitCommand(bid, metadata=bearer(tokens[0]))
        assert lost.value.code() == grpc.StatusCode.UNAVAILABLE
        unwedge(server, flaky)
        # the log has Ann's bid at seq 2; memory does not: Brian's bid meets the log,
        # the game is folded from the log again, and his bid is decided anew, at seq 3
        brian = pb.SubmitCommandRequest(
            game_id=game.game_id, command_id="brian-1", command=brian_bid
        )
        assert client.SubmitCommand(brian, metadata=bearer(tokens[1])).seq == 3
        # Ann's retry finds her bid where the log has it
        again = client.SubmitCommand(bid, metadata=bearer(tokens[0]))
        assert (again.seq, again.replayed) == (2, True)
        play_to_end(client, game.game_id, tokens, seed=5)
        assert_memory_is_the_log(server, [game.game_id])
        assert view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))["over"]
    finally:
        server.stop()


def test_an_unexpected_error_is_internal_with_an_incident_id_and_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    server = ThreadedServer(tmp_path / "bug.duckdb")
    app = server.running.app

    async def broken_view(*args: Any) -> Any:
        raise RuntimeError("secret cause of a bug")

    async def broken_watch(*args: Any) -> Any:
        raise RuntimeError("secret cause of a streaming bug")

    try:
        client = stub(server.address)
        game = create(client, server.key, "picky-eaters", PLAYERS["picky-eaters"])
        app.replays.view = broken_view  # type: ignore[method-assign,assignment]
        app.games.watch = broken_watch  # type: ignore[method-assign,assignment]
        calls = [
            lambda: client.GetView(pb.GetViewRequest(game_id=game.game_id)),
            lambda: list(client.WatchGame(pb.WatchGameRequest(game_id=game.game_id))),
        ]
        for call, secret in zip(calls, ["bug", "streaming bug"], strict=True):
            with pytest.raises(grpc.RpcError) as failed:
                call()
            error = failed.value
            info = error_info(error)
            incident = info.metadata["incident_id"]
            assert error.code() == grpc.StatusCode.INTERNAL
            assert info.reason == "INTERNAL_ERROR" and incident in str(error.details())
            assert "secret" not in str(error.details()) and "RuntimeError" not in str(
                error.details()
            )
            logged = "\n".join(r.getMessage() + str(r.exc_info) for r in caplog.records)
            assert incident in logged and f"secret cause of a {secret}" in logged
    finally:
        server.stop()


# The store alone


def genesis_rows(count: int) -> tuple[NewGame, list[Any]]:
    """A new game and ``count`` rows that follow its genesis (not a playable record)."""
    kind = "bon-appetit"
    engine = engine_of(kind)
    pack_bytes = engine.default_pack_bytes()
    pack = engine.load_pack(pack_bytes)
    seed = bytes(32)
    genesis = new_genesis("g_store", kind, ["Ann", "Bo"], {}, pack_bytes, pack, seed, "t0")
    row, _, _ = begin(genesis, seed, pack)
    new = NewGame(
        row, [("Ann", "a"), ("Bo", "b")], seed, genesis.pack_sha256, kind, "p", pack_bytes
    )
    rows = [dataclasses.replace(row, seq=i, kind="command") for i in range(2, count + 2)]
    return new, rows


def test_a_big_batch_goes_in_as_one_statement_per_table_never_executemany(
    tmp_path: Path,
) -> None:
    store = Store(str(tmp_path / "rows.duckdb"))
    new, rows = genesis_rows(600)
    flaky = FlakyConnection(store.con, "nobody")
    store.con = flaky  # type: ignore[assignment]
    try:
        store.write(Batch(games=[new], rows=rows))
        store.con = flaky.real
        assert [r.seq for r in store.rows("g_store")] == list(range(1, len(rows) + 2))
        assert store.load("g_store") is not None
    finally:
        store.close()
    inserts = [c for c in flaky.calls if c.startswith("INSERT")]
    # packs, seeds, seats, the game list, then all 601 rows in one statement
    assert len([c for c in inserts if "events" in c]) == 1
    assert len(inserts) == 5, inserts
    assert "executemany" not in flaky.calls


def test_a_failed_write_leaves_nothing_and_says_why_only_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    store = Store(str(tmp_path / "fail.duckdb"))
    new, rows = genesis_rows(3)
    try:
        store.write(Batch(games=[new], rows=rows[:1]))
        with pytest.raises(StoreConflict) as clash:  # seq 3 is new, seq 2 is taken
            store.write(Batch(rows=[rows[1], rows[0]]))
        assert [r.seq for r in store.rows("g_store")] == [1, 2]
        incident = clash.value.metadata["incident_id"]
        assert "Duplicate key" not in clash.value.message and incident in clash.value.message
        assert any(
            incident in r.getMessage() and "Duplicate" in r.getMessage() for r in caplog.records
        )
        # a write that fails after the data is in (a COMMIT, or a statement that is its
        # own transaction) leaves no transaction to roll back: the error is still the
        # first one, never "cannot rollback"
        refused = Rejection("g_store", 2, "seat:0", "c", b"", "x", "y", "", "z", "t")
        for batch, seq in (
            (Batch(rows=[rows[1]]), 3),
            (Batch(rows=[rows[2]], rejections=[refused]), 4),
        ):
            flaky = FlakyConnection(store.con, "g_store", lose_ack=True)
            store.con = flaky  # type: ignore[assignment]
            with pytest.raises(StoreUnavailable) as lost:
                store.write(batch)
            assert isinstance(lost.value.__cause__, duckdb.IOException)
            assert str(lost.value.__cause__) == CAUSE
            store.con = flaky.real
            assert [r.seq for r in store.rows("g_store")] == list(range(1, seq + 1))
            assert ("COMMIT" in flaky.calls) == bool(batch.rejections)
    finally:
        store.close()


def test_a_refused_commit_leaves_nothing_for_the_next_one(tmp_path: Path) -> None:
    """Rows go in through appenders kept open between commits: rows of a refused commit
    (a duplicate seq, a value the column cannot hold) are dropped with it, never written
    by the next commit."""
    store = Store(str(tmp_path / "appended.duckdb"))
    new, rows = genesis_rows(4)  # seq 2 to 5
    refused = Rejection("g_store", 2, "seat:0", "c", b"", "x", "y", "", "z", "t")
    try:
        store.write(Batch(games=[new], rows=rows[:1]))
        with pytest.raises(StoreConflict):  # seq 3 is new, seq 2 is taken
            store.write(Batch(rows=[rows[1], rows[0]], rejections=[refused]))
        bad = dataclasses.replace(rows[2], seq="four")  # not a BIGINT
        with pytest.raises(StoreUnavailable):
            store.write(Batch(rows=[rows[1], bad]))
        store.write(Batch(rows=[rows[1]]))
        assert [r.seq for r in store.rows("g_store")] == [1, 2, 3]
        assert store.rejections("g_store") == []
        store.write(Batch(rows=[rows[2]], rejections=[refused]))
        assert [r.seq for r in store.rows("g_store")] == [1, 2, 3, 4]
        assert len(store.rejections("g_store")) == 1
    finally:
        store.close()
