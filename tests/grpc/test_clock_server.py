"""Clocks through a real server whose time the test moves (a ManualClock injected in the
service, never in replay/): the bank runs down as the test moves time, the server records
a time-out at the deadline by itself (a held call the arbiter answers), pause and resume
stop every clock, and the record audits and refolds to the same clocks."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import grpc
import pytest

from feastlog.replay.table import casefile
from feastlog.service.app.clock import ManualClock
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import table_service_pb2 as tpb
from feastlog.v1 import table_service_pb2_grpc as tpb_grpc
from tests.serverutil import ThreadedServer, bearer, create, error_info, stub, view_of


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ThreadedServer, ManualClock]]:
    server = ThreadedServer(tmp_path_factory.mktemp("clocks") / "games.duckdb")
    clock = ManualClock()
    server.running.app.clock = clock
    try:
        yield server, clock
    finally:
        server.stop()


def wait_for(check: object, what: str) -> None:
    """The server's timer runs on its own loop: wait (bounded) until it has acted."""
    for _ in range(200):
        if check():  # type: ignore[operator]
            return
        time.sleep(0.02)
    pytest.fail(f"the server did not {what}")


def test_a_bank_runs_down_and_the_server_records_the_time_out(
    served: tuple[ThreadedServer, ManualClock],
) -> None:
    server, clock = served
    client = stub(server.address)
    table = tpb_grpc.TableServiceStub(grpc.insecure_channel(server.address))
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    game = create(client, server.key, "picky-eaters", ["Ann", "Brian"], clock="bank:30+5")
    tokens = [t.token for t in game.seat_tokens]
    clocks = table.GetClocks(tpb.GetClocksRequest(game_id=game.game_id))
    assert clocks.clocked and clocks.mode == "bank" and clocks.allowance_ms == 30_000
    seat = next(s.seat for s in clocks.seats if s.running)

    clock.advance(10)
    clocks = table.GetClocks(tpb.GetClocksRequest(game_id=game.game_id))
    assert (
        clocks.seats[seat].remaining_ms == 20_000 and clocks.seats[1 - seat].remaining_ms == 30_000
    )
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game.game_id), metadata=bearer(tokens[seat])
    )
    client.SubmitCommand(
        pb.SubmitCommandRequest(game_id=game.game_id, command_id="m1", command=legal.commands[0]),
        metadata=bearer(tokens[seat]),
    )
    clocks = table.GetClocks(tpb.GetClocksRequest(game_id=game.game_id))
    assert clocks.seats[seat].remaining_ms == 25_000  # 20 s left, then the 5 s increment
    nxt = next(s.seat for s in clocks.seats if s.running)

    # the arbiter pauses: time passes, nobody is charged
    pause = record_pb2.ArbiterCommand(reason="a break", pause_clocks=record_pb2.PauseClocks())
    audit.SubmitRuling(
        apb.SubmitRulingRequest(game_id=game.game_id, ruling=pause), metadata=bearer(server.key)
    )
    clock.advance(600)
    clocks = table.GetClocks(tpb.GetClocksRequest(game_id=game.game_id))
    assert clocks.paused and not any(s.running for s in clocks.seats)
    before = clocks.seats[nxt].remaining_ms
    resume = record_pb2.ArbiterCommand(reason="back", resume_clocks=record_pb2.ResumeClocks())
    audit.SubmitRuling(
        apb.SubmitRulingRequest(game_id=game.game_id, ruling=resume), metadata=bearer(server.key)
    )
    assert (
        table.GetClocks(tpb.GetClocksRequest(game_id=game.game_id)).seats[nxt].remaining_ms
        == before
    )

    # the next seat lets its time run out: the server records the time-out by itself
    last = client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq
    clock.advance(before / 1000 + 0.001)
    wait_for(
        lambda: client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq == last + 1,
        "record the time-out",
    )
    calls = table.ListCalls(tpb.ListCallsRequest(game_id=game.game_id)).calls
    assert [(c.seat, c.state, c.hold) for c in calls] == [(nxt, "open", True)]
    assert "FL-CLOCK-TIMEOUT" in calls[0].claim
    case = json.loads(
        table.GetCaseFile(
            tpb.GetCaseFileRequest(game_id=game.game_id, call=calls[0].call),
            metadata=bearer(tokens[nxt]),
        ).bundle
    )
    assert casefile.check(case) == []
    assert case["clocks"]["timed_out"] == [nxt] and case["clocks"]["remaining_ms"][nxt] <= 0
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game.game_id), metadata=bearer(tokens[nxt])
    )
    assert not legal.commands  # held
    # a seat cannot record a time-out itself
    event = record_pb2.Command(
        clock=record_pb2.ClockEvent(timeout=record_pb2.ClockTimeout(seat=nxt))
    )
    with pytest.raises(grpc.RpcError) as refused:
        client.SubmitCommand(
            pb.SubmitCommandRequest(game_id=game.game_id, command_id="t", command=event),
            metadata=bearer(tokens[1 - nxt]),
        )
    assert error_info(refused.value).metadata["rule_id"] == "FL-CLOCK-SERVER"
    answer = record_pb2.ArbiterCommand(
        reason="Brian plays on without a clock",
        answers_call=calls[0].call,
        verdict=record_pb2.CALL_VERDICT_UPHELD,
    )
    answer.note.text = "time-out upheld"
    audit.SubmitRuling(
        apb.SubmitRulingRequest(game_id=game.game_id, ruling=answer), metadata=bearer(server.key)
    )
    report = audit.VerifyGame(
        apb.VerifyGameRequest(game_id=game.game_id), metadata=bearer(server.key)
    ).report
    assert report.ok, report
    over = view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))
    assert not over["over"]


def test_a_clock_option_out_of_range_is_refused_and_nothing_is_made(
    served: tuple[ThreadedServer, ManualClock],
) -> None:
    server, _ = served
    client = stub(server.address)
    before = len(client.ListGames(pb.ListGamesRequest()).games)
    with pytest.raises(grpc.RpcError) as refused:
        create(client, server.key, "bon-appetit", ["Ann", "Brian"], clock="bank:1+0")
    assert error_info(refused.value).metadata.get("rule_id") == "FL-CLOCK-OPTION"
    assert len(client.ListGames(pb.ListGamesRequest()).games) == before
