"""The request log: one JSON line per RPC, for operators.

Each line holds the time the call began (UTC), the RPC (health checks and reflection
included), the game it names, the caller's role (``organiser``, ``arbiter:NAME``,
``seat:N``, ``anonymous`` or ``unknown`` for credentials that were refused), the status it
ended with and its duration in milliseconds. Nothing else of the request is written:
never a token, a key, a seed, a command or a note.

gRPC's own log lines are held to the same: ``quiet_metadata_values`` keeps a call's
metadata values (a bearer token among them) out of the one gRPC writes itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TextIO

import grpc

from feastlog.service.app.auth import Credentials
from feastlog.service.app.errors import ServiceError
from feastlog.service.grpc.services import rpc_name
from feastlog.service.grpc.status import Handler, WrappingInterceptor, status_name


class RequestLog(WrappingInterceptor):
    """Writes a line per call to ``out`` (an open text file, line-buffered by us)."""

    def __init__(
        self,
        out: TextIO,
        credentials: Credentials,
        clock: Callable[[], float] = time.time,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        super().__init__()
        self.out = out
        self.credentials = credentials
        self.clock = clock  # when a call began: seconds since the epoch (the wall clock)
        self.timer = timer  # how long it took: a monotonic clock's seconds

    def wrap(self, path: str, handler: Handler) -> Handler:
        """The method's handler, with its calls logged."""
        rpc = rpc_name(path)  # the service table's name for it
        if handler.unary_unary is not None:
            return handler._replace(unary_unary=self._unary(rpc, handler.unary_unary))  # type: ignore[attr-defined]
        if handler.unary_stream is not None:
            return handler._replace(unary_stream=self._streaming(rpc, handler.unary_stream))  # type: ignore[attr-defined]
        if handler.stream_unary is not None:  # a stream of requests names no one game
            return handler._replace(stream_unary=self._unary(rpc, handler.stream_unary))  # type: ignore[attr-defined]
        if handler.stream_stream is not None:  # reflection
            return handler._replace(stream_stream=self._streaming(rpc, handler.stream_stream))  # type: ignore[attr-defined]
        return handler

    def role(self, context: grpc.aio.ServicerContext) -> str:
        """Who called, as the log names them (never their credential)."""
        try:
            caller = self.credentials.caller(tuple(context.invocation_metadata() or ()))
        except ServiceError:
            return "unknown"
        return caller.log_name()

    def write(
        self, began: float, rpc: str, request: Any, role: str, status: str, start: float
    ) -> None:
        """One line of the log."""
        game_id = getattr(request, "game_id", "")
        line = {
            "time": datetime.datetime.fromtimestamp(began, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "rpc": rpc,
            "game_id": game_id if isinstance(game_id, str) else "",
            "role": role,
            "status": status,
            "ms": round((self.timer() - start) * 1000, 3),
        }
        self.out.write(json.dumps(line, sort_keys=True) + "\n")
        self.out.flush()

    @contextlib.contextmanager
    def _call(self, rpc: str, request: Any, context: grpc.aio.ServicerContext) -> Iterator[None]:
        """One call, its line written as it ends: OK, CANCELLED (its caller gone, or the
        stream closed early), or the status it was refused with."""
        began, start, role = self.clock(), self.timer(), self.role(context)
        status = "UNKNOWN"
        try:
            yield
            status = status_name(context, "OK")
        except (asyncio.CancelledError, GeneratorExit):
            status = "CANCELLED"
            raise
        except BaseException:
            status = status_name(context, "UNKNOWN")
            raise
        finally:
            self.write(began, rpc, request, role, status, start)

    def _unary(self, rpc: str, behaviour: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        async def logged(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with self._call(rpc, request, context):
                return await behaviour(request, context)

        return logged

    def _streaming(self, rpc: str, behaviour: Callable[..., Any]) -> Callable[..., Any]:
        async def logged(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            with self._call(rpc, request, context):
                async for reply in behaviour(request, context):
                    yield reply

        return logged


# gRPC's Python layer logs a metadata value it cannot decode as UTF-8 whole, with a
# traceback ("Invalid encoding on b'Bearer <token>\xff'"), then answers the call (here
# UNAUTHENTICATED: the guard refuses what it cannot read).  A token with one stray byte
# would be written out nearly whole.
GRPC_LOGGER = "grpc._cython.cygrpc"
UNDECODABLE = "Invalid encoding on"


class _QuietMetadata(logging.Filter):
    """Rewrites gRPC's line about an undecodable metadata value without the value."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith(UNDECODABLE):
            record.msg = "a call's metadata held a value that is not UTF-8 (not written here)"
            record.args = None
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def quiet_metadata_values() -> None:
    """Install the filter on gRPC's logger, once per process."""
    logger = logging.getLogger(GRPC_LOGGER)
    if not any(isinstance(f, _QuietMetadata) for f in logger.filters):
        logger.addFilter(_QuietMetadata())
