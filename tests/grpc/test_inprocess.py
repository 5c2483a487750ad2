"""The in-process channel (service/grpc/inprocess.py): the generated stubs on it, answered by
the server's own servicers over a file's reads, with a server's refusals word for word."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status

from feastlog.service.app.auth import ORGANISER
from feastlog.service.app.offline import OfflineFile
from feastlog.service.grpc.inprocess import InProcessChannel
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc
from tests.recordutil import Built, build, store_games
from tests.serverutil import ThreadedServer, bearer, error_info

# field 99 as a varint (tag 99 << 3, in two bytes, then 1): a field no request has
UNKNOWN_FIELD = bytes([0x98, 0x06, 0x01])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Built, Built]:
    """The same games in two files: one a server holds, one read in process."""
    folder = tmp_path_factory.mktemp("inprocess")
    done, running = build(players=3, seed_byte=31), build(players=3, seed_byte=32, stop_after=6)
    served = folder / "served.duckdb"
    store_games(served, [done, running])
    offline = folder / "offline.duckdb"
    shutil.copy(served, offline)
    return served, offline, done, running


@pytest.fixture(scope="module")
def both(
    files: tuple[Path, Path, Built, Built],
) -> Iterator[tuple[grpc.Channel, grpc.Channel, str]]:
    """A server's channel (and its organiser key) and an in-process one on the same games."""
    served, offline, _, _ = files
    server = ThreadedServer(served, announce=False)
    channel = grpc.insecure_channel(server.address)
    try:
        yield channel, InProcessChannel(OfflineFile(str(offline)), ORGANISER), server.key
    finally:
        channel.close()
        server.stop()


def refused(call: Callable[[], Any]) -> grpc.RpcError:
    """The refusal a call ends with."""
    with pytest.raises(grpc.RpcError) as raised:
        call()
    return raised.value


def status(error: grpc.RpcError) -> tuple[Any, ...]:
    """A refusal as the client reads it: code, words, ErrorInfo."""
    info = error_info(error)
    return error.code(), error.details(), info.domain, info.reason, dict(info.metadata)


def test_the_stubs_answer_in_process_as_a_server_answers(
    both: tuple[grpc.Channel, grpc.Channel, str], files: tuple[Path, Path, Built, Built]
) -> None:
    server, here, key = both
    _, _, done, running = files
    meta = bearer(key)
    for game in (done, running):
        game_id = game.rows[0].game_id
        asked = rpb.GetStateAtRequest(game_id=game_id, seq=2, viewer="seat:1")
        there = rpb_grpc.ReplayServiceStub(server).GetStateAt(asked, metadata=meta)
        assert rpb_grpc.ReplayServiceStub(here).GetStateAt(asked) == there
        streamed = rpb.StreamReplayRequest(game_id=game_id, viewer="spectator")
        replies = [r for r in rpb_grpc.ReplayServiceStub(here).StreamReplay(streamed)]
        assert replies == list(rpb_grpc.ReplayServiceStub(server).StreamReplay(streamed))
        assert len(replies) == len(game.rows)
        verified = apb.VerifyGameRequest(game_id=game_id)
        assert apb_grpc.AuditServiceStub(here).VerifyGame(verified) == apb_grpc.AuditServiceStub(
            server
        ).VerifyGame(verified, metadata=meta)
    stats = tpb.GetStatsRequest()
    assert tpb_grpc.TournamentServiceStub(here).GetStats(stats) == tpb_grpc.TournamentServiceStub(
        server
    ).GetStats(stats)


def test_a_stream_stops_where_its_reader_stops(
    both: tuple[grpc.Channel, grpc.Channel, str], files: tuple[Path, Path, Built, Built]
) -> None:
    _, here, _ = both
    game_id = files[2].rows[0].game_id
    replies = rpb_grpc.ReplayServiceStub(here).StreamReplay(
        rpb.StreamReplayRequest(game_id=game_id)
    )
    assert next(replies).event.seq == 1 and next(replies).event.seq == 2
    assert replies.cancel() and list(replies) == []


def test_refusals_in_process_are_the_servers_word_for_word(
    both: tuple[grpc.Channel, grpc.Channel, str],
) -> None:
    server, here, key = both
    view, listing = pb.GetViewRequest, pb.ListGamesRequest
    requests: list[tuple[str, Any, bytes]] = [
        ("GetView", pb.GetViewResponse, view(game_id="g_" + "x" * 300).SerializeToString()),
        ("GetView", pb.GetViewResponse, view(game_id="g_1").SerializeToString() + UNKNOWN_FIELD),
        ("GetView", pb.GetViewResponse, b"\xff\xff\xff"),
        ("ListGames", pb.ListGamesResponse, listing(page_token="x").SerializeToString()),
        ("ListGames", pb.ListGamesResponse, listing(tournament_id="a\x1bb").SerializeToString()),
    ]
    for name, response, raw in requests:
        there = refused(lambda: ask(server, name, response, raw, bearer(key)))  # noqa: B023
        found = refused(lambda: ask(here, name, response, raw))  # noqa: B023
        assert status(found) == status(there), name
        assert rpc_status.from_call(found) == rpc_status.from_call(there)  # type: ignore[arg-type]
    # an unknown game: the same status and reason; offline the words name the file
    raw = view(game_id="g_nope").SerializeToString()
    there = refused(lambda: ask(server, "GetView", pb.GetViewResponse, raw, bearer(key)))
    found = refused(lambda: ask(here, "GetView", pb.GetViewResponse, raw))
    assert status(found)[0] == status(there)[0] == grpc.StatusCode.NOT_FOUND
    assert status(found)[2:] == status(there)[2:]
    assert "offline.duckdb" in (found.details() or "")


def ask(channel: grpc.Channel, name: str, response: Any, raw: bytes, metadata: Any = ()) -> Any:
    """A GameService method sent ``raw`` bytes as its request."""
    method = channel.unary_unary(
        f"/feastlog.v1.GameService/{name}", lambda b: b, response.FromString
    )
    return method(raw, metadata=metadata)


def test_a_stream_refused_before_its_first_reply_is_refused_as_a_server_refuses_it(
    both: tuple[grpc.Channel, grpc.Channel, str],
) -> None:
    server, here, _ = both
    request = rpb.StreamReplayRequest(game_id="g_" + "x" * 300)
    there = refused(lambda: list(rpb_grpc.ReplayServiceStub(server).StreamReplay(request)))
    found = refused(lambda: list(rpb_grpc.ReplayServiceStub(here).StreamReplay(request)))
    assert status(found) == status(there)
    request = rpb.StreamReplayRequest(game_id="g_nope")  # found only once it is read
    replies = rpb_grpc.ReplayServiceStub(here).StreamReplay(request)
    assert refused(lambda: next(replies)).code() == grpc.StatusCode.NOT_FOUND


def test_a_method_no_servicer_registers_is_unimplemented(
    both: tuple[grpc.Channel, grpc.Channel, str],
) -> None:
    _, here, _ = both
    method = here.unary_unary("/feastlog.v1.GameService/NoSuchMethod", lambda b: b, lambda b: b)
    assert refused(lambda: method(b"")).code() == grpc.StatusCode.UNIMPLEMENTED
