"""One-time seat links, and the browser sessions they open.

A seat's link carries a one-time code (``sl_…``): the first browser that opens it and
confirms takes the seat's session (an ``ss_…`` value kept in an HttpOnly cookie), and the
code is spent, useless to anyone who sees the link later.  A new link for a seat replaces
the seat's unused one.  Only the sha256 of a code or a session is kept: the file gives
neither away.

They are kept in an owner-only JSON file beside the database (``<db>.seat-links``),
rewritten whole (atomically) at each change, so a restarted server still takes the codes
it handed out and still knows the phones already seated.  A server on PostgreSQL keeps
them in its memory (its nodes share no folder): there a restart forgets unused codes and
open sessions (the seat token still opens the seat).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from feastlog.service.files import FILE_MODE

CODE_PREFIX = "sl_"
SESSION_PREFIX = "ss_"
SUFFIX = ".seat-links"
# bounds: a session per code, and no more than this many kept (the oldest go first)
MOST_SESSIONS = 100_000


def links_path(db_path: str) -> Path:
    """Where a server holding ``db_path`` keeps its seat links."""
    return Path(db_path).resolve().with_name(Path(db_path).name + SUFFIX)


def link_path(game_id: str, code: str) -> str:
    """Where a seat's one-time code is taken on the web pages."""
    return f"/games/{quote(game_id, safe='')}/seat/link?code={quote(code, safe='')}"


def _digest(secret: str) -> str:
    """How a code or a session is kept: its sha256, never itself."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SeatOf:
    """The seat a code or a session stands for."""

    game_id: str
    seat: int


class SeatLinks:
    """The unused codes and the open sessions, by their sha256 (a file's, or memory's)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        # the pages' public address, which links are made on: ``serve --link-base``, else
        # where they are served (``serve_http`` sets it); "" when no pages are served
        self.pages_url = ""
        self._lock = threading.Lock()
        self._codes: dict[str, SeatOf] = {}
        self._sessions: dict[str, SeatOf] = {}
        if path is not None and path.exists():
            kept = json.loads(path.read_text(encoding="utf-8"))
            self._codes = {d: SeatOf(g, s) for d, (g, s) in kept.get("codes", {}).items()}
            self._sessions = {d: SeatOf(g, s) for d, (g, s) in kept.get("sessions", {}).items()}

    def mint(self, game_id: str, seat: int) -> str:
        """A new one-time code for a seat; the seat's unused code, if any, is dropped."""
        code = CODE_PREFIX + secrets.token_urlsafe(24)
        with self._lock:
            mine = SeatOf(game_id, seat)
            self._codes = {d: s for d, s in self._codes.items() if s != mine}
            self._codes[_digest(code)] = mine
            self._save()
        return code

    def redeem(self, code: str) -> str | None:
        """The session a code opens, once: None for a code spent, replaced or never made."""
        with self._lock:
            seat = self._codes.pop(_digest(code), None)
            if seat is None:
                return None
            session = SESSION_PREFIX + secrets.token_urlsafe(24)
            self._sessions[_digest(session)] = seat
            while len(self._sessions) > MOST_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            self._save()
        return session

    def seat_of_code(self, code: str) -> SeatOf | None:
        """The seat an unused code is for (the confirmation page names it)."""
        return self._codes.get(_digest(code))

    def seat_of_session(self, session: str) -> SeatOf | None:
        """The seat a session holds (None: not known here)."""
        return self._sessions.get(_digest(session))

    def close(self, session: str) -> None:
        """Forget a session (the page's "forget" button)."""
        with self._lock:
            if self._sessions.pop(_digest(session), None) is not None:
                self._save()

    def _save(self) -> None:
        """Write the file whole, owner-only, replacing the old one at once."""
        if self.path is None:
            return
        kept = {
            "codes": {d: [s.game_id, s.seat] for d, s in self._codes.items()},
            "sessions": {d: [s.game_id, s.seat] for d, s in self._sessions.items()},
        }
        temp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "w") as out:
            json.dump(kept, out)
        os.replace(temp, self.path)
