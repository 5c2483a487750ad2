"""The gRPC server: create_server opens the store and binds a port, serve_forever serves.

The servicers (``service.servicers``) sit on the application (``service.app``), behind
the guard (``service.limits``), beside health and reflection.
"""

from __future__ import annotations

import asyncio
import errno
import signal
import socket
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from feastlog.service import limits, reflection
from feastlog.service.app import Application
from feastlog.service.auth import Credentials, OrganiserKeyError, organiser_key
from feastlog.service.follow import Follower
from feastlog.service.servicers import add_servicers
from feastlog.service.store import CannotOpenStore
from feastlog.service.store_api import EventStore, open_store
from feastlog.service.store_pg import PgStore
from feastlog.service.writer import Database
from feastlog.v1 import (
    audit_service_pb2,
    game_service_pb2,
    replay_service_pb2,
    tournament_service_pb2,
)

SERVICE_NAMES = (
    game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name,
    replay_service_pb2.DESCRIPTOR.services_by_name["ReplayService"].full_name,
    audit_service_pb2.DESCRIPTOR.services_by_name["AuditService"].full_name,
    tournament_service_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name,
    health.SERVICE_NAME,
    *reflection.SERVICE_NAMES,
)


@dataclass
class Running:
    """A started server and what it holds."""

    server: grpc.aio.Server
    port: int
    app: Application
    db: Database
    organiser_key: str
    key_source: str
    http: Any = None  # the web pages' aiohttp runner, when serving them (service/web.py)
    follower: Follower | None = None  # other nodes' commits, on a shared store

    async def stop(self, grace: float = 5.0) -> None:
        """Stop the web pages, drain in-flight calls, then close the database."""
        if self.http is not None:
            await self.http.cleanup()
        await self.server.stop(grace)
        await self.app.drain()  # commands already taken are recorded, callers or not
        if self.follower is not None:
            await asyncio.to_thread(self.follower.stop)
        await self.db.close()


class CannotListen(Exception):
    """The server's address cannot be listened on: taken, not this machine's, unknown host."""


# A second server on a taken port must fail, not share it: gRPC sets SO_REUSEPORT by
# default, and the kernel would then split new connections between the two.
SERVER_OPTIONS = (("grpc.so_reuseport", 0),)


async def create_server(db_path: str, address: str = "127.0.0.1:0") -> Running:
    """Open the store and start serving on ``address`` (port 0 picks a free port).

    Start-up failures raise ``CannotListen``, ``CannotOpenStore`` or ``OrganiserKeyError``
    (one line each) and leave nothing open.
    """
    check_port_free(address)  # before any file is opened or made
    store = open_store(db_path)
    try:
        key, key_source = organiser_key(db_path)
    except OrganiserKeyError:
        store.close()
        raise
    db = Database(store)
    db.start()
    try:
        credentials = Credentials(key, store.seat_of_token)  # tokens looked up when first used
        app = Application(db, credentials)
        await app.start()
        follower = await follow_other_nodes(store, app)
    except CannotOpenStore:
        await db.close()
        raise
    server = grpc.aio.server(
        interceptors=[limits.Guard(credentials)],
        options=[*limits.server_options(), *SERVER_OPTIONS],
    )
    add_servicers(server, app)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable(SERVICE_NAMES[:5], server)  # v1 and v1alpha
    try:
        port = listen(server, address)
    except CannotListen:
        if follower is not None:
            await asyncio.to_thread(follower.stop)
        await db.close()
        raise
    await server.start()
    for name in (*SERVICE_NAMES[:4], ""):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return Running(server, port, app, db, key, key_source, follower=follower)


async def follow_other_nodes(store: EventStore, app: Application) -> Follower | None:
    """On a shared store, listen for every node's commits before serving (else None)."""
    if not isinstance(store, PgStore):
        return None
    follower = Follower(store.dsn, asyncio.get_running_loop(), app.moved, app.resync)
    follower.start()
    if not await asyncio.to_thread(follower.listening.wait, 10):
        await asyncio.to_thread(follower.stop)
        raise CannotOpenStore(f"cannot listen for other nodes' commits on {store.path}")
    return follower


def check_port_free(address: str) -> None:
    """Refuse ``host:port`` when another process listens there (or it is not this machine's)."""
    host, _, port_text = address.rpartition(":")
    if not port_text.isdigit() or int(port_text) == 0:
        return  # any free port, or an address form gRPC itself judges
    try:
        places = socket.getaddrinfo(
            host.strip("[]") or None,
            int(port_text),
            type=socket.SOCK_STREAM,
            flags=socket.AI_PASSIVE,
        )
    except socket.gaierror as failed:
        raise CannotListen(
            f"cannot listen on {address}: unknown host ({failed.strerror})"
        ) from failed
    problems = []
    for family, kind, proto, _, place in places:
        with socket.socket(family, kind, proto) as probe:
            # As gRPC does: a port whose old connections linger in TIME_WAIT is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(place)
            except OSError as failed:
                problems.append(failed)
    taken = [p for p in problems if p.errno == errno.EADDRINUSE]
    # gRPC listens on every address it can bind; one taken address would split clients.
    if taken or len(problems) == len(places):
        raise CannotListen(_listen_problem(address, (taken or problems)[0]))


def _listen_problem(address: str, failed: OSError) -> str:
    """Why ``address`` cannot be listened on, and what to do, in one line."""
    why = {
        errno.EADDRINUSE: "the port is taken (another feastlog server?): stop it, or pick "
        "another --port",
        errno.EADDRNOTAVAIL: "that is not an address of this machine: pick another --host",
        errno.EACCES: "permission denied (ports below 1024 need privileges): pick another --port",
    }
    return f"cannot listen on {address}: {why.get(failed.errno or 0, failed.strerror)}"


def listen(server: grpc.aio.Server, address: str) -> int:
    """Bind ``address`` for ``server``: the port it listens on (chosen by the system for 0)."""
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as failed:  # taken since we looked, or an address gRPC cannot use
        raise CannotListen(
            f"cannot listen on {address}: the port is taken or the address is not this "
            "machine's: pick another --host or --port"
        ) from failed
    return port


async def serve_forever(running: Running) -> None:
    """Serve until SIGINT or SIGTERM, then shut down gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await running.stop()
