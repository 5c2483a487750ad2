"""The store's process: opens the DuckDB file and serves it to the server that started it.

Run as ``python -m feastlog.service.store.process.child PARENT_PID FD…`` by
``ProcessStore``; the first request on the ``calls`` socket names the file.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import itertools
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from feastlog.replay import games
from feastlog.service.store.process.wire import METHODS, STREAMED, portable, receive, send

if TYPE_CHECKING:
    from feastlog.service.signing import Notary
    from feastlog.service.store.duckdb import Store
    from feastlog.service.store.records import Batch, Signed, Written

SCAN_CHUNK = 32  # games a scan sends at once: fewer round trips, bounded messages
PR_SET_PDEATHSIG = 1


class _Capture(logging.Handler):
    """Keeps each thread's log records for the reply to the call that made them."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        kept: list[dict[str, Any]] | None = getattr(self.local, "records", None)
        if kept is None:  # not within a call: straight to the shared stderr
            sys.stderr.write(self.format(record) + "\n")
            return
        fields = dict(record.__dict__)
        fields["msg"] = record.getMessage()
        fields["args"] = None
        if record.exc_info:
            fields["exc_text"] = logging.Formatter().formatException(record.exc_info)
        fields["exc_info"] = None
        kept.append(fields)


class _Served:
    """What the child serves: the writing store, its reader, and the scans they keep open."""

    def __init__(self, store: Store, capture: _Capture, path: str) -> None:
        self.store = store
        self.path = path
        self.notary: Notary | None = None  # the server's key, once it asks for receipts
        self.reader = store.reader()
        self.capture = capture
        self.writing = threading.Lock()  # commits and calls take turns on the connection
        self.scans: dict[int, Iterator[Any]] = {}
        self._numbers = itertools.count(1)

    def answer(
        self,
        target: Store,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        dropped: list[int],
    ) -> Any:
        """The reply to one request: its log records, then (True, result) or (False, error)."""
        records: list[dict[str, Any]] = []
        self.capture.local.records = records
        try:
            for scan in dropped:
                self._close_scan(scan)
            result = (True, self._run(target, name, args, kwargs))
        except Exception as error:
            result = (False, portable(error))
        finally:
            self.capture.local.records = None
        return (records, *result)

    def _run(self, target: Store, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call one of the store's methods by name: only those the server may ask for
        (``wire.METHODS``, from the port's capabilities), never another attribute."""
        if name not in METHODS:
            raise ValueError(f"the store has no method {name!r} to call")
        if name == "more":
            return self._more(args[0])
        if name == "sign_receipts":
            return self._take_key(args[0])
        if name == "write":
            return self._write(target, *args, **kwargs)
        result = getattr(target, name)(*args, **kwargs)
        if name in STREAMED:
            number = next(self._numbers)
            self.scans[number] = result
            return number
        return result

    def _write(self, target: Store, batch: Batch) -> Written:
        """Commit a batch; its first row's position, and its receipts when signed here."""
        from feastlog.service.store.records import Written

        first = target.write(batch)
        if self.notary is None:
            return Written(first)
        try:
            return Written(first, self._signed(batch))
        except Exception:  # committed all the same: the server signs the receipts
            logging.getLogger("feastlog.store").exception("receipts not signed here")
            return Written(first)

    def _take_key(self, public_key: str) -> bool:
        """Read the server's signing key as the server did (the environment, or the key
        file beside the organiser key); sign receipts from now on if it is the key whose
        public half the server names (else the server signs them itself)."""
        from feastlog.service.signing import SigningKeyError, server_notary

        try:
            notary = server_notary(self.path)
        except SigningKeyError:
            return False
        self.notary = notary if notary.public_key == public_key else None
        return self.notary is not None

    def _signed(self, batch: Batch) -> Signed:
        """The receipt signatures of every row a commit just appended."""
        from feastlog.replay.proof.signed import Receipt
        from feastlog.service.store.records import Signed
        from feastlog.service.utc import utc_now

        assert self.notary is not None
        at, key = utc_now(), self.notary.public_key
        rows = batch.appended()
        messages = [Receipt.of(row, at, key).message() for row in rows]
        signatures = self.notary.signatures(messages)
        signed = zip(rows, signatures, strict=True)
        return Signed(at, key, {(row.game_id, row.seq): sig for row, sig in signed})

    def _more(self, scan: int) -> tuple[list[Any], bool]:
        games = self.scans[scan]
        chunk = list(itertools.islice(games, SCAN_CHUNK))
        if len(chunk) < SCAN_CHUNK:
            self._close_scan(scan)
            return chunk, True
        return chunk, False

    def _close_scan(self, scan: int) -> None:
        games = self.scans.pop(scan, None)
        if isinstance(games, Generator):
            games.close()


def _serve(
    sock: socket.socket, served: _Served, target: Store, lock: threading.Lock | None
) -> None:
    """Answer one channel's requests until the server closes it; then the child ends."""
    while True:
        try:
            name, args, kwargs, dropped = receive(sock)
        except (EOFError, OSError):
            os._exit(0)  # the server is gone: nothing is waiting for a reply
        with lock or contextlib.nullcontext():
            reply = served.answer(target, name, args, kwargs, dropped)
        send(sock, reply)


def _die_with(parent: int) -> None:
    """Ask the kernel to kill this process when its parent dies (Linux); exit if it has."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the kernel was asked
        os._exit(0)


def main(argv: list[str]) -> int:
    """The child: open the file, serve the four channels, end with the server."""
    _die_with(int(argv[0]))
    # the server decides when the store closes: it drains its writes first
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    calls, commits, reads, lookups = (socket.socket(fileno=int(fd)) for fd in argv[1:5])
    capture = _Capture()
    capture.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(capture)
    try:
        _, (path, level, parent_path, extra_games), _, _ = receive(calls)
    except (EOFError, OSError):
        return 0
    logging.getLogger().setLevel(level)
    sys.path[:] = parent_path  # where the server found its modules and its games
    served = _open(calls, path, extra_games, capture)
    if served is None:
        return 0
    for sock, target, lock in (
        (commits, served.store, served.writing),
        (reads, served.reader, None),
        (lookups, served.store, None),  # seat tokens have a connection of their own
    ):
        threading.Thread(target=_serve, args=(sock, served, target, lock), daemon=True).start()
    while True:
        try:
            name, args, kwargs, dropped = receive(calls)
        except (EOFError, OSError):
            return 0
        with served.writing:
            if name == "close":
                for scan in list(served.scans):
                    served._close_scan(scan)
                served.reader.close()
            reply = served.answer(served.store, name, args, kwargs, dropped)
        send(calls, reply)
        if name == "close":
            return 0


def _open(
    calls: socket.socket, path: str, extra_games: list[tuple[str, str]], capture: _Capture
) -> _Served | None:
    """Register the server's own games, open the store and say how that went (None: failed)."""
    from feastlog.service.store import CannotOpenStore
    from feastlog.service.store.duckdb import Store

    records: list[dict[str, Any]] = []
    capture.local.records = records
    try:
        for module, name in extra_games:
            try:
                games.register(getattr(importlib.import_module(module), name))
            except (ImportError, AttributeError, ValueError) as error:
                raise CannotOpenStore(
                    f"cannot open {path}: the store's process cannot register the game "
                    f"{module}.{name}: {error}",
                    path=path,
                ) from error
        # One DuckDB worker: a commit of a few rows gains nothing from more, and handing
        # its work between threads cost a third of its time on a machine the server keeps
        # busy.
        served = _Served(Store(path, threads=1), capture, path)
    except Exception as error:
        send(calls, (records, False, portable(error)))
        return None
    finally:
        capture.local.records = None
    send(calls, (records, True, None))
    return served


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
