"""GetGame: one game's line of the game list, from a real server and, through the CLI,
from a file no server holds (the in-process channel), the same line either way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from feastlog.v1 import game_service_pb2 as pb
from tests.serverutil import ThreadedServer, bearer, create, error_info, play_to_end, stub


def feastlog(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``feastlog ARGS`` in ``folder`` (its database is the default one there)."""
    return subprocess.run(
        [sys.executable, "-m", "feastlog.cli.main", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_get_game_answers_a_games_line_of_the_list(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        client = stub(server.address)
        running = create(client, server.key, "bon-appetit", ["Ann", "Bo"], bytes([3]) * 32)
        done = create(client, server.key, "menu-masters", ["Cy", "Di"], bytes([4]) * 32)
        play_to_end(client, done.game_id, [t.token for t in done.seat_tokens], seed=4)
        waiting = client.CreateGame(
            pb.CreateGameRequest(game_kind="bon-appetit", players=["Ed", "Flo"], seat_entropy=True),
            metadata=bearer(server.key),
        )
        listed = {g.game_id: g for g in client.ListGames(pb.ListGamesRequest()).games}
        for game_id in (running.game_id, done.game_id):
            found = client.GetGame(pb.GetGameRequest(game_id=game_id)).game  # no credentials
            assert found == listed[game_id]
        assert listed[done.game_id].over and not listed[running.game_id].over
        assert listed[running.game_id].last_seq == 1 and listed[done.game_id].last_seq > 2

        with pytest.raises(grpc.RpcError) as unknown:
            client.GetGame(pb.GetGameRequest(game_id="g_nothing"))
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as unnamed:
            client.GetGame(pb.GetGameRequest())
        assert unnamed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_info(unnamed.value).metadata["field"] == "game_id"
        with pytest.raises(grpc.RpcError) as early:  # told so, as every read of it is
            client.GetGame(pb.GetGameRequest(game_id=waiting.game_id))
        assert early.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_info(early.value).reason == "WAITING_FOR_SEAT_ENTROPY"
    finally:
        server.stop()

    # the same line offline, through the CLI on the file no server holds now
    line = feastlog(tmp_path, "games", running.game_id, "--json")
    assert line.returncode == 0, line.stderr
    (offline,) = json.loads(line.stdout)
    assert offline["game_id"] == running.game_id and offline["players"] == ["Ann", "Bo"]
    assert offline["last_seq"] == 1 and not offline["over"]
    assert offline["created_at"] == listed[running.game_id].created_at
    refused = feastlog(tmp_path, "games", "g_nothing")
    assert refused.returncode == 4 and "no game 'g_nothing'" in refused.stderr
    mixed = feastlog(tmp_path, "games", running.game_id, "--kind", "bon-appetit")
    assert mixed.returncode == 2 and "GAME_ID names one game" in mixed.stderr
