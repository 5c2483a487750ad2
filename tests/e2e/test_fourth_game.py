"""High Card (tests/highcard.py), a fourth game registered from the tests, runs through a
real server, the audit, the export and its verification with no server, the projection
and the CLI, with nothing in service/ or cli/ naming it.  (The contract tests and every
test over the registered kinds cover it too.)"""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay.games import fold
from feastlog.replay.games.engine import RuleViolation, SetupRefused
from feastlog.replay.record.export import verify_document
from feastlog.replay.record.rng import Rng
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests import highcard
from tests.serverutil import (
    ThreadedServer,
    bearer,
    create,
    error_info,
    play_to_end,
    stub,
    view_of,
)

ROOT = Path(__file__).resolve().parents[2]


def test_nothing_in_service_or_cli_names_the_fourth_game() -> None:
    for path in [*(ROOT / "service").rglob("*.py"), *(ROOT / "cli").rglob("*.py")]:
        text = path.read_text().lower()
        assert "high-card" not in text and "highcard" not in text, path


def test_high_card_through_the_server_the_audit_the_export_and_the_cli(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "games.duckdb")
    try:
        client = stub(server.address)
        with pytest.raises(grpc.RpcError) as bad:
            create(client, server.key, "high-card", ["Ann", "Bob"], wins="middle")
        info = error_info(bad.value)
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (info.metadata["field"], info.metadata["rule_id"]) == ("options", "HC-OPTIONS")
        game = create(client, server.key, "high-card", ["Ann", "Bob", "Cy"], bytes([4]) * 32)
        tokens = [t.token for t in game.seat_tokens]
        take = highcard.take_slot(1)
        out_of_turn = pb.SubmitCommandRequest(game_id=game.game_id, command_id="early")
        out_of_turn.command.picky_eaters.CopyFrom(take)
        with pytest.raises(grpc.RpcError) as refused:
            client.SubmitCommand(out_of_turn, metadata=bearer(tokens[1]))
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_info(refused.value).metadata["rule_id"] == "HC-TURN"
        sent = play_to_end(client, game.game_id, tokens, seed=4)
        final = view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))
        assert sent == 3 * highcard.HAND and final["over"] and final["winners"]
        audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
        report = audit.VerifyGame(apb.VerifyGameRequest(game_id=game.game_id)).report
        assert report.ok and report.over and list(report.winners) == final["winners"]
        explained = audit.ExplainEvent(apb.ExplainEventRequest(game_id=game.game_id, seq=2))
        assert any("HC-TAKE" in line for line in explained.lines)
        replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
        exported = replay.ExportRecord(rpb.ExportRecordRequest(game_id=game.game_id))
        assert exported.complete and verify_document(exported.content.decode()).ok
    finally:
        server.stop()
    stats = CliRunner().invoke(cli, ["stats", "--db", str(tmp_path / "games.duckdb"), "--json"])
    assert stats.exit_code == 0, stats.output
    (line,) = json.loads(stats.output)
    assert line["game_kind"] == "high-card" and line["figure"] == "average winning card"
    assert line["games"] == 1 and line["value"] > 0
    rules = CliRunner().invoke(cli, ["rules", "high-card"])
    assert rules.exit_code == 0 and "HC-TAKE" in rules.output


@pytest.mark.parametrize("wins", ["highest", "lowest"])
def test_HC_DEAL_HC_SEATS_HC_HIGHEST_HC_LOWEST_HC_END_a_seeded_game(wins: str) -> None:
    """HC-DEAL: 8 cards a seat and 2 more lie face down; HC-SEATS: 2 to 6 seats;
    HC-HIGHEST: the seat holding the highest card wins, HC-LOWEST: with wins=lowest the one
    holding the lowest; HC-END: once every seat holds 8, nothing more is taken."""
    engine, deck = highcard.ENGINE, highcard.load_pack(highcard.PACK)
    with pytest.raises(SetupRefused) as seats:
        engine.setup(tuple("ABCDEFG"), {}, deck, Rng(bytes(32)))
    assert seats.value.rule_id == "HC-SEATS" and seats.value.field == "players"
    state, facts = engine.setup(("Ann", "Bob", "Cy"), {"wins": wins}, deck, Rng(bytes(32)))
    assert len(state.slots) == facts[0]["slots"] == 3 * highcard.HAND + 2
    for slot in range(1, 3 * highcard.HAND + 1):
        (seat,) = engine.to_act(state)
        state, facts = fold.play(engine, state, seat, highcard.take_slot(slot))
    best = [(min if wins == "lowest" else max)(cards) for cards in state.held]
    winner = best.index((min if wins == "lowest" else max)(best))
    assert engine.outcome(state).winners == (winner,) == tuple(facts[-1]["winners"])
    with pytest.raises(RuleViolation) as after:
        fold.play(engine, state, 0, highcard.take_slot(3 * highcard.HAND + 1))
    assert after.value.rule_id == "HC-END"
