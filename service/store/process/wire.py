"""The store process's wire: length-prefixed pickles, a request and its reply at a time.

A request is ``(method, args, scans to drop)``; a reply is ``(log records, ok, result or
error)``.  Both ends are this project's own processes (the child is started by the
server, on sockets only the two of them hold), so pickle is safe here.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import socket
import struct
from typing import Any

HEADER = struct.Struct("!I")  # a message's length, before its pickle
CHANNELS = ("calls", "commits", "reads", "lookups")
# What the server may ask of the store: the EventStore methods, and a scan's next games.
METHODS = frozenset(
    {
        "write",
        "checkpoint",
        "load",
        "rows",
        "rows_after",
        "last_seq",
        "game_ids",
        "count_games",
        "scan",
        "scan_numbered",
        "pending",
        "pending_game",
        "seat_of_token",
        "arbiter_of_key",
        "add_arbiter",
        "revoke_arbiter",
        "arbiters",
        "rejections",
        "listed",
        "known_games",
        "tournament_games",
        "twins_running",
        "dealt_from",
        "projection_current",
        "stats",
        "standings",
        "rebuild_projection",
        "leaves",
        "leaf_position",
        "rows_from",
        "add_tree_head",
        "tree_heads",
        "add_cosignature",
        "cosignatures",
        "add_server_key",
        "server_keys",
        "add_seat_code",
        "seat_of_code",
        "take_seat_code",
        "seat_of_session",
        "end_seat_session",
        "adopt_seat_links",
        "more",
        "sign_receipts",
        "close",
    }
)


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
