"""A new channel's first call right after ``feastlog serve`` says it listens is answered,
restart after restart, on the address its announcement gives, even when another channel
of the same process was refused while the server was down.

gRPC shares a subchannel, and its reconnect backoff, between a process's channels to one
address: a new channel's first call failed at once with the older channel's refusal
(UNAVAILABLE "Connection refused", 7 of 8 restarts) although the server listened, until
``client/channel.py`` gave each channel its own."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from feastlog.client.channel import open_blocking_channel
from feastlog.service import announce

KEY = "org_test-first-call-after-restart-key-0123"
SERVE = [sys.executable, "-c", "from feastlog.cli.main import main; main()", "serve"]
# about a second each, two on a busy machine (12 restarts 10-25 s; before the fix, every
# first call failed); FEASTLOG_RESTARTS=20 as the 19 restarts were
RESTARTS = int(os.environ.get("FEASTLOG_RESTARTS", "12"))


def free_port() -> int:
    """A port nothing listens on now (kept for every restart: clients keep their address)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def check(channel: grpc.Channel, timeout: float) -> None:
    """A health check on ``channel``, failing fast as calls do (not waiting for ready)."""
    health: Any = health_pb2_grpc.HealthStub(channel)  # its stubs do not declare Check
    answer = health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_a_new_channels_first_call_after_listening_is_answered_after_every_restart(
    tmp_path: Path,
) -> None:
    db = tmp_path / "feastlog.duckdb"
    port = free_port()
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": KEY}
    waiting = open_blocking_channel(f"127.0.0.1:{port}")  # a client waiting out restarts
    refused_while_down = 0
    failed_firsts = []
    started = time.monotonic()
    for restart in range(RESTARTS):
        try:
            check(waiting, timeout=2)
        except grpc.RpcError as down:
            refused_while_down += down.code() == grpc.StatusCode.UNAVAILABLE
        server = subprocess.Popen(
            [*SERVE, "--db", str(db), "--port", str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert server.stdout is not None and server.stderr is not None
            line = server.stdout.readline()
            assert f"listening on 127.0.0.1:{port}" in line, line + server.stderr.read()
            found = announce.read(str(db))
            assert found is not None and found.pid == server.pid, found  # not the last run's
            fresh = open_blocking_channel(found.address)
            try:
                check(fresh, timeout=10)  # its first call
            except grpc.RpcError as failed:
                failed_firsts.append(f"{restart}: {failed.code().name} {failed.details()}")
            finally:
                fresh.close()
        finally:  # killed, and stopped gracefully, by turns
            server.send_signal(signal.SIGKILL if restart % 2 else signal.SIGTERM)
            server.communicate(timeout=30)
    waiting.close()
    took = time.monotonic() - started
    assert refused_while_down == RESTARTS, "the waiting client was never refused"
    assert failed_firsts == [], (
        f"{len(failed_firsts)} of {RESTARTS} first calls failed ({took:.1f} s)",
        failed_firsts,
    )
