"""The client's one exception: a refusal or failure with its status, reason, rule and field.

Every feastlog error leaves the server as a ``google.rpc.Status`` carrying one
``ErrorInfo`` (domain ``feastlog``): its reason (``RULE_VIOLATION``,
``STALE_EXPECTED_SEQ``, …) and metadata naming the broken rule (``rule_id``) or the bad
field (``field``).  ``FeastlogError`` carries them as attributes, so a program tells a
broken rule from a stale seq from an unreachable server without parsing messages.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2
from grpc_status import rpc_status

# Statuses after which the same request may be sent again as it was: the server was not
# reached, or could not answer now.  A command goes again with its command_id, so a
# command the server did record is answered with its first result, never recorded twice.
RETRYABLE = ("UNAVAILABLE", "DEADLINE_EXCEEDED")


class FeastlogError(Exception):
    """A call that failed: ``status`` (the gRPC status's name, ``UNAVAILABLE`` for a server
    that cannot be reached, ``""`` for a problem found before any call: a TLS or key
    file), ``reason`` (the ErrorInfo reason), ``rule_id`` and ``field`` (empty when the
    refusal names none), ``message`` (in the players' words) and the ErrorInfo's whole
    ``metadata``."""

    def __init__(
        self,
        message: str,
        status: str = "",
        reason: str = "",
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status}: {message}" if status else message)
        self.message, self.status, self.reason = message, status, reason
        self.metadata = dict(metadata or {})
        self.rule_id = self.metadata.get("rule_id", "")
        self.field = self.metadata.get("field", "")

    @property
    def retryable(self) -> bool:
        """Whether sending the same request again may succeed (the server was not reached)."""
        return self.status in RETRYABLE


def error_info(error: Any) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a feastlog error (its reason, rule_id or field), if it carries one.

    None too for an error with no trailers to read, or whose rich status disagrees with
    its code (``from_call`` raises ValueError then: a proxy in between may have rewritten
    the code): what a client says of an error never depends on more than its code.
    """
    try:
        status = rpc_status.from_call(error)
    except (AttributeError, ValueError, DecodeError):
        return None
    info = error_details_pb2.ErrorInfo()
    if status is None or not status.details or not status.details[0].Unpack(info):
        return None
    return info


def from_rpc(error: grpc.RpcError) -> FeastlogError:
    """A gRPC error as a FeastlogError."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = (error.details() if hasattr(error, "details") else "") or ""
    info = error_info(error)
    reason = info.reason if info else ""
    metadata = dict(info.metadata) if info else {}
    return FeastlogError(details, code.name, reason, metadata)
