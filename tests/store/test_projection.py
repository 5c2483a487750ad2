"""The outcomes projection, kept current by the writer, equals a rebuild from the log."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import duckdb
import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay.record.history import refold
from feastlog.replay.tournament.outcomes import exact, result_of, standings
from feastlog.service.store import projection
from feastlog.service.store.duckdb import Store, outcomes
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc
from tests.serverutil import ThreadedServer, bearer, create, play_to_end, stub

PLAYERS = {
    "bon-appetit": ["Ann", "Brian", "Celia"],
    "menu-masters": ["Ann", "Brian"],
    "picky-eaters": ["Ann", "Brian", "Celia", "Dev"],
}
CUP = "cup"


def rule(address: str, key: str, game_id: str, **ruling: Any) -> None:
    """An arbiter ruling through the AuditService."""
    stub_ = apb_grpc.AuditServiceStub(grpc.insecure_channel(address))
    request = apb.SubmitRulingRequest(
        game_id=game_id,
        command_id=uuid.uuid4().hex,
        ruling=record_pb2.ArbiterCommand(reason="table dispute", **ruling),
    )
    stub_.SubmitRuling(request, metadata=bearer(key))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A file with every kind of game end and ruling, and what the server said of it."""
    db = tmp_path_factory.mktemp("proj") / "games.duckdb"
    server = ThreadedServer(db)
    try:
        client = stub(server.address)

        def new(kind: str, names: list[str], seed: int) -> tuple[str, list[str]]:
            request = pb.CreateGameRequest(
                game_kind=kind, players=names, seed=bytes([seed]) * 32, tournament_id=CUP
            )
            reply = client.CreateGame(request, metadata=bearer(server.key))
            return reply.game_id, [t.token for t in reply.seat_tokens]

        for i, (kind, names) in enumerate(PLAYERS.items()):
            for k in range(2):  # natural ends
                game_id, tokens = new(kind, names, i * 2 + k + 1)
                play_to_end(client, game_id, tokens, seed=k)
        ba = PLAYERS["bon-appetit"]
        voided, tokens = new("bon-appetit", ba, 20)
        play_to_end(client, voided, tokens, seed=1, stop_after=5)
        rule(server.address, server.key, voided, void_game=record_pb2.VoidGame())
        closed, tokens = new("menu-masters", PLAYERS["menu-masters"], 21)
        play_to_end(client, closed, tokens, seed=1, stop_after=5)
        rule(server.address, server.key, closed, close_game=record_pb2.CloseGame())
        ruled, tokens = new("picky-eaters", PLAYERS["picky-eaters"], 22)
        play_to_end(client, ruled, tokens, seed=1, stop_after=3)
        rule(server.address, server.key, ruled, forfeit=record_pb2.Forfeit(seat=0))
        adjust = record_pb2.ScoreAdjustment(seat=1, points=5)
        rule(server.address, server.key, ruled, score_adjustment=adjust)
        rule(server.address, server.key, ruled, note=record_pb2.Note(text="clock stopped"))
        play_to_end(client, ruled, tokens, seed=1)
        create(client, server.key, "bon-appetit", ["Ann", "Brian"])  # running: left out
        tournaments = tpb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
        said = {
            "standings": tournaments.GetStandings(tpb.GetStandingsRequest(tournament_id=CUP)),
            "stats": tournaments.GetStats(tpb.GetStatsRequest()),
        }
    finally:
        server.stop()
    return db, said


def tables_of(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[Any, ...]]]:
    """Every projection table's rows, sorted."""
    return {
        name: sorted(con.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
        for name in projection.tables()
    }


def test_the_projection_kept_by_the_writer_equals_a_full_rebuild(
    served: tuple[Path, dict[str, Any]],
) -> None:
    db, _ = served
    store = Store(str(db), read_only=True)
    try:
        kept = tables_of(store.con)
        rebuilt = duckdb.connect()
        count = outcomes.rebuild(rebuilt, (projection.rows_of_stored(g) for g in store.scan()))
    finally:
        store.close()
    assert count == 9  # six natural ends, a void, a close, a game with rulings
    assert kept == tables_of(rebuilt)
    games = {r[0]: r for r in kept["outcome_games"]}
    scored = [r for r in games.values() if r[6]]
    assert len(scored) == 7  # the voided and the closed-before-its-end games have no result
    assert all(r[7] for r in scored)  # every scored game has winners
    assert kept["outcome_bids"] and kept["outcome_menus"] and kept["outcome_recipes"]
    forfeits = [r for r in kept["outcome_seats"] if r[8]]
    assert len(forfeits) == 1 and not forfeits[0][7]  # a forfeited seat never wins


def test_standings_and_stats_are_sql_the_same_online_and_offline(
    served: tuple[Path, dict[str, Any]],
) -> None:
    db, said = served
    store = Store(str(db), read_only=True)
    try:
        folded = [refold(g.rows, g.server_seed, g.pack_body) for g in store.scan()]
    finally:
        store.close()
    finished = [f for f in folded if f.rows[-1].kind == "seed_reveal"]
    expected = standings(result_of(f.genesis, f.tables[-1]) for f in finished)
    online = said["standings"]
    assert [(s.name, s.games, s.wins_exact, s.points) for s in online.standings] == [
        (s.name, s.games, exact(s.wins), s.points) for s in expected
    ]
    assert (online.games_finished, online.games_running) == (9, 0)
    offline = CliRunner().invoke(cli, ["standings", CUP, "--db", str(db), "--json"])
    assert offline.exit_code == 0, offline.output
    lines = json.loads(offline.output)["standings"]
    assert [(s["name"], s["wins_exact"]) for s in lines] == [
        (s.name, s.wins_exact) for s in online.standings
    ]
    stats = CliRunner().invoke(cli, ["stats", "--db", str(db), "--json"])
    assert stats.exit_code == 0, stats.output
    found = {k["game_kind"]: k for k in json.loads(stats.output)}
    for kind in said["stats"].kinds:
        assert found[kind.game_kind]["games"] == kind.games
        assert found[kind.game_kind]["win_rate_by_seat"] == pytest.approx(
            list(kind.win_rate_by_seat)
        )
        assert found[kind.game_kind]["value"] == pytest.approx(kind.value)
    assert {k: v["games"] for k, v in found.items()} == {
        "bon-appetit": 2,
        "menu-masters": 2,
        "picky-eaters": 3,
    }


def test_projection_rebuild_over_several_workers_gives_the_same_tables(
    served: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    db, _ = served
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    store = Store(str(copy), read_only=True)
    before = tables_of(store.con)
    store.close()
    result = CliRunner().invoke(cli, ["projection", "rebuild", "--db", str(copy), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert "projected 9 finished games of 10" in result.output
    store = Store(str(copy), read_only=True)
    try:
        assert tables_of(store.con) == before
    finally:
        store.close()
