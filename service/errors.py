"""The service's errors and the one table that maps them to gRPC statuses.

Every error leaves as a ``google.rpc.Status`` with one ``ErrorInfo`` (domain ``feastlog``,
an UPPER_SNAKE_CASE reason, metadata naming the broken rule or the bad field). A failure
of the server itself (the store, or a bug) leaves with an ``incident_id`` in the metadata;
its cause goes to the server log under the same id, never to the client.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from replay.engine import MalformedCommand, PackError, RuleViolation
from replay.games import UnknownGameKind

DOMAIN = "feastlog"

log = logging.getLogger("feastlog")


class ServiceError(Exception):
    """A refusal with a reason and metadata; its class picks the gRPC status."""

    reason = "ERROR"

    def __init__(self, message: str, **metadata: str) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = metadata


class BadRequest(ServiceError):
    """A request field is missing or wrong."""

    reason = "BAD_REQUEST"


class UndecodableRequest(BadRequest):
    """The request bytes are not a valid message of the RPC's request type."""

    reason = "UNDECODABLE_REQUEST"


class UnknownFields(BadRequest):
    """The request carries fields this server does not know (they would ride into the record)."""

    reason = "UNKNOWN_FIELDS"


class FieldTooLong(BadRequest):
    """A string, bytes or list field longer than its bound."""

    reason = "FIELD_TOO_LONG"


class RequestTooLarge(ServiceError):
    """The request is larger than its RPC takes."""

    reason = "REQUEST_TOO_LARGE"


class GameNotFound(ServiceError):
    """No game has this id."""

    reason = "GAME_NOT_FOUND"


class ArbiterNotFound(ServiceError):
    """No named arbiter holds a key under this name."""

    reason = "ARBITER_NOT_FOUND"


class ArbiterExists(ServiceError):
    """A named arbiter already holds a key under this name."""

    reason = "ARBITER_EXISTS"


class StaleSeq(ServiceError):
    """``expected_seq`` is not the game's last seq."""

    reason = "STALE_EXPECTED_SEQ"


class CommandIdReused(ServiceError):
    """A ``command_id`` already recorded with different content."""

    reason = "COMMAND_ID_REUSED"


class Unauthenticated(ServiceError):
    """No credentials, or credentials this server does not know."""

    reason = "UNAUTHENTICATED"


class PermissionDenied(ServiceError):
    """Credentials that do not allow this (another seat, another game, not the organiser)."""

    reason = "PERMISSION_DENIED"


class WaitingForEntropy(ServiceError):
    """The game waits for seat entropy; it has no state yet."""

    reason = "WAITING_FOR_SEAT_ENTROPY"


class AlreadyStarted(ServiceError):
    """Seat entropy sent to a game that has already started."""

    reason = "GAME_ALREADY_STARTED"


class EntropyAlreadySent(ServiceError):
    """A seat sent different entropy a second time."""

    reason = "ENTROPY_ALREADY_SENT"


class CannotOpenStore(ServiceError):
    """The DuckDB file cannot be opened: missing, damaged, read-only, not a database."""

    reason = "STORE_UNAVAILABLE"


class StoreLocked(CannotOpenStore):
    """The DuckDB file is held by another process."""

    reason = "STORE_LOCKED"


class StoreUnavailable(ServiceError):
    """The store failed to read or write; the cause is in the server log under the incident."""

    reason = "STORE_UNAVAILABLE"


class StoreConflict(StoreUnavailable):
    """A write clashed with what is stored (a seq or key already taken): memory was behind."""

    reason = "STORE_CONFLICT"


class InternalError(ServiceError):
    """An unexpected failure on the server; the cause is in the server log under the incident."""

    reason = "INTERNAL_ERROR"


def new_incident_id() -> str:
    """A fresh id that ties a client's error to its line in the server log."""
    return "inc_" + secrets.token_hex(6)


def unexpected(error: Exception) -> InternalError:
    """An unexpected exception as an error the client may see; the cause goes to the log."""
    incident = new_incident_id()
    log.error("incident %s: unexpected %s", incident, type(error).__name__, exc_info=error)
    return InternalError(
        f"the server failed to answer this request (incident {incident})",
        incident_id=incident,
    )


# The one mapping: exception class -> gRPC code.  Order matters only for subclasses.
STATUS_OF: dict[type[Exception], grpc.StatusCode] = {
    MalformedCommand: grpc.StatusCode.INVALID_ARGUMENT,
    PackError: grpc.StatusCode.INVALID_ARGUMENT,
    BadRequest: grpc.StatusCode.INVALID_ARGUMENT,
    RequestTooLarge: grpc.StatusCode.RESOURCE_EXHAUSTED,
    UnknownGameKind: grpc.StatusCode.INVALID_ARGUMENT,
    RuleViolation: grpc.StatusCode.FAILED_PRECONDITION,
    WaitingForEntropy: grpc.StatusCode.FAILED_PRECONDITION,
    AlreadyStarted: grpc.StatusCode.FAILED_PRECONDITION,
    EntropyAlreadySent: grpc.StatusCode.ALREADY_EXISTS,
    StaleSeq: grpc.StatusCode.ABORTED,
    GameNotFound: grpc.StatusCode.NOT_FOUND,
    ArbiterNotFound: grpc.StatusCode.NOT_FOUND,
    ArbiterExists: grpc.StatusCode.ALREADY_EXISTS,
    CommandIdReused: grpc.StatusCode.ALREADY_EXISTS,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    StoreLocked: grpc.StatusCode.UNAVAILABLE,
    StoreUnavailable: grpc.StatusCode.UNAVAILABLE,
    InternalError: grpc.StatusCode.INTERNAL,
    CannotOpenStore: grpc.StatusCode.UNAVAILABLE,
}


def describe(error: Exception) -> tuple[grpc.StatusCode, str, str, dict[str, str]]:
    """The status code, reason, message and metadata for a known error."""
    code = next((c for cls, c in STATUS_OF.items() if isinstance(error, cls)), None)
    if code is None:
        raise error
    if isinstance(error, RuleViolation):
        return code, "RULE_VIOLATION", error.message, {"rule_id": error.rule_id}
    if isinstance(error, MalformedCommand):
        return code, "MALFORMED_COMMAND", error.message, {"field": error.field}
    if isinstance(error, PackError):
        meta = {"card": error.card, "field": error.field}
        return code, "BAD_CONTENT_PACK", str(error), meta
    if isinstance(error, UnknownGameKind):
        return code, "UNKNOWN_GAME_KIND", f"unknown game kind {error.args[0]!r}", {}
    assert isinstance(error, ServiceError)
    return code, error.reason, error.message, dict(error.metadata)


def to_status(error: Exception) -> grpc.Status:
    """A known error as a rich gRPC status."""
    code, reason, message, metadata = describe(error)
    info = error_details_pb2.ErrorInfo(domain=DOMAIN, reason=reason, metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    assert status.code != code_pb2.OK
    return rpc_status.to_status(status)


KNOWN = tuple(STATUS_OF)

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
G = TypeVar("G", bound=Callable[..., AsyncIterator[Any]])


def unary(method: F) -> F:
    """Turn errors raised by a unary servicer method into rich statuses."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await method(self, request, context)
        except KNOWN as error:
            await context.abort_with_status(to_status(error))
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await context.abort_with_status(to_status(unexpected(error)))

    return wrapper  # type: ignore[return-value]


def streaming(method: G) -> G:
    """Turn errors raised by a streaming servicer method into rich statuses."""

    @functools.wraps(method)
    async def wrapper(
        self: Any, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        try:
            async for item in method(self, request, context):
                yield item
        except KNOWN as error:
            await context.abort_with_status(to_status(error))
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await context.abort_with_status(to_status(unexpected(error)))

    return wrapper  # type: ignore[return-value]
