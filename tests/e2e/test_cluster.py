"""Many nodes behind nginx: the routing header clients send, and the one-command cluster
(scripts/cluster.py: PostgreSQL, feastlog nodes, nginx with deploy/feastlog.nginx.conf)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from collections import defaultdict
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from feastlog.cli.wire import (
    ROUTING_HEADER,
    new_game,
    open_blocking_channel,
    open_channel,
    play_with_bots,
)
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from tests.pgutil import REQUIRE_POSTGRES

ROOT = Path(__file__).resolve().parents[2]


class Recorder(pb_grpc.GameServiceServicer):
    """A GameService that only notes the routing header of each call."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    def note(self, method: str, context: grpc.ServicerContext) -> None:
        found = dict(context.invocation_metadata() or ()).get(ROUTING_HEADER)
        self.seen.append((method, None if found is None else str(found)))

    def CreateGame(self, request: Any, context: grpc.ServicerContext) -> pb.CreateGameResponse:
        self.note("CreateGame", context)
        return pb.CreateGameResponse(game_id="g_new")

    def GetView(self, request: Any, context: grpc.ServicerContext) -> pb.GetViewResponse:
        self.note("GetView", context)
        return pb.GetViewResponse(seq=1)

    def WatchGame(self, request: Any, context: grpc.ServicerContext) -> Any:
        self.note("WatchGame", context)
        yield pb.WatchGameResponse()


def test_calls_about_a_game_carry_its_routing_header() -> None:
    recorder = Recorder()  # type: ignore[abstract]  # the other methods are never called
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_GameServiceServicer_to_server(recorder, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        blocking = pb_grpc.GameServiceStub(open_blocking_channel(f"127.0.0.1:{port}"))
        blocking.GetView(pb.GetViewRequest(game_id="g_one"))
        blocking.CreateGame(pb.CreateGameRequest(game_kind="bon-appetit"))
        list(blocking.WatchGame(pb.WatchGameRequest(game_id="g_two")))

        async def asynchronous() -> None:
            async with open_channel(f"127.0.0.1:{port}") as channel:
                stub = pb_grpc.GameServiceStub(channel)
                await stub.GetView(pb.GetViewRequest(game_id="g_three"))
                await stub.CreateGame(pb.CreateGameRequest(game_kind="bon-appetit"))
                async for _ in stub.WatchGame(pb.WatchGameRequest(game_id="g_four")):
                    pass

        asyncio.run(asynchronous())
    finally:
        server.stop(None)
    assert recorder.seen == [
        ("GetView", "g_one"),
        ("CreateGame", None),  # no game yet: any node
        ("WatchGame", "g_two"),
        ("GetView", "g_three"),
        ("CreateGame", None),
        ("WatchGame", "g_four"),
    ]


def needs_cluster_programs() -> None:
    """Fail (under CI) or skip when PostgreSQL or nginx is not installed here."""
    missing = [
        what
        for what, there in (
            ("postgresql", any(Path("/usr/lib/postgresql").glob("*/bin/initdb"))),
            ("nginx", shutil.which("nginx") or Path("/usr/sbin/nginx").exists()),
        )
        if not there
    ]
    if missing:
        why = f"apt-get install {' '.join(missing)} (.ci/run does)"
        if os.environ.get(REQUIRE_POSTGRES):
            pytest.fail(why)
        pytest.skip(why)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def cluster(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cluster.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_one_command_starts_a_cluster_that_plays_through_nginx_and_stops(tmp_path: Path) -> None:
    needs_cluster_programs()
    folder = tmp_path / "cluster"
    # a folder relative to where it runs, as in the README (nginx and pg_ctl resolve
    # paths from folders of their own)
    started = cluster("up", "--folder", "cluster", "--nodes", "2", "--port", "0", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    state = json.loads((folder / "cluster.json").read_text())
    try:
        assert f"feastlog cluster on {state['address']}" in started.stdout
        key = (folder / "feastlog-organiser.key").read_text().strip()

        async def play() -> list[str]:
            async with open_channel(state["address"]) as channel:
                stub = pb_grpc.GameServiceStub(channel)
                games = []
                for i, kind in enumerate(("bon-appetit", "menu-masters", "picky-eaters")):
                    game = await new_game(stub, key, kind, ["Ann", "Brian", "Celia"])
                    tokens = [t.token for t in game.seat_tokens]
                    result = await play_with_bots(stub, game.game_id, tokens, i)
                    assert result.view["over"]
                    games.append(game.game_id)
                return games

        games = asyncio.run(play())
        served_by: dict[str, set[str]] = defaultdict(set)
        for line in (folder / "nginx" / "access.log").read_text().splitlines():
            game, node, *_ = line.split()
            served_by[game].add(node)
        nodes = {f"127.0.0.1:{port}" for _, port in state["nodes"]}
        assert all(len(served_by[g]) == 1 for g in games)  # each game stayed on its node
        assert set().union(*(served_by[g] for g in games)) <= nodes
    finally:
        stopped = cluster("down", "--purge", "--folder", str(folder))
    assert stopped.returncode == 0, stopped.stderr
    pids = [state["nginx_pid"], *(pid for pid, _ in state["nodes"])]
    assert not any(alive(pid) for pid in pids)
    assert not any(listening(port) for _, port in state["nodes"])
    assert not listening(state["postgres"]["port"])
    assert not (folder / "cluster.json").exists()
    assert "Error" not in (folder / "node-1.log").read_text()
