"""A duplicate round's tables are dealt from one seed: a table that ended while another
still runs is held back on every read of the tournament, as it is on the game's own
reads (``replay.record.visibility.Release``). Through a real ``feastlog serve`` process: its
tournament export, without credentials or with a seat's token, neither carries the
ended table's record nor anything whose sha256 is the running table's seed commitment."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import grpc
import pytest

from feastlog.replay.tournament.export import verify_tournament
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from tests.grpc.test_tournament_event import wait_complete
from tests.serverutil import ProcessServer, bearer, play_to_end, stub, watch_all

KEY = "org_tournament-held-back-organiser-key-0123456789"
FORMAT = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "2", "duplicate": "true"}
PLAYERS = [f"Player {chr(65 + i)}" for i in range(8)]


def hex_strings(document: object) -> set[str]:
    """Every run of 64 hex digits anywhere in the document (seeds, salts, hashes)."""
    return set(re.findall(r"[0-9a-f]{64}", json.dumps(document)))


def test_a_duplicate_rounds_ended_table_is_held_back_from_the_tournament_export(
    tmp_path: Path,
) -> None:
    server = ProcessServer(tmp_path / "cup.duckdb", KEY)
    try:
        games = stub(server.address)
        channel = grpc.insecure_channel(server.address)
        tour = pb_grpc.TournamentServiceStub(channel)
        replays = rpb_grpc.ReplayServiceStub(channel)
        org = bearer(KEY)
        tid = tour.CreateTournament(
            pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=org
        ).tournament.tournament_id
        tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
        published = tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
        tokens: dict[str, list[str]] = {}
        for seat in published.seats:
            tokens.setdefault(seat.game_id, []).append(seat.seat_token)
        ended, running = list(tokens)
        play_to_end(games, ended, tokens[ended], seed=1)
        export = pb.ExportTournamentRequest(tournament_id=tid)

        # the game's own export is refused, as before
        with pytest.raises(grpc.RpcError) as refused:
            replays.ExportRecord(rpb.ExportRecordRequest(game_id=ended))
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED

        state = tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
        assert state.rounds[0].tables[0].finished  # its result is public at once
        commitment = watch_all(games, running, None, 1)[0].genesis.seed_commitment
        for who in ((), bearer(tokens[running][0]), bearer(tokens[ended][0])):
            document = json.loads(tour.ExportTournament(export, metadata=who).document)
            assert document["games"] == []
            assert document["held_back"] == [ended]
            found = hex_strings(document)
            assert not any(
                hashlib.sha256(bytes.fromhex(h)).hexdigest() == commitment for h in found
            )
            report = verify_tournament(json.dumps(document))
            assert report.ok, report.faults
            assert any("held back until every table of round 1" in c for c in report.checks)

        # the arbiter sees it whole: its seed is the running table's deal
        whole = json.loads(tour.ExportTournament(export, metadata=org).document)
        assert whole["held_back"] == []
        (record,) = whole["games"]
        seed = record["server_seed"]
        assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment

        # once the last table of the deal ends, the record is everyone's
        play_to_end(games, running, tokens[running], seed=2)
        wait_complete(tour, tid)
        document = json.loads(tour.ExportTournament(export).document)
        assert document["held_back"] == []
        assert sorted(g["game_id"] for g in document["games"]) == sorted(tokens)
        assert verify_tournament(json.dumps(document)).ok

        # a file may not hide a record as held back once nothing of its deal runs
        forged = dict(document, held_back=[ended])
        forged["games"] = [g for g in document["games"] if g["game_id"] != ended]
        faults = verify_tournament(json.dumps(forged)).faults
        assert any("held back, though no other game of its deal is running" in f for f in faults)
    finally:
        server.kill()
