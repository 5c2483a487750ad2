"""Where a client finds its server, and which credentials it may send there: the CLI's
rules, in one place (``feastlog.cli.target`` calls ``locate``).

- ``server`` (host:port) when given; else the server that announced itself beside the
  database file ``db`` (``<db>.server``, written by ``feastlog serve``), speaking TLS if
  it says so;
- TLS from ``ca`` (the CA that signed the server's certificate) and, for mutual TLS,
  ``tls_cert`` and ``tls_key``;
- the organiser key: ``key`` when given; else the key file beside ``db``, sent only to
  the server announced there whose key fingerprint matches it (never anywhere else).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from feastlog.client.errors import FeastlogError
from feastlog.client.files import (
    KEY_FILE,
    OrganiserKeyError,
    is_postgres,
    key_fingerprint,
    read_announcement,
    read_key_file,
)
from feastlog.client.tls import Tls, TlsFileError

DEFAULT_DB = "feastlog.duckdb"


@dataclass(frozen=True)
class Where:
    """A server (its address and TLS) or, with none, a file; and the key it may be sent."""

    server: str | None
    db: str
    key: str | None  # the organiser's (or a named arbiter's) key to send, if any
    tls: Tls | None
    announced: bool = False  # the server was found beside the file
    key_hint: str = ""  # why a key file here was not sent


def same_address(a: str, b: str) -> bool:
    """Whether two host:port addresses name the same server (localhost is loopback)."""
    loopback = {"localhost", "127.0.0.1", "[::1]", "::1"}

    def norm(address: str) -> tuple[str, str]:
        host, _, port = address.strip().rpartition(":")
        return ("127.0.0.1" if host in loopback else host), port

    return norm(a) == norm(b)


def local_key(db: str) -> str | None:
    """The organiser key file beside the database, if there is one (refused if unusable)."""
    path = Path(db).parent / KEY_FILE
    if not path.exists():
        return None
    try:
        return read_key_file(path)
    except OrganiserKeyError as refused:
        raise FeastlogError(str(refused), reason="KEY_FILE") from refused


def locate(
    server: str | None = None,
    db: str = DEFAULT_DB,
    key: str | None = None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    ca: str | None = None,
    local: bool = True,
) -> Where:
    """Where to call and with which key (see the module doc); FeastlogError (status ``""``)
    for a TLS or key file that cannot be used.

    ``local``: whether the server announced beside the file is wanted (a caller that only
    reads an exported record or a file offline passes False).
    """
    try:
        tls = Tls.load(tls_cert, tls_key, ca)
    except TlsFileError as bad:
        raise FeastlogError(str(bad), reason="TLS_FILE") from bad
    # a PostgreSQL database has no file beside which a server could announce itself
    found = read_announcement(db) if local and not is_postgres(db) else None
    announced = False
    if server is None and found is not None:
        server, announced = found.address, True
    elif server is not None and found is not None and same_address(server, found.address):
        announced = True
    if server and found is not None and announced and found.tls and tls is None:
        tls = Tls()  # the system's roots, unless ca says otherwise
    hint = ""
    if key is None and server:
        # the key file is read only for the server announced beside it (never sent elsewhere)
        mine = local_key(db) if announced else None
        if mine is not None and found is not None:
            if found.key_fingerprint == key_fingerprint(mine):
                key = mine
            else:
                hint = f"the organiser key file beside {db} is not the key of {server}"
        elif (Path(db).parent / KEY_FILE).exists():
            hint = (
                f"the organiser key file beside {db} is sent only to the server that announced "
                f"itself there, not to {server}: pass --organiser-key"
            )
    return Where(server or None, db, key, tls, announced, hint)
