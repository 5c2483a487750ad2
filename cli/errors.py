"""The CLI's one error class and its exit codes.

- 0: done (and every record asked about verified);
- 1: verification failed: a record does not verify (audit, verify, a record that breaks
  a rule when replayed);
- 2: usage: a bad option, argument or value (click's own, or a request the server calls
  malformed);
- 3: cannot reach the server or the file: no server, TLS refused, a database in use,
  missing, damaged, a folder or not a database, a record or TLS file that is missing, a
  folder or unreadable, an unusable key file, a file it cannot write (the same for
  ``serve``);
- 4: refused: the server or the record says no, or would (no organiser key or a wrong
  one, unknown game or seq, wrong token, not allowed, a rule, a game waiting for seat
  entropy);
- 70: a bug in feastlog (one line; ``FEASTLOG_DEBUG=1`` shows the traceback), the
  server's too: an answer INTERNAL or UNKNOWN (its incident id finds the cause in the
  server's log);
- 130: interrupted (Ctrl-C).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from feastlog.client.errors import FeastlogError

OK = 0
FAILED = 1
USAGE = 2
UNREACHABLE = 3
REFUSED = 4
BUG = 70
INTERRUPTED = 130

# A gRPC status as an exit code: what the caller can do about it. Keyed by the status's
# name so that this module, which the command group imports, does not import gRPC.
EXIT_OF_STATUS = {
    "INVALID_ARGUMENT": USAGE,
    "OUT_OF_RANGE": USAGE,
    "RESOURCE_EXHAUSTED": USAGE,
    "UNAVAILABLE": UNREACHABLE,
    "DEADLINE_EXCEEDED": UNREACHABLE,
    "CANCELLED": UNREACHABLE,
    "UNIMPLEMENTED": UNREACHABLE,
    "INTERNAL": BUG,  # the server failed: not something the caller can change
    "UNKNOWN": BUG,
}
# A refusal whose reason says more than its status (``service.app.offline.DoesNotReplay``:
# a record that does not fold is one that does not verify).
EXIT_OF_REASON = {"RECORD_DOES_NOT_REPLAY": FAILED}
# What a file's reader can do about a refusal of the file itself, by its reason.
LOCAL_HINTS = {"STORE_LOCKED": " (another process holds it: pass --server, or stop it)"}


class CliError(click.ClickException):
    """A failure in plain words, with the exit code that says what kind it is."""

    def __init__(self, message: str, exit_code: int = REFUSED, reason: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it per class
        self.reason = reason  # a server's refusal: its ErrorInfo reason ('' if none)


class ServerLog(logging.Handler):
    """The log of a server a command starts on its file (``new``, ``demo``, ``rule``,
    ``arbiter``), on the terminal: warnings and errors one line each, and an exception's
    traceback (an incident's cause) only with ``FEASTLOG_DEBUG=1``, as for the CLI's own."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        """One line on stderr (and the traceback, when debugging)."""
        try:
            line = f"server: {record.getMessage()}"
            if record.exc_info and os.environ.get("FEASTLOG_DEBUG"):
                line += "\n" + logging.Formatter().formatException(record.exc_info)
            elif record.exc_info:
                line += " (FEASTLOG_DEBUG=1 shows where)"
            click.echo(line, err=True)
        except Exception:
            self.handleError(record)


def usage(message: str) -> CliError:
    """A bad option, argument or value: exit 2."""
    return CliError(message, USAGE)


def unreachable(message: str) -> CliError:
    """The server or the file cannot be used: exit 3."""
    return CliError(message, UNREACHABLE)


def cannot_read(path: str, error: OSError | UnicodeDecodeError) -> CliError:
    """A file that is missing, a folder, unreadable or not text: exit 3, saying why."""
    if isinstance(error, UnicodeDecodeError):
        why = f"not UTF-8 text (byte {error.object[error.start]:#04x} at {error.start})"
    else:
        why = error.strerror or str(error)
    return unreachable(f"cannot read {path}: {why}")


def output_file(path: str) -> str:
    """``path``, unless writing there would destroy a store: a DuckDB database, its
    write-ahead log, commit mark or announcement, or an organiser key file (exit 2,
    nothing written).

    ``export GAME -o games.duckdb --db games.duckdb`` replaced the live database with
    the JSON of one game.
    """
    from feastlog.service.announce import SUFFIX  # the service only when an output is named
    from feastlog.service.app.auth import KEY_FILE
    from feastlog.service.store.port import MARK_SUFFIX, WAL_SUFFIX

    if not path:
        raise usage("an output file needs a name (it was empty)")

    file = Path(path)
    base = next(
        (path[: -len(s)] for s in (WAL_SUFFIX, SUFFIX, MARK_SUFFIX) if path.endswith(s)), None
    )
    store = _is_duckdb(file) or (base is not None and _is_duckdb(Path(base)))
    if store or file.name == KEY_FILE:
        what = "a DuckDB database's file" if store else "an organiser key file"
        raise usage(f"{path} is {what}: writing there would destroy it; pick another file")
    return path


def _is_duckdb(file: Path) -> bool:
    """Whether ``file`` is a DuckDB database (its header says so)."""
    try:
        with file.open("rb") as opened:
            return opened.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def cannot_write(path: str, error: OSError) -> CliError:
    """An output file that is a folder, in a missing folder or not writable: exit 3."""
    return unreachable(f"cannot write {path}: {error.strerror or error}")


def failed(message: str) -> CliError:
    """A record that does not verify: exit 1."""
    return CliError(message, FAILED)


def from_failure(refused: FeastlogError, where: str, local: bool = False) -> CliError:
    """A refusal or failure of a call as a CliError: its status and message, and what to
    do when unreachable.

    ``local``: answered in this process on a file no server holds
    (``service.grpc.inprocess``): the refusal's own words, as a tool reading the file says
    them, with no status to name and no server to reach.
    """
    status, details, reason = refused.status or "UNKNOWN", refused.message, refused.reason
    exit_code = EXIT_OF_REASON.get(reason, EXIT_OF_STATUS.get(status, REFUSED))
    if local:
        return CliError(details + LOCAL_HINTS.get(reason, ""), exit_code, reason)
    if status == "UNAVAILABLE":
        hint = ""
        lowered = details.lower()
        if "ssl" in lowered or "handshake" in lowered or "tls" in lowered:
            hint = " (TLS: check --ca, --tls-cert and --tls-key)"
        # gRPC ends a failed connection's details with its subchannel's own status, ": OK"
        first = details.splitlines()[0].removesuffix(": OK") if details else ""
        return CliError(f"cannot reach {where}: {first}{hint}", exit_code)
    return CliError(f"{status}: {details}", exit_code, reason)
