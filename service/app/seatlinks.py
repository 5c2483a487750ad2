"""One-time seat links, and the browser sessions they open.

A seat's link carries a one-time code (``sl_…``): the first browser that opens it and
confirms takes the seat's session (an ``ss_…`` value kept in an HttpOnly cookie), and the
code is spent, useless to anyone who sees the link later.  A new link for a seat replaces
the seat's unused one.  Only the sha256 of a code or a session is kept: nothing at rest
gives either away.

They are kept in the event store (``Links.add_seat_code`` and what follows it), so a
restarted server still takes the codes it handed out and still knows the phones already
seated, and on a store that nodes share any node serves them: a link made through one
node is taken through another, and the session it opens is honoured by every node.  A
code is spent in the store in one step (a conditional delete), so of two browsers, or two
nodes, taking one code at once exactly one gets the seat.  The reads go to the store's
read thread and the writes to the store's thread (``Database.read``, ``Database.call``):
the event loop never waits for a database round trip.  A server alone on its store
remembers the sessions it has looked up (``REMEMBERED``); nodes that share one ask it
each time.

A server before this kept them in an owner-only JSON file beside a DuckDB database
(``<db>.seat-links``): a server that finds one takes its entries into the store once, at
start, and removes the file (``adopt_file``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from feastlog.service.store.port import Links
from feastlog.service.store.writer import Database

CODE_PREFIX = "sl_"
SESSION_PREFIX = "ss_"
SUFFIX = ".seat-links"  # the file older servers kept them in, beside a DuckDB database
# bounds: a session per code, and no more than this many kept (the oldest go first)
MOST_SESSIONS = 100_000
# Sessions a server whose store no other process writes remembers once looked up: every
# request of a seat's page asks for its session, and a look-up on the store's read thread
# (a round trip to the store's process) made a ``/seat/legal`` 5.2 ms against 2.6 with a
# seat token's cookie; remembered, 1.2 against 1.3 (medians of 350, one real server on a
# DuckDB file, load 7-9 on 2 cores).  A store other nodes share is asked every time: a
# session ended through another node must end here at once.
REMEMBERED = 10_000

log = logging.getLogger("feastlog")


def links_path(db_path: str) -> Path:
    """Where a server before this one, holding ``db_path``, kept its seat links."""
    return Path(db_path).resolve().with_name(Path(db_path).name + SUFFIX)


def link_path(game_id: str, code: str) -> str:
    """Where a seat's one-time code is taken on the web pages."""
    return f"/games/{quote(game_id, safe='')}/seat/link?code={quote(code, safe='')}"


def digest(secret: str) -> str:
    """How a code or a session is kept: its sha256, never itself."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SeatOf:
    """The seat a code or a session stands for."""

    game_id: str
    seat: int


class SeatLinks:
    """The unused codes and the open sessions, in the store, by their sha256."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # the pages' public address, which links are made on: ``serve --link-base``, else
        # where they are served (``serve_http`` sets it); "" when no pages are served
        self.pages_url = ""
        self._remember = not db.store.shared
        self._held: OrderedDict[str, SeatOf] = OrderedDict()  # by the session's sha256
        self._changes = 0  # sessions ended or dropped here: a look-up begun before keeps nothing

    async def mint(self, game_id: str, seat: int) -> str:
        """A new one-time code for a seat; the seat's unused code, if any, is dropped."""
        code = CODE_PREFIX + secrets.token_urlsafe(24)
        await self.db.call(self.db.store.add_seat_code, digest(code), game_id, seat)
        return code

    async def seat_of_code(self, code: str) -> SeatOf | None:
        """The seat an unused code is for (the confirmation page names it)."""
        if not code.startswith(CODE_PREFIX):
            return None
        found = await self.db.read(_seat_of_code, digest(code))
        return SeatOf(*found) if found is not None else None

    async def redeem(self, code: str, game_id: str) -> str | None:
        """The session a code of ``game_id`` opens, once: None for a code spent, replaced,
        never made or another game's (that one stays unspent)."""
        if not code.startswith(CODE_PREFIX):
            return None
        session = SESSION_PREFIX + secrets.token_urlsafe(24)
        take = self.db.store.take_seat_code
        seat = await self.db.call(take, digest(code), game_id, digest(session), MOST_SESSIONS)
        if seat is None:
            return None
        self._forget()  # the store may have dropped its oldest sessions
        return session

    async def seat_of_session(self, session: str) -> SeatOf | None:
        """The seat a session holds (None: not open)."""
        if not session.startswith(SESSION_PREFIX):
            return None
        kept = digest(session)
        if kept in self._held:
            self._held.move_to_end(kept)
            return self._held[kept]
        before = self._changes
        found = await self.db.read(_seat_of_session, kept)
        if found is None:
            return None
        seat = SeatOf(*found)
        if self._remember and before == self._changes:
            self._held[kept] = seat
            while len(self._held) > REMEMBERED:
                self._held.popitem(last=False)
        return seat

    async def close(self, session: str) -> None:
        """End a session (the page's "forget" button)."""
        if session.startswith(SESSION_PREFIX):
            self._forget()
            await self.db.call(self.db.store.end_seat_session, digest(session))
            self._forget()  # nor what a look-up read meanwhile

    def _forget(self) -> None:
        """Forget every session remembered (one was ended, or may have been dropped)."""
        self._changes += 1
        self._held.clear()

    async def adopt_file(self, path: Path) -> None:
        """Take the seat links an older server kept in ``path`` into the store, once, and
        remove the file (one log line says so).  A file that cannot be read is left where
        it is, and said so: its links open nothing until it is fixed and the server
        started again."""
        if not path.exists():
            return
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            codes = [(d, str(g), int(s)) for d, (g, s) in kept.get("codes", {}).items()]
            sessions = [(d, str(g), int(s)) for d, (g, s) in kept.get("sessions", {}).items()]
        except (OSError, ValueError, TypeError, AttributeError) as bad:
            log.warning("%s: the seat links in it could not be read (%s); left there", path, bad)
            return
        new = await self.db.call(self.db.store.adopt_seat_links, codes, sessions)
        path.unlink()
        log.info(
            "%s: %d seat link codes and %d sessions taken into the store (%d new); "
            "the file is removed",
            path,
            len(codes),
            len(sessions),
            new,
        )


def _seat_of_code(store: Links, found: str) -> tuple[str, int] | None:
    """An unused code's seat, on the read thread."""
    return store.seat_of_code(found)


def _seat_of_session(store: Links, found: str) -> tuple[str, int] | None:
    """An open session's seat, on the read thread."""
    return store.seat_of_session(found)
