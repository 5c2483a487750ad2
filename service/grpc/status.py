"""The service's errors as gRPC statuses: the code table's one translation, and the abort.

Every error leaves as a ``google.rpc.Status`` with one ``ErrorInfo`` (domain ``feastlog``,
the error's UPPER_SNAKE_CASE reason, metadata naming the broken rule or the bad field),
under the code the application's table gives it (``service.app.errors.TABLE``).  An
unexpected exception leaves as INTERNAL with an ``incident_id``; its cause goes to the
server log under the same id, never to the client.  Servicer methods hold no
try/except: ``unary`` and ``streaming`` end a call with its error's status.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from feastlog.service.app import streams
from feastlog.service.app.errors import KNOWN, Code, FellBehind, refusal_of, unexpected

DOMAIN = "feastlog"

# Each code as gRPC's: the same names (a code gRPC lacks fails here, at import).
GRPC_CODES: dict[Code, grpc.StatusCode] = {code: grpc.StatusCode[code.name] for code in Code}


def describe(error: Exception) -> tuple[grpc.StatusCode, str, str, dict[str, str]]:
    """The gRPC status code, reason, message and metadata of a known error (others are
    raised)."""
    code, reason, message, metadata = refusal_of(error)
    return GRPC_CODES[code], reason, message, metadata


def to_status(error: Exception) -> grpc.Status:
    """A known error as a rich gRPC status."""
    code, reason, message, metadata = describe(error)
    info = error_details_pb2.ErrorInfo(domain=DOMAIN, reason=reason, metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    assert status.code != code_pb2.OK
    return rpc_status.to_status(status)


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
G = TypeVar("G", bound=Callable[..., AsyncIterator[Any]])


async def abort(context: grpc.aio.ServicerContext, error: Exception) -> None:
    """End a call with the status of ``error`` (an unexpected one: an incident)."""
    known = error if isinstance(error, KNOWN) else unexpected(error)
    await context.abort_with_status(to_status(known))


def unary(method: F) -> F:
    """Turn errors raised by a unary servicer method into rich statuses."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await method(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await abort(context, error)

    return wrapper  # type: ignore[return-value]


def streaming(method: G) -> G:
    """Send a streaming servicer method's replies, each within the streams' send bound,
    and turn its errors into rich statuses.

    A reply its client has not taken within ``streams.SEND_SECONDS`` ends the call:
    RESOURCE_EXHAUSTED, ``FELL_BEHIND``.  The method's stream is closed before the status
    is sent (its tasks cancelled, its queue let go), as when the client cancels; a status
    waits behind the replies its client has not read, and the call's handler waits for it
    no longer than for a reply (gRPC still sends it once the client reads).
    """

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> None:
        failure: Exception | None = None
        async with streams.closing(method(self, request, context)) as replies:
            while failure is None:
                try:
                    reply = await anext(replies)
                except StopAsyncIteration:
                    return
                except grpc.aio.AbortError:
                    raise
                except Exception as error:
                    failure = error
                    break
                try:
                    await streams.sent(context.write(reply))
                except FellBehind as behind:
                    failure = behind
                except Exception as failed:
                    raise gone() from failed
        try:
            await streams.sent(abort(context, failure))
        except grpc.aio.AbortError:
            raise
        except Exception as failed:  # not taken in time, or the client has gone
            raise gone() from failed

    return wrapper  # type: ignore[return-value]


def gone() -> asyncio.CancelledError:
    """A stream's end once its call takes no more (its client has gone, or reads nothing):
    the call ends as cancelled, not as an error of its servicer's (gRPC logged each such
    failed write with its traceback)."""
    return asyncio.CancelledError("the client has gone, or reads nothing")


def status_name(context: grpc.aio.ServicerContext, default: str) -> str:
    """The name of the status code a call ended with (``default`` while it has none, or
    for a code gRPC does not name): the request log's and the metrics' one reading."""
    code = context.code()
    if code is None:
        return default
    if isinstance(code, grpc.StatusCode):
        return code.name
    try:
        return grpc.StatusCode(code).name
    except ValueError:
        return default


Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


class WrappingInterceptor(grpc.aio.ServerInterceptor):
    """A server interceptor that wraps each method's handler once, the first time it is
    called, and gives the same wrapped handler to every call after: the guard, the request
    log and the metrics are each one (``wraps``: the paths it wraps; ``wrap``: how)."""

    def __init__(self) -> None:
        self._wrapped: dict[str, Handler] = {}

    def wraps(self, path: str) -> bool:
        """Whether this interceptor wraps the method at ``path`` (every one it is asked for)."""
        return True

    def wrap(self, path: str, handler: Handler) -> Handler:
        """The handler of the method at ``path``, wrapped."""
        raise NotImplementedError

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        """The method's handler, wrapped when this interceptor wraps it (a path with no
        handler is gRPC's UNIMPLEMENTED, left as it is)."""
        handler = await continuation(handler_call_details)
        path = handler_call_details.method
        if handler is None or not self.wraps(path):
            return handler
        wrapped = self._wrapped.get(path)
        if wrapped is None:
            wrapped = self._wrapped[path] = self.wrap(path, handler)
        return wrapped
