"""The feed follows the log by position (issue 43), against real servers: over 10,000
games its position is one integer whatever the number of games (the token is as long at
the end as at the start); a feed resumed from a mid position, across a restart on the
same file too, misses nothing and repeats nothing; a feed older than the node's ring
reads the log, then goes live, and a feed that lets the ring pass it is ended FELL_BEHIND
and resumes from its position; on PostgreSQL a feed on one node sends the rows another
node commits, in the log's order."""

from __future__ import annotations

import itertools
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from feastlog.client import Client, FeastlogError
from feastlog.service.app import feed as feed_module
from feastlog.service.app.auth import Caller
from feastlog.service.app.errors import FellBehind
from feastlog.service.app.feed import TOKEN_LENGTH, read_position
from feastlog.service.bench.data import build, build_store
from feastlog.service.store.duckdb import Store
from feastlog.v1 import feed_service_pb2 as fpb
from tests.serverutil import ThreadedServer

GAMES = 10_000
LAST_LEAGUE = f"league-{(GAMES - 1) // 100:04d}"  # build_store's: 100 games a tournament


def take(feed: Iterator[fpb.WatchAllResponse], n: int, seconds: float = 120) -> list[Any]:
    """The next ``n`` rows of a feed (a thread bounds the wait)."""
    got: list[fpb.WatchAllResponse] = []
    reader = threading.Thread(target=lambda: got.extend(next(feed) for _ in range(n)), daemon=True)
    reader.start()
    reader.join(timeout=seconds)
    assert len(got) == n, f"{len(got)} of {n} rows came"
    return got


def play(client: Client, game_id: str, tokens: list[str], moves: int) -> None:
    """Seats play their first legal command, ``moves`` times."""
    for _ in range(moves):
        seat = client.view(game_id).to_act[0]
        legal = client.legal(game_id, token=tokens[seat])
        client.submit(game_id, legal.commands[0], legal.seq, token=tokens[seat])


def rows_of(db: Path, tournament_id: str) -> list[tuple[str, int]]:
    """Every row of a tournament's games in a file no server holds, in the log's order."""
    store = Store(str(db), read_only=True)
    try:
        found = store.con.execute(
            "SELECT e.game_id, e.seq FROM events e JOIN games g USING (game_id) "
            "WHERE g.tournament_id = ? ORDER BY e.tree_position",
            [tournament_id],
        ).fetchall()
    finally:
        store.close()
    return [(str(g), int(s)) for g, s in found]


@pytest.fixture(scope="module")
def ten_thousand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file of 10,000 finished games (237,500 rows, 100 games a tournament), built as
    the benchmarks build theirs."""
    db = tmp_path_factory.mktemp("feed") / "games.duckdb"
    templates = [build("bon-appetit", 2, i, game_id=f"g_t{i}") for i in range(1, 5)]
    build_store(db, GAMES, templates)
    return db


def test_over_ten_thousand_games_a_position_is_one_size_and_resumes_across_a_restart(
    ten_thousand: Path,
) -> None:
    """A tournament's feed over a log of 10,000 games reads every row of the log and
    sends its own: its first token and its last are 22 characters, each one position
    of the log (the last past 237,000).  Resumed from its 1,000th row, on a restarted
    server with new rows of the tournament, it sends every row after that one, once."""
    db = ten_thousand
    stored = rows_of(db, LAST_LEAGUE)
    server = ThreadedServer(db)
    try:
        organiser = Client(server.address, organiser_key=server.key)
        fresh = organiser.create_game("bon-appetit", ["Ann", "Brian"], tournament_id=LAST_LEAGUE)
        play(organiser, fresh.game_id, list(fresh.tokens), 2)
        first = take(Client(server.address).feed(tournament_id=LAST_LEAGUE), len(stored) + 3)
        got = [(r.game_id, r.event.seq) for r in first]
        assert got == [*stored, (fresh.game_id, 1), (fresh.game_id, 2), (fresh.game_id, 3)]
        sizes = {len(r.position) for r in first}
        assert sizes == {TOKEN_LENGTH} == {22}
        positions = [read_position(r.position, "", LAST_LEAGUE) - 1 for r in first]
        assert positions == sorted(positions) and positions[-1] > 237_000
        kept = first[999].position
    finally:
        server.stop()
    server = ThreadedServer(db)  # the same file, a new server
    try:
        organiser = Client(server.address, organiser_key=server.key)
        play(organiser, fresh.game_id, list(fresh.tokens), 2)
        later = organiser.create_game("bon-appetit", ["Cy", "Di"], tournament_id=LAST_LEAGUE)
        every = [*got, (fresh.game_id, 4), (fresh.game_id, 5), (later.game_id, 1)]
        feed = Client(server.address).feed(tournament_id=LAST_LEAGUE, position=kept)
        resumed = take(feed, len(every) - 1000)
        assert [(r.game_id, r.event.seq) for r in resumed] == every[1000:]
        assert {len(r.position) for r in resumed} == {22}
        with pytest.raises(FeastlogError) as other:  # bound to its filter
            next(iter(Client(server.address).feed(position=kept)))
        assert other.value.status == "INVALID_ARGUMENT" and other.value.field == "position"
    finally:
        server.stop()


def test_a_feed_older_than_the_ring_reads_the_log_then_goes_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a ring of 8 rows, a feed resumed from the start of 60 rows reads them from the
    log by position while rows keep coming, then the ring's, then the live ones: every
    row once, in the log's order."""
    monkeypatch.setattr(feed_module, "RING_ROWS", 8)
    monkeypatch.setattr(feed_module, "STORE_ROWS", 5)  # many pages of the log
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        organiser = Client(server.address, organiser_key=server.key)
        games = [organiser.create_game("menu-masters", ["Ann", "Brian"]) for _ in range(4)]
        for game in games:
            play(organiser, game.game_id, list(game.tokens), 14)
        assert server.running.db.stream.position == 60 > 8
        feed = iter(Client(server.address).feed())
        early = take(feed, 10)  # from the log

        def more() -> None:
            for game in games:
                play(organiser, game.game_id, list(game.tokens), 5)

        writer = threading.Thread(target=more)
        writer.start()  # 20 more rows while the feed reads
        rest = take(feed, 70)
        writer.join()
        got = [(r.game_id, r.event.seq) for r in early + rest]
        assert len(set(got)) == len(got) == 80
        positions = [read_position(r.position, "", "") - 1 for r in early + rest]
        assert positions == list(range(80))  # the log's order, each position once
        assert server.running.app.feed.open == 1
    finally:
        server.stop()


def test_a_feed_the_ring_passes_is_ended_and_resumes_from_its_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A feed that has reached the ring and takes nothing while more than the ring's rows
    are committed is ended RESOURCE_EXHAUSTED, FELL_BEHIND, saying so; resumed from the
    last row it took it misses nothing."""
    monkeypatch.setattr(feed_module, "RING_ROWS", 8)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        organiser = Client(server.address, organiser_key=server.key)
        game = organiser.create_game("menu-masters", ["Ann", "Brian"])
        app = server.running.app

        rows: AsyncIterator[feed_module.FeedRow] = app.feed.rows(Caller("anonymous"), "", "", 0)

        async def next_one() -> feed_module.FeedRow:
            return await anext(rows)

        row = server.call(next_one())  # the genesis: the feed has reached the ring
        play(organiser, game.game_id, list(game.tokens), 12)  # the ring moves past it
        with pytest.raises(FellBehind) as ended:
            server.call(next_one())
        assert "fell behind: more than 8 rows were committed" in ended.value.message
        assert app.feed.open == 0
        resumed = take(Client(server.address).feed(position=row.token), 12)
        assert [r.event.seq for r in resumed] == list(range(2, 14))
    finally:
        server.stop()


def test_on_postgresql_a_feed_on_one_node_sends_what_another_commits_in_log_order(
    postgres: str,
) -> None:
    """Node B's feed sends the rows node A commits (read back by position: B's stream),
    in the log's order, beside B's own."""
    a, b = ThreadedServer(postgres), ThreadedServer(postgres)
    try:
        on_a = Client(a.address, organiser_key=a.key)
        on_b = Client(b.address, organiser_key=b.key)
        feed = iter(Client(b.address).feed())
        game = on_a.create_game("bon-appetit", ["Ann", "Brian"])
        play(on_a, game.game_id, list(game.tokens), 3)
        mine = on_b.create_game("menu-masters", ["Cy", "Di"])
        play(on_b, mine.game_id, list(mine.tokens), 2)
        play(on_a, game.game_id, list(game.tokens), 2)
        got = take(feed, 9, seconds=30)
        assert [(r.game_id, r.event.seq) for r in got] == [
            *((game.game_id, s) for s in range(1, 5)),
            *((mine.game_id, s) for s in range(1, 4)),
            *((game.game_id, s) for s in range(5, 7)),
        ]
        positions = [read_position(r.position, "", "") - 1 for r in got]
        assert positions == list(range(9))
        # each row as WatchGame on node B sends it to a spectator
        watched = list(itertools.islice(Client(b.address).follow(game.game_id), 6))
        assert [r.event for r in got if r.game_id == game.game_id] == watched
    finally:
        a.stop()
        b.stop()


def test_a_row_is_drawn_once_per_viewer_whatever_the_number_of_feeds(tmp_path: Path) -> None:
    """Three spectators' feeds are handed the same drawing of a row (one ``seen``), the
    organiser's feed its own (the arbiter's view); a seat's feed shows only its game."""
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        organiser = Client(server.address, organiser_key=server.key)
        other = organiser.create_game("bon-appetit", ["Cy", "Di"])
        game = organiser.create_game("bon-appetit", ["Ann", "Brian"])
        app = server.running.app
        callers = [
            *(Caller("anonymous") for _ in range(3)),
            Caller("organiser"),
            Caller("seat", game.game_id, 0),
        ]

        async def first_rows() -> list[feed_module.FeedRow]:
            feeds = [app.feed.rows(c, "", "", 0) for c in callers]
            try:
                return [await anext(f) for f in feeds]
            finally:
                for f in feeds:
                    await f.aclose()

        rows = server.call(first_rows())
        spectators, organisers, seat = rows[:3], rows[3], rows[4]
        assert {r.game_id for r in spectators} == {other.game_id}
        assert spectators[0].step is spectators[1].step is spectators[2].step
        assert organisers.step is not spectators[0].step
        assert organisers.drawn[1] == "arbiter" and spectators[0].drawn[1] == "spectator"
        assert seat.game_id == game.game_id and seat.drawn[1] == "seat:0"
    finally:
        server.stop()
