"""A channel answered in this process: the feastlog services with no server and no socket.

``InProcessChannel(app, caller)`` is a ``grpc.Channel``, so the generated stubs work on it
unchanged.  Each call is dispatched by its path to the handler the service table
registers on a server (``services.register``), over the application given (the CLI's,
offline: ``service.app.offline``'s reads of a file no server holds), as it would go over
the wire:

- the request is serialized and read back by the guard's checked deserializer
  (``guard.checked_deserializer``), so it meets the server's refusals: too large, not the
  request type, unknown fields, over-long values;
- the servicer method runs as ``caller`` (the guard's ``CALLER``, which the servicers
  read) to its end with no event loop: it awaits nothing that waits here, as offline
  nothing does (``offline.answer``); a stream is an iterator, a step per reply;
- a refusal leaves through the one status table (``service.app.errors.to_status``) as an
  ``InProcessError``: a ``grpc.RpcError`` and ``grpc.Call`` whose code, details and
  trailing metadata (the ``google.rpc.Status`` with its ErrorInfo) are a server's, so a
  client reads both with the same code;
- the answer is serialized and read back with the stub's own deserializer.

One difference from the server, on purpose: a failure that is no refusal is not made an
incident in a log (``status.unary``, which is skipped here): with no server, it is this
process's own and propagates as raised, to be reported as the program's.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import grpc
from google.protobuf import message_factory

from feastlog.service.app.auth import CALLER, Caller
from feastlog.service.app.errors import KNOWN
from feastlog.service.app.offline import answer
from feastlog.service.grpc import services
from feastlog.service.grpc.guard import Refused, checked_deserializer
from feastlog.service.grpc.status import to_status

if TYPE_CHECKING:
    from grpc import _CallIterator

    from feastlog.service.app.application import Application
    from feastlog.service.app.offline import Offline

T = TypeVar("T")
Handler = Any  # grpc.RpcMethodHandler, as the generated add_*_to_server functions make it


class InProcessError(grpc.RpcError, grpc.Call):
    """A call's refusal as a server sends it: its code, its details and the rich status
    (``google.rpc.Status`` with its ErrorInfo) in its trailing metadata."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self.status = status

    def code(self) -> grpc.StatusCode:
        """The status code."""
        return self.status.code

    def details(self) -> str:
        """The message, in words."""
        return str(self.status.details)

    def trailing_metadata(self) -> Any:
        """The rich status, under grpc-status-details-bin, as a server sends it."""
        return self.status.trailing_metadata

    def initial_metadata(self) -> Any:
        """None was sent."""
        return ()

    def is_active(self) -> bool:
        """The call is over."""
        return False

    def time_remaining(self) -> float:
        """No deadline."""
        return float("inf")

    def cancel(self) -> bool:
        """Nothing left to cancel."""
        return False

    def add_callback(self, callback: Callable[[], None]) -> bool:
        """The call is over: no callback will run."""
        return False


def refusal(error: Exception) -> InProcessError:
    """A known error (one of the status table's) as the refusal a call ends with."""
    return InProcessError(to_status(error))


def answered_here(work: Callable[[], T]) -> T:
    """``work()`` (an application call made here, not through a stub): its known errors
    as the refusals a call ends with, so that one error path reads them all."""
    try:
        return work()
    except KNOWN as error:
        raise refusal(error) from error


def _unimplemented(path: str) -> InProcessError:
    return InProcessError(_Status(grpc.StatusCode.UNIMPLEMENTED, f"no method {path}", ()))


class _Status(grpc.Status):
    """A plain status (the refusals have theirs from ``to_status``)."""

    def __init__(self, code: grpc.StatusCode, details: str, trailing: tuple[Any, ...]) -> None:
        self.code, self.details, self.trailing_metadata = code, details, trailing


class _Context:
    """What a servicer method asks of its call: the metadata, and how to end it."""

    def __init__(self, metadata: Any) -> None:
        self._metadata = tuple(metadata or ())

    def invocation_metadata(self) -> Any:
        """The call's metadata, as sent."""
        return self._metadata

    def peer(self) -> str:
        """This process."""
        return "in-process"

    async def abort(self, code: grpc.StatusCode, details: str = "") -> NoReturn:
        """End the call with ``code``."""
        raise InProcessError(_Status(code, details, ()))

    async def abort_with_status(self, status: grpc.Status) -> NoReturn:
        """End the call with a rich status."""
        raise InProcessError(status)


class _Registered:
    """Stands in for a server while the servicers register their handlers: keeps them by
    path, as the server's routing finds them."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        """The same handlers come again by name (``add_registered_method_handlers``)."""

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Handler]) -> None:
        """Keep a service's handlers under their paths."""
        for name, handler in handlers.items():
            self.handlers[f"/{service}/{name}"] = handler


def _behaviour(handler: Handler, kind: str) -> Callable[..., Any]:
    """A handler's servicer method without the server's error wrapper (``status.unary`` or
    ``errors.streaming``): here its known errors are turned into refusals by the channel,
    and anything else is raised as it is."""
    method = getattr(handler, kind)
    inner = getattr(method, "__wrapped__", None)
    if inner is None:
        return cast(Callable[..., Any], method)
    return functools.partial(inner, method.__self__)


class InProcessChannel(grpc.Channel):
    """The feastlog services of ``app``, answered in this process as ``caller`` (see the
    module doc)."""

    def __init__(self, app: Application | Offline, caller: Caller) -> None:
        registered = _Registered()
        # the servicers take the application; offline they get its reads, which answer
        # every use case a read RPC asks of it
        services.register(cast("grpc.aio.Server", registered), cast("Application", app))
        self._handlers = registered.handlers
        self._requests = {path: rpc.method.input_type for path, rpc in services.RPCS.items()}
        self._checks: dict[str, Callable[[bytes], Any]] = {}
        self.caller = caller

    def _request(self, path: str, request: Any, serializer: Any) -> Any:
        """The request as the servicer gets it: its bytes read by the checked deserializer."""
        check = self._checks.get(path)
        if check is None:
            request_type = message_factory.GetMessageClass(self._requests[path])
            check = self._checks[path] = checked_deserializer(request_type)
        raw = serializer(request) if serializer is not None else request
        found = check(raw)
        if isinstance(found, Refused):
            raise refusal(found.error)
        return found

    def _start(
        self, path: str, kind: str, request: Any, serializer: Any, metadata: Any
    ) -> tuple[Any, Handler, contextvars.Context]:
        """The servicer's coroutine (or stream) for one call, the handler, and the context
        it runs in (its caller set there, as the guard sets it for a served call)."""
        handler = self._handlers.get(path)
        if handler is None or path not in self._requests or getattr(handler, kind) is None:
            raise _unimplemented(path)
        checked = self._request(path, request, serializer)
        context = contextvars.copy_context()
        context.run(CALLER.set, self.caller)
        return _behaviour(handler, kind)(checked, _Context(metadata)), handler, context

    def unary_unary(
        self,
        method: str,
        request_serializer: Any = None,
        response_deserializer: Any = None,
        _registered_method: bool = False,
    ) -> Any:
        """A unary method: called, it answers at once (or raises its refusal)."""

        def call(request: Any, timeout: float | None = None, metadata: Any = None, **_: Any) -> Any:
            running, handler, context = self._start(
                method, "unary_unary", request, request_serializer, metadata
            )
            reply = context.run(_step, running)
            return _read_back(reply, handler, response_deserializer)

        return call

    def unary_stream(
        self,
        method: str,
        request_serializer: Any = None,
        response_deserializer: Any = None,
        _registered_method: bool = False,
    ) -> Any:
        """A server stream: called, an iterator of its replies (a refusal raised by the
        step that meets it)."""

        def call(
            request: Any, timeout: float | None = None, metadata: Any = None, **_: Any
        ) -> _CallIterator[Any]:
            running, handler, context = self._start(
                method, "unary_stream", request, request_serializer, metadata
            )
            replies = _Replies(running, handler, context, response_deserializer)
            return cast("_CallIterator[Any]", replies)

        return call

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """No feastlog service reads a stream of requests."""
        raise _unimplemented(method)

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """No feastlog service reads a stream of requests."""
        raise _unimplemented(method)

    def subscribe(self, callback: Any, try_to_connect: bool = False) -> None:
        """Always ready: there is nothing to connect to."""

    def unsubscribe(self, callback: Any) -> None:
        """Nothing was subscribed."""

    def close(self) -> None:
        """Nothing to let go of (the application's file is opened for each call)."""


def _step(running: Any) -> Any:
    """Run a servicer's coroutine to its end; a known error as its refusal."""
    try:
        return answer(running)
    except KNOWN as error:
        raise refusal(error) from error


def _read_back(reply: Any, handler: Handler, deserializer: Any) -> Any:
    """A reply as the caller reads it: serialized as a server would send it, read back."""
    raw = handler.response_serializer(reply) if handler.response_serializer else reply
    return deserializer(raw) if deserializer is not None else raw


class _Replies(Iterator[Any]):
    """A server stream's replies, each made when asked for (``cancel`` ends it)."""

    def __init__(
        self, running: Any, handler: Handler, context: contextvars.Context, deserializer: Any
    ) -> None:
        self._running, self._handler = running, handler
        self._context, self._deserializer = context, deserializer
        self._over = False

    def __iter__(self) -> _Replies:
        return self

    def __next__(self) -> Any:
        if self._over:
            raise StopIteration
        try:
            reply = self._context.run(_step, self._running.__anext__())
        except StopAsyncIteration:
            self._over = True
            raise StopIteration from None
        except BaseException:
            self._over = True
            raise
        return _read_back(reply, self._handler, self._deserializer)

    def cancel(self) -> bool:
        """Stop the stream: the servicer's generator is closed where it stands."""
        if self._over:
            return False
        self._over = True
        self._context.run(answer, self._running.aclose())
        return True

    def is_active(self) -> bool:
        """Whether replies may still come."""
        return not self._over
