"""``feastlog tournament …`` through click's CliRunner against a real server (``--server``
with the organiser key), and ``feastlog verify`` of its export; the watch stream."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from tests.serverutil import ThreadedServer, bearer


def commands_on(server: ThreadedServer) -> Callable[..., tuple[int, str]]:
    """Run ``feastlog ARGS`` against ``server`` as its organiser: (exit code, output)."""
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        done = runner.invoke(
            cli, [*args, "--server", server.address, "--organiser-key", server.key]
        )
        return done.exit_code, done.output

    return run


def test_a_round_from_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "cup.duckdb", announce=False)
    run = commands_on(server)

    try:
        players = [a for n in ("Ann", "Bo", "Cy", "Di", "Ed", "Flo") for a in ("--player", n)]
        code, said = run(
            "tournament", "create", "--format", "rounds=1", "--format", "table_sizes=3", *players
        )
        assert code == 0, said
        tid = re.search(r"tournament (t_[0-9a-f]{16})", said)
        assert tid, said
        code, said = run("tournament", "pair", tid[1])
        assert code == 0 and "round 1 (proposed; swiss-cp-sat, ortools-cp-sat" in said, said
        code, said = run("tournament", "swap", tid[1], "Ann", "Ann", "--reason", "x")
        assert code == 4 and "TOUR-SWAP" in said, said  # refused, naming the rule
        code, said = run("tournament", "register", tid[1], "Ann")
        assert code == 4 and "TOUR-REGISTER-TWICE" in said, said
        code, said = run("tournament", "publish", tid[1], "--json")
        assert code == 0, said
        seats = json.loads(said)["seats"]
        assert len(seats) == 6 and all(s["seat_token"].startswith("seat_") for s in seats)
        code, said = run("tournament", "publish", tid[1])  # its answer lost: published again
        assert code == 0 and "published already: the same seat tokens" in said, said
        assert all(s["seat_token"] in said for s in seats)
        assert run("tournament", "start", tid[1], "--minutes", "30")[0] == 0
        code, said = run(
            "tournament", "extend", tid[1], "--minutes", "5", "--table", "2", "--reason", "spill"
        )
        assert code == 0, said
        code, said = run("tournament", "penalty", tid[1], "Bo", "warning", "--reason", "late")
        assert code == 0, said
        code, said = run("tournament", "call", tid[1])  # both tables closed as they stand
        assert code == 0 and said.count("points") == 2, said
        assert run("tournament", "end", tid[1])[0] == 0
        code, said = run("tournament", "standings", tid[1])
        assert code == 0 and "tiebreaks: game_points,opponents_average,wins" in said, said
        code, said = run("tournament", "standings", tid[1], "--at", "3", "--json")
        assert code == 0 and int(json.loads(said)["seq"]) == 3, said  # (int64: a JSON string)
        code, said = run("standings", tid[1])  # the games' standings: its two games alone
        assert code == 0 and "2 games finished, 0 still running" in said, said
        code, said = run("tournament", "export", tid[1], "-o", str(tmp_path / "cup.json"))
        assert code == 0, said
        stream = pb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
        request = pb.WatchTournamentRequest(tournament_id=tid[1], from_seq=1)
        rows = list(stream.WatchTournament(request, metadata=bearer(None), timeout=20))
    finally:
        server.stop()
    assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
    assert rows[-1].kind == "seed_reveal" and rows[-1].tournament.ended
    actions = [r.action for r in rows if r.kind == "command"]
    for action in (
        "register",
        "propose",
        "publish",
        "start_clock",
        "extend_clock",
        "penalty",
        "call_time",
        "result",
        "end",
    ):
        assert action in actions, action
    runner = CliRunner()
    done = runner.invoke(cli, ["verify", str(tmp_path / "cup.json")])
    assert done.exit_code == 0, done.output
    assert "OK" in done.output and "re-derived with the same solver version" in done.output
    rules = runner.invoke(cli, ["rules", "tournament"])
    assert rules.exit_code == 0 and "TOUR-PAIR-UNFINISHED" in rules.output


def test_a_registration_counts_the_players_still_in(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "cup.duckdb", announce=False)
    run = commands_on(server)

    try:
        players = [a for n in ("Ann", "Bo", "Cy") for a in ("--player", n)]
        code, said = run("tournament", "create", "--format", "table_sizes=3", *players)
        tid = re.search(r"tournament (t_[0-9a-f]{16})", said)
        assert code == 0 and tid, said
        code, said = run("tournament", "register", tid[1], "Di")
        assert (code, said) == (0, "Di registered: 4 players\n")
        code, said = run("tournament", "drop", tid[1], "Bo", "--reason", "ill")
        assert code == 0, said
        code, said = run("tournament", "register", tid[1], "Nia")  # Bo is no longer in
        assert (code, said) == (0, "Nia registered: 4 players (1 dropped)\n")
    finally:
        server.stop()
