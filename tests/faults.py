"""A fault hook for servers run as processes (``ProcessServer(..., prelude=...)``): the
server kills itself with SIGKILL at a chosen point of the commits a tournament write
makes, so that a test sees what a ``kill -9`` there leaves in the file.

Nothing of it is in the service: the prelude is Python the server's process runs before
``feastlog serve`` (``cli.wire.spawn_server``), and it wraps two methods there.  A kill
point is armed by the first tournament write of the named action (``call_time``), and
counts that write's commits and those after it:

- ``("before", n)``: killed as the writer is about to send commit ``n`` to the store;
- ``("inflight", n)``: killed while commit ``n`` is with the store's process (it has been
  sent, not answered: that process dies with the server, wherever its transaction is);
- ``("after", n)``: killed as soon as commit ``n`` is in the store, before the stream or
  any waiter hears of it.
"""

from __future__ import annotations

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]

HOOK = """
import asyncio, os, signal, sys
sys.path.insert(0, {repository!r})
from feastlog.service.app import tournament as _tournament
from feastlog.service.store import writer as _writer

_MODE, _AT, _ACTION = {mode!r}, {at!r}, {action!r}
_counted = []  # commits since the armed write began (empty: not armed yet)


def _die():
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


_command = _tournament.Tournaments.command


async def _armed_command(self, caller, tid, command, now):
    if command.WhichOneof("action") == _ACTION and not _counted:
        _counted.append(0)
    return await _command(self, caller, tid, command, now)


_tournament.Tournaments.command = _armed_command
_commit = _writer.Database._commit


async def _killing_commit(self, batch):
    if not _counted:
        return await _commit(self, batch)
    _counted[0] += 1
    if _counted[0] == _AT and _MODE == "before":
        _die()
    if _counted[0] == _AT and _MODE == "inflight":
        asyncio.get_running_loop().call_later(0.0005, _die)
    written = await _commit(self, batch)
    if _counted[0] == _AT and _MODE in ("after", "inflight"):
        _die()
    return written


_writer.Database._commit = _killing_commit
"""


def kill_at(mode: str, at: int, action: str = "call_time") -> str:
    """The prelude of a server that kills itself at commit ``at`` of the first ``action``
    write (``mode``: before, inflight or after it)."""
    assert mode in ("before", "inflight", "after") and at >= 1
    return HOOK.format(repository=str(REPOSITORY), mode=mode, at=at, action=action)


PLACING_HOOK = """
import os, signal, sys
sys.path.insert(0, {repository!r})
from feastlog.service.store.postgres import log as _log

_AT = {at!r}
_placing = _log.position_of
_calls = [0]


def _killing_position_of(con, first):
    _calls[0] += 1
    if _calls[0] == _AT:  # the commit holds; its rows wait for a placement
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return _placing(con, first)


_log.position_of = _killing_position_of
"""


def kill_before_placing(at: int) -> str:
    """The prelude of a server on PostgreSQL that kills itself with SIGKILL between a
    commit and its placement in the log tree (the commit holds, no placement has begun),
    at the ``at``-th commit placed after it rather than in it (another node held the
    placement lock as it committed)."""
    assert at >= 1
    return PLACING_HOOK.format(repository=str(REPOSITORY), at=at)
