"""Real servers for tests: in a background thread, or as a separate process."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import threading
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.rpc import error_details_pb2

from feastlog.cli.wire import as_dict, spawn_server
from feastlog.cli.wire import error_info as client_error_info
from feastlog.service.app.auth import KEY_ENV
from feastlog.service.app.notary import SIGNING_KEY_ENV
from feastlog.service.grpc.server import Running, create_server
from feastlog.service.store.port import is_postgres
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc

T = TypeVar("T")


# The organiser key of servers on a PostgreSQL database (their key file would be the
# working folder's: the repository's).
DATABASE_SERVER_KEY = "org_test-database-server-key-0123456789"
# ... and their signing key (its file would be the working folder's too)
DATABASE_SIGNING_KEY = "5e" * 32


class ThreadedServer:
    """A feastlog server on port 0 with its own event loop in a background thread.

    ``db_path`` is a DuckDB file or a PostgreSQL DSN.
    """

    def __init__(self, db_path: Path | str, announce: bool = True, **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        key = os.environ.get(KEY_ENV)
        signing = os.environ.get(SIGNING_KEY_ENV)
        if is_postgres(str(db_path)) and not key:
            os.environ[KEY_ENV] = DATABASE_SERVER_KEY  # read once, at start
        if is_postgres(str(db_path)) and not signing:
            os.environ[SIGNING_KEY_ENV] = DATABASE_SIGNING_KEY
        try:
            self.running: Running = self.call(
                create_server(str(db_path), "127.0.0.1:0", announce_it=announce, **options)
            )
        finally:
            if key is None:
                os.environ.pop(KEY_ENV, None)
            if signing is None:
                os.environ.pop(SIGNING_KEY_ENV, None)
        self.address = f"127.0.0.1:{self.running.port}"
        self.key = self.running.organiser_key

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def stop(self) -> None:
        """Graceful stop, then end the loop."""
        self.call(self.running.stop(0.5))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


class ProcessServer:
    """``feastlog serve`` in its own process, on port 0 (``prelude``: Python that process
    runs first, e.g. a fault hook of ``tests/faults.py``)."""

    def __init__(self, db_path: Path | str, key: str, prelude: str = "") -> None:
        self.proc, self.address = spawn_server(db_path, key, prelude)

    def kill(self) -> None:
        """kill -9: no graceful anything."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def terminate(self) -> str:
        """SIGTERM (graceful) and the stderr it left."""
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=20)
        return err


def bearer(token: str | None) -> tuple[tuple[str, str], ...]:
    """Call metadata for a token."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def stub(address: str) -> pb_grpc.GameServiceStub:
    """A blocking GameService stub."""
    return pb_grpc.GameServiceStub(grpc.insecure_channel(address))


def view_of(reply: Any) -> dict[str, Any]:
    """A reply's view Struct as a dict."""
    return as_dict(reply.view)


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo detail of a rich gRPC error; the test fails when there is none."""
    info = client_error_info(error)
    assert info is not None, "the error carries no google.rpc.Status with an ErrorInfo"
    return info


def create(
    client: pb_grpc.GameServiceStub,
    key: str,
    kind: str,
    players: list[str],
    seed: bytes = b"",
    **options: str,
) -> pb.CreateGameResponse:
    """Create a game as the organiser."""
    request = pb.CreateGameRequest(game_kind=kind, players=players, seed=seed, options=options)
    reply: pb.CreateGameResponse = client.CreateGame(request, metadata=bearer(key))
    return reply


def play_to_end(
    client: pb_grpc.GameServiceStub,
    game_id: str,
    tokens: list[str],
    seed: int,
    stop_after: int | None = None,
) -> int:
    """Seats play random legal commands until the game ends (or ``stop_after`` commands)."""
    rng = random.Random(seed)
    sent = 0
    while stop_after is None or sent < stop_after:
        view = view_of(client.GetView(pb.GetViewRequest(game_id=game_id)))
        if view["over"]:
            return sent
        for seat in [int(s) for s in view["to_act"]]:
            legal = client.ListLegalCommands(
                pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[seat])
            )
            if not legal.commands:
                continue
            request = pb.SubmitCommandRequest(
                game_id=game_id,
                command_id=uuid.uuid4().hex,
                command=rng.choice(list(legal.commands)),
            )
            client.SubmitCommand(request, metadata=bearer(tokens[seat]))
            sent += 1
            if stop_after is not None and sent >= stop_after:
                break
    return sent


def watch_all(
    client: pb_grpc.GameServiceStub, game_id: str, key: str | None, upto: int
) -> list[pb.RecordEvent]:
    """Rows 1..upto as the caller sees them."""
    events = []
    stream = client.WatchGame(
        pb.WatchGameRequest(game_id=game_id, from_seq=1), metadata=bearer(key)
    )
    for reply in stream:
        events.append(reply.event)
        if reply.event.seq >= upto:
            stream.cancel()
            break
    return events
