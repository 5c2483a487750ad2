"""A client in another language (Node.js, @grpc/grpc-js) speaks to the service from the protos.

It reads typed views and facts (proto/feastlog/v1/*_view.proto), decodes a refusal's
google.rpc.ErrorInfo with the protos vendored in third_party/googleapis, and plays a legal
bid. It goes through nginx (deploy/feastlog.nginx.conf), as clients of many nodes do, and
sends each game's routing header. CI installs @grpc/grpc-js, @grpc/proto-loader,
protobufjs and nginx and names the node folder in FEASTLOG_NODE_MODULES; where that is not
set, the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import grpc
import pytest

from feastlog.cli.wire import as_dict
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from scripts.cluster import free_port, start_nginx, stop_process
from tests.serverutil import ThreadedServer, bearer, stub

ROOT = Path(__file__).resolve().parents[2]
MODULES = os.environ.get("FEASTLOG_NODE_MODULES", "")
GOOGLEAPIS = ROOT / "third_party" / "googleapis"


@pytest.mark.skipif(not MODULES, reason="FEASTLOG_NODE_MODULES not set (CI sets it)")
def test_a_node_client_reads_typed_views_and_rich_errors_and_plays(tmp_path: Path) -> None:
    assert shutil.which("node"), "FEASTLOG_NODE_MODULES is set but there is no node"
    script = tmp_path / "client.mjs"
    script.write_text((ROOT / "tests" / "js" / "client.mjs").read_text())
    (tmp_path / "node_modules").symlink_to(Path(MODULES) / "node_modules")
    server = ThreadedServer(tmp_path / "games.duckdb")
    front = free_port()
    nginx = start_nginx(tmp_path / "nginx", front, [server.running.port])
    try:
        done = subprocess.run(
            [
                "node",
                str(script),
                f"127.0.0.1:{front}",
                server.key,
                str(ROOT / "proto"),
                str(GOOGLEAPIS),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert (seen["kind"], seen["seats"]) == ("GAME_KIND_BON_APPETIT", 3)
        # the typed view holds what the server's own view of seat 0 held then (seq 1)
        replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
        then = replay.GetStateAt(
            rpb.GetStateAtRequest(game_id=seen["game_id"], seq=1, viewer="seat:0"),
            metadata=bearer(server.key),
        )
        truth = as_dict(then.event.view)
        view = seen["view"]
        assert view["member"] == "bon_appetit"
        assert view["viewer"] == {"role": "ROLE_SEAT", "seat": 0, "other_game_id": ""}
        assert view["own_hand"] == truth["seats"][0]["hand"]
        assert view["others_hidden"] == [True, True]
        assert view["dish"] == truth["dish"]["name"] and view["to_act"] == [0, 1, 2]
        assert seen["illegal"]["code"] == 9  # FAILED_PRECONDITION
        assert seen["illegal"]["rule_id"] == "BA-BID-SIZE"
        assert (seen["illegal"]["domain"], seen["illegal"]["reason"]) == (
            "feastlog",
            "RULE_VIOLATION",
        )
        assert seen["bid_listed"] and seen["accepted_seq"] == 2
        assert seen["facts"] == ["bid_sealed"] and seen["sealed_by"] == 0
        rows = seen["replay"]
        assert [r["seq"] for r in rows] == [1, 2]
        assert rows[0]["actor"] == {"role": "ROLE_SERVER", "seat": 0, "other_game_id": ""}
        assert rows[1]["actor"] == {"role": "ROLE_SEAT", "seat": 0, "other_game_id": ""}
        assert "round_started" in rows[0]["facts"] and rows[1]["facts"] == ["bid_sealed"]
        assert not any(r["ann_hand_shown"] for r in rows)  # a spectator sees no hand
        view_now = stub(server.address).GetView(pb.GetViewRequest(game_id=seen["game_id"]))
        assert view_now.seq == 2
        routed = (tmp_path / "nginx" / "access.log").read_text().splitlines()
        about_the_game = [line for line in routed if "/CreateGame" not in line]
        assert about_the_game and all(line.startswith(seen["game_id"]) for line in about_the_game)
    finally:
        stop_process(nginx, signal.SIGQUIT)
        server.stop()
