"""ReplayService and AuditService against a real server on port 0 and a real DuckDB file:
state at a seq per viewer without leaks, replay streams, exports verified offline,
explain, what-if, rejections and arbiter rulings."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.cli.wire import as_dict
from feastlog.service.store.duckdb import Store
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import bon_appetit_pb2 as ba
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests.serverutil import ThreadedServer, bearer, create, error_info, play_to_end, stub

SEED = bytes(range(32))


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[ThreadedServer]:
    """A server on a fresh DuckDB file."""
    running = ThreadedServer(tmp_path / "games.duckdb")
    yield running
    if running.thread.is_alive():  # a test may have stopped it already
        running.stop()


@pytest.fixture
def server_here(tmp_path: Path) -> Iterator[ThreadedServer]:
    """A server whose DuckDB file is open in this process, for a test to tamper with it."""
    running = ThreadedServer(tmp_path / "games.duckdb", store_process=False)
    yield running
    running.stop()


def stubs(address: str) -> tuple[rpb_grpc.ReplayServiceStub, apb_grpc.AuditServiceStub]:
    """Blocking Replay and Audit stubs."""
    channel = grpc.insecure_channel(address)
    return rpb_grpc.ReplayServiceStub(channel), apb_grpc.AuditServiceStub(channel)


def live_game(server: ThreadedServer, commands: int) -> tuple[str, list[str]]:
    """A 3-seat game with ``commands`` commands played: its id and seat tokens."""
    client = stub(server.address)
    game = create(client, server.key, "bon-appetit", ["Ann", "Brian", "Celia"], seed=SEED)
    tokens = [t.token for t in game.seat_tokens]
    play_to_end(client, game.game_id, tokens, seed=1, stop_after=commands)
    return game.game_id, tokens


def sealed_seat(view: dict[str, object]) -> int:
    """A seat that has sealed a bid not yet revealed."""
    seats = view["seats"]
    assert isinstance(seats, list)
    return next(s["seat"] for s in seats if s.get("has_bid"))


def test_a_seat_replaying_a_live_game_sees_no_other_hand_or_sealed_bid(
    server: ThreadedServer,
) -> None:
    game_id, tokens = live_game(server, commands=4)
    replay, _ = stubs(server.address)
    now = replay.GetStateAt(rpb.GetStateAtRequest(game_id=game_id), metadata=bearer(server.key))
    bidder = sealed_seat(as_dict(now.event.view))
    watcher = (bidder + 1) % 3
    events = [
        r.event
        for r in replay.StreamReplay(
            rpb.StreamReplayRequest(game_id=game_id), metadata=bearer(tokens[watcher])
        )
    ]
    assert [e.seq for e in events] == list(range(1, now.last_seq + 1))
    for e in events:
        view = as_dict(e.view)
        for seat in view["seats"]:
            if seat["seat"] != watcher:
                assert "hand" not in seat and "sealed_bid" not in seat
        assert "bag" not in view and "deck" not in view
        if e.actor not in ("server", f"seat:{watcher}"):
            assert not e.HasField("command")  # sealed bids are never shown to others
        for fact in e.facts:
            assert as_dict(fact).get("private_to", watcher) == watcher
        assert SEED.hex() not in str(e)
    mine = as_dict(events[-1].view)["seats"][watcher]
    assert "hand" in mine
    at = replay.GetStateAt(
        rpb.GetStateAtRequest(game_id=game_id, seq=3), metadata=bearer(tokens[watcher])
    )
    assert at.event.seq == 3 and at.viewer == f"seat:{watcher}"
    spectator = as_dict(replay.GetStateAt(rpb.GetStateAtRequest(game_id=game_id, seq=3)).event.view)
    assert all("hand" not in s for s in spectator["seats"])
    with pytest.raises(grpc.RpcError) as refused:
        replay.GetStateAt(
            rpb.GetStateAtRequest(game_id=game_id, viewer=f"seat:{bidder}"),
            metadata=bearer(tokens[watcher]),
        )
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    as_seat = replay.GetStateAt(
        rpb.GetStateAtRequest(game_id=game_id, viewer=f"seat:{bidder}"),
        metadata=bearer(server.key),
    )
    assert "sealed_bid" in as_dict(as_seat.event.view)["seats"][bidder]


def test_exports_and_explanations_of_a_live_game_are_for_the_arbiter_only(
    server: ThreadedServer,
) -> None:
    game_id, tokens = live_game(server, commands=4)
    replay, audit = stubs(server.address)
    for call in (
        lambda m: replay.ExportRecord(rpb.ExportRecordRequest(game_id=game_id), metadata=m),
        lambda m: audit.ExplainEvent(apb.ExplainEventRequest(game_id=game_id, seq=2), metadata=m),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            call(bearer(tokens[0]))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert error_info(refused.value).reason == "PERMISSION_DENIED"
    exported = replay.ExportRecord(
        rpb.ExportRecordRequest(game_id=game_id), metadata=bearer(server.key)
    )
    assert not exported.complete
    document = json.loads(exported.content)
    assert document["server_seed"] is None and SEED.hex() not in exported.content.decode()
    report = audit.VerifyGame(apb.VerifyGameRequest(game_id=game_id), metadata=bearer(server.key))
    assert report.report.ok and report.report.states_checked  # the server holds the seed


def test_what_if_answers_for_a_legal_and_an_illegal_alternative(server: ThreadedServer) -> None:
    game_id, _tokens = live_game(server, commands=3)
    replay, audit = stubs(server.address)
    row = replay.GetStateAt(
        rpb.GetStateAtRequest(game_id=game_id, seq=2), metadata=bearer(server.key)
    )
    before = as_dict(
        replay.GetStateAt(
            rpb.GetStateAtRequest(game_id=game_id, seq=1), metadata=bearer(server.key)
        ).event.view
    )
    seat = int(row.event.actor.removeprefix("seat:"))
    hand = before["seats"][seat]["hand"]
    legal = record_pb2.Command(
        bon_appetit=ba.BonAppetitCommand(
            bid=ba.BonAppetitBid(
                gems=[ba.BonAppetitGem.Value(f"BON_APPETIT_GEM_{hand[0].upper()}")]
            )
        )
    )
    answer = audit.WhatIf(
        apb.WhatIfRequest(game_id=game_id, seq=2, command=legal), metadata=bearer(server.key)
    )
    assert answer.legal and next(as_dict(f)["type"] for f in answer.facts) == "bid_sealed"
    scarce = min(("blue", "green", "red", "yellow"), key=hand.count)
    gems = [ba.BonAppetitGem.Value(f"BON_APPETIT_GEM_{scarce.upper()}")] * (hand.count(scarce) + 1)
    illegal = record_pb2.Command(bon_appetit=ba.BonAppetitCommand(bid=ba.BonAppetitBid(gems=gems)))
    answer = audit.WhatIf(
        apb.WhatIfRequest(game_id=game_id, seq=2, command=illegal), metadata=bearer(server.key)
    )
    assert not answer.legal and answer.rule_id == "BA-BID-OWN" and answer.rule_text
    last = replay.GetStateAt(rpb.GetStateAtRequest(game_id=game_id), metadata=bearer(server.key))
    assert last.last_seq == 4  # nothing was written


def test_rejections_rulings_and_an_export_verified_offline(
    server: ThreadedServer, tmp_path: Path
) -> None:
    client = stub(server.address)
    game = create(client, server.key, "bon-appetit", ["Ann", "Brian"], seed=SEED)
    tokens = [t.token for t in game.seat_tokens]
    bad = record_pb2.Command(
        bon_appetit=ba.BonAppetitCommand(bid=ba.BonAppetitBid(gems=[ba.BON_APPETIT_GEM_RED] * 5))
    )
    with pytest.raises(grpc.RpcError):
        client.SubmitCommand(
            pb.SubmitCommandRequest(game_id=game.game_id, command_id="x", command=bad),
            metadata=bearer(tokens[0]),
        )
    _, audit = stubs(server.address)
    seen = audit.ListRejections(
        apb.ListRejectionsRequest(game_id=game.game_id), metadata=bearer(server.key)
    )
    assert [(r.actor, r.rule_id) for r in seen.rejections] == [("seat:0", "BA-BID-SIZE")]
    assert seen.rejections[0].message and seen.rejections[0].recorded_at
    other = audit.ListRejections(
        apb.ListRejectionsRequest(game_id=game.game_id), metadata=bearer(tokens[1])
    )
    assert list(other.rejections) == []
    note = record_pb2.ArbiterCommand(reason="table talk", note=record_pb2.Note(text="warned"))
    adjust = record_pb2.ArbiterCommand(
        reason="slow play", score_adjustment=record_pb2.ScoreAdjustment(seat=1, points=-2)
    )
    for ruling in (note, adjust):
        audit.SubmitRuling(
            apb.SubmitRulingRequest(
                game_id=game.game_id, command_id=uuid.uuid4().hex, ruling=ruling
            ),
            metadata=bearer(server.key),
        )
    with pytest.raises(grpc.RpcError) as refused:
        audit.SubmitRuling(
            apb.SubmitRulingRequest(game_id=game.game_id, command_id="y", ruling=note),
            metadata=bearer(tokens[0]),
        )
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    play_to_end(client, game.game_id, tokens, seed=2)
    report = audit.VerifyGame(apb.VerifyGameRequest(game_id=game.game_id)).report
    assert report.ok and report.over
    explained = audit.ExplainEvent(apb.ExplainEventRequest(game_id=game.game_id, seq=2))
    assert any("FL-RULING-REASON" in line for line in explained.lines)
    out = tmp_path / "game.json"
    runner = CliRunner()
    result = runner.invoke(
        cli, ["export", game.game_id, "-o", str(out), "--server", server.address]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["audit", "--all", "--server", server.address])
    assert result.exit_code != 0 and "organiser" in result.output  # verify-all is theirs
    result = runner.invoke(
        cli, ["audit", "--all", "--server", server.address, "--organiser-key", server.key]
    )
    assert result.exit_code == 0 and "1 games" not in result.output
    server.stop()
    (tmp_path / "games.duckdb").unlink()  # no server, no database: the file alone
    result = runner.invoke(cli, ["verify", str(out), "--json"])
    assert result.exit_code == 0, result.output
    verified = json.loads(result.stdout)["reports"][0]
    assert verified["ok"] and verified["states_checked"]
    assert verified["outcome"]["points"] == list(report.points)
    document = json.loads(out.read_text())
    assert document["server_seed"] == SEED.hex()
    assert [r["decoded"]["arbiter"]["reason"] for r in document["rows"][1:3]] == [
        "table talk",
        "slow play",
    ]
    document["result"]["points"][0] += 1
    out.write_text(json.dumps(document))
    result = runner.invoke(cli, ["verify", str(out)])
    assert result.exit_code == 1 and "score" in result.output


def test_after_the_end_anyone_may_replay_the_game_as_any_viewer(server: ThreadedServer) -> None:
    """While the game runs a spectator may not look as the arbiter or a seat; once the
    seed is revealed the record is public, so it may, and sees what that viewer saw."""
    client = stub(server.address)
    game = create(client, server.key, "bon-appetit", ["Ann", "Brian", "Celia"], seed=SEED)
    tokens = [t.token for t in game.seat_tokens]
    play_to_end(client, game.game_id, tokens, seed=3, stop_after=4)
    replay, _ = stubs(server.address)
    for wanted in ("arbiter", "seat:1"):
        with pytest.raises(grpc.RpcError) as refused:
            replay.GetStateAt(rpb.GetStateAtRequest(game_id=game.game_id, seq=3, viewer=wanted))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    play_to_end(client, game.game_id, tokens, seed=3)
    as_arbiter = replay.GetStateAt(
        rpb.GetStateAtRequest(game_id=game.game_id, seq=3, viewer="arbiter")
    )
    assert as_arbiter.viewer == "arbiter"
    assert all("hand" in s for s in as_dict(as_arbiter.event.view)["seats"])
    as_seat = [
        r.event
        for r in replay.StreamReplay(
            rpb.StreamReplayRequest(game_id=game.game_id, to_seq=3, viewer="seat:1"),
            metadata=bearer(tokens[2]),
        )
    ]
    # rows before the reveal stay as seat 1 saw them then: its own hand, not the others'
    assert [("hand" in s) for s in as_dict(as_seat[-1].view)["seats"]] == [False, True, False]
    # a range that holds no row is the caller's mistake, named, not the server's failure
    for first, last in ((3, 1), (2**63 - 1, 0)):
        with pytest.raises(grpc.RpcError) as empty:
            list(
                replay.StreamReplay(
                    rpb.StreamReplayRequest(game_id=game.game_id, from_seq=first, to_seq=last),
                    metadata=bearer(tokens[2]),
                )
            )
        assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "from_seq" in str(empty.value.details())


def test_fault_messages_of_a_running_game_are_the_arbiters_in_every_audit_rpc(
    server_here: ThreadedServer,
) -> None:
    """A fault's message may name hidden things: while the game runs only the arbiter
    reads it, whether it asks for one game or for all (the same rule decides both)."""
    server = server_here
    game_id, tokens = live_game(server, commands=4)
    db = server.running.db

    def tamper() -> None:
        assert isinstance(db.store, Store)  # the DuckDB file's own connection
        db.store.con.execute(
            "UPDATE events SET state_hash = repeat('0', 64) WHERE game_id = ? AND seq = 3",
            [game_id],
        )

    server.call(db.call(tamper))
    _, audit = stubs(server.address)
    request = apb.VerifyGameRequest(game_id=game_id)
    as_seat = audit.VerifyGame(request, metadata=bearer(tokens[0])).report
    as_arbiter = audit.VerifyGame(request, metadata=bearer(server.key)).report
    assert not as_seat.ok and not as_arbiter.ok and as_seat.first_bad_seq == 3
    assert [f.message for f in as_seat.faults] == [""] * len(as_arbiter.faults)
    assert all(f.message for f in as_arbiter.faults)
    every = audit.VerifyAllGames(apb.VerifyAllGamesRequest(), metadata=bearer(server.key))
    (found,) = [r.report for r in every if r.report.game_id == game_id]
    assert [f.message for f in found.faults] == [f.message for f in as_arbiter.faults]
