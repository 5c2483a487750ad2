"""Clocks on two nodes of one PostgreSQL database, in this process, on a ManualClock the
test moves: every node times every running clocked game, whichever node it was begun and
played on.  A game begun on node B is timed out by node A once B has stopped; with both
up, one deadline is one time-out row, and the node whose time-out comes second is refused
quietly (no error, no warning); a hold made through one node holds the game on the other,
moves and time-outs alike.  ``tests/e2e/test_clock_nodes.py`` kills a node with
``kill -9`` on the machine's time."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator

import grpc
import pytest

from feastlog.service.app.clock import ManualClock
from feastlog.service.app.table import GRACE_MS
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import table_service_pb2 as tpb
from feastlog.v1 import table_service_pb2_grpc as tpb_grpc
from tests.serverutil import ThreadedServer, bearer, create, error_info, stub

MOVE_SECONDS = 5  # the least a move clock takes (replay/table/clocks.py LIMITS)
PAST = MOVE_SECONDS + GRACE_MS / 1000 + 1  # past the deadline, and any node's grace


@pytest.fixture
def nodes(postgres: str) -> Iterator[list[ThreadedServer]]:
    started = [ThreadedServer(postgres), ThreadedServer(postgres)]
    yield started
    for node in started:
        if node.thread.is_alive():
            node.stop()


def on_clock(node: ThreadedServer, clock: ManualClock) -> None:
    node.running.app.clock = clock


def wait_for(check: Callable[[], bool], what: str) -> None:
    """The nodes act on their own loops: wait (bounded) until they have."""
    limit = time.monotonic() + 30
    while not check():
        if time.monotonic() > limit:
            pytest.fail(f"the nodes did not {what}")
        time.sleep(0.02)


def timed(node: ThreadedServer, game_id: str) -> tuple[int, int] | None:
    """The deadline a node's timer waits for in a game (None: no timer)."""
    found = node.running.app.table.timers.get(game_id)
    return None if found is None or found[1].done() else found[0]


def time_outs(node: ThreadedServer, game_id: str) -> list[int]:
    """The seqs of a game's time-out rows, as the store holds them."""
    db = node.running.db
    rows = node.call(db.read(lambda store: store.rows_after(game_id, 0)))
    return [
        row.seq
        for row in rows
        if row.kind == "command"
        and row.actor == "server"
        and record_pb2.Command.FromString(row.body).WhichOneof("game") == "clock"
    ]


def verified(node: ThreadedServer, game_id: str) -> None:
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(node.address))
    report = audit.VerifyGame(
        apb.VerifyGameRequest(game_id=game_id), metadata=bearer(node.key)
    ).report
    assert report.ok, list(report.faults)


def seq_on(node: ThreadedServer, game_id: str) -> int:
    return int(stub(node.address).GetView(pb.GetViewRequest(game_id=game_id)).seq)


def loud(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records]


def test_a_game_begun_on_one_node_is_timed_out_by_the_other_once_it_stops(
    nodes: list[ThreadedServer], postgres: str
) -> None:
    a, b = nodes
    clock = ManualClock()
    on_clock(a, clock)
    on_clock(b, clock)
    game = create(stub(b.address), b.key, "bon-appetit", ["Ann", "Brian"], clock="move:5")
    game_id = game.game_id
    # a hears of the game from the log, folds it in and times it: b's deadline, not later
    wait_for(lambda: None is not timed(a, game_id) == timed(b, game_id), "time it on a")
    b.stop()  # b is gone; nobody moves or reads the game on a

    clock.advance(PAST)
    wait_for(lambda: seq_on(a, game_id) == 2, "time the seat out on a")
    assert time_outs(a, game_id) == [2]

    # b comes back: it finds the time-out a wrote, and writes none of its own
    again = ThreadedServer(postgres)
    nodes.append(again)
    on_clock(again, clock)
    clock.advance(PAST)
    assert seq_on(again, game_id) == 2
    wait_for(lambda: timed(again, game_id) is None and timed(a, game_id) is None, "settle")
    assert time_outs(again, game_id) == [2]
    verified(again, game_id)


def test_one_deadline_on_two_nodes_is_one_time_out_row(
    nodes: list[ThreadedServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    a, b = nodes
    clock = ManualClock()
    on_clock(a, clock)
    on_clock(b, clock)
    game = create(stub(b.address), b.key, "bon-appetit", ["Ann", "Brian"], clock="move:5")
    game_id = game.game_id
    wait_for(lambda: None is not timed(a, game_id) == timed(b, game_id), "time it on a")

    clock.advance(PAST)  # both timers are due at once
    wait_for(lambda: seq_on(a, game_id) == seq_on(b, game_id) == 2, "record the time-out")
    wait_for(lambda: timed(a, game_id) is None and timed(b, game_id) is None, "settle")
    assert time_outs(a, game_id) == [2]
    verified(a, game_id)
    assert [line for line in loud(caplog) if not line.startswith(("INFO", "DEBUG"))] == []


def test_a_time_out_another_node_wrote_first_is_refused_quietly(
    nodes: list[ThreadedServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="feastlog")
    a, b = nodes
    clock_a, clock_b = ManualClock(), ManualClock()  # the same time, moved one at a time
    on_clock(a, clock_a)
    on_clock(b, clock_b)
    game = create(stub(a.address), a.key, "bon-appetit", ["Ann", "Brian"], clock="move:5")
    game_id = game.game_id
    wait_for(lambda: timed(b, game_id) is not None, "time the game on b")
    follower = a.running.follower
    assert follower is not None
    a.call(asyncio.to_thread(follower.stop))  # a hears nothing: its memory stays behind
    live_a = a.running.app.live

    async def not_behind(game: object) -> bool:
        return False  # the log's answer came just before b's row: a commits all the same

    live_a.behind = not_behind  # type: ignore[method-assign]

    clock_b.advance(PAST)  # b's deadline (and grace) first: b writes the time-out
    wait_for(lambda: seq_on(b, game_id) == 2, "time the seat out on b")
    clock_a.advance(PAST)  # a's timer: its commit at seq 2 comes second
    wait_for(lambda: timed(a, game_id) is None, "settle a's timer")
    assert live_a.peek(game_id).last_seq == 2  # type: ignore[union-attr]
    assert time_outs(a, game_id) == [2]
    refused = [line for line in loud(caplog) if f"game {game_id}: another node" in line]
    assert refused == [f"DEBUG feastlog: game {game_id}: another node's row took seq 2 first"]
    assert [line for line in loud(caplog) if not line.startswith(("INFO", "DEBUG"))] == []
    verified(a, game_id)


def test_a_hold_made_through_one_node_holds_the_game_on_the_other(
    nodes: list[ThreadedServer],
) -> None:
    a, b = nodes
    clock = ManualClock()
    on_clock(a, clock)
    on_clock(b, clock)
    game = create(stub(b.address), b.key, "bon-appetit", ["Ann", "Brian"], clock="move:5")
    game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
    wait_for(lambda: timed(a, game_id) is not None, "time the game on a")
    on_a = stub(a.address)
    pending = on_a.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[1])
    ).commands[0]
    table_b = tpb_grpc.TableServiceStub(grpc.insecure_channel(b.address))
    called = table_b.CallArbiter(
        tpb.CallArbiterRequest(
            game_id=game_id, command_id="call-1", about_seq=1, claim="a card fell", hold=True
        ),
        metadata=bearer(tokens[0]),
    )
    assert int(called.call) == 2
    # a holds the held game: no timer on either node, and a seat's move is refused on a
    wait_for(lambda: seq_on(a, game_id) == 2, "fold the call on a")
    wait_for(lambda: timed(a, game_id) is None and timed(b, game_id) is None, "stop the timers")
    with pytest.raises(grpc.RpcError) as refused:
        on_a.SubmitCommand(
            pb.SubmitCommandRequest(game_id=game_id, command_id="bid-1", command=pending),
            metadata=bearer(tokens[1]),
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(refused.value).metadata["rule_id"] == "FL-CALL-HOLD"

    # time passes: nobody is timed out while the game is held, on either node
    clock.advance(PAST)
    answer = record_pb2.ArbiterCommand(
        reason="play on", answers_call=2, verdict=record_pb2.CALL_VERDICT_DENIED
    )
    answer.note.text = "the card is back"
    audit_a = apb_grpc.AuditServiceStub(grpc.insecure_channel(a.address))
    ruled = audit_a.SubmitRuling(
        apb.SubmitRulingRequest(game_id=game_id, command_id="r1", ruling=answer),
        metadata=bearer(a.key),
    )
    assert int(ruled.seq) == 3  # no time-out row came while the game was held

    # the answer, on a, sets the clocks running again; b stops, and a times the seat out
    wait_for(lambda: timed(a, game_id) is not None, "time the game on a again")
    b.stop()
    clock.advance(PAST)
    wait_for(lambda: seq_on(a, game_id) == 4, "time the seat out on a")
    assert time_outs(a, game_id) == [4]
    verified(a, game_id)
