"""Credentials: the organiser key and seat tokens (stored only as sha256)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

# the key file's rules are the client's too: it reads the key beside a database
from feastlog.client.files import KEY_ENV as KEY_ENV
from feastlog.client.files import KEY_FILE as KEY_FILE
from feastlog.client.files import KEY_MIN_LENGTH as KEY_MIN_LENGTH
from feastlog.client.files import OrganiserKeyError as OrganiserKeyError
from feastlog.client.files import check_key as check_key
from feastlog.client.files import read_key_file as read_key_file
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.record.visibility import sender_of_another_game
from feastlog.service.app.errors import PermissionDenied, Unauthenticated
from feastlog.service.files import key_path as key_path
from feastlog.service.files import make_private_folder, write_new_private_file

NEW_KEY_HINT = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def organiser_key(db_path: str) -> tuple[str, str]:
    """The organiser key and where it comes from: the environment, or a file made on first start.

    Raises ``OrganiserKeyError`` for a key that is empty, short, or in a file others can reach.
    """
    from_env = os.environ.get(KEY_ENV)
    if from_env:
        source = f"${KEY_ENV}"
        fix = f"set it to a longer one ({NEW_KEY_HINT}), or unset it to use the key file"
        return check_key(from_env.strip(), source, fix), source
    path = key_path(db_path)
    try:
        if not path.exists():
            make_private_folder(path.parent)
            write_new_private_file(path, "org_" + secrets.token_urlsafe(32) + "\n")
    except OSError as failed:
        raise OrganiserKeyError(
            f"cannot write the organiser key file {path}: {failed.strerror or failed}"
        ) from failed
    return read_key_file(path), str(path)


def find_organiser_key(explicit: str | None = None, folder: str = ".") -> str | None:
    """The organiser key for a client: an option, the environment, or the key file here.

    A key file the server would refuse raises ``OrganiserKeyError`` rather than sending it.
    """
    if explicit:
        return explicit
    if os.environ.get(KEY_ENV):
        return os.environ[KEY_ENV].strip()
    path = Path(folder) / KEY_FILE
    return read_key_file(path) if os.path.exists(path) else None


def new_seat_token() -> str:
    """A fresh seat token (shown once; only its hash is stored)."""
    return "seat_" + secrets.token_urlsafe(24)


SEAT_TOKEN_LABEL = b"feastlog seat token"


def derived_seat_token(organiser_key: str, game_id: str, seat: int) -> str:
    """A published round's seat token, the same each time it is asked for (a retry of a
    lost PublishRound answer is given the tokens again): ``seat_`` and the first 32
    characters of base64url(HMAC-SHA256(organiser key, label || game id || uint32_be(seat))),
    192 bits, as long as a fresh token.  Only the holder of the organiser key can make
    it, and the key is never shown nor stored with the record; the server seeds are
    revealed, so they never go in."""
    message = SEAT_TOKEN_LABEL + game_id.encode() + seat.to_bytes(4, "big")
    digest = hmac.new(organiser_key.encode(), message, hashlib.sha256).digest()
    return "seat_" + base64.urlsafe_b64encode(digest).decode()[:32]


def token_sha256(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the organiser, a named arbiter, a seat of one game, or an
    anonymous spectator."""

    role: str  # "organiser", "arbiter", "seat" or "anonymous"
    game_id: str = ""
    seat: int = -1
    name: str = ""  # a named arbiter's name
    key_sha256: str = ""  # a named arbiter's key, as stored: whether it still stands

    @property
    def ruled_by(self) -> str:
        """Who a ruling by this caller is recorded as made by."""
        return self.name if self.role == "arbiter" else self.role

    @property
    def holder(self) -> str:
        """Whose credential this is, named the same in every game (never the credential):
        the request log's name, a seat's with its game."""
        if self.role == "seat":
            return sender_of_another_game(self.seat, self.game_id)
        return self.log_name()

    def log_name(self) -> str:
        """The caller as the request log names it (never the credential)."""
        if self.role == "arbiter":
            return f"arbiter:{self.name}"
        if self.role == "seat":
            return f"seat:{self.seat}"
        return self.role

    def viewer(self, game_id: str) -> Viewer:
        """How this caller sees game ``game_id``."""
        if self.role in ("organiser", "arbiter"):
            return ARBITER
        if self.role == "seat":
            if self.game_id != game_id:
                raise PermissionDenied("this seat token belongs to another game")
            return Viewer.of_seat(self.seat)
        return SPECTATOR

    def require_organiser(self) -> None:
        """Refuse unless this caller holds the organiser key."""
        if self.role == "anonymous":
            raise Unauthenticated("this needs the organiser key (authorization: Bearer ...)")
        if self.role == "arbiter":
            raise PermissionDenied("only the organiser can do this, not a named arbiter")
        if self.role != "organiser":
            raise PermissionDenied("only the organiser can do this")

    def label(self, game_id: str) -> str:
        """How a refused command's sender is recorded: its actor, or whose token it was."""
        if self.from_another_game(game_id):
            return sender_of_another_game(self.seat, self.game_id)
        return {"organiser": "arbiter", "arbiter": "arbiter", "anonymous": "anonymous"}.get(
            self.role
        ) or (f"seat:{self.seat}")

    def from_another_game(self, game_id: str) -> bool:
        """Whether this is a seat token of a game other than ``game_id``."""
        return self.role == "seat" and self.game_id != game_id

    def actor(self, game_id: str) -> str:
        """The record's actor name for a command from this caller in ``game_id``."""
        if self.role in ("organiser", "arbiter"):
            return "arbiter"
        if self.role == "seat":
            if self.game_id != game_id:
                raise PermissionDenied("this seat token belongs to another game")
            return f"seat:{self.seat}"
        raise Unauthenticated(
            "send a seat token to play, or the organiser's or an arbiter's key to rule "
            "(authorization: Bearer ...)"
        )


# Who reads a file or a record offline: whoever holds the file holds its seeds already.
ORGANISER = Caller("organiser")

# The caller of the RPC being served, as the guard (service/grpc/guard.py) resolved it from
# the call's metadata before the servicer ran: each RPC runs in a task of its own, so
# this is that call's and no other's; None outside a guarded call.
CALLER: ContextVar[Caller | None] = ContextVar("feastlog_caller", default=None)

SeatLookup = Callable[[str], "tuple[str, int] | None"]
TOKENS_KEPT = 100_000  # seat tokens remembered after their first use (about 200 bytes each)


def no_seats(digest: str) -> tuple[str, int] | None:
    """A seat lookup that knows no token."""
    return None


ArbiterLookup = Callable[[str], "str | None"]
ARBITER_PREFIX = "arb_"
ARBITER_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")
# Who a record names by role (a ruling's ``ruled_by`` is the organiser's role or an
# arbiter's name): no arbiter takes one of these names.
ROLE_NAMES = frozenset({"organiser", "arbiter", "server", "spectator", "anonymous"})


def no_arbiters(digest: str) -> str | None:
    """An arbiter lookup that knows no key."""
    return None


def new_arbiter_key() -> str:
    """A fresh named arbiter's key (shown once; only its hash is stored)."""
    return ARBITER_PREFIX + secrets.token_urlsafe(32)


def check_arbiter_name(name: str, new: bool = False) -> str:
    """An arbiter's name: 1-40 lowercase letters, digits, '_', '.', '-' (a letter or digit
    first), and for a ``new`` arbiter no role's name; ValueError otherwise."""
    if not ARBITER_NAME.fullmatch(name):
        raise ValueError(
            f"an arbiter's name is 1 to 40 lowercase letters, digits, '_', '.' or '-', not {name!r}"
        )
    if new and name in ROLE_NAMES:  # one added before this check can still be revoked
        raise ValueError(
            f"{name!r} names a role in the record, not an arbiter: a ruling by an arbiter "
            f"so named would read as one by the {name}; pick another name"
        )
    return name


class Credentials:
    """Resolves bearer tokens to callers.

    Seat tokens are looked up in the store by their sha256 the first time they are used
    (an index look-up) and remembered, so start-up reads none of them.
    """

    def __init__(
        self,
        organiser: str,
        lookup: SeatLookup = no_seats,
        arbiters: ArbiterLookup = no_arbiters,
        remember_arbiters: bool = True,
    ) -> None:
        self._organiser = organiser
        self._lookup = lookup
        self._seats: OrderedDict[str, tuple[str, int] | None] = OrderedDict()
        self._arbiter_lookup = arbiters
        # named arbiters' keys by sha256: looked up on first use; emptied at every add or
        # revoke, so a revoked key is refused from the next call on. On a store other nodes
        # share, a key revoked through another node must be refused here at once too: then
        # every call by an arbiter key is looked up (by index) and nothing is remembered.
        self._arbiters: dict[str, str | None] = {}
        self._remember_arbiters = remember_arbiters

    def arbiters_changed(self) -> None:
        """Forget every remembered arbiter key (one was added or revoked)."""
        self._arbiters.clear()

    def still_holds(self, caller: Caller) -> bool:
        """Whether ``caller``'s credential still stands: a named arbiter's key may have been
        revoked since it was checked (the organiser's key and seat tokens are not revoked).
        What a stream asks before each row it sends."""
        if caller.role != "arbiter":
            return True
        return self._arbiter(caller.key_sha256) == caller.name

    def _arbiter(self, digest: str) -> str | None:
        if not self._remember_arbiters:
            return self._arbiter_lookup(digest)
        if digest not in self._arbiters:
            if len(self._arbiters) > TOKENS_KEPT:
                self._arbiters.clear()
            self._arbiters[digest] = self._arbiter_lookup(digest)
        return self._arbiters[digest]

    def seat_token(self, game_id: str, seat: int) -> str:
        """A tournament seat's token, derived from the organiser key (``derived_seat_token``);
        a fresh random one when the server holds no organiser key (never derived from an
        empty key: anyone could make it)."""
        if not self._organiser:
            return new_seat_token()
        return derived_seat_token(self._organiser, game_id, seat)

    def add_seat(self, token: str, game_id: str, seat: int) -> None:
        """Remember a new seat token (by its hash)."""
        self._remember(token_sha256(token), (game_id, seat))

    def _remember(self, digest: str, seat: tuple[str, int] | None) -> None:
        self._seats[digest] = seat
        self._seats.move_to_end(digest)
        while len(self._seats) > TOKENS_KEPT:
            self._seats.popitem(last=False)

    def _seat(self, digest: str) -> tuple[str, int] | None:
        """The (game, seat) of a token's sha256: remembered, else looked up and remembered."""
        if digest in self._seats:
            self._seats.move_to_end(digest)
            return self._seats[digest]
        found = self._lookup(digest)
        # an unknown token is remembered as unknown too: on this server, new tokens come
        # only from games it creates, and add_seat replaces the entry then
        self._remember(digest, found)
        return found

    def caller(self, metadata: Sequence[tuple[str, str | bytes]]) -> Caller:
        """The caller named by ``authorization: Bearer ...`` metadata (anonymous when absent).

        Credentials that are sent are always checked: a malformed or unknown token is
        refused, never taken for a spectator.
        """
        values = [v for k, v in metadata if k == "authorization"]
        if not values:
            return Caller("anonymous")
        if len(values) > 1:
            raise Unauthenticated("send one authorization header, not several")
        text = values[0].decode(errors="replace") if isinstance(values[0], bytes) else values[0]
        scheme, _, token = text.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthenticated("authorization must be 'Bearer <token>'")
        if self._organiser and hmac.compare_digest(token.encode(), self._organiser.encode()):
            return Caller("organiser")
        if token.startswith(ARBITER_PREFIX):
            digest = token_sha256(token)
            name = self._arbiter(digest)
            if name is None:
                raise Unauthenticated("this arbiter key is not known to this server (or revoked)")
            return Caller("arbiter", name=name, key_sha256=digest)
        found = self._seat(token_sha256(token))
        if found is None:
            raise Unauthenticated("this token is not known to this server")
        return Caller("seat", found[0], found[1])
