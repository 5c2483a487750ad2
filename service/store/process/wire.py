"""The store process's wire: length-prefixed pickles, a request and its reply at a time.

A request is ``(method, args, keyword args, scans to drop)``; a reply is ``(log records,
ok, result or error)``.  Both ends are this project's own processes (the child is started
by the server, on sockets only the two of them hold), so pickle is safe here.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import socket
import struct
from typing import Any

from feastlog.service.store import port

HEADER = struct.Struct("!I")  # a message's length, before its pickle
CHANNELS = ("calls", "commits", "reads", "lookups")
# The store's methods that stream: the child keeps the scan open and sends its games a
# chunk at a time, on ``more``.
STREAMED = frozenset({"scan", "scan_numbered"})
# What the server may ask of the store: every method of its capabilities (``port.METHODS``)
# but those the server's side answers itself (``reader``: a channel; ``commit``: ``write``
# on the ``commits`` channel), a scan's next games, and the key to sign receipts with.
ANSWERED_BY_CLIENT = frozenset({"reader", "commit"})
# ``backup_copy``: the file copied while commits wait (``duckdb/backup.py``).
METHODS = (frozenset(port.METHODS) - ANSWERED_BY_CLIENT) | {"more", "sign_receipts", "backup_copy"}


def pickled(message: object) -> bytes:
    """One message as it goes on the wire."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def send(sock: socket.socket, message: object) -> None:
    """Send one message."""
    sock.sendall(pickled(message))


def receive(sock: socket.socket) -> Any:
    """Receive one message; EOFError when the other side is gone."""
    (size,) = HEADER.unpack(_exactly(sock, HEADER.size))
    return pickle.loads(_exactly(sock, size))


def _exactly(sock: socket.socket, size: int) -> bytes:
    """``size`` bytes from a blocking socket."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            raise EOFError("the other end of the store's socket is closed")
        got += n
    return bytes(buffer)


async def receive_soon(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> Any:
    """Receive one message on the event loop (a non-blocking socket)."""
    data = bytearray()
    need = HEADER.size
    while len(data) < need:
        chunk = await loop.sock_recv(sock, max(need - len(data), 65536))
        if not chunk:
            raise EOFError("the other end of the store's socket is closed")
        data += chunk
        if need == HEADER.size and len(data) >= HEADER.size:
            need += HEADER.unpack_from(data)[0]
    return pickle.loads(data[HEADER.size :])


def outcome(reply: tuple[list[dict[str, Any]], bool, Any]) -> Any:
    """A reply's result, after logging the records its call made; its error raised."""
    records, ok, value = reply
    for fields in records:
        record = logging.makeLogRecord(fields)
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)
    if not ok:
        raise value
    return value


def portable(error: Exception) -> Exception:
    """The error as it can cross to the server: itself, or its words if it cannot pickle."""
    try:
        pickle.dumps(error)
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error
