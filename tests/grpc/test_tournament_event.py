"""A whole 16-player, 4-round Bon Appetit! tournament played by bots through a real
``feastlog serve`` process: a swap, a drop after round 2, a late entry, a warning by a
named arbiter, a game loss, a clock extension, time called on one unfinished table.
Exported, verified from the file alone, and tampered five ways that verify catches."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import grpc
import pytest

from feastlog.replay.record.rows import COMMAND, Row, seal
from feastlog.replay.tournament.export import verify_tournament
from feastlog.replay.tournament.fold import apply, begin, state_hash
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as rpb
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from tests.serverutil import ProcessServer, bearer, error_info, play_to_end, stub

KEY = "org_tournament-event-organiser-key-0123456789"
PLAYERS = [f"Player {chr(65 + i)}" for i in range(16)]
FORMAT = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "4", "at_time": "close"}


def wait_complete(tour: pb_grpc.TournamentServiceStub, tid: str) -> pb.TournamentState:
    """The tournament once its current round is complete (results arrive as games end)."""
    for _ in range(200):
        state = tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
        if state.rounds[-1].complete:
            return state
        time.sleep(0.05)
    raise AssertionError(f"round {len(state.rounds)} never completed: {state.rounds[-1]}")


def run_event(tmp_path: Path) -> tuple[dict[str, Any], pb.TournamentState]:
    """Play the event; its export document and final state."""
    server = ProcessServer(tmp_path / "cup.duckdb", KEY)
    try:
        games = stub(server.address)
        channel = grpc.insecure_channel(server.address)
        tour = pb_grpc.TournamentServiceStub(channel)
        admin = adpb_grpc.AdminServiceStub(channel)
        org = bearer(KEY)
        judge = admin.AddArbiter(adpb.AddArbiterRequest(name="judge-kim"), metadata=org).key
        made = tour.CreateTournament(
            pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=org
        ).tournament
        tid = made.tournament_id
        for number in range(1, 5):
            if number == 3:
                drop = pb.DropPlayerRequest(tournament_id=tid, name="Player P", reason="went home")
                tour.DropPlayer(drop, metadata=org)
                late = pb.RegisterPlayerRequest(tournament_id=tid, name="Late Comer")
                tour.RegisterPlayer(late, metadata=org)
            proposed = tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
            if number == 1:
                first, second = proposed.tournament.rounds[-1].tables[0].players[:2]
                swap = pb.SwapPlayersRequest(
                    tournament_id=tid,
                    first=first,
                    second=second,
                    reason="a player asked for seat 0",
                )
                tour.SwapPlayers(swap, metadata=org)
            published = tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
            tour.StartClock(pb.StartClockRequest(tournament_id=tid), metadata=org)
            if number == 2:
                extend = pb.ExtendClockRequest(
                    tournament_id=tid, table=1, minutes=5, reason="a judge call at table 1"
                )
                tour.ExtendClock(extend, metadata=org)
                warn = pb.AddPenaltyRequest(
                    tournament_id=tid, name="Player A", penalty="warning", reason="slow play"
                )
                tour.AddPenalty(warn, metadata=bearer(judge))
            tokens: dict[str, list[str]] = {}
            for seat in published.seats:
                tokens.setdefault(seat.game_id, []).append(seat.seat_token)
            for t, (game_id, seats) in enumerate(tokens.items()):
                unfinished = number == 4 and t == 0
                play_to_end(
                    games,
                    game_id,
                    seats,
                    seed=10 * number + t,
                    stop_after=6 if unfinished else None,
                )
            if number == 4:
                tour.CallTime(pb.CallTimeRequest(tournament_id=tid), metadata=org)
            state = wait_complete(tour, tid)
            if number == 3:
                loser = state.rounds[-1].tables[1].players[0]
                loss = pb.AddPenaltyRequest(
                    tournament_id=tid, name=loser, penalty="game_loss", reason="marked cards"
                )
                tour.AddPenalty(loss, metadata=bearer(judge))
        with pytest.raises(grpc.RpcError) as beyond:
            tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
        assert error_info(beyond.value).metadata["rule_id"] == "TOUR-ROUNDS"
        tour.EndTournament(pb.EndTournamentRequest(tournament_id=tid), metadata=org)
        final = tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
        document = tour.ExportTournament(pb.ExportTournamentRequest(tournament_id=tid)).document
    finally:
        server.kill()
    return json.loads(document), final


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], pb.TournamentState]:
    return run_event(tmp_path_factory.mktemp("event"))


def test_the_event_runs_and_its_export_verifies(
    event: tuple[dict[str, Any], pb.TournamentState],
) -> None:
    document, final = event
    assert final.ended and len(final.rounds) == 4
    assert [len(r.tables) for r in final.rounds] == [4, 4, 4, 4]
    assert all(len(t.players) == 4 for r in final.rounds for t in r.tables)
    dropped = {p.name: p for p in final.players}["Player P"]
    assert dropped.dropped and dropped.last_round == 2
    played = {s.name: s.played for s in final.standings}
    assert played["Player P"] == 2 and played["Late Comer"] == 2
    assert final.rounds[1].tables[0].minutes == final.rounds[1].minutes + 5
    assert final.rounds[3].called and final.rounds[3].tables[0].closed
    assert [p.penalty for p in final.penalties] == ["warning", "game_loss"]
    assert final.penalties[0].by == "judge-kim"
    report = verify_tournament(json.dumps(document))
    assert report.ok, report.faults
    assert report.games_verified == 16
    assert sum("re-derived with the same solver version" in c for c in report.checks) == 4


def test_the_standings_are_the_games_points_by_place(
    event: tuple[dict[str, Any], pb.TournamentState],
) -> None:
    """The standings computed here, independently, from the games' records in the file:
    4/2/1/0 by place (ties share), the game loss scoring 0, game points summed."""
    _, final = event
    by_place = [4, 2, 1, 0]
    expected: dict[str, Fraction] = {p.name: Fraction(0) for p in final.players}
    game_points: dict[str, int] = dict.fromkeys(expected, 0)
    lost = {(p.name, p.round) for p in final.penalties if p.penalty == "game_loss"}
    for round_ in final.rounds:
        for table in round_.tables:
            places = list(table.places)
            for seat, name in enumerate(table.players):
                place, sharing = places[seat], places.count(places[seat])
                share = Fraction(sum(by_place[place - 1 : place - 1 + sharing]), sharing)
                expected[name] += 0 if (name, round_.round) in lost else share
                game_points[name] += table.points[seat]
    assert lost and all(expected[n] >= 0 for n in expected)
    for line in final.standings:
        assert exact_value(line.match_points) == expected[line.name], line
        assert line.game_points == game_points[line.name]
    order = [(-expected[s.name], -game_points[s.name]) for s in final.standings]
    assert order == sorted(order)


def exact_value(text: str) -> Fraction:
    """``3``, ``1/2`` or ``3 1/2`` as a number."""
    return sum((Fraction(part) for part in text.split(" ")), Fraction(0))


Edit = Callable[[rpb.TournamentCommand], str]  # "kept", "changed" (in place) or "dropped"


def resealed(document: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """The document with its commands edited (changed in place, or their rows dropped)
    and every row sealed again from the revealed seed (seqs, state hashes, commitments,
    hashes): a forger's whole new chain, which only the pairings and the games can catch."""
    forged = json.loads(json.dumps(document))
    seed = bytes.fromhex(forged["server_seed"])
    genesis = record_pb2.Genesis.FromString(bytes.fromhex(forged["rows"][0]["body"]))
    state, prev, kept, edits = begin(genesis), forged["rows"][0]["hash"], [forged["rows"][0]], 0
    for entry in forged["rows"][1:]:
        body = bytes.fromhex(entry["body"])
        if entry["kind"] == COMMAND:
            command = rpb.TournamentCommand.FromString(body)
            done = edit(command)
            edits += done != "kept"
            if done == "dropped":
                continue
            body = command.SerializeToString(deterministic=True)
            state = apply(state, command)
        seq = len(kept) + 1
        row = Row(
            genesis.game_id,
            seq,
            entry["kind"],
            entry["actor"],
            entry["command_id"],
            body,
            entry["recorded_at"],
            prev,
            "",
            state_hash(state),
        )
        row = seal(row, prev, 2, seed)
        entry.update(
            seq=seq,
            body=body.hex(),
            prev_hash=row.prev_hash,
            hash=row.hash,
            state_hash=row.state_hash,
            commitment=row.commitment,
        )
        kept.append(entry)
        prev = row.hash
    assert edits
    forged["rows"] = kept
    return forged


def hidden_swap(document: dict[str, Any]) -> Edit:
    """Round 1's proposal rewritten as the tables after the organiser's swap, and the swap
    row dropped: the games and results still match, the derivation does not."""
    published = {}
    swap = next(e["decoded"]["swap"] for e in document["rows"] if "swap" in e.get("decoded", {}))
    published["pair"] = (swap["first"], swap["second"])

    def edit(command: rpb.TournamentCommand) -> str:
        action = command.WhichOneof("action")
        if action == "swap":
            return "dropped"
        if action == "propose" and command.propose.round == 1:
            first, second = published["pair"]
            for table in command.propose.tables:
                names = list(table.players)
                swapped = [second if n == first else first if n == second else n for n in names]
                del table.players[:]
                table.players.extend(swapped)
            return "changed"
        return "kept"

    return edit


def better_result() -> Edit:
    """The first result's first seat given 10 more points."""
    done: list[bool] = []

    def edit(command: rpb.TournamentCommand) -> str:
        if command.WhichOneof("action") != "result" or done:
            return "kept"
        command.result.points[0] += 10
        done.append(True)
        return "changed"

    return edit


def test_five_tamperings_fail_verification(
    event: tuple[dict[str, Any], pb.TournamentState],
) -> None:
    document, _ = event

    def faults(forged: dict[str, Any]) -> list[str]:
        report = verify_tournament(json.dumps(forged))
        assert not report.ok
        return report.faults

    edited = json.loads(json.dumps(document))  # 1. a result's points edited in place
    row = next(r for r in edited["rows"] if r.get("decoded", {}).get("result"))
    command = rpb.TournamentCommand.FromString(bytes.fromhex(row["body"]))
    command.result.points[0] += 1
    row["body"] = command.SerializeToString(deterministic=True).hex()
    assert any("commitment" in f for f in faults(edited))

    cut = json.loads(json.dumps(document))  # 2. the warning's row deleted
    cut["rows"] = [r for r in cut["rows"] if "penalty" not in r.get("decoded", {})]
    assert any("absent" in f or "links" in f for f in faults(cut))

    forged = resealed(document, hidden_swap(document))  # 3. the swap hidden in the proposal
    found = faults(forged)
    assert [f for f in found if "TOUR-PAIR-DERIVED" in f and "round 1" in f] == found, found

    forged = resealed(document, better_result())  # 4. a result improved, resealed
    assert any("is not the record's" in f for f in faults(forged))

    game = json.loads(json.dumps(document))  # 5. a game's record missing from the file
    game["games"] = game["games"][1:]
    assert any("record is missing" in f for f in faults(game))

    seed = json.loads(json.dumps(document))  # (and 6: another seed claimed in the header)
    seed["server_seed"] = "00" * 32
    assert any("server_seed" in f for f in faults(seed))


MENU_FORMAT = {"game_kind": "menu-masters", "table_sizes": "3-5", "rounds": "3"}


def test_a_menu_masters_event_played_by_bots_verifies(tmp_path: Path) -> None:
    """12 players, 3 rounds of Menu Masters: each table plays a few dozen commands before
    time is called (tables closed as they stand, scored from their points), one table of
    round 1 is extended, a player drops after round 2, one enters late, one is warned."""
    server = ProcessServer(tmp_path / "menu.duckdb", KEY)
    try:
        games = stub(server.address)
        tour = pb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
        org = bearer(KEY)
        names = [f"Chef {i:02d}" for i in range(12)]
        made = tour.CreateTournament(
            pb.CreateTournamentRequest(format=MENU_FORMAT, players=names), metadata=org
        ).tournament
        tid = made.tournament_id
        for number in (1, 2, 3):
            if number == 3:
                drop = pb.DropPlayerRequest(tournament_id=tid, name="Chef 05", reason="ill")
                tour.DropPlayer(drop, metadata=org)
                late = pb.RegisterPlayerRequest(tournament_id=tid, name="Chef Late")
                tour.RegisterPlayer(late, metadata=org)
            tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
            published = tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
            tour.StartClock(pb.StartClockRequest(tournament_id=tid, minutes=30), metadata=org)
            if number == 1:
                extend = pb.ExtendClockRequest(
                    tournament_id=tid, table=2, minutes=3, reason="late start"
                )
                tour.ExtendClock(extend, metadata=org)
                warn = pb.AddPenaltyRequest(
                    tournament_id=tid, name="Chef 00", penalty="warning", reason="phone out"
                )
                tour.AddPenalty(warn, metadata=org)
            tokens: dict[str, list[str]] = {}
            for seat in published.seats:
                tokens.setdefault(seat.game_id, []).append(seat.seat_token)
            for t, (game_id, seats) in enumerate(tokens.items()):
                play_to_end(games, game_id, seats, seed=number * 5 + t, stop_after=24)
            tour.CallTime(pb.CallTimeRequest(tournament_id=tid), metadata=org)
            state = wait_complete(tour, tid)
            assert all(t.closed for t in state.rounds[-1].tables)
            assert sorted(len(t.players) for t in state.rounds[-1].tables) == [4, 4, 4]
        tour.EndTournament(pb.EndTournamentRequest(tournament_id=tid), metadata=org)
        final = tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
        document = tour.ExportTournament(pb.ExportTournamentRequest(tournament_id=tid)).document
    finally:
        server.kill()
    assert {p.name: p.last_round for p in final.players}["Chef 05"] == 2
    assert {s.name: s.played for s in final.standings}["Chef Late"] == 1
    assert final.rounds[0].tables[1].minutes == 33 and final.rounds[0].tables[0].minutes == 30
    report = verify_tournament(document)
    assert report.ok, report.faults
    assert report.games_verified == 9
    forged = json.loads(document)  # a closed table's record said to have ended otherwise
    forged["games"] = forged["games"][:-1]
    assert not verify_tournament(json.dumps(forged)).ok
