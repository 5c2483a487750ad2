"""The service's errors: what went wrong, in words, and the one table of each one's code.

Every refusal is one of these classes (or a rules, pack or store error of ``replay/`` or
``service/store/``), with an UPPER_SNAKE_CASE reason and metadata naming the broken rule
or the bad field.  ``TABLE`` gives each its canonical code (``Code``: google.rpc.Code's
names, which gRPC and HTTP APIs share) and reason; the code is what a stored refusal
keeps, and the gRPC adapter answers with it (``service.grpc.status``).  A failure of the
server itself (the store, or a bug) is an ``InternalError`` with an ``incident_id`` in
its metadata; its cause goes to the server log under the same id, never to the client.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple, Self

from feastlog.replay.games import UnknownGameKind
from feastlog.replay.games.engine import (
    MalformedCommand,
    PackError,
    RuleViolation,
    SetupRefused,
    WrongRole,
    in_words,
)
from feastlog.replay.record.visibility import Hidden
from feastlog.service.incidents import new_incident_id
from feastlog.service.store import (
    CannotOpenStore,
    StoreConflict,
    StoreError,
    StoreLocked,
    StoreUnavailable,
)

log = logging.getLogger("feastlog")


class ServiceError(Exception):
    """A refusal with a reason and metadata; its class picks its code (``TABLE``)."""

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


class FellBehind(ServiceError):
    """A stream's reader did not keep up (``service.app.streams``): the stream is ended, and
    its reader resumes from the last row it handled."""

    reason = "FELL_BEHIND"


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


class HeadNotFound(ServiceError):
    """No signed tree head of the size asked for (or none yet), or a row not yet in a head."""

    reason = "HEAD_NOT_FOUND"


class NotSigning(ServiceError):
    """Asked for a proof where nothing is signed (a file no server holds)."""

    reason = "NOT_SIGNING"


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


class Code(StrEnum):
    """The canonical code a refusal has (google.rpc.Code's names): what kind of wrong."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"  # the request is malformed, whatever the game's state
    FAILED_PRECONDITION = "FAILED_PRECONDITION"  # well formed, but the game cannot take it now
    ABORTED = "ABORTED"  # the game moved on since the sender looked (expected_seq)
    NOT_FOUND = "NOT_FOUND"  # no game, or no arbiter, of that name
    ALREADY_EXISTS = "ALREADY_EXISTS"  # an id or a seat's entropy already taken, otherwise
    UNAUTHENTICATED = "UNAUTHENTICATED"  # no credentials, or unknown ones
    PERMISSION_DENIED = "PERMISSION_DENIED"  # known credentials that do not allow this
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"  # a request too large; a reader fallen behind
    UNAVAILABLE = "UNAVAILABLE"  # the store cannot be reached or used now: try again
    INTERNAL = "INTERNAL"  # the server failed (its incident id finds the cause in its log)


# The one table: each error class, its code and its reason (None: the class's own
# ``reason``).  A subclass comes before its base: the first match wins.
TABLE: dict[type[Exception], tuple[Code, str | None]] = {
    SetupRefused: (Code.INVALID_ARGUMENT, "BAD_REQUEST"),  # seats or options
    WrongRole: (Code.PERMISSION_DENIED, "PERMISSION_DENIED"),  # seat vs arbiter
    MalformedCommand: (Code.INVALID_ARGUMENT, "MALFORMED_COMMAND"),
    PackError: (Code.INVALID_ARGUMENT, "BAD_CONTENT_PACK"),
    UnknownGameKind: (Code.INVALID_ARGUMENT, "UNKNOWN_GAME_KIND"),
    BadRequest: (Code.INVALID_ARGUMENT, None),
    RequestTooLarge: (Code.RESOURCE_EXHAUSTED, None),
    FellBehind: (Code.RESOURCE_EXHAUSTED, None),
    RuleViolation: (Code.FAILED_PRECONDITION, "RULE_VIOLATION"),
    WaitingForEntropy: (Code.FAILED_PRECONDITION, None),
    AlreadyStarted: (Code.FAILED_PRECONDITION, None),
    SealedRecord: (Code.FAILED_PRECONDITION, None),
    NotSigning: (Code.FAILED_PRECONDITION, None),
    EntropyAlreadySent: (Code.ALREADY_EXISTS, None),
    StaleSeq: (Code.ABORTED, None),
    GameNotFound: (Code.NOT_FOUND, None),
    ArbiterNotFound: (Code.NOT_FOUND, None),
    HeadNotFound: (Code.NOT_FOUND, None),
    ArbiterExists: (Code.ALREADY_EXISTS, None),
    CommandIdReused: (Code.ALREADY_EXISTS, None),
    Unauthenticated: (Code.UNAUTHENTICATED, None),
    PermissionDenied: (Code.PERMISSION_DENIED, None),
    Hidden: (Code.PERMISSION_DENIED, PermissionDenied.reason),
    StoreLocked: (Code.UNAVAILABLE, "STORE_LOCKED"),
    CannotOpenStore: (Code.UNAVAILABLE, "STORE_UNAVAILABLE"),
    StoreConflict: (Code.UNAVAILABLE, "STORE_CONFLICT"),
    StoreUnavailable: (Code.UNAVAILABLE, "STORE_UNAVAILABLE"),
    InternalError: (Code.INTERNAL, None),
}
KNOWN = tuple(TABLE)


class Refusal(NamedTuple):
    """A known error as it is answered and stored: its code, reason, message and metadata."""

    code: Code
    reason: str
    message: str
    metadata: dict[str, str]


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


def refusal_of(error: Exception) -> Refusal:
    """The code, reason, message and metadata of a known error (others are raised)."""
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
    return Refusal(code, reason or own, message, _metadata(error))
