"""Every stream is bounded (DESIGN section 11; ``service/app/streams.py``), against real
servers: feeds that never read leave the server's memory and its other clients as they
were, a reader that does not read is ended with a clear status (gRPC) or its connection
closed (SSE) and every task of its stream cancelled, and a client that leaves is let go at
once (issue 42, item 3)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from feastlog.client import Client, FeastlogError
from feastlog.service.app import streams
from feastlog.service.app.errors import FellBehind
from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import feed_service_pb2_grpc as fpb_grpc
from tests.recordutil import Built, build, store_games
from tests.serverutil import error_info
from tests.webutil import ProcessWebServer, WebServer

KEY = "org_test-stream-bounds-key-0123456789abcdefg"
FEEDS = 20
WATCHED = "g_ba0001"


def feed_games() -> list[Built]:
    """Forty finished games, 4,690 rows: a feed of them is some 14 MB of events, more than
    a connection's buffers hold for a reader that does not read."""
    played = [build("bon-appetit", 3, i, game_id=f"g_ba{i:04d}") for i in range(1, 31)]
    return played + [build("menu-masters", 4, i, game_id=f"g_mm{i:04d}") for i in range(1, 11)]


def idle_feed(port: int, path: str = "/feed/events") -> socket.socket:
    """An SSE feed opened and never read (a small receive buffer: the server's sends wait
    sooner)."""
    feed = socket.socket()
    feed.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    feed.connect(("127.0.0.1", port))
    feed.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return feed


def getview_seconds(client: Client) -> float:
    """How long a spectator's GetView takes (inf: it did not answer in the client's time)."""
    start = time.perf_counter()
    try:
        client.view(WATCHED)
    except FeastlogError as failed:
        assert failed.status == "DEADLINE_EXCEEDED", failed
        return float("inf")
    return time.perf_counter() - start


def test_twenty_feeds_that_never_read_leave_memory_and_other_clients_as_they_were(
    tmp_path: Path,
) -> None:
    """Twenty anonymous ``/feed/events`` that never read took a server from 75 MiB to
    4,822 MiB in 35 s, kept after they closed, and another client's GetView timed out at
    20 s.  Now: GetView answers within 5 s beside them, the server grows less than 200 MiB
    and keeps nothing busy once they have gone (bounds of correctness, not of speed)."""
    db = tmp_path / "games.duckdb"
    store_games(db, feed_games())
    server = ProcessWebServer(db, KEY)
    feeds: list[socket.socket] = []
    try:
        client = Client(server.address, timeout=20)
        alone = max(getview_seconds(client) for _ in range(5))
        before = server.rss_mib()
        feeds += [idle_feed(server.http_port) for _ in range(FEEDS)]
        beside, grown = [], []
        until = time.monotonic() + 12
        while time.monotonic() < until:
            beside.append(getview_seconds(client))
            grown.append(server.rss_mib() - before)
            time.sleep(0.5)
        for feed in feeds:
            feed.close()
        time.sleep(2)  # each feed's close is noticed (its handler is cancelled)
        cpu = server.cpu_seconds()
        time.sleep(3)
        busy = server.cpu_seconds() - cpu
        after = server.rss_mib() - before
        print(
            f"\nGetView alone {alone * 1000:.1f} ms, beside {FEEDS} idle feeds at most "
            f"{max(beside) * 1000:.1f} ms (median {sorted(beside)[len(beside) // 2] * 1000:.1f}"
            f" ms); RSS {before:.0f} MiB, +{max(grown):.0f} MiB at most with them open, "
            f"+{after:.0f} MiB after; {busy:.2f} s of CPU in 3 s once they had gone"
        )
        assert max(beside) < 5, beside
        assert max(grown) < 200, grown
        assert after < 200
        assert busy < 1.0  # nothing of the feeds runs on
    finally:
        for feed in feeds:
            feed.close()
        server.stop()


@pytest.fixture
def short_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A send waits a second, an SSE heartbeat every half second (a threaded server
    reads them from the same module)."""
    monkeypatch.setattr(streams, "SEND_SECONDS", 1.0)
    monkeypatch.setattr(streams, "HEARTBEAT_SECONDS", 0.5)


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebServer]:
    store_games(tmp_path / "games.duckdb", feed_games())
    server = WebServer(tmp_path / "games.duckdb")
    yield server
    server.stop()


def tasks_on(server: WebServer) -> int:
    """How many tasks the server's loop holds now."""

    async def count() -> int:
        return len(asyncio.all_tasks())

    return server.call(count())


def feeds_open(server: WebServer, at_least: int, seconds: float = 10) -> bool:
    """Whether the server's broadcaster comes to serve ``at_least`` feeds within
    ``seconds``."""
    until = time.monotonic() + seconds
    while server.running.app.feed.open < at_least:
        if time.monotonic() > until:
            return False
        time.sleep(0.05)
    return True


def feeds_closed(server: WebServer, seconds: float = 10) -> bool:
    """Whether the server's broadcaster comes to serve no feed within ``seconds``."""
    until = time.monotonic() + seconds
    while server.running.app.feed.open:
        if time.monotonic() > until:
            return False
        time.sleep(0.05)
    return True


def settled(server: WebServer, at_most: int, seconds: float = 10) -> int:
    """The server's task count once it is ``at_most`` or less (or the time is up)."""
    until = time.monotonic() + seconds
    while (now := tasks_on(server)) > at_most and time.monotonic() < until:
        time.sleep(0.1)
    return now


def closed_by_the_server(feed: socket.socket, seconds: float) -> bool:
    """Whether the server closes the connection within ``seconds`` (read to its end)."""
    feed.settimeout(seconds)
    until = time.monotonic() + seconds
    try:
        while time.monotonic() < until:
            if not feed.recv(65536):
                return True
    except ConnectionResetError:
        return True  # aborted, as a stalled peer's connection is
    except TimeoutError:
        return False
    return False


def test_a_reader_that_does_not_read_is_ended_and_every_task_of_it_cancelled(
    web: WebServer, short_bounds: None
) -> None:
    """A WatchAll that does not read ends RESOURCE_EXHAUSTED, FELL_BEHIND (saying how to
    resume) once a send has waited past the bound; an SSE feed's connection is closed;
    either way the feed (a cursor of the node's broadcaster) is gone with it."""
    baseline = tasks_on(web)
    channel = grpc.insecure_channel(web.address)
    feed = idle_feed(web.http_port)
    try:
        call = fpb_grpc.FeedServiceStub(channel).WatchAll(fpb.WatchAllRequest())
        assert feeds_open(web, 2)  # two feeds, each one task: its call's, or its page's
        # nothing read: each feed's sends wait once its connection's buffers are full,
        # then the bound's second passes
        assert feeds_closed(web)
        assert settled(web, baseline + 2) <= baseline + 2  # a call's status may wait
        assert closed_by_the_server(feed, 10)
        rows = 0
        with pytest.raises(grpc.RpcError) as ended:
            for _ in call:
                rows += 1
        assert ended.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_info(ended.value).reason == "FELL_BEHIND"
        assert "fell behind" in (ended.value.details() or "") and "position" in (
            ended.value.details() or ""
        )
        assert 0 < rows < 4690  # what the connection held, then the status
        resumed = Client(web.address).feed(kind="menu-masters")
        assert next(iter(resumed)).event.seq == 1  # the server serves feeds still
    finally:
        feed.close()
        channel.close()


def test_a_client_that_leaves_is_let_go_at_once(web: WebServer, short_bounds: None) -> None:
    """An SSE feed whose client closes its connection, and a WatchAll its client cancels,
    end then (the page's handler is cancelled), not at their next write; a quiet feed
    sends its heartbeat, which finds a reader gone though no row comes."""
    baseline = tasks_on(web)
    feeds = [idle_feed(web.http_port) for _ in range(5)]
    channel = grpc.insecure_channel(web.address)
    call = fpb_grpc.FeedServiceStub(channel).WatchAll(fpb.WatchAllRequest())
    next(call)
    assert feeds_open(web, 6)
    for feed in feeds:
        feed.close()
    call.cancel()
    assert feeds_closed(web, seconds=5)
    assert settled(web, baseline + 2, seconds=5) <= baseline + 2
    channel.close()
    quiet = socket.create_connection(("127.0.0.1", web.http_port))
    try:  # no picky-eaters game: nothing but its heartbeat comes
        quiet.sendall(b"GET /feed/events?kind=picky-eaters HTTP/1.1\r\nHost: x\r\n\r\n")
        quiet.settimeout(5)
        said = b""
        while b": ping" not in said:
            said += quiet.recv(4096)
    finally:
        quiet.close()
    assert settled(web, baseline + 2, seconds=5) <= baseline + 2


def test_a_readers_outlet_ends_it_when_full_and_lets_its_items_go() -> None:
    """The calls' queue offers each change to each reader's outlet: a reader that lets
    more than its bound wait is ended (FELL_BEHIND) at its next look, its items let go."""

    async def run() -> None:
        outlet: streams.Outlet[int] = streams.Outlet(2)
        outlet.offer(1)
        assert await outlet.next() == 1
        for item in (2, 3, 4):
            outlet.offer(item)
        with pytest.raises(FellBehind) as behind:
            await outlet.next()
        assert "2 changes waited" in behind.value.message
        assert not outlet._items  # what waited is let go
        waiting = streams.Outlet[int](2)
        reader = asyncio.ensure_future(waiting.next())
        await asyncio.sleep(0)
        waiting.offer(5)
        assert await reader == 5

    asyncio.run(run())


def test_held_ends_a_stream_at_a_wake_up_once_its_credential_is_gone() -> None:
    """``streams.held`` asks before each row and at each wake-up: a stream waiting for a
    row that never comes ends at the revocation's wake-up, its source closed."""

    async def run() -> None:
        standing = threading.Event()
        standing.set()
        closed = asyncio.Event()

        async def quiet() -> AsyncIterator[int]:
            try:
                yield 1
                await asyncio.Event().wait()  # no second row, ever
            finally:
                closed.set()

        def holding() -> None:
            if not standing.is_set():
                raise PermissionError("revoked")

        wakeups = streams.Wakeups()
        stream = streams.held(quiet(), holding, wakeups)
        assert await anext(stream) == 1
        waiting = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.01)
        wakeups.wake_all()  # another arbiter's key: this one still stands
        await asyncio.sleep(0.01)
        assert not waiting.done() and len(wakeups) == 1
        standing.clear()
        wakeups.wake_all()
        with pytest.raises(PermissionError):
            await waiting
        assert closed.is_set() and len(wakeups) == 0

    asyncio.run(run())
