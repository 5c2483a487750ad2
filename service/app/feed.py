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
included), since the rows themselves are the log's.  A token is checked with bounds
before anything of it is decoded (``read_position``): its length, what it inflates to, and
its shape, so a crafted one is refused (field ``position``) and never costs more than its
bounds.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import re
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from feastlog.replay import games
from feastlog.service.app import streams
from feastlog.service.app.auth import Caller
from feastlog.service.app.bounds import FIELDS, KIB, checked
from feastlog.service.app.errors import BadRequest, PermissionDenied, WaitingForEntropy
from feastlog.service.app.reads import MAX_PAGE_SIZE

LOOK_SECONDS = 0.5  # between looks at the game list for games created or started
TOKEN_VERSION = 1
# What a token may inflate to: a map of about 35,000 games.  The token itself is taken up
# to 48 KiB (``bounds.FIELDS``), which holds about 3,000 games' random ids, more of
# sequential ones (they compress better); a crafted 48 KiB token inflated to 38 MB.
MOST_INFLATED = 1024 * KIB
MOST_SEQ = 1 << 62  # a seq no game reaches (and an int every store takes)
TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9_-]*")  # base64url, unpadded
# A JSON string, escapes included: what is left of a position without its strings is
# its shape, ``{"f":,"sent":{:1,:2},"v":1}``: two objects, one inside the other, no list.
JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


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
    feed's, or was issued for another filter.

    Its bounds come before any decoding: its length (FieldTooLong), its characters, what
    it inflates to (``MOST_INFLATED``) and its shape (an object of ``v``, ``f`` and
    ``sent``, a map of game ids to seqs: nothing nested deeper), so that no token costs
    more than its bounds to refuse (a zlib of 100,000 ``[`` no longer reaches the parser).
    """
    if not token:
        return {}
    checked("position", token)
    found = _opened(token)
    sent = found.get("sent") if isinstance(found, dict) else None
    if not isinstance(sent, dict) or found.get("v") != TOKEN_VERSION:
        raise BadRequest("position is not a position this feed gave", field="position")
    if not all(_game_and_seq(game_id, seq) for game_id, seq in sent.items()):
        raise BadRequest("position is not a position this feed gave", field="position")
    if found.get("f") != _filter_digest(kind, tournament_id):
        raise BadRequest(
            "position was given for another filter (game_kind, tournament_id): "
            "resume with the filter it came with",
            field="position",
        )
    return dict(sent)


def _opened(token: str) -> Any:
    """A token's JSON, inflated and parsed within the bounds (None: not a position)."""
    if not TOKEN_CHARACTERS.fullmatch(token):
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        inflater = zlib.decompressobj()
        body = inflater.decompress(raw, MOST_INFLATED)
    except (binascii.Error, ValueError, zlib.error):
        return None
    if inflater.unconsumed_tail:
        raise BadRequest(
            f"position inflates to more than {MOST_INFLATED // KIB} KiB: it is not a "
            "position this feed gave",
            field="position",
        )
    if not inflater.eof or inflater.unused_data:
        return None  # cut short, or with bytes after its end
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    shape = JSON_STRING.sub("", text)
    if "[" in shape or shape.count("{") > 2:
        return None  # nested deeper than a position is: never parsed
    try:
        return json.loads(text)
    except ValueError:
        return None


def _game_and_seq(game_id: Any, seq: Any) -> bool:
    """Whether an entry of a position is a game id (within its bound) and a seq."""
    bound = FIELDS["game_id"].bound
    ok_id = isinstance(game_id, str) and 0 < len(game_id) <= bound
    return ok_id and type(seq) is int and 0 <= seq <= MOST_SEQ


async def open_feed(
    app: Any, caller: Caller, kind: str = "", tournament_id: str = "", position: str = ""
) -> AsyncIterator[FeedRow]:
    """The feed (``watch_all``) once its request is checked: a bad position or an unknown
    kind is refused here, before anything is sent (an SSE stream's 200 included).  It
    ends once the caller's credential no longer stands (``Application.held``)."""
    if kind and kind not in games.kinds():  # a filter of no kind would match nothing
        raise games.UnknownGameKind(kind)
    sent = read_position(position, kind, tournament_id)
    return app.held(caller, watch_all(app, caller, kind, tournament_id, sent))


async def watch_all(
    app: Any, caller: Caller, kind: str, tournament_id: str, sent: dict[str, int]
) -> AsyncIterator[FeedRow]:
    """The feed (see the module doc) from the position ``sent``, until the caller goes.

    Its rows wait for the reader in a queue of ``streams.QUEUE_ROWS``: a game's follower
    waits for room (each follows the game's rows in memory, so what waits is the queue and
    a row a game), and the game list is not looked at again while the queue is full.  A
    reader that does not read is ended by its send's bound (``streams.sent``, or the SSE
    stream's); when the feed is closed, every task of it is cancelled and waited for.
    """
    rows: asyncio.Queue[tuple[str, Any, str] | BaseException] = asyncio.Queue(streams.QUEUE_ROWS)
    following: dict[str, asyncio.Task[None]] = {}

    async def follow(game_id: str, from_seq: int) -> None:
        try:
            watching = await app.watch(caller, game_id, from_seq, held=False)
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
        try:
            while True:
                if not rows.full():  # a reader that is behind needs no new games yet
                    for game_id in await _listed(app, kind, tournament_id):
                        if game_id not in following:
                            start = sent.get(game_id, 0) + 1
                            following[game_id] = asyncio.create_task(follow(game_id, start))
                await asyncio.sleep(LOOK_SECONDS)
        except Exception as failed:  # the store failed: the feed ends, told so
            await rows.put(failed)

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
            # a row at a time, other work between: a queue with room, or an SSE send under
            # its buffer's bound, goes on without waiting, and a feed catching up would
            # hold the loop (every other call's answer) for as long as its rows last
            await asyncio.sleep(0)
    finally:
        tasks = [looking, *following.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


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
