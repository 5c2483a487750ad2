"""The gRPC server: create_server opens the store and binds a port, serve_forever serves.

The servicers (``service.grpc.servicers``) sit on the application (``service.app``), beside
health and reflection (their libraries' servicers), all behind the guard
(``service.grpc.guard``); which services there are, and what serves each, is the service
table's (``service/grpc/services.py``, from the proto descriptors).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from feastlog.client.tls import Tls, TlsFileError
from feastlog.replay.games.text import plain_number
from feastlog.service import announce, runtime, tracing
from feastlog.service.app.application import Application
from feastlog.service.app.auth import Credentials, OrganiserKeyError, organiser_key
from feastlog.service.app.clock import Clock
from feastlog.service.app.notary import server_notary
from feastlog.service.app.seatlinks import links_path
from feastlog.service.grpc import guard as limits
from feastlog.service.grpc import reflection, services
from feastlog.service.grpc.requestlog import RequestLog, quiet_metadata_values
from feastlog.service.store import CannotOpenStore
from feastlog.service.store.port import EventStore, is_memory, is_postgres, open_store
from feastlog.service.store.process import ProcessStore, games_to_register
from feastlog.service.store.writer import Database

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from feastlog.service.grpc.metrics import Metrics
    from feastlog.service.store.postgres.follow import Follower


log = logging.getLogger("feastlog.server")


@dataclass
class Running:
    """A started server and what it holds."""

    server: grpc.aio.Server
    port: int
    app: Application
    db: Database
    organiser_key: str
    key_source: str
    http: Any = None  # the web pages' aiohttp runner, when serving them (service/web/server.py)
    follower: Follower | None = None  # other nodes' commits, on a shared store
    db_path: str = ""
    announced: bool = False  # whether <db>.server names this server (service/announce.py)
    tls: bool = False
    on_stop: list[Any] = field(default_factory=list)
    metrics: Metrics | None = None  # what /metrics shows (service/grpc/metrics.py)

    async def stop(self, grace: float = 5.0) -> None:
        """Stop the web pages, drain in-flight calls, then close the database."""
        if self.announced:  # clients stop finding this server first
            announce.remove(self.db_path, os.getpid())
            self.announced = False
        if self.http is not None:
            await self.http.cleanup()
        if self.metrics is not None:
            await self.metrics.stop()
        await self.server.stop(grace)
        await self.app.drain()  # commands already taken are recorded, callers or not
        if self.follower is not None:
            await asyncio.to_thread(self.follower.stop)
        await self.db.close()
        for done in self.on_stop:
            done()


class CannotListen(Exception):
    """The server's address cannot be listened on: taken, not this machine's, unknown host."""


# A second server on a taken port must fail, not share it: gRPC sets SO_REUSEPORT by
# default, and the kernel would then split new connections between the two.
SERVER_OPTIONS = (("grpc.so_reuseport", 0),)


async def create_server(
    db_path: str,
    address: str = "127.0.0.1:0",
    *,
    announce_it: bool = False,
    tls: Tls | None = None,
    request_log: TextIO | None = None,
    store_process: bool = True,
    clock: Clock | None = None,
    traces: bool | SpanExporter = False,
    metrics: bool = False,
) -> Running:
    """Open the store and start serving on ``address`` (port 0 picks a free port).

    ``announce_it`` writes ``<db>.server`` so clients run against the file find this
    server; ``tls`` serves TLS only; ``request_log`` gets a JSON line per call;
    ``store_process`` opens a DuckDB file in a child process (``service.store.process``),
    which a command's short-lived embedded server can do without; ``clock`` the
    application's time (the rows' times, the clocks' timers, the heads' interval: a test's
    ``ManualClock``), by default the machine's; ``metrics`` counts the calls and commits
    for ``/metrics`` (``Running.metrics``); ``traces`` turns on OpenTelemetry spans
    (``service/tracing.py``: the exporter the ``OTEL_*`` variables name, or a test's), as
    ``OTEL_TRACES_EXPORTER`` set to an exporter does.
    Start-up failures raise ``CannotListen``, ``CannotOpenStore`` or ``OrganiserKeyError``
    (one line each) and leave nothing open.
    """
    check_port_free(address)  # before any file is opened or made
    quiet_metadata_values()
    try:
        server_credentials = tls.server_credentials() if tls else None
    except (TlsFileError, ValueError) as bad:
        raise CannotListen(f"cannot serve TLS: {bad}") from bad
    store = open_served_store(db_path, store_process)
    try:
        key, key_source = organiser_key(db_path)
        notary = server_notary(db_path)
    except OrganiserKeyError:
        store.close()
        raise
    db = Database(store)
    db.start()
    try:
        # tokens and arbiter keys are looked up when first used
        credentials = Credentials(
            key, store.seat_of_token, store.arbiter_of_key, remember_arbiters=not store.shared
        )
        app = Application(db, credentials, notary, clock)
        if isinstance(store, ProcessStore) and not store.sign_receipts(notary.public_key):
            log.info("the store's process cannot read the signing key: receipts signed here")
        if not store.shared and not is_memory(db_path):  # an older server's file, if any
            await app.seat_links.adopt_file(links_path(db_path))
        await app.start()
        follower = await follow_other_nodes(store, app)
    except CannotOpenStore:
        await db.close()
        raise
    interceptors: list[grpc.aio.ServerInterceptor] = [limits.Guard(credentials)]
    measured = None
    if metrics:  # prometheus-client only for a server that counts (serve's)
        from feastlog.service.grpc.metrics import Metrics

        measured = Metrics(app)
        interceptors.insert(0, measured.interceptor)  # outside the guard: its refusals too
    if request_log is not None:  # outermost: it logs the guard's refusals too
        interceptors.insert(0, RequestLog(request_log, credentials))
    exporter = None if isinstance(traces, bool) else traces
    traced = exporter is not None or tracing.wanted(bool(traces))
    if traced:  # each RPC's span covers the log and the guard as well
        interceptors.insert(0, tracing.start(exporter))
    server = grpc.aio.server(
        interceptors=interceptors,
        options=[*limits.server_options(), *SERVER_OPTIONS],
    )
    services.register(server, app)
    health_servicer = Health()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable((*services.NAMES, health.SERVICE_NAME), server)  # v1 and v1alpha
    try:
        port = listen(server, address, server_credentials)
    except CannotListen:
        if follower is not None:
            await asyncio.to_thread(follower.stop)
        await db.close()
        if traced:
            tracing.stop()
        raise
    await server.start()
    for name in (*services.NAMES, ""):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    running = Running(
        server, port, app, db, key, key_source, db_path=db_path, tls=bool(tls), follower=follower
    )
    running.metrics = measured
    if traced:
        running.on_stop.append(tracing.stop)  # the spans still waiting go out
    if announce_it:
        await announce_running(running, address, key)
    return running


class Health(health.aio.HealthServicer):
    """grpcio-health-checking's asyncio servicer, with the List its 1.85 registers but does
    not answer (a valid List got UNIMPLEMENTED, and a traceback on the server's stderr)."""

    async def List(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        """Every service's status, as Check would answer for each."""
        # the library's own table of statuses (grpcio-health-checking is pinned); its
        # stubs know neither it nor the List messages
        table: dict[str, Any] = getattr(self, "_server_status")  # noqa: B009
        listing: Any = getattr(health_pb2, "HealthListResponse")  # noqa: B009
        statuses = {n: health_pb2.HealthCheckResponse(status=s) for n, s in table.items()}
        return listing(statuses=statuses)


def open_served_store(db_path: str, store_process: bool) -> EventStore:
    """The store a server writes: a DuckDB file in a child process when asked, else in here.

    PostgreSQL stays in process: its driver lets go of the interpreter lock while it waits.
    """
    if store_process and not is_postgres(db_path):
        games = games_to_register()
        if games is not None:
            return ProcessStore(db_path, games)
        log.warning("a game registered here cannot be found by name: the store stays in process")
    return open_store(db_path)


async def announce_running(running: Running, address: str, key: str) -> None:
    """Write ``<db>.server`` for this server (clients on this machine use loopback).

    A server on PostgreSQL announces nothing: there is no file to put it beside, and
    clients name a node or the load balancer in front of the nodes (``--server``).
    """
    if is_postgres(running.db_path):
        return
    host = address.rpartition(":")[0] or "127.0.0.1"
    if host in ("0.0.0.0", "[::]", "::", ""):
        host = "127.0.0.1"
    announced = announce.Announcement(
        f"{host}:{running.port}",
        os.getpid(),
        announce.key_fingerprint(key),
        running.tls,
        str(Path(running.db_path).resolve()),
    )
    try:
        announce.write(running.db_path, announced)
    except OSError as failed:
        await running.stop(0)
        raise CannotListen(
            f"cannot announce the server beside {running.db_path}: {failed.strerror or failed}"
        ) from failed
    running.announced = True


async def follow_other_nodes(store: EventStore, app: Application) -> Follower | None:
    """On a shared store, listen for every node's commits before serving (else None)."""
    if not store.shared:
        return None
    # psycopg's modules only for a shared (PostgreSQL) store: a DuckDB server never loads them

    from feastlog.service.store.postgres import PgStore
    from feastlog.service.store.postgres.follow import Follower

    assert isinstance(store, PgStore)  # the only shared store
    catch_up = app.other_nodes_committed
    follower = Follower(store.dsn, asyncio.get_running_loop(), lambda *_: catch_up(), catch_up)
    follower.start()
    if not await asyncio.to_thread(follower.listening.wait, 10):
        await asyncio.to_thread(follower.stop)
        raise CannotOpenStore(f"cannot listen for other nodes' commits on {store.path}")
    return follower


def check_port_free(address: str, option: str = "--port") -> None:
    """Refuse ``host:port`` when another process listens there (or it is not this machine's).

    Port 0 (any free port) checks the host alone; ``option`` is what to change instead.
    """
    host, _, port_text = address.rpartition(":")
    port = plain_number(port_text)
    if port is None:
        return  # an address form gRPC itself judges
    try:
        places = socket.getaddrinfo(
            host.strip("[]") or None,
            port,
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
        raise CannotListen(listen_problem(address, (taken or problems)[0], option))


def listen_problem(address: str, failed: OSError, option: str = "--port") -> str:
    """Why ``address`` cannot be listened on, and what to do, in one line."""
    why = {
        errno.EADDRINUSE: "the port is taken (another feastlog server?): stop it, or pick "
        f"another {option}",
        errno.EADDRNOTAVAIL: "that is not an address of this machine: pick another --host",
        errno.EACCES: "permission denied (ports below 1024 need privileges): pick another "
        f"{option}",
    }
    return f"cannot listen on {address}: {why.get(failed.errno or 0, failed.strerror)}"


def listen(
    server: grpc.aio.Server, address: str, credentials: grpc.ServerCredentials | None = None
) -> int:
    """Bind ``address`` for ``server``: the port it listens on (chosen by the system for 0)."""
    try:
        if credentials is not None:
            port = server.add_secure_port(address, credentials)
        else:
            port = server.add_insecure_port(address)
    except RuntimeError as failed:  # taken since we looked, or an address gRPC cannot use
        raise CannotListen(
            f"cannot listen on {address}: the port is taken or the address is not this "
            "machine's: pick another --host or --port"
        ) from failed
    return port


def stop_on_signals() -> asyncio.Event:
    """An event SIGINT and SIGTERM set from now on (before anything says the server is up:
    a SIGTERM sent as soon as "listening" was read ended the process without a drain)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def serve_forever(running: Running, stop: asyncio.Event | None = None) -> None:
    """Serve until SIGINT or SIGTERM (``stop``), then shut down gracefully.

    The process collects its garbage as ``service.runtime`` says: no full collection
    pauses a command.
    """
    stop = stop or stop_on_signals()
    runtime.steady_collection()
    collecting = asyncio.create_task(runtime.collect_now_and_then())
    await stop.wait()
    collecting.cancel()
    await running.stop()
