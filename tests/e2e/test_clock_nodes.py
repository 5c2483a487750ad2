"""A clocked game played on node B is timed out by node A once B is killed with
``kill -9``: two ``feastlog serve`` processes on one PostgreSQL database (as
``scripts/cluster.py`` starts them), on the machine's time (``clock=move:5``, the least a
clock takes, so this test waits out the five seconds).  Node A never reads the game: it
hears of it from the log alone.  Its time-out row comes while B is down, soon after the
deadline; once B is back there is that one time-out row, and the record verifies.
``tests/app/test_clock_nodes.py`` does the same in process on a ManualClock."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

from feastlog.client.channel import open_blocking_channel
from feastlog.replay.table.clocks import time_ms
from feastlog.service.store.postgres import PgStore
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2
from scripts.cluster import start_node, stop_process
from tests.e2e.test_cluster import needs_cluster_programs
from tests.pgutil import empty_database
from tests.serverutil import bearer, create

KEY = "org_clock-nodes-organiser-key-long-enough-0123"
MOVE_SECONDS = 5  # the least a clock takes (replay/table/clocks.py LIMITS)
LIMIT = 20  # seconds past the deadline to wait for the time-out row: a bound, not a timing


def test_a_clock_of_a_game_on_a_killed_node_runs_out_on_the_other(tmp_path: Path) -> None:
    needs_cluster_programs()
    dsn = empty_database("clock-nodes")
    pids, ports = [], []
    for index in (1, 2):
        pid, port = start_node(dsn, KEY, tmp_path, index)
        pids.append(pid)
        ports.append(port)
    a, b = (f"127.0.0.1:{p}" for p in ports)
    try:
        on_b = pb_grpc.GameServiceStub(open_blocking_channel(b))
        made = time.monotonic()
        game = create(on_b, KEY, "bon-appetit", ["Ann", "Brian"], clock=f"move:{MOVE_SECONDS}")
        game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
        # Ann bids on B: Brian's clock runs on, for the rest of his five seconds
        legal = on_b.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[0])
        )
        on_b.SubmitCommand(
            pb.SubmitCommandRequest(
                game_id=game_id, command_id=uuid.uuid4().hex, command=legal.commands[0]
            ),
            metadata=bearer(tokens[0]),
        )
        os.kill(pids[1], signal.SIGKILL)  # B dies while Brian's clock runs
        os.waitpid(pids[1], 0)
        assert time.monotonic() - made < MOVE_SECONDS, "the clock ran out before the kill"

        # A writes the time-out row by itself, nobody moving or reading the game there
        store = PgStore(dsn)
        try:
            genesis = store.rows(game_id)[0]
            deadline = time_ms(genesis.recorded_at) + MOVE_SECONDS * 1000
            while len(rows := store.rows(game_id)) < 3:
                assert time.time() * 1000 < deadline + LIMIT * 1000, "no time-out row on A"
                time.sleep(0.05)
        finally:
            store.close()
        timeout = rows[2]
        command = record_pb2.Command.FromString(timeout.body)
        assert (timeout.actor, command.WhichOneof("game")) == ("server", "clock")
        assert command.clock.timeout.seat == 1
        print(f"\nthe time-out row, on A: {time_ms(timeout.recorded_at) - deadline} ms late")

        # B comes back: the time-out A wrote is the game's one, and the record verifies
        pids[1], _ = start_node(dsn, KEY, tmp_path, 2, ports[1])
        on_b = pb_grpc.GameServiceStub(open_blocking_channel(b))
        assert on_b.GetView(pb.GetViewRequest(game_id=game_id)).seq == 3
        on_a = pb_grpc.GameServiceStub(open_blocking_channel(a))
        assert on_a.GetView(pb.GetViewRequest(game_id=game_id)).seq == 3
        for node in (a, b):
            audit = apb_grpc.AuditServiceStub(open_blocking_channel(node))
            report = audit.VerifyGame(
                apb.VerifyGameRequest(game_id=game_id), metadata=bearer(KEY)
            ).report
            assert report.ok, list(report.faults)
        store = PgStore(dsn)
        try:
            rows = store.rows(game_id)
        finally:
            store.close()
        timeouts = [
            r.seq
            for r in rows
            if r.actor == "server"
            and r.kind == "command"
            and record_pb2.Command.FromString(r.body).WhichOneof("game") == "clock"
        ]
        assert timeouts == [3] and len(rows) == 3
    finally:
        for pid in pids:
            stop_process(pid)
