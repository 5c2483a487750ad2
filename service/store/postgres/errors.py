"""psycopg's errors translated into the store's own, once, here."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import psycopg

from feastlog.service.incidents import new_incident_id
from feastlog.service.store import CannotOpenStore, StoreConflict, StoreUnavailable
from feastlog.service.store.port import redacted

P = ParamSpec("P")
R = TypeVar("R")

log = logging.getLogger("feastlog.store")


class _AbortedPipeline(logging.Filter):
    """psycopg's warning that a pipeline (an ``executemany``) aborted by an error could
    not be ended cleanly either: the error itself is raised, and translated and logged
    here under its incident (a key another node took first is an INFO), so the warning
    says nothing more."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return not (text.startswith("error ignored terminating") and "Pipeline" in text)


logging.getLogger("psycopg").addFilter(_AbortedPipeline())


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Translate psycopg's errors into the store's own, once, here.

    The cause goes to the server log under an incident id; the error the client may see
    carries only the id. A unique violation is a ``StoreConflict``: the writer's memory
    was behind what another node (or an earlier, unanswered commit) stored.
    """

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except psycopg.Error as error:
            raise store_error(method.__name__, error) from error

    return wrapper


def store_error(where: str, error: psycopg.Error) -> StoreUnavailable:
    """A psycopg error as the store's own, logged under a new incident id."""
    incident = new_incident_id()
    first = (str(error).splitlines() or [type(error).__name__])[0]
    if isinstance(error, psycopg.errors.UniqueViolation):
        # several nodes write one log: a key another node took first (two nodes' timers
        # for one deadline, a node whose memory was behind) is how the log decides, and
        # the writer takes it back from the log; not a failure of the store
        log.info("incident %s: the store refused a write in %s: %s", incident, where, first)
        return StoreConflict(
            f"the game store refused a write that was out of date (incident {incident}); try again",
            incident_id=incident,
        )
    log.error("incident %s: the store failed in %s: %s: %s", incident, where, type(error), first)
    if where != "write":
        message = f"the game store failed to read (incident {incident}); try again"
    else:
        message = (
            f"the game store failed to write (incident {incident}); try again: "
            "a command sent again with its command_id is recorded once"
        )
    return StoreUnavailable(message, incident_id=incident)


def open_error(shown_as: str, error: psycopg.Error, dsn: str = "") -> CannotOpenStore:
    """A psycopg error on opening the store, in one line that says what to do (without
    the DSN's password, which psycopg may quote)."""
    text = redacted((str(error).strip().splitlines() or [type(error).__name__])[0], dsn)
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        hint = "check the user and password in the DSN"
    elif "does not exist" in lowered:
        hint = "create it first (see docs/scaling.md), or pass --db with the right one"
    elif "permission denied" in lowered:
        hint = "connect as the role that owns feastlog's schema"
    elif "connection refused" in lowered or "timeout" in lowered:
        hint = "is PostgreSQL running there?"
    else:
        hint = "check the DSN and the server"
    return CannotOpenStore(f"cannot open {shown_as}: {text}: {hint}", path=shown_as)
