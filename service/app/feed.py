"""The feed of every game (``WatchAll``): every row a caller may see, of every game or of
one kind or tournament, from a position a client stores to resume.

The feed is the games' own watch streams merged (``Application.watch``, so each row is
exactly what ``WatchGame`` sends this caller: the same visibility policy), one task per
game, and the game list looked at again every ``LOOK_SECONDS`` for games created or
started since.  Rows of one game come in seq order; rows of different games interleave
as they are recorded.

A position is where the feed stands: for each game, the last seq it has sent.  Its token
is that map, compressed, base64url (opaque to clients, bound to the feed's filter).  A
client that resumes from the position after a row misses none of the rows after it and
is sent none of the rows before it, whatever happened meanwhile (a server restart
included), since the rows themselves are the log's.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import json
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from feastlog.service.app.auth import Caller
from feastlog.service.app.errors import BadRequest, PermissionDenied, WaitingForEntropy
from feastlog.service.app.reads import MAX_PAGE_SIZE

LOOK_SECONDS = 0.5  # between looks at the game list for games created or started
TOKEN_VERSION = 1


@dataclass(frozen=True)
class FeedRow:
    """One row of the feed: its game, the step as the caller may see it, the position
    after it."""

    game_id: str
    step: Any
    typed_member: str
    position: str


def _filter_digest(kind: str, tournament_id: str) -> str:
    return hashlib.sha256(json.dumps([kind, tournament_id]).encode()).hexdigest()[:16]


def position_token(sent: dict[str, int], kind: str, tournament_id: str) -> str:
    """The token of a position (see the module doc)."""
    body = json.dumps(
        {"v": TOKEN_VERSION, "f": _filter_digest(kind, tournament_id), "sent": sent},
        separators=(",", ":"),
        sort_keys=True,
    )
    return base64.urlsafe_b64encode(zlib.compress(body.encode(), 9)).decode().rstrip("=")


def read_position(token: str, kind: str, tournament_id: str) -> dict[str, int]:
    """The position a token holds; BadRequest (field ``position``) for one that is not a
    feed's, or was issued for another filter."""
    if not token:
        return {}
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        found = json.loads(zlib.decompress(raw, bufsize=16 * 1024))
        sent = found["sent"]
        ok = found.get("v") == TOKEN_VERSION and isinstance(sent, dict)
        ok = ok and all(isinstance(k, str) and type(v) is int for k, v in sent.items())
    except (binascii.Error, ValueError, zlib.error, KeyError, TypeError):
        ok = False
    if not ok:
        raise BadRequest("position is not a position this feed gave", field="position")
    if found.get("f") != _filter_digest(kind, tournament_id):
        raise BadRequest(
            "position was given for another filter (game_kind, tournament_id): "
            "resume with the filter it came with",
            field="position",
        )
    return dict(sent)


async def watch_all(
    app: Any, caller: Caller, kind: str = "", tournament_id: str = "", position: str = ""
) -> AsyncIterator[FeedRow]:
    """The feed (see the module doc), until the caller goes."""
    sent = read_position(position, kind, tournament_id)
    rows: asyncio.Queue[tuple[str, Any, str] | BaseException] = asyncio.Queue()
    following: dict[str, asyncio.Task[None]] = {}

    async def follow(game_id: str, from_seq: int) -> None:
        try:
            watching = await app.watch(caller, game_id, from_seq)
            async for step in watching.steps:
                await rows.put((game_id, step, watching.typed_member))
        except WaitingForEntropy:
            following.pop(game_id, None)  # looked at again once it starts
        except PermissionDenied:
            # a seat's token sees its own game, not another's (as WatchGame refuses it):
            # that game is left out of this caller's feed, which goes on with the rest
            return
        except Exception as failed:  # the stream's error ends the feed, told as it is
            await rows.put(failed)

    async def look() -> None:
        while True:
            for game_id in await _listed(app, kind, tournament_id):
                if game_id not in following:
                    start = sent.get(game_id, 0) + 1
                    following[game_id] = asyncio.create_task(follow(game_id, start))
            await asyncio.sleep(LOOK_SECONDS)

    looking = asyncio.create_task(look())
    try:
        while True:
            got = await rows.get()
            if isinstance(got, BaseException):
                raise got
            game_id, step, member = got
            if step.row.seq <= sent.get(game_id, 0):
                continue  # already sent (never happens: each game is followed once)
            sent[game_id] = step.row.seq
            yield FeedRow(game_id, step, member, position_token(sent, kind, tournament_id))
    finally:
        looking.cancel()
        for task in following.values():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await looking


async def _listed(app: Any, kind: str, tournament_id: str) -> list[str]:
    """Every game of the filter, oldest first (every page of the game list)."""
    found: list[str] = []
    page = ""
    while True:
        listed = await app.games(kind, MAX_PAGE_SIZE, tournament_id, page)
        found += [g.game_id for g in listed.games if not g.waiting_for_entropy]
        page = listed.next_page_token
        if not page:
            return found[::-1]  # the list is newest first
