"""The store contract: what the service needs of an event store, held by every adapter (a
DuckDB file, the same file served by a child process as a server holds it, a PostgreSQL
database, this process's memory) under the same tests, as eventsourcing runs one recorder
test class against every backend. The PostgreSQL-only tests at the end are what many nodes
on one database need besides: keys in the database, numbering, privileges."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import duckdb
import psycopg
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay.record.audit import verify
from feastlog.replay.record.rows import Row
from feastlog.service.app.errors import CannotOpenStore, StoreConflict
from feastlog.service.bench.data import replica
from feastlog.service.store import Batch, NewGame, Rejection, projection
from feastlog.service.store.port import (
    MEMORY,
    EventStore,
    is_memory,
    is_postgres,
    open_store,
    shown,
)
from feastlog.service.store.postgres import PgStore
from feastlog.service.store.process import ProcessStore, games_to_register
from feastlog.v1 import record_pb2
from tests.pgutil import with_database
from tests.recordutil import Built, build, games_batch
from tests.replay.test_audit_tamper import GAME, TAMPERING, TAMPERING_2, built_in

KINDS = ("bon-appetit", "menu-masters", "picky-eaters")


@functools.cache
def finished(kind: str, seed_byte: int, players: int = 3) -> Built:
    """A finished game of ``kind``, the same every time for the same arguments."""
    return build(kind=kind, players=players, seed_byte=seed_byte)


@functools.cache
def running(seed_byte: int) -> Built:
    """A Bon Appetit! game stopped after a few commands."""
    return build(players=2, seed_byte=seed_byte, stop_after=6)


@functools.cache
def other_in(version: int) -> Built:
    """The game stored beside the tampered one, in record format ``version``."""
    return build(players=2, seed_byte=5, version=version)


@pytest.fixture(params=("duckdb", "duckdb-process", "postgresql", "memory"))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """The store of each adapter, open for writing: a DuckDB file in this process or in a
    child process of its own (as a server holds it), a PostgreSQL database, memory."""
    if request.param == "postgresql":
        opened = open_store(request.getfixturevalue("postgres"))
    elif request.param == "memory":
        opened = open_store(MEMORY)
    elif request.param == "duckdb-process":
        opened = ProcessStore(str(tmp_path / "feastlog.duckdb"), games_to_register() or ())
    else:
        opened = open_store(str(tmp_path / "feastlog.duckdb"))
    yield opened
    opened.close()


def game_id(built: Built) -> str:
    return built.rows[0].game_id


def token_of(name: str) -> str:
    """The seat-token hash ``games_batch`` stores for a seat (its name's sha256)."""
    return hashlib.sha256(name.encode()).hexdigest()


def test_written_games_read_back_row_for_row(store: EventStore) -> None:
    games = [finished("bon-appetit", 3), finished("menu-masters", 4, 2), running(6)]
    store.write(games_batch(games))
    for built in games:
        loaded = store.load(game_id(built))
        assert loaded is not None
        assert loaded.rows == tuple(built.rows)
        assert (loaded.server_seed, loaded.pack_body) == (built.seed, built.pack_bytes)
        assert loaded.seat_names == built.names
        assert store.rows(game_id(built)) == tuple(built.rows)
        assert store.last_seq(game_id(built)) == len(built.rows)
    assert store.game_ids() == [game_id(g) for g in games]  # oldest first
    assert store.count_games() == (3, sum(len(g.rows) for g in games))
    assert store.count_games("menu-masters") == (1, len(games[1].rows))
    assert store.load("g_nobody") is None
    assert (store.rows("g_nobody"), store.last_seq("g_nobody")) == ((), 0)
    known = store.known_games([game_id(g) for g in games] + ["g_nobody"])
    assert known == {game_id(g): g.rows[-1].hash for g in games}


def test_a_batch_is_all_or_nothing(store: EventStore) -> None:
    first, second = running(6), finished("bon-appetit", 3)
    store.write(games_batch([first]))
    batch = games_batch([second])
    batch.rows.append(replace(first.rows[-1], command_id="another"))  # its seq is taken
    with pytest.raises(StoreConflict):
        store.write(batch)
    assert store.load(game_id(second)) is None
    assert store.seat_of_token(token_of(second.names[2])) is None
    assert [line.game_id for line in store.listed()] == [game_id(first)]
    assert store.rows(game_id(first)) == tuple(first.rows)
    assert store.stats() == []  # the finished game's outcome rows went with it


def test_a_taken_seq_is_a_conflict_and_changes_nothing(store: EventStore) -> None:
    built = running(6)
    store.write(games_batch([built]))
    fork = replace(built.rows[3], actor="seat:1", command_id="fork", hash="ab" * 32)
    with pytest.raises(StoreConflict):
        store.write(Batch(rows=[fork]))
    assert store.rows(game_id(built)) == tuple(built.rows)
    later = replace(built.rows[-1], seq=len(built.rows) + 1, command_id="next")
    with pytest.raises(StoreConflict):  # the next seq twice in one batch: neither is written
        store.write(Batch(rows=[later, replace(later, command_id="other", hash="cd" * 32)]))
    assert store.rows(game_id(built)) == tuple(built.rows)
    store.write(Batch(rows=[later]))  # the next seq is free
    assert store.last_seq(game_id(built)) == len(built.rows) + 1


def test_group_commit_writes_many_games_in_one_transaction(store: EventStore) -> None:
    games = [build(players=2, seed_byte=20 + i, stop_after=3) for i in range(6)]
    merged = Batch()
    for built in games:
        merged.extend(games_batch([built]))
    store.write(merged)
    assert store.count_games() == (6, sum(len(g.rows) for g in games))
    assert [line.game_id for line in store.listed()] == [game_id(g) for g in reversed(games)]


def test_rejections_are_kept_outside_the_chain(store: EventStore) -> None:
    built = running(6)
    store.write(games_batch([built]))
    refused = [
        Rejection(
            game_id(built),
            3,
            f"seat:{i}",
            f"r{i}",
            b"\x01\x02",
            "FAILED_PRECONDITION",
            "RULE_VIOLATION",
            "BA-BID-SIZE",
            "Ann has no red gem to bid",
            f"2026-01-01T00:02:0{i}Z",
        )
        for i in range(2)
    ]
    store.write(Batch(rejections=refused))
    assert store.rejections(game_id(built)) == refused
    assert store.rejections("g_nobody") == []
    assert store.rows(game_id(built)) == tuple(built.rows)


def test_seat_tokens_are_found_by_their_hash_from_any_thread(store: EventStore) -> None:
    built = finished("picky-eaters", 7, 4)
    store.write(games_batch([built]))
    found: list[Any] = []
    worker = threading.Thread(target=lambda: found.append(store.seat_of_token(token_of("Dev"))))
    worker.start()
    worker.join()
    assert found == [(game_id(built), 3)]
    assert store.seat_of_token(token_of(built.names[0])) == (game_id(built), 0)
    assert store.seat_of_token("00" * 32) is None


def test_seeds_and_packs_come_back_with_each_game(store: EventStore) -> None:
    a, b = finished("bon-appetit", 3), build(players=4, seed_byte=9, stop_after=2)
    store.write(games_batch([a]))
    store.write(games_batch([b]))  # the same pack again: kept once, served to both
    scanned = {g.rows[0].game_id: g for g in store.scan()}
    for built in (a, b):
        assert scanned[game_id(built)].server_seed == built.seed
        assert scanned[game_id(built)].pack_body == built.pack_bytes
        loaded = store.load(game_id(built))
        assert loaded is not None and loaded.pack_body == built.pack_bytes


def test_a_game_waits_for_seat_entropy_then_starts(store: EventStore) -> None:
    built = build(players=2, seed_byte=11, stop_after=0)
    genesis = record_pb2.Genesis.FromString(built.rows[0].body)
    draft = NewGame(
        None,
        [(n, token_of(n)) for n in built.names],
        built.seed,
        genesis.pack_sha256,
        genesis.game_kind,
        genesis.pack_id,
        built.pack_bytes,
        game_id(built),
        built.rows[0].body,
    )
    store.write(Batch(games=[draft]))
    (waiting,) = store.pending()
    assert (waiting.game_id, waiting.draft, waiting.entropy) == (game_id(built), draft.draft, {})
    assert (waiting.server_seed, waiting.pack_body) == (built.seed, built.pack_bytes)
    assert store.load(game_id(built)) is None and store.listed()[0].game_id == game_id(built)
    store.write(Batch(entropy=[(game_id(built), 1, b"one")]))
    assert store.pending()[0].entropy == {1: b"one"}
    store.write(
        Batch(
            entropy=[(game_id(built), 0, b"zero")],
            rows=[built.rows[0]],
            started=[game_id(built)],
        )
    )
    assert store.pending() == []
    loaded = store.load(game_id(built))
    assert loaded is not None and loaded.rows == (built.rows[0],)


def test_a_seats_entropy_is_taken_once(store: EventStore) -> None:
    """Two calls sending one seat's entropy at once: the store's key lets one write win."""
    built = build(players=2, seed_byte=11, stop_after=0)
    genesis = record_pb2.Genesis.FromString(built.rows[0].body)
    draft = NewGame(
        None,
        [(n, token_of(n)) for n in built.names],
        built.seed,
        genesis.pack_sha256,
        genesis.game_kind,
        genesis.pack_id,
        built.pack_bytes,
        game_id(built),
        built.rows[0].body,
    )
    store.write(Batch(games=[draft], entropy=[(game_id(built), 0, b"first")]))
    with pytest.raises(StoreConflict):
        store.write(Batch(entropy=[(game_id(built), 0, b"second")]))
    with pytest.raises(StoreConflict):  # twice in one batch: neither is written
        store.write(Batch(entropy=[(game_id(built), 1, b"one"), (game_id(built), 1, b"two")]))
    waiting = store.pending_game(game_id(built))
    assert waiting is not None and waiting.entropy == {0: b"first"}
    assert store.pending_game("g_nobody") is None


def test_named_arbiters_are_added_revoked_and_found_by_their_key(store: EventStore) -> None:
    first, second = token_of("arb_first"), token_of("arb_second")
    assert store.add_arbiter("ann", first, "2026-01-01T00:00:01Z")
    assert not store.add_arbiter("ann", second, "2026-01-01T00:00:02Z")  # she holds one
    assert store.arbiter_of_key(first) == "ann" and store.arbiter_of_key(second) is None
    assert store.revoke_arbiter("ann", "2026-01-01T00:00:03Z")
    assert not store.revoke_arbiter("ann", "2026-01-01T00:00:04Z")  # nothing left to revoke
    assert not store.revoke_arbiter("bob", "2026-01-01T00:00:04Z")
    assert store.arbiter_of_key(first) is None
    assert store.arbiters() == [("ann", "2026-01-01T00:00:01Z", "2026-01-01T00:00:03Z")]
    assert store.add_arbiter("ann", second, "2026-01-01T00:00:05Z")  # a new key, after
    assert store.add_arbiter("bea", first, "2026-01-01T00:00:06Z")
    assert (store.arbiter_of_key(second), store.arbiter_of_key(first)) == ("ann", "bea")
    assert store.arbiters() == [
        ("ann", "2026-01-01T00:00:05Z", ""),
        ("bea", "2026-01-01T00:00:06Z", ""),
    ]


def test_a_store_closes_cleanly_after_a_key_looked_up_is_revoked(tmp_path: Path) -> None:
    # An arbiter acts (its key looked up), is revoked, and the server stops: the lookup
    # leaves nothing open that would hold up the store's last checkpoint at its close.
    key = token_of("arb_looked_up")
    for where in ("duckdb", "duckdb-process"):
        path = str(tmp_path / f"{where}.duckdb")
        first = open_store(path)
        assert first.add_arbiter("ann", key, "2026-01-01T00:00:01Z")
        first.close()
        opened = open_store(path) if where == "duckdb" else ProcessStore(path, ())
        assert opened.arbiter_of_key(key) == "ann"  # its last lookup before the revocation
        assert opened.revoke_arbiter("ann", "2026-01-01T00:00:02Z")
        opened.close()
        again = open_store(path, read_only=True)
        assert again.arbiters() == [("ann", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z")]
        again.close()


def test_a_seat_code_is_spent_once_into_a_session_and_a_new_one_replaces_it(
    store: EventStore,
) -> None:
    code, newer, other = token_of("sl_first"), token_of("sl_newer"), token_of("sl_other")
    store.add_seat_code(code, "g_1", 0)
    assert store.seat_of_code(code) == ("g_1", 0)
    store.add_seat_code(newer, "g_1", 0)  # the seat's unused code is replaced
    store.add_seat_code(other, "g_1", 1)
    assert store.seat_of_code(code) is None and store.seat_of_code(newer) == ("g_1", 0)
    assert store.take_seat_code(code, "g_1", token_of("ss_a"), 10) is None  # replaced
    assert store.take_seat_code(newer, "g_2", token_of("ss_b"), 10) is None  # another game's
    assert store.seat_of_code(newer) == ("g_1", 0)  # left unspent
    session = token_of("ss_c")
    assert store.take_seat_code(newer, "g_1", session, 10) == 0
    assert store.take_seat_code(newer, "g_1", token_of("ss_d"), 10) is None  # spent
    assert store.seat_of_code(newer) is None and store.seat_of_code(other) == ("g_1", 1)
    for nobody in ("ss_a", "ss_b", "ss_d"):
        assert store.seat_of_session(token_of(nobody)) is None
    found: list[Any] = []  # the reader on another thread (the server's read thread)
    worker = threading.Thread(target=lambda: found.append(store.reader().seat_of_session(session)))
    worker.start()
    worker.join()
    assert found == [("g_1", 0)] and store.reader().seat_of_code(other) == ("g_1", 1)
    assert store.end_seat_session(session) and not store.end_seat_session(session)
    assert store.seat_of_session(session) is None


def test_sessions_past_the_bound_go_oldest_first(store: EventStore) -> None:
    sessions = [token_of(f"ss_{i}") for i in range(5)]
    for i, session in enumerate(sessions):
        store.add_seat_code(token_of(f"sl_{i}"), "g_1", i)
        assert store.take_seat_code(token_of(f"sl_{i}"), "g_1", session, 3) == i
    held = [store.seat_of_session(s) for s in sessions]
    assert held == [None, None, ("g_1", 2), ("g_1", 3), ("g_1", 4)]


def test_seat_links_kept_before_are_taken_in_once(store: EventStore) -> None:
    store.add_seat_code(token_of("sl_kept"), "g_1", 0)
    codes = [(token_of("sl_old"), "g_1", 0), (token_of("sl_one"), "g_1", 1)]
    sessions = [(token_of(f"ss_{i}"), "g_1", i) for i in range(3)]
    assert store.adopt_seat_links(codes, sessions) == 4  # seat 0 holds a newer code
    assert store.adopt_seat_links(codes, sessions) == 0
    assert store.seat_of_code(token_of("sl_old")) is None
    assert store.seat_of_code(token_of("sl_one")) == ("g_1", 1)
    assert [store.seat_of_session(d) for d, _, _ in sessions] == [("g_1", i) for i in range(3)]
    store.add_seat_code(token_of("sl_new"), "g_1", 3)  # opened after those: they go first
    assert store.take_seat_code(token_of("sl_new"), "g_1", token_of("ss_new"), 2) == 3
    held = [store.seat_of_session(d) for d, _, _ in sessions]
    assert held == [None, None, ("g_1", 2)]


def test_games_dealt_from_one_seed_are_known_as_twins(store: EventStore) -> None:
    """Two games of one server seed (a supplied seed): while one runs, the other's twin
    is running; each is listed with when its seed was revealed."""
    running_one = build(players=2, seed_byte=12, stop_after=4)
    ended = build(players=3, seed_byte=12)
    store.write(games_batch([running_one]))
    store.write(games_batch([ended]))
    assert running_one.seed == ended.seed
    assert store.twins_running(game_id(ended)) == 1  # the running one
    assert store.twins_running(game_id(running_one)) == 0  # its twin has ended
    assert store.twins_running("g_nobody") == 0
    created = record_pb2.Genesis.FromString(ended.rows[0].body).created_at
    assert store.dealt_from(ended.seed) == [
        (game_id(running_one), created, ""),
        (game_id(ended), created, ended.rows[-1].recorded_at),
    ]
    assert store.dealt_from(b"\x00" * 32) == []
    assert store.rows_after(game_id(ended), 3) == tuple(ended.rows[3:])
    assert store.rows_after(game_id(ended), len(ended.rows)) == ()


def test_the_game_list_pages_newest_first(store: EventStore) -> None:
    games = [finished(KINDS[i % 3], 30 + i) for i in range(5)]
    for built in games:
        store.write(games_batch([built]))
    first = store.listed(limit=2)
    assert [line.game_id for line in first] == [game_id(g) for g in games[:2:-1]]
    rest = store.listed(before=first[-1].n, limit=10)
    assert [line.game_id for line in rest] == [game_id(g) for g in games[2::-1]]
    assert all(line.rows == len(g.rows) for line, g in zip(rest, games[2::-1], strict=True))
    assert rest[0].players == games[2].names
    assert [line.game_id for line in store.listed("menu-masters")] == [
        game_id(games[4]),
        game_id(games[1]),
    ]
    assert store.tournament_games("") == 5 and store.tournament_games("cup") == 0


def test_a_scan_reads_every_game_once_in_list_order(store: EventStore) -> None:
    games = [finished(KINDS[i % 3], 40 + i) for i in range(5)] + [running(46)]
    for built in games:
        store.write(games_batch([built]))
    whole = list(store.scan())
    assert [g.rows for g in whole] == [tuple(g.rows) for g in games]
    assert [g.seat_names for g in whole] == [g.names for g in games]
    places = [n for n, _ in store.scan_numbered()]
    assert places == sorted(places) and len(set(places)) == len(games)
    shares = [[g.rows[0].game_id for _, g in store.scan_numbered((k, 3))] for k in range(3)]
    assert sorted(g for share in shares for g in share) == sorted(game_id(g) for g in games)
    assert all(shares)  # each worker has some
    ids = [g.rows[0].game_id for g in whole]
    runs = [[g.rows[0].game_id for _, g in store.scan_numbered(share=(k, 3))] for k in range(3)]
    assert [g for run in runs for g in run] == ids and all(runs)  # runs of the list, in order
    kind = [g.rows[0].game_id for g in store.scan(None, "menu-masters")]
    assert kind == [game_id(games[1]), game_id(games[4])]


def test_a_scan_yields_the_rows_load_reads_value_for_value_and_type_for_type(
    store: EventStore,
) -> None:
    """The scan builds its rows in its own loop (export, import and rebuilds ride on it):
    each is the row ``load`` reads, with the same fields in the same order, of the types
    a row holds, and each game its seed, pack and seat names."""
    games = [finished(KINDS[i % 3], 60 + i, 2 + i % 3) for i in range(4)] + [running(66)]
    store.write(games_batch(games))
    scanned = list(store.scan())
    assert [g.rows[0].game_id for g in scanned] == [game_id(g) for g in games]
    for stored in scanned:
        loaded = store.load(stored.rows[0].game_id)
        assert loaded == stored
        for row, again in zip(stored.rows, loaded.rows, strict=True):
            assert list(vars(row).items()) == list(vars(again).items())
            kinds = {name: type(value) for name, value in vars(row).items()}
            assert kinds == {
                f.name: (int if f.name == "seq" else bytes if f.name == "body" else str)
                for f in fields(Row)
            }


def test_the_projection_rebuilt_from_a_scan_is_the_one_written(store: EventStore) -> None:
    games = [finished(kind, 50 + i) for i, kind in enumerate(KINDS * 2)]
    store.write(games_batch(games))
    assert store.projection_current()
    written = store.stats(), store.standings("")
    assert [s.games for s in written[0]] == [2, 2, 2]
    count = store.rebuild_projection(projection.rows_of_stored(g) for g in list(store.scan()))
    assert count == len(games)
    assert (store.stats(), store.standings("")) == written


def tamperer(target: str) -> Any:
    """Run one SQL statement on the store's database as someone with write access would."""
    if target.startswith("postgresql"):

        def run(statement: str, *params: object) -> None:
            with psycopg.connect(target) as con:
                con.execute("SET search_path TO feastlog")
                con.execute(statement.replace("?", "%s").encode(), params)

        return run

    def run_duckdb(statement: str, *params: object) -> None:
        with duckdb.connect(target) as con:
            con.execute(statement, list(params))

    return run_duckdb


CASES = [(1, case) for case in sorted(TAMPERING)]
CASES += [(2, case) for case in sorted({**TAMPERING, **TAMPERING_2})]


@pytest.mark.parametrize(("version", "case"), CASES, ids=[f"format{v}-{c}" for v, c in CASES])
def test_every_tampering_of_the_audit_is_caught_on_each_store(
    store_target: str, version: int, case: str
) -> None:
    built, other = built_in(version), other_in(version)
    store = open_store(store_target)
    store.write(games_batch([built, other]))
    store.close()  # the file is DuckDB's to hold while open
    tamper, kind = {**TAMPERING, **TAMPERING_2}[case]
    seq = tamper(tamperer(store_target), built)
    store = open_store(store_target, read_only=True)
    try:
        stored = store.load(GAME)
        assert stored is not None
        report = verify(stored.rows, stored.pack_body, stored.server_seed)
        assert report.first_bad_seq == seq and kind in report.first_kinds
        scanned = [verify(g.rows, g.pack_body, g.server_seed).ok for g in store.scan()]
        assert scanned == [False, True]
    finally:
        store.close()


# PostgreSQL only: what nodes sharing one database rely on besides the contract above.


@pytest.mark.parametrize("adapter", ["postgresql", "memory"])
def test_each_senders_command_id_is_taken_once_per_game_by_the_store(
    adapter: str, request: pytest.FixtureRequest
) -> None:
    """A second node that missed a commit cannot append the same command again (nor a
    writer of the store in memory, which keeps PostgreSQL's key)."""
    built = running(6)
    if adapter == "postgresql":
        store: EventStore = PgStore(request.getfixturevalue("postgres"))
    else:
        store = open_store(MEMORY)
    try:
        store.write(games_batch([built]))
        sent = built.rows[3]
        again = replace(sent, seq=len(built.rows) + 1)
        with pytest.raises(StoreConflict):
            store.write(Batch(rows=[again]))
        fresh = replace(again, command_id="fresh")
        with pytest.raises(StoreConflict):  # twice in one batch: neither is written
            store.write(Batch(rows=[fresh, replace(fresh, seq=fresh.seq + 1)]))
        assert store.last_seq(game_id(built)) == len(built.rows)
        other_seat = "seat:1" if sent.actor != "seat:1" else "seat:0"
        store.write(Batch(rows=[replace(again, actor=other_seat)]))  # ids are per sender
        assert store.last_seq(game_id(built)) == len(built.rows) + 1
    finally:
        store.close()


def test_nodes_on_one_database_number_their_games_apart(postgres: str) -> None:
    one, two = PgStore(postgres), PgStore(postgres)
    try:
        games = [build(players=2, seed_byte=60 + i, stop_after=1) for i in range(4)]
        for i, built in enumerate(games):
            (one if i % 2 else two).write(games_batch([built]))
        listed = one.listed()
        assert [line.game_id for line in listed] == [game_id(g) for g in reversed(games)]
        assert len({line.n for line in listed}) == 4
        assert two.load(game_id(games[1])) is not None  # written through the other
    finally:
        one.close()
        two.close()


def raced(nodes: list[PgStore], code: str, round_: int) -> list[tuple[int, int | None]]:
    """Every node takes ``code`` at the same moment, each on a thread of its own: what
    each got (node ``i`` opens the session ``ss_ROUND_i``)."""
    start = threading.Barrier(len(nodes))
    won: list[tuple[int, int | None]] = []

    def take(i: int, node: PgStore) -> None:
        start.wait()
        won.append((i, node.take_seat_code(code, "g_1", token_of(f"ss_{round_}_{i}"), 99)))

    racers = [threading.Thread(target=take, args=(i, n)) for i, n in enumerate(nodes)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    return won


def test_nodes_racing_for_one_seat_code_give_it_to_one(postgres: str) -> None:
    """Nodes taking one code at the same moment, each on its own connections: one gets
    the seat and a session, the others nothing; the code is spent for every node."""
    nodes = [PgStore(postgres) for _ in range(4)]
    try:
        for round_ in range(20):
            code = token_of(f"sl_race_{round_}")
            nodes[round_ % 4].add_seat_code(code, "g_1", round_)
            won = raced(nodes, code, round_)
            winners = [i for i, seat in won if seat is not None]
            assert len(won) == 4 and len(winners) == 1 and dict(won)[winners[0]] == round_
            for i, node in enumerate(nodes):
                opened = node.seat_of_session(token_of(f"ss_{round_}_{winners[0]}"))
                assert opened == ("g_1", round_) and node.seat_of_code(code) is None
                if i != winners[0]:
                    assert node.seat_of_session(token_of(f"ss_{round_}_{i}")) is None
        one, two = nodes[:2]
        one.add_seat_code(token_of("sl_a"), "g_2", 0)  # a link made through one node
        two.add_seat_code(token_of("sl_b"), "g_2", 0)  # replaced through another
        assert one.seat_of_code(token_of("sl_a")) is None
        assert one.seat_of_code(token_of("sl_b")) == ("g_2", 0)
    finally:
        for node in nodes:
            node.close()


def test_other_database_users_cannot_read_seeds_or_commands(
    postgres: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = PgStore(postgres)
    store.write(games_batch([running(6)]))
    store.close()
    role = f"feastlog_other_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    with psycopg.connect(postgres, autocommit=True) as con:
        con.execute(f"DROP ROLE IF EXISTS {role}".encode())
        con.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'other-password'".encode())
    other = postgres.replace(postgres.split("//")[1].split("@")[0], f"{role}:other-password")
    try:
        for table in ("seeds", "events", "seats", "pending_games", "seat_entropy"):
            with psycopg.connect(other) as con, pytest.raises(psycopg.errors.InsufficientPrivilege):
                con.execute(f"SELECT * FROM feastlog.{table}".encode())
        with psycopg.connect(postgres, autocommit=True) as con:  # someone grants too much
            con.execute(f"GRANT USAGE ON SCHEMA feastlog TO {role}".encode())
            con.execute(f"GRANT SELECT ON feastlog.seeds TO {role}, PUBLIC".encode())
        with caplog.at_level(logging.WARNING, logger="feastlog.store"):
            PgStore(postgres).close()  # opening for writing takes it back, and says so
        assert f"{role} on seeds" in caplog.text and "PUBLIC on seeds" in caplog.text
        with psycopg.connect(other) as con, pytest.raises(psycopg.errors.InsufficientPrivilege):
            con.execute(b"SELECT * FROM feastlog.seeds")
    finally:
        with psycopg.connect(postgres, autocommit=True) as con:
            con.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA feastlog FROM {role}".encode())
            con.execute(f"REVOKE ALL ON SCHEMA feastlog FROM {role}".encode())
            con.execute(f"DROP ROLE {role}".encode())


def test_a_database_that_cannot_be_opened_is_one_line_without_the_password(
    postgres: str,
) -> None:
    wrong = postgres.replace(postgres.split("//")[1].split("@")[0].split(":")[1], "not-it")
    with pytest.raises(CannotOpenStore) as refused:
        PgStore(wrong)
    assert "password authentication failed" in refused.value.message
    assert "not-it" not in refused.value.message and shown(wrong) in refused.value.message
    with pytest.raises(CannotOpenStore) as empty:
        PgStore(postgres, read_only=True)
    assert "holds no feastlog games" in empty.value.message
    missing = with_database(postgres, "feastlog_no_such_database")
    with pytest.raises(CannotOpenStore) as nowhere:
        PgStore(missing)
    assert "does not exist" in nowhere.value.message


def test_a_store_is_the_same_after_reopening(store_target: str, tmp_path: Path) -> None:
    games = [finished(kind, 70 + i) for i, kind in enumerate(KINDS)]
    store = open_store(store_target)
    store.write(games_batch(games))
    before = store.stats(), store.listed(), store.count_games()
    store.close()
    again = open_store(store_target)
    try:
        assert (again.stats(), again.listed(), again.count_games()) == before
        assert [g.rows for g in again.scan()] == [tuple(g.rows) for g in games]
    finally:
        again.close()


def test_seat_links_outlive_a_reopening_as_hashes_alone(store_target: str) -> None:
    code, session = "sl_" + "c" * 32, "ss_" + "s" * 32
    store = open_store(store_target)
    store.add_seat_code(token_of(code), "g_1", 0)
    store.add_seat_code(token_of("sl_two"), "g_1", 1)
    assert store.take_seat_code(token_of("sl_two"), "g_1", token_of(session), 10) == 1
    store.close()
    again = open_store(store_target)
    try:
        assert again.seat_of_code(token_of(code)) == ("g_1", 0)
        assert again.seat_of_session(token_of(session)) == ("g_1", 1)
        assert again.take_seat_code(token_of("sl_two"), "g_1", token_of("ss_x"), 10) is None
    finally:
        again.close()
    if is_postgres(store_target):
        with psycopg.connect(store_target) as con:
            kept = str(con.execute("SELECT * FROM feastlog.seat_codes").fetchall())
            kept += str(con.execute("SELECT * FROM feastlog.seat_sessions").fetchall())
        assert token_of(code) in kept and token_of(session) in kept  # as their hashes
    else:  # the file and everything beside it
        kept = "".join(
            p.read_bytes().decode("latin-1") for p in Path(store_target).parent.iterdir()
        )
    assert code not in kept and session not in kept and code[3:] not in kept


def games_with_rulings() -> list[Built]:
    """Games of every kind and seat count, with a void one, a forfeit and an adjustment."""
    games = [finished(kind, 80 + i, 2 + i % 3) for i, kind in enumerate(KINDS * 2)]
    rulings = {
        4: record_pb2.ArbiterCommand(reason="dispute", void_game=record_pb2.VoidGame()),
        6: record_pb2.ArbiterCommand(reason="left", forfeit=record_pb2.Forfeit(seat=1)),
        7: record_pb2.ArbiterCommand(
            reason="slow play", score_adjustment=record_pb2.ScoreAdjustment(seat=0, points=-2)
        ),
    }
    for seed_byte, (seq, ruling) in enumerate(rulings.items(), start=90):
        games.append(build(players=3, seed_byte=seed_byte, rulings={seq: ruling}))
    return games


@pytest.mark.parametrize("other", ["postgresql", "memory"])
def test_every_store_answers_as_the_duckdb_file(
    other: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The same games in a DuckDB file and in PostgreSQL or memory: the same stats (each
    kind's figure too), standings, list and counts, of all games and of a tournament."""
    games = games_with_rulings()
    # the first eight again (the void one and the forfeit among them), as games of two
    # tournaments: league-0000 (five) and league-0001 (three)
    places = [0, 1, 2, 3, 4, 100, 101, 102]
    leagues = [replica(g, n) for g, n in zip(games, places, strict=False)]
    answers = []
    second = request.getfixturevalue("postgres") if other == "postgresql" else MEMORY
    for target in (str(tmp_path / "same.duckdb"), second):
        store = open_store(target)
        try:
            store.write(games_batch(games))
            for new, rows, outcomes in leagues:
                store.write(Batch(games=[new], rows=rows[1:], outcomes=outcomes))
            answers.append(
                (
                    store.stats(),
                    store.standings(""),
                    store.listed(),
                    store.count_games(),
                    store.stats("league-0000"),
                    store.standings("league-0001"),
                    store.listed(tournament_id="league-0001", before=106, limit=2),
                )
            )
        finally:
            store.close()
    assert answers[0] == answers[1]
    assert answers[0][5][1] == 3 and len(answers[0][6]) == 2
    assert all(s.value is not None for s in answers[0][0])
    # the void one has no result, nor its replica
    assert sum(s.games for s in answers[0][0]) == len(games) - 1 + len(leagues) - 1
    assert answers[0][1][1] == len(games)


def test_offline_commands_read_a_postgresql_database_too(postgres: str) -> None:
    """audit (one game, all over two workers), stats, replay, projection rebuild, --db DSN."""
    store = PgStore(postgres)
    store.write(games_batch([built_in(2), other_in(2)]))
    store.close()
    seq = TAMPERING["change a state hash"][0](tamperer(postgres), built_in(2))
    runner = CliRunner()
    every = runner.invoke(cli, ["audit", "--all", "--db", postgres, "--json", "--workers", "2"])
    assert every.exit_code == 1, every.output
    assert [r["ok"] for r in json.loads(every.stdout)["reports"]] == [False, True]
    one = runner.invoke(cli, ["audit", GAME, "--db", postgres, "--json"])
    assert (one.exit_code, json.loads(one.stdout)["reports"][0]["first_bad_seq"]) == (1, seq)
    stats = runner.invoke(cli, ["stats", "--db", postgres, "--json"])
    assert stats.exit_code == 0, stats.output
    assert sum(k["games"] for k in json.loads(stats.stdout)) == 2
    replayed = runner.invoke(cli, ["replay", other_in(2).rows[0].game_id, "--db", postgres])
    assert replayed.exit_code == 0 and "Ann" in replayed.output
    rebuilt = runner.invoke(cli, ["projection", "rebuild", "--db", postgres])
    assert rebuilt.exit_code == 0, rebuilt.output
    secret = urlsplit(postgres).password or "no password"
    assert all(secret not in r.output for r in (every, one, stats, replayed, rebuilt))


def test_a_checkpoint_folds_the_log_into_the_file_only_when_asked_for_its_size(
    store: EventStore,
) -> None:
    games = [finished("bon-appetit", 3), running(6)]
    store.write(games_batch(games))
    if store.shared or is_memory(store.path):  # PostgreSQL checkpoints by itself, and
        assert store.checkpoint(0) == 0  # memory has no log: nothing for the service to do
    else:
        log = Path(f"{store.path}.wal")
        held = log.stat().st_size
        assert held > 0
        assert store.checkpoint(held + 1) == 0  # a smaller log than asked: left as it is
        assert log.stat().st_size == held
        assert store.checkpoint(held) == held
        assert not log.exists() or log.stat().st_size == 0
        assert store.checkpoint(0) == 0  # nothing left to fold
    for built in games:
        assert store.rows(game_id(built)) == tuple(built.rows)
