"""``WatchAll``: every game's rows in one stream, resumed from a stored position after a
server restart with nothing missed and nothing repeated, and each row exactly what
``WatchGame`` sends the same caller."""

from __future__ import annotations

import base64
import hashlib
import http.client
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from feastlog.client import Client, FeastlogError
from feastlog.v1 import feed_service_pb2 as fpb
from tests.serverutil import ThreadedServer

KEY = "org_test-feed-key-0123456789abcdefghijklmn"
SPECTATOR = ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(db: Path, port: int) -> subprocess.Popen[str]:
    """``feastlog serve`` on a given port, once it listens."""
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": KEY}
    code = "from feastlog.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert "listening on" in proc.stdout.readline()
    return proc


def take(feed: Iterator[fpb.WatchAllResponse], n: int) -> list[fpb.WatchAllResponse]:
    """The next ``n`` rows of a feed (a thread bounds the wait)."""
    got: list[fpb.WatchAllResponse] = []
    reader = threading.Thread(target=lambda: got.extend(next(feed) for _ in range(n)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert len(got) == n, f"{len(got)} of {n} rows came"
    return got


def play(client: Client, game_id: str, tokens: list[str], moves: int) -> None:
    """Seats play their first legal command, ``moves`` times."""
    for _ in range(moves):
        view = client.view(game_id)
        seat = view.to_act[0]
        legal = client.legal(game_id, token=tokens[seat])
        client.submit(game_id, legal.commands[0], legal.seq, token=tokens[seat])


def test_a_feed_resumed_after_a_restart_misses_and_repeats_nothing(tmp_path: Path) -> None:
    db, port = tmp_path / "feastlog.duckdb", free_port()
    address = f"127.0.0.1:{port}"
    proc = serve(db, port)
    try:
        organiser = Client(address, organiser_key=KEY)
        games = [organiser.create_game("bon-appetit", ["Ann", "Brian"]) for _ in range(2)]
        for game in games:
            play(organiser, game.game_id, game.tokens, 3)
        stored = sum(organiser.view(g.game_id).seq for g in games)  # 4 rows each
        spectator = Client(address, token=SPECTATOR)
        first = take(spectator.feed(), stored)
        assert len({(r.game_id, r.event.seq) for r in first}) == stored
        kept = first[5].position  # a client stores the position after its 6th row
        spectator.close()
        proc.send_signal(signal.SIGKILL)  # the connection drops with the server
        proc.wait(timeout=10)
        proc = serve(db, port)
        organiser = Client(address, organiser_key=KEY)
        for game in games:
            play(organiser, game.game_id, game.tokens, 2)
        third = organiser.create_game("menu-masters", ["Ann", "Brian"])
        play(organiser, third.game_id, third.tokens, 1)
        every = {
            (g.game_id, seq)
            for g in [*games, third]
            for seq in range(1, organiser.view(g.game_id).seq + 1)
        }
        before = {(r.game_id, r.event.seq) for r in first[:6]}
        resumed = take(Client(address).feed(position=kept), len(every) - len(before))
        got = [(r.game_id, r.event.seq) for r in resumed]
        assert len(set(got)) == len(got)  # nothing twice
        assert set(got) == every - before  # nothing missed, nothing from before the position
        for game_id in {g for g, _ in got}:
            seqs = [s for g, s in got if g == game_id]
            assert seqs == sorted(seqs)  # a game's rows in order
        # each row is what WatchGame sends the same caller (a spectator: no hands)
        shown = itertools.islice(Client(address).follow(third.game_id, token=SPECTATOR), 2)
        watched = {e.seq: e for e in shown}
        fed = {r.event.seq: r.event for r in resumed if r.game_id == third.game_id}
        assert fed == watched
        with pytest.raises(FeastlogError) as other:
            next(iter(Client(address).feed(kind="picky-eaters", position=kept)))
        assert other.value.status == "INVALID_ARGUMENT" and other.value.field == "position"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_a_feed_of_one_kind_and_a_bad_position(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        organiser = Client(server.address, organiser_key=server.key)
        ba = organiser.create_game("bon-appetit", ["Ann", "Brian"])
        organiser.create_game("menu-masters", ["Ann", "Brian"])
        (row,) = take(Client(server.address).feed(kind="bon-appetit"), 1)
        assert row.game_id == ba.game_id and row.event.kind == "genesis"
        with pytest.raises(FeastlogError) as bad:
            next(iter(Client(server.address).feed(position="not-a-position")))
        assert bad.value.field == "position" and bad.value.status == "INVALID_ARGUMENT"
    finally:
        server.stop()


def sse_rows(port: int, path: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    """The first ``n`` events of a server-sent-events stream: (id, data)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        assert response.status == 200, response.read()
        text = ""
        while text.count("\n\n") < n:
            text += response.read1(65536).decode().replace("\r\n", "\n")
    finally:
        connection.close()
    found = []
    for block in text.split("\n\n")[:n]:
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        found.append((fields["id"].strip(), json.loads(fields["data"])))
    return found


def test_the_feed_as_server_sent_events_resumes_from_its_ids(tmp_path: Path) -> None:
    from tests.webutil import WebServer, request

    web = WebServer(tmp_path / "games.duckdb")
    try:
        organiser = Client(web.address, organiser_key=web.key)
        games = [organiser.create_game("bon-appetit", ["Ann", "Brian"]) for _ in range(2)]
        play(organiser, games[0].game_id, games[0].tokens, 2)
        every = {(g.game_id, s) for g in games for s in range(1, organiser.view(g.game_id).seq + 1)}
        first = sse_rows(web.http_port, "/feed/events?kind=bon-appetit", 2)
        assert all("hand" not in seat for _, e in first for seat in e["view"].get("seats", []))
        got = [(e["game_id"], e["seq"]) for _, e in first]
        path = f"/feed/events?kind=bon-appetit&position={quote(first[-1][0])}"
        more = [(e["game_id"], e["seq"]) for _, e in sse_rows(web.http_port, path, len(every) - 2)]
        assert sorted(got + more) == sorted(every)  # resumed: nothing missed, nothing twice
        bad = request(web, "GET", "/feed/events?position=nonsense")
        assert bad.status == 400 and "position" in bad.body
    finally:
        web.stop()


def test_a_seats_feed_holds_its_own_game_and_leaves_the_others_out(tmp_path: Path) -> None:
    """A seat's token may watch its own game only (WatchGame refuses it another's): its feed
    carries that game's rows, as that seat sees them, and goes on past the games it may not
    watch instead of ending on the first of them."""
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        organiser = Client(server.address, organiser_key=server.key)
        other = organiser.create_game("bon-appetit", ["Cy", "Di"])  # listed first
        mine = organiser.create_game("bon-appetit", ["Ann", "Brian"])
        play(organiser, other.game_id, other.tokens, 2)
        play(organiser, mine.game_id, mine.tokens, 2)
        seat = Client(server.address, token=mine.tokens[0])
        rows = take(seat.feed(), 3)  # its game's genesis and two moves
        assert {r.game_id for r in rows} == {mine.game_id}
        assert [r.event.seq for r in rows] == [1, 2, 3]
        watched = list(itertools.islice(seat.follow(mine.game_id, token=mine.tokens[0]), 3))
        assert [r.event for r in rows] == watched
    finally:
        server.stop()


def crafted(body: bytes) -> str:
    """A token of the feed's earlier format (zlib, base64url, unpadded) made of ``body``."""
    return base64.urlsafe_b64encode(zlib.compress(body, 9)).decode().rstrip("=")


def earlier_token(seqs: dict[str, int]) -> str:
    """A position as the earlier feed gave it: every game's seq, compressed."""
    digest = hashlib.sha256(json.dumps(["", ""]).encode()).hexdigest()[:16]
    body = json.dumps({"f": digest, "sent": seqs, "v": 1}, separators=(",", ":"), sort_keys=True)
    return crafted(body.encode())


def token_of(raw: bytes) -> str:
    """A token of the feed's format (``2.`` and base64url) made of ``raw``."""
    return "2." + base64.urlsafe_b64encode(raw).decode()


def crafted_positions(game_id: str) -> dict[str, str]:
    """Tokens no feed gave, each refused before it is decoded further than its bounds (of
    the unfiltered feed)."""
    this_filter = hashlib.sha256(json.dumps(["", ""]).encode()).digest()[:7]
    return {
        # the earlier format's, and what issue 42 refused of it
        "earlier, one game": earlier_token({game_id: 4}),
        "earlier, 3,000 games": earlier_token({f"g_{i:016x}": 9 for i in range(3000)}),
        "nested lists": crafted(b"[" * 100_000),
        "inflating": crafted(b'{"sent":{' + b" " * 8_000_000 + b"}}")[:8000],
        "bomb": crafted(b" " * 30_000_000),
        # of this format's form, but not what it gave
        "position past any log": token_of((1 << 62).to_bytes(8, "big") + this_filter),
        "all ones": token_of(b"\xff" * 15),
        "short": token_of((5).to_bytes(8, "big") + this_filter[:4]),
        "padded": token_of((5).to_bytes(8, "big") + this_filter[:5]),
        "not base64": "2." + "!" * 20,
        "no version": base64.urlsafe_b64encode((5).to_bytes(8, "big") + this_filter).decode(),
        "version 3": "3." + token_of((5).to_bytes(8, "big") + this_filter)[2:],
        "trailing bytes": token_of((5).to_bytes(8, "big") + this_filter) + "AAAA",
    }


def test_crafted_positions_are_refused_naming_the_field(tmp_path: Path) -> None:
    """A position is one log position bound to the filter: a token of the earlier format
    (a compressed map of every game's seq, up to 48 KiB) is refused saying so, and a token
    of any other form, or of a position past any log, naming the field; item 6 of issue 42
    (a zlib of 100,000 ``[`` answered INTERNAL) stays refused within the bounds."""
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        organiser = Client(server.address, organiser_key=server.key)
        game = organiser.create_game("bon-appetit", ["A", "B"])
        for name, token in crafted_positions(game.game_id).items():
            with pytest.raises(FeastlogError) as bad:
                next(iter(Client(server.address).feed(position=token)))
            assert bad.value.status == "INVALID_ARGUMENT", (name, bad.value)
            assert bad.value.field == "position", name
            if name.startswith("earlier") or name in ("nested lists", "inflating", "bomb"):
                assert "earlier format" in str(bad.value), (name, bad.value)
        with pytest.raises(FeastlogError) as kind:
            next(iter(Client(server.address).feed(kind="poker")))
        assert kind.value.status == "INVALID_ARGUMENT"
    finally:
        server.stop()


def test_a_bad_position_on_server_sent_events_is_a_400_before_any_200(tmp_path: Path) -> None:
    """Every bad input of ``/feed/events`` is refused before the stream's 200: a crafted
    position (in the query or in ``Last-Event-ID``) or an unknown kind."""
    from tests.webutil import WebServer

    web = WebServer(tmp_path / "games.duckdb")
    try:
        game = Client(web.address, organiser_key=web.key).create_game("bon-appetit", ["A", "B"])
        # an event id is a row's position: ASCII digits, within the log's bound
        tokens = {
            **crafted_positions(game.game_id),
            "negative": "-4",
            "past any log": str(1 << 62),
            "twenty digits": "1" * 20,
            "a WatchAll token": token_of(bytes(15)),
        }
        # a request line or header past 8,190 bytes aiohttp refuses itself (400 too)
        tokens = {name: t for name, t in tokens.items() if len(t) < 8000}
        asked = [f"/feed/events?position={quote(t)}" for t in tokens.values()]
        asked.append("/feed/events?kind=poker")
        for path in asked:
            connection = http.client.HTTPConnection("127.0.0.1", web.http_port, timeout=20)
            try:
                connection.request("GET", path)
                reply = connection.getresponse()
                assert reply.status == 400, (path[:60], reply.status)
                assert b"position" in reply.read() or "kind" in path
            finally:
                connection.close()
        for token in tokens.values():
            connection = http.client.HTTPConnection("127.0.0.1", web.http_port, timeout=20)
            try:
                connection.request("GET", "/feed/events", headers={"Last-Event-ID": token})
                assert connection.getresponse().status == 400
            finally:
                connection.close()
    finally:
        web.stop()
