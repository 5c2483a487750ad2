"""Two nodes on one PostgreSQL database: a node whose memory is behind the log answers as
each command's semantics say (the stored answer for a retry, ABORTED for a stale
expected_seq, acceptance for a command that fits the log), and a watcher on one node
streams the commands another node accepts."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from feastlog.v1 import game_service_pb2 as pb
from tests.serverutil import ThreadedServer, bearer, create, error_info, stub, view_of


@pytest.fixture
def nodes(postgres: str) -> Iterator[tuple[ThreadedServer, ThreadedServer]]:
    first, second = ThreadedServer(postgres), ThreadedServer(postgres)
    yield first, second
    first.stop()
    second.stop()


def first_move(client: Any, game_id: str, token: str) -> Any:
    """The first legal command of a seat, as the node asked computes it."""
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(token)
    )
    return legal.commands[0]


def submit(
    client: Any, game_id: str, token: str, command: Any, command_id: str, expected: int
) -> pb.SubmitCommandResponse:
    """A command at ``expected`` seq, on the node ``client`` talks to."""
    request = pb.SubmitCommandRequest(
        game_id=game_id, command_id=command_id, command=command, expected_seq=expected
    )
    reply: pb.SubmitCommandResponse = client.SubmitCommand(request, metadata=bearer(token))
    return reply


def test_a_node_behind_the_log_answers_as_each_command_says(
    nodes: tuple[ThreadedServer, ThreadedServer],
) -> None:
    a, b = nodes
    assert b.running.follower is not None
    b.call(asyncio.to_thread(b.running.follower.stop))  # b hears nothing: it falls behind
    on_a, on_b = stub(a.address), stub(b.address)
    game = create(on_a, a.key, "bon-appetit", ["Ann", "Brian", "Celia"], seed=bytes(32))
    game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
    assert on_b.GetView(pb.GetViewRequest(game_id=game_id)).seq == 1  # folded on b at seq 1
    bids = [first_move(on_a, game_id, t) for t in tokens]
    done = submit(on_a, game_id, tokens[0], bids[0], "ann-1", 1)
    assert (done.seq, done.replayed) == (2, False)
    again = submit(on_b, game_id, tokens[0], bids[0], "ann-1", 1)  # a retry, on b
    assert (again.seq, again.hash, again.replayed) == (2, done.hash, True)
    with pytest.raises(grpc.RpcError) as stale:  # b knows seq 2 now: 1 is stale
        submit(on_b, game_id, tokens[1], bids[1], "brian-1", 1)
    assert stale.value.code() == grpc.StatusCode.ABORTED
    assert error_info(stale.value).metadata["last_seq"] == "2"
    assert submit(on_b, game_id, tokens[1], bids[1], "brian-1", 2).seq == 3
    # b falls behind again: a takes seq 4; b is asked for seq 5, which fits the log
    assert submit(on_a, game_id, tokens[2], bids[2], "celia-1", 3).seq == 4
    view = on_a.GetView(pb.GetViewRequest(game_id=game_id))
    seat = int(view_of(view)["to_act"][0])
    move = first_move(on_a, game_id, tokens[seat])
    assert submit(on_b, game_id, tokens[seat], move, "next-1", view.seq).seq == view.seq + 1
    for _ in range(100):  # a hears of b's commit by itself, soon after it
        if on_a.GetView(pb.GetViewRequest(game_id=game_id)).seq == view.seq + 1:
            break
        time.sleep(0.05)
    assert on_a.GetView(pb.GetViewRequest(game_id=game_id)).seq == view.seq + 1


def test_a_watcher_on_one_node_sees_commands_accepted_by_another(
    nodes: tuple[ThreadedServer, ThreadedServer],
) -> None:
    a, b = nodes
    on_a, on_b = stub(a.address), stub(b.address)
    game = create(on_a, a.key, "bon-appetit", ["Ann", "Brian"], seed=bytes(range(32)))
    game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
    seen: list[int] = []
    stream = on_b.WatchGame(pb.WatchGameRequest(game_id=game_id, from_seq=1))

    def watch() -> None:
        try:
            seen.extend(r.event.seq for r in stream)
        except grpc.RpcError as ended:  # cancelled by the test once it has seen enough
            assert ended.code() == grpc.StatusCode.CANCELLED

    follow = threading.Thread(target=watch)
    follow.start()
    try:
        for i, token in enumerate(tokens):
            submit(on_a, game_id, token, first_move(on_a, game_id, token), f"c{i}", i + 1)
        last = on_a.GetView(pb.GetViewRequest(game_id=game_id)).seq
        for _ in range(200):
            if seen and seen[-1] >= last:
                break
            follow.join(0.05)
    finally:
        stream.cancel()
        follow.join(10)
    assert seen[:last] == list(range(1, last + 1))
