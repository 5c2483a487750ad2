"""Which server or file a command works on, and which credentials it may send there.

Every command takes the same options (``connection_options``): ``--server ADDR`` (or
``FEASTLOG_SERVER``), ``--db PATH`` (default ``./feastlog.duckdb``), ``--organiser-key``
(or ``FEASTLOG_ORGANISER_KEY``) and TLS (``--ca``, ``--tls-cert``, ``--tls-key``, or
``FEASTLOG_CA``, ``FEASTLOG_TLS_CERT``, ``FEASTLOG_TLS_KEY``).

Without ``--server``, a command talks to the server that announced itself beside the
file (``<db>.server``, see ``service/announce.py``) and works on the file itself when no
server holds it. The organiser key file beside the database is sent only to the server
whose announced key fingerprint matches it; a key given explicitly goes where it is told.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from feastlog.cli.errors import unreachable
from feastlog.client.errors import FeastlogError
from feastlog.client.files import KEY_ENV, is_postgres
from feastlog.client.locate import DEFAULT_DB, locate
from feastlog.client.tls import Tls
from feastlog.replay.games.text import fits_header

SERVER_ENV = "FEASTLOG_SERVER"
SEAT_TOKEN_ENV = "FEASTLOG_SEAT_TOKEN"
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]  # an option's, on a command


@dataclass(frozen=True)
class Target:
    """Where a command goes: a server (address, TLS) or a file, and the key it may send."""

    server: str | None
    db: str
    key: str | None  # the organiser (or a named arbiter's) key to send, if any
    tls: Tls | None
    announced: bool = False  # the server was found beside the file
    key_hint: str = ""  # why a key file here was not sent

    @property
    def where(self) -> str:
        """The server or the file, in words."""
        return f"the server at {self.server}" if self.server else f"the file {self.db}"


def resolve(
    server: str | None,
    db: str,
    key: str | None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    ca: str | None = None,
    local: bool = True,
) -> Target:
    """The target of a command from its options: found as every client finds its server
    (``feastlog.client.locate``); a TLS or key file that cannot be used is exit 3.

    ``local``: whether the server announced beside the file is wanted (commands that only
    read an exported record or a file offline pass False).
    """
    try:
        found = locate(server, db, key, tls_cert, tls_key, ca, local)
    except FeastlogError as bad:
        raise unreachable(bad.message) from bad
    return Target(found.server, found.db, found.key, found.tls, found.announced, found.key_hint)


def connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--server, --db, --organiser-key and the TLS options."""
    options = [
        click.option(
            "--server",
            envvar=SERVER_ENV,
            callback=server_address,
            help=f"A server's host:port (or ${SERVER_ENV}); default: the one holding --db.",
        ),
        click.option(
            "--db",
            "db_path",
            default=DEFAULT_DB,
            show_default=True,
            help="The database: its server is found beside it; read offline when none holds it.",
        ),
        click.option(
            "--organiser-key",
            envvar=KEY_ENV,
            callback=header_safe,
            help="The organiser's (or a named arbiter's) key; default: the key file beside "
            "--db, sent only to the server it belongs to.",
        ),
        click.option(
            "--ca", envvar="FEASTLOG_CA", help="TLS: the CA that signed the server's cert."
        ),
        click.option(
            "--tls-cert", envvar="FEASTLOG_TLS_CERT", help="TLS: this client's certificate."
        ),
        click.option("--tls-key", envvar="FEASTLOG_TLS_KEY", help="TLS: this client's key."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def target_of(params: dict[str, Any], local: bool = True) -> Target:
    """The Target of a command's connection options (popped from ``params``)."""
    return resolve(
        params.pop("server"),
        params.pop("db_path"),
        params.pop("organiser_key"),
        params.pop("tls_cert"),
        params.pop("tls_key"),
        params.pop("ca"),
        local,
    )


def require_file(db: str) -> str:
    """A database path that exists, or exit 3 saying so (a PostgreSQL DSN as given)."""
    if is_postgres(db):
        return db
    if not os.path.exists(db):
        raise unreachable(f"no server holds {db} and there is no database there")
    return db  # a folder or a file that is not a database: the store says so (exit 3)


def server_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A server's host:port whose port is one (1 to 65535, ASCII digits), else a usage
    error: gRPC takes port 99999 as 34463, and the organiser key went to whatever
    listened there."""
    if value == "":  # given, and empty: not "no server" (which is the option left out)
        raise click.BadParameter("names no server: give host:port, or leave --server out")
    if value:
        host, colon, port = value.rpartition(":")
        digits = colon and host and port and all(c.isdigit() for c in port)
        if digits and not (port.isascii() and 1 <= int(port) <= 65535):
            raise click.BadParameter(f"{port!r} is not a port (1 to 65535, in ASCII digits)")
    return value


def header_safe(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A token or key as it goes in a call's header (``fits_header``), else a usage error."""
    if value is not None and not fits_header(value):
        raise click.BadParameter("not a feastlog token or key (printable ASCII only)")
    return value


def token_option(text: str, seat: bool = False) -> Decorator:
    """--token, checked as it goes in a call's header (``header_safe``): a seat's token,
    required and read from FEASTLOG_SEAT_TOKEN when not given (``seat``), or one to call
    with instead of the command's own credentials."""
    required: dict[str, Any] = {"required": True, "envvar": SEAT_TOKEN_ENV} if seat else {}
    return click.option("--token", callback=header_safe, help=text, **required)
