"""``feastlog serve``: the gRPC API on a DuckDB file, and the web pages beside it.

Its own module so that serving imports the server and nothing of the other commands;
aiohttp (the web pages) is imported only when ``--http`` asks for them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import ssl
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from feastlog.cli.errors import INTERRUPTED, unreachable, usage
from feastlog.cli.output import Bounded
from feastlog.cli.target import DEFAULT_DB
from feastlog.client.tls import Tls, TlsFileError
from feastlog.service.app.auth import OrganiserKeyError
from feastlog.service.app.errors import CannotOpenStore
from feastlog.service.grpc.server import (
    CannotListen,
    Running,
    check_port_free,
    create_server,
    listen_problem,
    serve_forever,
    stop_on_signals,
)
from feastlog.service.store.port import is_memory, is_postgres, shown

# Why a server cannot start, each in one line: exit code 3.
CANNOT_START = (CannotOpenStore, OrganiserKeyError, CannotListen, TlsFileError)


def host_form(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """The host as it goes before ``:port``: an IPv6 address in brackets; empty is refused."""
    bare = value.strip().strip("[]")
    if not bare:
        raise click.BadParameter("empty: name an address of this machine (0.0.0.0 for all)")
    if ":" not in bare:
        return bare
    try:
        ipaddress.IPv6Address(bare)
    except ValueError:
        raise click.BadParameter(
            f"{value} is not a host or an address (the port goes in --port)"
        ) from None
    return f"[{bare}]"


def link_base_form(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """The seat links' base: an http:// or https:// address with a host and no query or
    fragment, without its trailing '/' ('' when none is given)."""
    if not value:
        return ""
    found = urlsplit(value)
    plain = not any(c.isspace() or not c.isprintable() for c in value)
    if not plain or found.scheme not in ("http", "https") or not found.hostname:
        raise click.BadParameter(
            f"{value!r} is not the pages' address: give http:// or https:// and a host, "
            "such as https://table.example/"
        )
    if found.query or found.fragment:
        raise click.BadParameter(f"{value!r} has a query or fragment: give the address alone")
    return value.rstrip("/")


@click.command("serve")
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, help="DuckDB file.")
@click.option(
    "--host", default="127.0.0.1", show_default=True, envvar="FEASTLOG_HOST", callback=host_form
)
@click.option(
    "--port",
    default=50051,
    show_default=True,
    type=Bounded(0, 65535),
    envvar="FEASTLOG_PORT",
    help="0 picks a free port (or $FEASTLOG_PORT).",
)
@click.option(
    "--http",
    "http_port",
    type=Bounded(0, 65535),
    help="Also serve live replay pages and a tournament board on this HTTP port (0: any).",
)
@click.option(
    "--metrics",
    "metrics_port",
    type=Bounded(0, 65535),
    envvar="FEASTLOG_METRICS_PORT",
    help="Also serve /metrics (Prometheus) on this port (0: any); under --http it is there too.",
)
@click.option(
    "--metrics-host",
    default="127.0.0.1",
    show_default=True,
    envvar="FEASTLOG_METRICS_HOST",
    callback=host_form,
    help="The address --metrics listens on.",
)
@click.option(
    "--link-base",
    envvar="FEASTLOG_LINK_BASE",
    default="",
    callback=link_base_form,
    metavar="URL",
    help="The web pages' public address, which seat links are made on (default: where "
    "--http serves them; set it behind a proxy or on 0.0.0.0).",
)
@click.option("--tls-cert", envvar="FEASTLOG_TLS_CERT", help="Serve TLS with this certificate.")
@click.option("--tls-key", envvar="FEASTLOG_TLS_KEY", help="... and this private key.")
@click.option("--ca", envvar="FEASTLOG_CA", help="Require client certificates from this CA.")
@click.option(
    "--request-log",
    envvar="FEASTLOG_REQUEST_LOG",
    help="Append a JSON line per RPC to FILE ('-': stderr): time, rpc, game, role, status, ms.",
)
@click.option(
    "--traces",
    is_flag=True,
    help="OpenTelemetry spans per RPC, its commit and the store's write, to the OTLP "
    "exporter the OTEL_* variables set (also on with OTEL_TRACES_EXPORTER=otlp|console).",
)
def serve_command(
    db_path: str,
    host: str,
    port: int,
    http_port: int | None,
    metrics_port: int | None,
    metrics_host: str,
    link_base: str,
    tls_cert: str | None,
    tls_key: str | None,
    ca: str | None,
    request_log: str | None,
    traces: bool,
) -> None:
    """Serve the gRPC API on a DuckDB file (made on first start, owner-only).

    The server announces itself beside the file (``<db>.server``: address, pid, TLS, a
    fingerprint of the organiser key) so commands run on the file find it; the
    announcement goes at a clean stop. Exit codes: 0 after a clean shutdown (SIGINT,
    SIGTERM), 2 for a bad option, 3 when the database, the organiser key, the TLS files,
    the host or a port cannot be used (one line on stderr, before any file is made
    when it is the host or a port).
    """
    # incidents (a failing store, a bug) go to stderr, each with the id its client was given
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    if http_port and http_port == port:
        raise usage(f"--http {http_port} is the gRPC --port too: pick another port for either")
    if metrics_port and metrics_port in (port, http_port):
        other = "the gRPC --port" if metrics_port == port else "--http"
        raise usage(f"--metrics {metrics_port} is {other} too: pick another port for either")
    if is_memory(db_path):  # it would be a DuckDB file named so, or games gone at the stop
        raise usage(
            f"--db {db_path} is a store in one process's memory (for tests): a server keeps "
            "its games in a DuckDB file or a PostgreSQL database; pass --db with one"
        )

    async def run() -> None:
        log = open_request_log(request_log)
        try:
            tls = Tls.load(tls_cert, tls_key, ca)
            if http_port is not None:  # every port is checked before any file is made
                check_port_free(f"{host}:{http_port}", "--http")
            if metrics_port is not None:
                check_port_free(f"{metrics_host}:{metrics_port}", "--metrics")
            running = await create_server(
                db_path,
                f"{host}:{port}",
                announce_it=True,
                tls=tls,
                request_log=log,
                traces=traces,
                metrics=True,
            )
        except CANNOT_START as refused:
            raise unreachable(getattr(refused, "message", None) or str(refused)) from refused
        if log is not None and log is not sys.stderr:
            running.on_stop.append(log.close)
        pages = ""
        if http_port is not None:  # bound before anything says the server is up
            secure = web_tls(tls_cert, tls_key)
            bound = await start_pages(running, host, http_port, secure, link_base)
            pages = f"web pages on http{'s' if secure else ''}://{host}:{bound}/"
            if link_base:
                pages += f" (seat links on {link_base}/)"
        elif link_base:  # the pages are served elsewhere (another node, a proxy)
            running.app.seat_links.pages_url = link_base
        measured = ""
        if metrics_port is not None:  # bound before anything says the server is up
            bound = await start_metrics(running, metrics_host, metrics_port)
            measured = f"metrics on http://{metrics_host}:{bound}/metrics"
        stop = stop_on_signals()
        click.echo(f"feastlog listening on {host}:{running.port}{' (TLS)' if tls else ''}")
        shown_db = shown(db_path) if is_postgres(db_path) else Path(db_path).resolve()
        click.echo(f"database: {shown_db}")
        click.echo(f"organiser key: {running.key_source}")
        notary = running.app.notary
        if notary is not None:  # its public half, which signs receipts and tree heads
            click.echo(f"signing key: {notary.source} (public {notary.public_key})")
        if request_log:
            click.echo(f"request log: {request_log}")
        if pages:
            click.echo(pages)
        if measured:
            click.echo(measured)
        sys.stdout.flush()
        await serve_forever(running, stop)

    try:
        asyncio.run(run())
    except KeyboardInterrupt:  # Ctrl-C before the server was up: nothing to drain
        raise SystemExit(INTERRUPTED) from None


def open_request_log(path: str | None) -> Any:
    """The request log's file (owner-only, appended), stderr for '-', or None."""
    if not path:
        return None
    if path == "-":
        return sys.stderr
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as failed:
        raise unreachable(
            f"cannot open the request log {path}: {failed.strerror or failed}"
        ) from failed
    return os.fdopen(fd, "a", buffering=1)


def web_tls(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    """HTTPS for the web pages with the server's own certificate, when it serves TLS."""
    if not (cert and key):
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


async def start_pages(
    running: Running,
    host: str,
    port: int,
    secure: ssl.SSLContext | None = None,
    link_base: str = "",
) -> int:
    """Serve the web pages beside the gRPC server; a port that cannot be had stops both."""
    # importing aiohttp takes about 0.15 s of start-up: only a server with pages pays it
    from feastlog.service.web.server import serve_http

    try:
        return await serve_http(running, host.strip("[]"), port, secure, link_base)
    except OSError as bad:  # taken since it was checked
        await running.stop()
        raise unreachable(listen_problem(f"{host}:{port}", bad, "--http")) from bad


async def start_metrics(running: Running, host: str, port: int) -> int:
    """Serve /metrics on its own port; a port that cannot be had stops the server."""
    assert running.metrics is not None  # serve always counts
    try:
        return await running.metrics.serve(host.strip("[]"), port)
    except OSError as bad:  # taken since it was checked
        await running.stop()
        raise unreachable(listen_problem(f"{host}:{port}", bad, "--metrics")) from bad
