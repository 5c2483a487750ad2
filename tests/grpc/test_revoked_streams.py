"""A named arbiter's open streams end the moment its key is revoked, whatever the stream:
WatchGame, WatchAll, WatchCalls, WatchTournament and a page's server-sent events opened
with the key in its cookie, against a real server (issue 42, item 5: a revoked arbiter's
WatchCalls went on receiving the calls made after the revocation)."""

from __future__ import annotations

import http.client
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as ad_grpc
from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import feed_service_pb2_grpc as fpb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import table_service_pb2 as tpb
from feastlog.v1 import table_service_pb2_grpc as tpb_grpc
from feastlog.v1 import tournament_service_pb2 as tourpb
from feastlog.v1 import tournament_service_pb2_grpc as tour_grpc
from tests.serverutil import bearer, create, play_to_end, stub
from tests.webutil import WebServer, request

NAMES = ["Ann", "Brian"]
ENDED = object()  # a stream's end with status OK


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebServer]:
    server = WebServer(tmp_path / "games.duckdb")
    yield server
    server.stop()


def arbiter_key(web: WebServer, name: str = "dana") -> str:
    """A named arbiter's new key (the organiser's call)."""
    admin = ad_grpc.AdminServiceStub(grpc.insecure_channel(web.address))
    return admin.AddArbiter(adpb.AddArbiterRequest(name=name), metadata=bearer(web.key)).key


def revoke(web: WebServer, name: str = "dana") -> None:
    """The organiser revokes the arbiter's key."""
    admin = ad_grpc.AdminServiceStub(grpc.insecure_channel(web.address))
    admin.RevokeArbiter(adpb.RevokeArbiterRequest(name=name), metadata=bearer(web.key))


def read_into(stream: Iterable[Any]) -> queue.Queue[Any]:
    """Each reply of a stream as it comes, then its error (or ``ENDED``), on a queue."""
    got: queue.Queue[Any] = queue.Queue()

    def read() -> None:
        try:
            for reply in stream:
                got.put(reply)
            got.put(ENDED)
        except grpc.RpcError as ended:
            got.put(ended)

    threading.Thread(target=read, daemon=True).start()
    return got


def ends_unauthenticated(got: queue.Queue[Any]) -> None:
    """The next thing the stream brings is its end, UNAUTHENTICATED, saying why, within
    a few seconds of the revocation (no row is needed to end it)."""
    ended = got.get(timeout=10)
    assert isinstance(ended, grpc.RpcError), ended
    assert ended.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "revoked" in (ended.details() or "")


def a_game(web: WebServer) -> tuple[str, list[str]]:
    """A running game one move in (seq 2), and its seat tokens."""
    made = create(stub(web.address), web.key, "bon-appetit", NAMES, seed=bytes([61]) * 32)
    tokens = [t.token for t in made.seat_tokens]
    play_to_end(stub(web.address), made.game_id, tokens, seed=1, stop_after=1)
    return made.game_id, tokens


def call_arbiter(web: WebServer, game_id: str, token: str, claim: str) -> int:
    """A seat's call to the arbiter about seq 2: its id."""
    table = tpb_grpc.TableServiceStub(grpc.insecure_channel(web.address))
    request_ = tpb.CallArbiterRequest(
        game_id=game_id, about_seq=2, claim=claim, command_id=uuid.uuid4().hex
    )
    return int(table.CallArbiter(request_, metadata=bearer(token)).call)


def test_a_revoked_arbiters_watch_calls_ends_and_sees_no_later_call(web: WebServer) -> None:
    key = arbiter_key(web)
    game_id, tokens = a_game(web)
    table = tpb_grpc.TableServiceStub(grpc.insecure_channel(web.address))
    first = call_arbiter(web, game_id, tokens[0], "the gem values are wrong")
    got = read_into(table.WatchCalls(tpb.WatchCallsRequest(), metadata=bearer(key)))
    listed = got.get(timeout=10)  # the open calls first: the stream is following now
    assert isinstance(listed, tpb.WatchCallsResponse) and listed.call.call == first
    second = call_arbiter(web, game_id, tokens[1], "mine too")
    live = got.get(timeout=10)
    assert isinstance(live, tpb.WatchCallsResponse) and live.call.call == second
    revoke(web)
    ends_unauthenticated(got)
    call_arbiter(web, game_id, tokens[0], "and again")  # made after the revocation
    time.sleep(0.5)
    assert got.empty()  # never sent to the revoked key


def test_a_revoked_arbiters_watch_tournament_ends_though_no_row_comes(web: WebServer) -> None:
    key = arbiter_key(web)
    tour = tour_grpc.TournamentServiceStub(grpc.insecure_channel(web.address))
    made = tour.CreateTournament(
        tourpb.CreateTournamentRequest(format={"rounds": "2"}, players=["Ann", "Bo", "Cy", "Di"]),
        metadata=bearer(web.key),
    ).tournament
    watch = tourpb.WatchTournamentRequest(tournament_id=made.tournament_id, from_seq=1)
    got = read_into(tour.WatchTournament(watch, metadata=bearer(key)))
    stored = [got.get(timeout=10) for _ in range(5)]  # the genesis and the registrations
    assert [r.seq for r in stored] == [1, 2, 3, 4, 5]
    revoke(web)
    ends_unauthenticated(got)


@pytest.mark.parametrize("stream", ["WatchGame", "WatchAll"])
def test_a_revoked_arbiters_game_stream_and_feed_end(web: WebServer, stream: str) -> None:
    key = arbiter_key(web)
    game_id, tokens = a_game(web)
    opened: Callable[[], Iterable[Any]]
    if stream == "WatchGame":
        watch = pb.WatchGameRequest(game_id=game_id, from_seq=1)
        opened = lambda: stub(web.address).WatchGame(watch, metadata=bearer(key))  # noqa: E731
    else:
        feed = fpb_grpc.FeedServiceStub(grpc.insecure_channel(web.address))
        opened = lambda: feed.WatchAll(fpb.WatchAllRequest(), metadata=bearer(key))  # noqa: E731
    got = read_into(opened())
    assert [got.get(timeout=10) is not ENDED for _ in range(2)] == [True, True]
    revoke(web)
    ends_unauthenticated(got)
    play_to_end(stub(web.address), game_id, tokens, seed=2, stop_after=1)
    time.sleep(0.5)
    assert got.empty()


def test_a_revoked_arbiters_page_stream_ends_and_is_not_let_in_again(web: WebServer) -> None:
    """The seat page opened with a named arbiter's key (kept in its cookie): its events end
    with a ``refused`` event at the revocation, and the browser's reconnection is 401."""
    key = arbiter_key(web)
    game_id, _ = a_game(web)
    taken = request(web, "POST", f"/games/{game_id}/seat", {"token": key})
    assert taken.status == 303
    cookie = taken.headers["set-cookie"].split(";")[0]
    connection = http.client.HTTPConnection("127.0.0.1", web.http_port, timeout=10)
    try:
        connection.request("GET", f"/games/{game_id}/seat/events", headers={"Cookie": cookie})
        reply = connection.getresponse()
        assert reply.status == 200
        said = b""
        while said.count(b"event: step") < 2:
            said += reply.read1(65536)
        revoke(web)
        while chunk := reply.read1(65536):  # to the stream's end, which comes
            said += chunk
    finally:
        connection.close()
    assert b"event: refused" in said and b"revoked" in said.split(b"event: refused")[1]
    again = request(web, "GET", f"/games/{game_id}/seat/events", cookie=cookie)
    assert again.status == 401
