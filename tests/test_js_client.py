"""A client in another language (Node.js, @grpc/grpc-js) speaks to the service from the protos.

CI installs @grpc/grpc-js, @grpc/proto-loader and protobufjs and names the folder in
FEASTLOG_NODE_MODULES; where that is not set, the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from google.rpc import status_pb2

from feastlog.v1 import game_service_pb2 as pb
from tests.serverutil import ThreadedServer, stub

ROOT = Path(__file__).resolve().parent.parent
MODULES = os.environ.get("FEASTLOG_NODE_MODULES", "")
# googleapis-common-protos ships google/rpc/*.proto beside its generated modules
GOOGLEAPIS = str(Path(status_pb2.__file__).resolve().parent.parent.parent)


@pytest.mark.skipif(not MODULES, reason="FEASTLOG_NODE_MODULES not set (CI sets it)")
def test_a_node_client_plays_and_reads_rule_ids_from_rich_errors(tmp_path: Path) -> None:
    assert shutil.which("node"), "FEASTLOG_NODE_MODULES is set but there is no node"
    script = tmp_path / "client.mjs"
    script.write_text((ROOT / "tests" / "js" / "client.mjs").read_text())
    (tmp_path / "node_modules").symlink_to(Path(MODULES) / "node_modules")
    server = ThreadedServer(tmp_path / "games.duckdb")
    try:
        done = subprocess.run(
            ["node", str(script), server.address, server.key, str(ROOT / "proto"), GOOGLEAPIS],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen["seats"] == 3
        assert seen["illegal"]["code"] == 9  # FAILED_PRECONDITION
        assert seen["illegal"]["rule_id"] == "BA-BID-SIZE"
        assert (seen["illegal"]["domain"], seen["illegal"]["reason"]) == (
            "feastlog",
            "RULE_VIOLATION",
        )
        assert seen["accepted_seq"] == 2
        view = stub(server.address).GetView(pb.GetViewRequest(game_id=seen["game_id"]))
        assert view.seq == 2
    finally:
        server.stop()
