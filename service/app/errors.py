"""The service's errors and the one table that maps them to gRPC statuses.

Every error leaves as a ``google.rpc.Status`` with one ``ErrorInfo`` (domain ``feastlog``,
an UPPER_SNAKE_CASE reason, metadata naming the broken rule or the bad field). A failure
of the server itself (the store, or a bug) leaves with an ``incident_id`` in the metadata;
its cause goes to the server log under the same id, never to the client.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Self, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from feastlog.replay.engine import (
    MalformedCommand,
    PackError,
    RuleViolation,
    SetupRefused,
    WrongRole,
    in_words,
)
from feastlog.replay.games import UnknownGameKind
from feastlog.replay.visibility import Hidden
from feastlog.service.incidents import new_incident_id
from feastlog.service.store import (
    CannotOpenStore,
    StoreConflict,
    StoreError,
    StoreLocked,
    StoreUnavailable,
)

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

    @classmethod
    def naming(cls, game_id: str, names: Sequence[str], missing: Sequence[int]) -> Self:
        """The refusal of any look at such a game, naming the seats it waits for."""
        seats = [f"seat {i} ({names[i]})" for i in missing]
        # every seat sent, the genesis row not written yet: it is starting this moment
        whose = f"from {in_words(seats)}" if seats else "being mixed in"
        return cls(
            f"game {game_id} is waiting for seat entropy {whose}: it has no record yet, "
            "and starts once every seat has sent its own (JoinGame)",
            waiting_for=",".join(str(i) for i in missing),  # seat numbers, as JoinGame's
        )


class AlreadyStarted(ServiceError):
    """Seat entropy sent to a game that has already started."""

    reason = "GAME_ALREADY_STARTED"


class EntropyAlreadySent(ServiceError):
    """A seat sent different entropy a second time."""

    reason = "ENTROPY_ALREADY_SENT"


class SealedRecord(ServiceError):
    """An exported record of a game still running: no seed, so it cannot be replayed."""

    reason = "SEED_NOT_REVEALED"


class InternalError(ServiceError):
    """An unexpected failure on the server; the cause is in the server log under the incident."""

    reason = "INTERNAL_ERROR"


def unexpected(error: Exception) -> InternalError:
    """An unexpected exception as an error the client may see; the cause goes to the log."""
    incident = new_incident_id()
    log.error("incident %s: unexpected %s", incident, type(error).__name__, exc_info=error)
    return InternalError(
        f"the server failed to answer this request (incident {incident})",
        incident_id=incident,
    )


# The one table: each error class, its gRPC code and its ErrorInfo reason (None: the
# class's own ``reason``).  A subclass comes before its base: the first match wins.
TABLE: dict[type[Exception], tuple[grpc.StatusCode, str | None]] = {
    SetupRefused: (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST"),  # seats or options
    WrongRole: (grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED"),  # seat vs arbiter
    MalformedCommand: (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_COMMAND"),
    PackError: (grpc.StatusCode.INVALID_ARGUMENT, "BAD_CONTENT_PACK"),
    UnknownGameKind: (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME_KIND"),
    BadRequest: (grpc.StatusCode.INVALID_ARGUMENT, None),
    RequestTooLarge: (grpc.StatusCode.RESOURCE_EXHAUSTED, None),
    RuleViolation: (grpc.StatusCode.FAILED_PRECONDITION, "RULE_VIOLATION"),
    WaitingForEntropy: (grpc.StatusCode.FAILED_PRECONDITION, None),
    AlreadyStarted: (grpc.StatusCode.FAILED_PRECONDITION, None),
    SealedRecord: (grpc.StatusCode.FAILED_PRECONDITION, None),
    EntropyAlreadySent: (grpc.StatusCode.ALREADY_EXISTS, None),
    StaleSeq: (grpc.StatusCode.ABORTED, None),
    GameNotFound: (grpc.StatusCode.NOT_FOUND, None),
    ArbiterNotFound: (grpc.StatusCode.NOT_FOUND, None),
    ArbiterExists: (grpc.StatusCode.ALREADY_EXISTS, None),
    CommandIdReused: (grpc.StatusCode.ALREADY_EXISTS, None),
    Unauthenticated: (grpc.StatusCode.UNAUTHENTICATED, None),
    PermissionDenied: (grpc.StatusCode.PERMISSION_DENIED, None),
    Hidden: (grpc.StatusCode.PERMISSION_DENIED, PermissionDenied.reason),
    StoreLocked: (grpc.StatusCode.UNAVAILABLE, "STORE_LOCKED"),
    CannotOpenStore: (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE"),
    StoreConflict: (grpc.StatusCode.UNAVAILABLE, "STORE_CONFLICT"),
    StoreUnavailable: (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE"),
    InternalError: (grpc.StatusCode.INTERNAL, None),
}
KNOWN = tuple(TABLE)


def _metadata(error: Exception) -> dict[str, str]:
    """The ErrorInfo metadata of a known error: the broken rule, the bad field or card."""
    if isinstance(error, SetupRefused):
        return {"field": error.field, "rule_id": error.rule_id}
    if isinstance(error, RuleViolation):
        return {"rule_id": error.rule_id}
    if isinstance(error, MalformedCommand):
        return {"field": error.field}
    if isinstance(error, PackError):
        return {"card": error.card, "field": error.field}
    if isinstance(error, ServiceError | StoreError):
        return dict(error.metadata)
    return {}


def describe(error: Exception) -> tuple[grpc.StatusCode, str, str, dict[str, str]]:
    """The status code, reason, message and metadata of a known error (others are raised)."""
    found = next((entry for cls, entry in TABLE.items() if isinstance(error, cls)), None)
    if found is None:
        raise error
    code, reason = found
    if isinstance(error, UnknownGameKind):
        message = f"unknown game kind {error.args[0]!r}"
    elif isinstance(error, PackError):
        message = str(error)
    else:
        message = getattr(error, "message", str(error))
    own: str = getattr(error, "reason", "ERROR")
    return code, reason or own, message, _metadata(error)


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


async def _abort(context: grpc.aio.ServicerContext, error: Exception) -> None:
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
            await _abort(context, error)

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
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await _abort(context, error)

    return wrapper  # type: ignore[return-value]
