"""The named arbiters: the organiser adds and revokes their keys, and lists them.

A key is shown once and kept as its sha256 in the store (any node of a shared store
knows it); a revoked key is refused from the next call on, and a stream its arbiter
opened ends at once (``streams.Wakeups``).
"""

from __future__ import annotations

from collections.abc import Callable

from feastlog.service.app.auth import (
    Caller,
    Credentials,
    check_arbiter_name,
    new_arbiter_key,
    token_sha256,
)
from feastlog.service.app.clock import Clock
from feastlog.service.app.errors import ArbiterExists, ArbiterNotFound, BadRequest
from feastlog.service.app.streams import Wakeups
from feastlog.service.store.writer import Database


class Arbiters:
    """The organiser's use cases on named arbiters."""

    def __init__(
        self, db: Database, credentials: Credentials, wakeups: Wakeups, clock: Callable[[], Clock]
    ) -> None:
        self.db = db
        self.credentials = credentials
        self.wakeups = wakeups
        self.clock = clock

    async def add_arbiter(self, caller: Caller, name: str) -> str:
        """Add a named arbiter (organiser): its key, shown once and stored as sha256."""
        arbiter_name(name, new=True)
        caller.require_organiser()
        key = new_arbiter_key()
        if not await self.db.call(
            self.db.store.add_arbiter, name, token_sha256(key), self.clock().now()
        ):
            raise ArbiterExists(f"arbiter {name!r} already holds a key: revoke it first")
        self.credentials.arbiters_changed()
        return key

    async def revoke_arbiter(self, caller: Caller, name: str) -> str:
        """Revoke a named arbiter's key (organiser): refused from the next call on."""
        arbiter_name(name)
        caller.require_organiser()
        at = self.clock().now()
        if not await self.db.call(self.db.store.revoke_arbiter, name, at):
            raise ArbiterNotFound(f"there is no arbiter {name!r} holding a key")
        self.credentials.arbiters_changed()
        self.wakeups.wake_all()  # a stream the arbiter opened ends now, not at its next row
        return at

    async def list_arbiters(self, caller: Caller) -> list[tuple[str, str, str]]:
        """Every named arbiter (organiser): (name, added at, revoked at or '')."""
        caller.require_organiser()
        return await self.db.call(self.db.store.arbiters)


def arbiter_name(name: str, new: bool = False) -> str:
    """A well-formed arbiter name (``new``: no role's name), or BadRequest naming the field
    (asked before who is calling: a malformed request is refused as such)."""
    try:
        return check_arbiter_name(name, new)
    except ValueError as bad:
        raise BadRequest(str(bad), field="name") from bad
