"""At the table through a real ``feastlog serve`` process, for each game kind: a seat calls
the arbiter holding the game, the held game refuses moves, the arbiters' queue shows the
call, the caller's and the arbiter's case files verify offline, a rewind ruling answers
the call, play goes on to the end, and the record audits and verifies."""

from __future__ import annotations

import json
import random
import threading
import uuid
from collections.abc import Iterator

import grpc
import pytest

from feastlog.replay.record.export import verify_document
from feastlog.replay.table import casefile
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import table_service_pb2 as tpb
from feastlog.v1 import table_service_pb2_grpc as tpb_grpc
from tests.serverutil import ProcessServer, bearer, create, error_info, play_to_end, stub, view_of

KEY = "org_test-organiser-key-0123456789abcdef"
KINDS = ("bon-appetit", "menu-masters", "picky-eaters")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessServer]:
    running = ProcessServer(tmp_path_factory.mktemp("table") / "games.duckdb", KEY)
    try:
        yield running
    finally:
        running.terminate()


def _move(
    client: pb_grpc.GameServiceStub, game_id: str, tokens: list[str], rng: random.Random
) -> None:
    """The first seat to act plays a random legal move."""
    view = view_of(client.GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(KEY)))
    seat = int(sorted(view["to_act"])[0])
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[seat])
    )
    command = rng.choice(list(legal.commands))
    request = pb.SubmitCommandRequest(game_id=game_id, command_id=uuid.uuid4().hex, command=command)
    client.SubmitCommand(request, metadata=bearer(tokens[seat]))


def _refused(call: object, *args: object, **kwargs: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value.code(), error_info(caught.value).metadata.get("rule_id", "")


@pytest.mark.parametrize("kind", KINDS)
def test_call_hold_case_file_rewind_and_play_on(server: ProcessServer, kind: str) -> None:
    channel = grpc.insecure_channel(server.address)
    client = stub(server.address)
    table = tpb_grpc.TableServiceStub(channel)
    audit = apb_grpc.AuditServiceStub(channel)
    replay = rpb_grpc.ReplayServiceStub(channel)
    game = create(
        client, KEY, kind, ["Ann", "Brian", "Celia"], seed=bytes([KINDS.index(kind) + 1]) * 32
    )
    game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
    rng = random.Random(3)
    for _ in range(4):
        _move(client, game_id, tokens, rng)

    view = view_of(client.GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(KEY)))
    seat = int(sorted(view["to_act"])[0])
    pending = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[seat])
    ).commands[0]
    # seat 0 calls about seq 3 and holds the game
    called = table.CallArbiter(
        tpb.CallArbiterRequest(
            game_id=game_id,
            command_id="call-1",
            about_seq=3,
            claim="that move broke a rule",
            hold=True,
        ),
        metadata=bearer(tokens[0]),
    )
    call = int(called.call)
    assert call == 6
    # a held game lists no legal move and refuses every seat's, with the rule id
    assert not client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[seat])
    ).commands
    code, rule = _refused(
        client.SubmitCommand,
        pb.SubmitCommandRequest(game_id=game_id, command_id="x", command=pending),
        metadata=bearer(tokens[seat]),
    )
    assert (code, rule) == (grpc.StatusCode.FAILED_PRECONDITION, "FL-CALL-HOLD")
    # a second hold, a call on a row that does not exist: refused with their rule ids
    code, rule = _refused(
        table.CallArbiter,
        tpb.CallArbiterRequest(game_id=game_id, about_seq=2, claim="me too", hold=True),
        metadata=bearer(tokens[1]),
    )
    assert rule == "FL-CALL-SECOND-HOLD"
    code, rule = _refused(
        table.CallArbiter,
        tpb.CallArbiterRequest(game_id=game_id, about_seq=99, claim="a row to come"),
        metadata=bearer(tokens[1]),
    )
    assert rule == "FL-CALL-ROW"
    # the arbiters' queue: the call is open; a seat may not read the server's queue
    queue = table.ListCalls(tpb.ListCallsRequest(open_only=True), metadata=bearer(KEY))
    mine = [c for c in queue.calls if c.game_id == game_id]
    assert [(c.call, c.seat, c.about_seq, c.state, c.hold) for c in mine] == [
        (call, 0, 3, "open", True)
    ]
    code, _ = _refused(table.ListCalls, tpb.ListCallsRequest(), metadata=bearer(tokens[0]))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    # the case file as the caller saw it, and as the arbiter sees it: both verify offline
    for token in (tokens[0], KEY):
        found = table.GetCaseFile(
            tpb.GetCaseFileRequest(game_id=game_id, call=call), metadata=bearer(token)
        )
        bundle = json.loads(found.bundle)
        assert casefile.check(bundle) == []
        assert [r["seq"] for r in bundle["rows"]] == list(range(1, call + 1))
        assert bundle["server_seed"] is None
    assert "checks" in bundle["explain"] and bundle["explain"]["seq"] == 3
    tampered = dict(bundle, call={**bundle["call"], "claim": "something else"})
    assert casefile.check(tampered) != []

    # the ruling: upheld, rewind to seq 3; a second answer is refused
    ruling = record_pb2.ArbiterCommand(
        reason="the move at seq 4 is taken back",
        answers_call=call,
        verdict=record_pb2.CALL_VERDICT_UPHELD,
    )
    ruling.rewind.to_seq = 3
    ruled = audit.SubmitRuling(
        apb.SubmitRulingRequest(game_id=game_id, command_id="r1", ruling=ruling),
        metadata=bearer(KEY),
    )
    assert int(ruled.seq) == call + 1
    again = record_pb2.ArbiterCommand(
        reason="again", answers_call=call, verdict=record_pb2.CALL_VERDICT_DENIED
    )
    again.note.text = "again"
    _, rule = _refused(
        audit.SubmitRuling,
        apb.SubmitRulingRequest(game_id=game_id, command_id="r2", ruling=again),
        metadata=bearer(KEY),
    )
    assert rule == "FL-CALL-ANSWERED"
    answered = table.ListCalls(tpb.ListCallsRequest(game_id=game_id), metadata=bearer(tokens[0]))
    assert [(c.state, c.ruled_by, c.answered_seq) for c in answered.calls] == [
        ("upheld", "organiser", call + 1)
    ]
    # the game is at seq 3's state again: its table view is that of seq 3
    at3 = replay.GetStateAt(rpb.GetStateAtRequest(game_id=game_id, seq=3), metadata=bearer(KEY))
    now = client.GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(KEY))
    assert view_of(now) == view_of(at3.event)

    play_to_end(client, game_id, tokens, seed=11)
    report = audit.VerifyGame(apb.VerifyGameRequest(game_id=game_id), metadata=bearer(KEY)).report
    assert report.ok, report
    exported = replay.ExportRecord(rpb.ExportRecordRequest(game_id=game_id))
    assert verify_document(exported.content.decode()).ok
    # after the end the caller's case file carries the seed and opens every commitment
    final = table.GetCaseFile(
        tpb.GetCaseFileRequest(game_id=game_id, call=call), metadata=bearer(tokens[0])
    )
    bundle = json.loads(final.bundle)
    assert bundle["server_seed"] and casefile.check(bundle) == []
    assert bundle["superseded"] == {"4": call + 1, "5": call + 1}


def test_watch_calls_sees_a_call_and_its_answer(server: ProcessServer) -> None:
    channel = grpc.insecure_channel(server.address)
    client = stub(server.address)
    table = tpb_grpc.TableServiceStub(channel)
    audit = apb_grpc.AuditServiceStub(channel)
    game = create(client, KEY, "bon-appetit", ["Ann", "Brian"], seed=bytes([4]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    _move(client, game.game_id, tokens, random.Random(1))
    seen: list[tpb.ArbiterCall] = []
    stream = table.WatchCalls(tpb.WatchCallsRequest(), metadata=bearer(KEY))
    ready = threading.Event()

    def read() -> None:
        for each in stream:
            seen.append(each.call)
            ready.set()
            if len(seen) >= 2 and seen[-1].state != "open":
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    made = table.CallArbiter(
        tpb.CallArbiterRequest(game_id=game.game_id, about_seq=2, claim="wrong gem values"),
        metadata=bearer(tokens[1]),
    )
    ruling = record_pb2.ArbiterCommand(
        reason="values are right", answers_call=made.call, verdict=record_pb2.CALL_VERDICT_DENIED
    )
    ruling.note.text = "checked the gem cards"
    ready.wait(10)
    audit.SubmitRuling(
        apb.SubmitRulingRequest(game_id=game.game_id, ruling=ruling), metadata=bearer(KEY)
    )
    reader.join(10)
    stream.cancel()
    ours = [(c.call, c.state) for c in seen if c.game_id == game.game_id]
    assert ours[-2:] == [(made.call, "open"), (made.call, "denied")]
