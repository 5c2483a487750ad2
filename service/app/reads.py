"""The read use cases, the same on a running server and offline on a file or a record.

``Replays`` answers views, legal commands, replays, pages, exports, audits, explanations,
what-ifs, refusals, the game list and one game's line, standings and stats.  Each is
load → decide → answer: it loads a folded game or a stored record through its source
(``service.app.source.Records``: the live games of ``service.app.games``, or
``service.app.offline``'s file or record), asks the visibility policy
(``replay.record.visibility``) what the caller may see, and answers with plain values
that the servicers and the CLI turn into messages or lines.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from google.protobuf.message import DecodeError

from feastlog.presentation import typed
from feastlog.presentation.explain import explain, table_view, what_if
from feastlog.presentation.page import Live, page_html
from feastlog.replay.games import fold
from feastlog.replay.games.engine import ARBITER, Viewer, capped
from feastlog.replay.games.fold import wrap_command
from feastlog.replay.games.text import plain_number
from feastlog.replay.record.audit import AuditReport
from feastlog.replay.record.export import export_record, to_text
from feastlog.replay.record.history import genesis_of
from feastlog.replay.record.rows import COMMAND, SEED_REVEAL
from feastlog.replay.record.visibility import (
    Open,
    Release,
    Step,
    behind_screen,
    look_as,
    refusals_for,
    seen,
    sees_all,
    table_viewer,
)
from feastlog.replay.tournament.outcomes import Standing
from feastlog.replay.tournament.spec import KIND as TOURNAMENT
from feastlog.service.app.auth import Caller
from feastlog.service.app.errors import BadRequest, GameNotFound
from feastlog.service.app.live import LiveGame
from feastlog.service.app.proving import Proving
from feastlog.service.app.source import Records
from feastlog.service.store import Listed, Rejection, StoredGame
from feastlog.service.store.projection import KindStats
from feastlog.v1 import record_pb2

T = TypeVar("T")

PAGE_SIZE = 50  # games per page of the list when the caller does not say
LIST_GAMES = "ListGames"  # the RPC whose page tokens Replays.games gives out
MAX_PAGE_SIZE = 500


@dataclass(frozen=True)
class TableNow:
    """The game now as the caller may see it (GetView)."""

    seq: int
    viewer: Viewer
    view: dict[str, Any]
    game_kind: str
    typed_member: str


@dataclass(frozen=True)
class Legal:
    """The commands the caller's seat may send now (up to LEGAL_CAP), and if partial."""

    seq: int
    commands: list[record_pb2.Command]
    partial: bool


@dataclass(frozen=True)
class Replay:
    """Rows of a game as one viewer saw them, with the rulings in force after the last."""

    viewer: Viewer
    steps: list[Step]
    rulings: dict[str, Any]
    last_seq: int
    typed_member: str


@dataclass(frozen=True)
class Exported:
    """A game's portable record, and whether it is complete (its seed revealed)."""

    text: str
    complete: bool
    file_name: str


@dataclass(frozen=True)
class Verified:
    """One report of a verification of every game, and how many games there are."""

    report: AuditReport
    total: int


@dataclass(frozen=True)
class Explained:
    """Everything about one row (``presentation.explain``), and the same in plain words."""

    found: dict[str, Any]
    lines: list[str]


@dataclass(frozen=True)
class WhatIf:
    """Another command in place of a row: legal or not, and what it would have done."""

    found: dict[str, Any]
    typed_member: str


@dataclass(frozen=True)
class Summary:
    """One line of the game list (the fields of feastlog.v1.GameSummary)."""

    game_id: str
    game_kind: str
    players: list[str]
    last_seq: int
    over: bool
    created_at: str
    waiting_for_entropy: bool = False
    tournament_id: str = ""


@dataclass(frozen=True)
class GamePage:
    """A page of the game list, newest first, and the token of the next ('' at the end)."""

    games: list[Summary]
    next_page_token: str


@dataclass(frozen=True)
class Standings:
    """A tournament's standings, from its finished games, and how many games run still."""

    lines: list[Standing]
    finished: int
    running: int


class Replays:
    """The read use cases over a source of games (see the module doc)."""

    def __init__(
        self,
        source: Records,
        proving: Proving,
        places: Callable[[str], Awaitable[dict[str, int]]] | None = None,
    ) -> None:
        self.source = source
        self.proving = proving
        # a tournament on the record's players by place (``Tournaments.places``); none
        # offline, where games carrying a tournament id keep the projection's order
        self._places = places

    async def _release(self, game_id: str, genesis: record_pb2.Genesis, over: bool) -> Release:
        """How open a game's record is now (``replay.record.visibility.Release``): a game whose
        seed was supplied is held back while another game dealt from it runs."""
        if not over or not genesis.seed_supplied:
            return Release(over)
        return Release(over, held=await self.source.twins_running(game_id) > 0)

    async def stored_release(self, game_id: str, stored: StoredGame) -> Release:
        """How open a stored game's record is now (a genesis that does not decode, in a
        damaged file, is taken as supplied: the store is asked)."""
        over = stored.rows[-1].kind == SEED_REVEAL
        try:
            genesis = genesis_of(stored.rows[0])
        except DecodeError:
            genesis = record_pb2.Genesis(seed_supplied=True)
        return await self._release(game_id, genesis, over)

    async def released(self, game: LiveGame) -> Release:
        """How open a folded game's record is now, decided as for a stored one: a game
        created with a seed already out (every earlier game dealt from it public) holds
        them back again while it runs, on every path alike."""
        return await self._release(game.game_id, game.genesis, game.over)

    async def view(self, caller: Caller, game_id: str) -> TableNow:
        """The game now as the caller may see it."""
        game = await self.source.game(game_id)
        viewer = caller.viewer(game_id)
        public = (await self.released(game)).public
        view = game.engine.view(game.table.game, table_viewer(viewer, public))
        kind, field = game.genesis.game_kind, typed.member_of(game.engine.spec.kind)
        return TableNow(game.last_seq, viewer, view, kind, field)

    async def legal(self, caller: Caller, game_id: str) -> Legal:
        """The commands the caller's seat may send now (none for the arbiter, or at the end)."""
        game = await self.source.game(game_id)
        legal = fold.legal_commands(game.engine, game.table, caller.actor(game_id))
        inner, partial = capped(legal)
        commands = [wrap_command(game.engine.spec.command_field, c) for c in inner]
        return Legal(game.last_seq, commands, partial)

    async def state_at(
        self, caller: Caller, game_id: str, seq: int = 0, viewer: str = ""
    ) -> Replay:
        """Row ``seq`` (0: the last) and the table after it, as ``viewer`` saw it then."""
        game = await self.source.game(game_id)
        release = await self.released(game)
        seen_as = self._look_as(caller, game, viewer, release)
        step = seen(game, checked_seq(game, seq), seen_as, release.public)
        return _replay(game, seen_as, [step])

    async def replay(
        self, caller: Caller, game_id: str, from_seq: int = 1, to_seq: int = 0, viewer: str = ""
    ) -> Replay:
        """Rows ``from_seq..to_seq`` (0: the last) as ``viewer`` saw them then."""
        game = await self.source.game(game_id)
        release = await self.released(game)
        seen_as = self._look_as(caller, game, viewer, release)
        first = first_seq(from_seq)
        last = checked_seq(game, to_seq, "to_seq")
        if first > last:
            raise BadRequest(
                f"from_seq {from_seq} is after to_seq {last}: nothing to replay", field="from_seq"
            )
        seqs = range(first, last + 1)
        public = release.public
        steps = await self.source.off_loop(lambda: [seen(game, s, seen_as, public) for s in seqs])
        return _replay(game, seen_as, steps)

    async def page(
        self, caller: Caller, game_id: str, viewer: str = "", live: Live | None = None
    ) -> str:
        """The replay page of a game as ``viewer`` (default: the caller) saw each seq."""
        game = await self.source.game(game_id)
        release = await self.released(game)
        seen_as = self._look_as(caller, game, viewer, release)
        refused = refusals_for(caller.viewer(game_id), await self.source.refused(game_id), release)
        # drawing a long game takes a while: off the event loop, the other calls go on (its
        # rows are never changed, only appended to)
        return await self.source.off_loop(page_html, game, seen_as, refused, live, release.public)

    async def export(self, caller: Caller, game_id: str) -> Exported:
        """A game's portable record; a running game's (no seed) for the arbiter only."""
        self.source.named(game_id)
        viewer = caller.viewer(game_id)
        stored = await self.source.record(game_id)
        release = await self.stored_release(game_id, stored)
        behind_screen(viewer, release, "export its record")
        text = await self.source.fold(export_text, stored, await self.proving.proof_of(stored.rows))
        return Exported(text, release.over, f"{game_id}.feastlog.json")

    async def verify(self, caller: Caller, game_id: str) -> AuditReport:
        """Verify a game from its stored record (the seed lets a running game's states be
        checked too); its fault messages, which may name hidden things, as the policy says."""
        self.source.named(game_id)
        viewer = caller.viewer(game_id)
        stored = await self.source.record(game_id)
        report = await self.source.fold(self.source.report_of, stored)
        return shown_report(viewer, report, await self.stored_release(game_id, stored))

    async def verify_all(self, caller: Caller, kind: str = "") -> AsyncIterator[Verified]:
        """Verify every game (the organiser's), one at a time from one scan of the log."""
        caller.require_organiser()
        total = await self.source.count(kind)
        async for stored in self.source.scan(kind):
            report = await self.source.fold(self.source.report_of, stored)
            yield Verified(shown_report(caller.viewer(report.game_id), report, report.over), total)

    async def explain(self, caller: Caller, game_id: str, seq: int) -> Explained:
        """Everything about row ``seq``: command, rule checks, values, change, visibility."""
        game = await self.source.game(game_id)
        behind_screen(caller.viewer(game_id), await self.released(game), "explain a row")
        found = explain(game, checked_seq(game, seq))
        return Explained(found, explanation_lines(found))

    async def what_if(
        self, caller: Caller, game_id: str, seq: int, actor: str, command: record_pb2.Command
    ) -> WhatIf:
        """``command`` by ``actor`` (default: the row's) in place of row ``seq``."""
        game = await self.source.game(game_id)
        behind_screen(caller.viewer(game_id), await self.released(game), "try a what-if")
        return WhatIf(
            what_if_for(game, seq, actor, command), typed.member_of(game.engine.spec.kind)
        )

    async def rejections(self, caller: Caller, game_id: str) -> list[Rejection]:
        """The refused commands of a game the caller may see."""
        game = await self.source.game(game_id)
        viewer = caller.viewer(game_id)
        return refusals_for(viewer, await self.source.refused(game_id), await self.released(game))

    async def games(
        self,
        caller: Caller,
        kind: str = "",
        page_size: int = 0,
        tournament_id: str = "",
        page_token: str = "",
        limit: int = 0,
    ) -> GamePage:
        """A page of the game list, newest first, and the token of the next page
        (``limit``: an older client's page size, taken when ``page_size`` is 0).

        Pages follow the order games were created in, so paging covers every game
        listed when it began exactly once, however many are created meanwhile.
        """
        if not page_size:
            if limit < 0:
                raise BadRequest("limit is 0 (the default) or more", field="limit")
            page_size = limit
        if page_size < 0:
            raise BadRequest("page_size is 0 (the default) or more", field="page_size")
        size = min(page_size or PAGE_SIZE, MAX_PAGE_SIZE)
        listing = Listing(LIST_GAMES, kind, tournament_id)
        before = listing.place_of(page_token)
        found = await self.source.read(
            lambda store: store.listed(kind, tournament_id, before, size + 1)
        )
        # a tournament's own record is listed by the store, but is no game: its calls are
        # TournamentService's (a page may then hold fewer lines; its token is a place)
        games = [listed for listed in found[:size] if listed.game_kind != TOURNAMENT]
        lines = [await self._summary(listed) for listed in games]
        more = len(found) > size
        return GamePage(lines, listing.token_after(found[size - 1].n) if more else "")

    async def get_game(self, caller: Caller, game_id: str) -> Summary:
        """One game's line of the game list (public, as the list is), from the game folded:
        a game waiting for seat entropy is told so, as every read of it is."""
        game = await self.source.game(game_id)
        genesis = game.genesis
        return Summary(
            game.game_id,
            genesis.game_kind,
            [seat.name for seat in genesis.seats],
            game.last_seq,
            game.over,
            genesis.created_at,
            False,
            genesis.tournament_id,
        )

    async def _summary(self, listed: Listed) -> Summary:
        """A list line: a finished game from the projection, a running one from its source."""
        if listed.rows is not None:
            last_seq, over, waiting = listed.rows, True, False
        else:
            last_seq, over, waiting = await self.source.running_head(listed.game_id)
        return Summary(
            listed.game_id,
            listed.game_kind,
            list(listed.players),
            last_seq,
            over,
            listed.created_at,
            waiting,
            listed.tournament_id,
        )

    async def standings(self, caller: Caller, tournament_id: str) -> Standings:
        """A tournament's standings: SQL over the outcomes projection (finished games)."""
        if not tournament_id:
            raise BadRequest("tournament_id is required", field="tournament_id")
        listed = await self.source.read(lambda store: store.tournament_games(tournament_id))
        if not listed:
            raise GameNotFound(f"there is no game in tournament {tournament_id!r}")
        lines, finished = await self.source.read(lambda store: store.standings(tournament_id))
        ranked = await self._ranked(tournament_id)
        if ranked:  # a tournament on the record: its own order, the one its page shows
            lines = sorted(lines, key=lambda s: ranked.get(s.name, len(ranked)))
        return Standings(lines, finished, listed - finished)

    async def _ranked(self, tournament_id: str) -> dict[str, int]:
        """A tournament on the record's players by place in its standings (match points,
        then the format's tiebreaks: docs/tournament.md); empty for games that only
        carry a tournament id as a tag, which keep wins, then points, then name."""
        return await self._places(tournament_id) if self._places is not None else {}

    async def stats(self, caller: Caller, tournament_id: str = "") -> list[KindStats]:
        """Per game kind: games, win rate by seat, a figure; SQL over the projection."""
        found: list[KindStats] = await self.source.read(lambda store: store.stats(tournament_id))
        return found

    def _look_as(self, caller: Caller, game: LiveGame, wanted: str, release: Release) -> Viewer:
        """The viewer a caller asks for (default: its own), if the policy lets it look so."""
        own = caller.viewer(game.game_id)
        if not wanted:
            return own
        return look_as(own, parse_viewer(wanted, len(game.genesis.seats)), release)


def _replay(game: LiveGame, viewer: Viewer, steps: list[Step]) -> Replay:
    """Steps of a game, with the rulings in force after the last (rulings are public)."""
    rulings = table_view(game.engine, game.tables[steps[-1].row.seq - 1], ARBITER)["rulings"]
    return Replay(viewer, steps, rulings, game.last_seq, typed.member_of(game.engine.spec.kind))


@dataclass(frozen=True)
class Listing:
    """One paged list as asked for: the RPC and its filter, which its page tokens are
    bound to.

    A token holds the place in the list where the next page starts, the RPC and a digest
    of the filter it was issued for, base64url-encoded: opaque to clients, which send it
    back as they got it.  The list is public, so a token is no secret and carries no
    signature; binding it means a token sent with another filter (or to another RPC) is
    refused in plain words instead of answering a page of some other list.
    """

    rpc: str
    kind: str
    tournament_id: str

    def _filter(self) -> str:
        filters = json.dumps([self.kind, self.tournament_id]).encode()
        return hashlib.sha256(filters).hexdigest()[:16]

    def token_after(self, place: int) -> str:
        """The token of the page after the game at ``place`` in the list."""
        body = f"{self.rpc}.{place}.{self._filter()}"
        return base64.urlsafe_b64encode(body.encode()).decode()

    def place_of(self, token: str) -> int:
        """The place a page token stands for (0: no token, the first page); BadRequest
        naming ``page_token`` for one this server did not give out for this list."""
        if not token:
            return 0
        try:
            rpc, place, filters = base64.urlsafe_b64decode(token.encode()).decode().split(".")
        except (binascii.Error, UnicodeError, ValueError):
            rpc = place = filters = ""
        number = plain_number(place)
        if not rpc or number is None or number < 1:
            raise BadRequest(
                "page_token is not one this server gave out: send the next_page_token of "
                "the page before as it came, or no page_token for the first page",
                field="page_token",
            )
        if rpc != self.rpc:
            raise BadRequest(
                f"this page_token was issued by {rpc}, not {self.rpc}: start again "
                "without a page_token",
                field="page_token",
            )
        if filters != self._filter():
            raise BadRequest(
                "this page_token was issued for another filter (game kind or tournament): "
                "start again without a page_token, or send the filter it was issued for",
                field="page_token",
            )
        return number


def parse_viewer(
    text: str,
    seats: int,
    field: str = "viewer",
    named: str = "seat:N (N in digits 0-9), spectator or arbiter",
) -> Viewer:
    """A viewer named in a request (``seat:N``, ``spectator``, ``arbiter``) of a game of
    ``seats`` seats, or BadRequest naming the field (and ``named``: what it may be)."""
    try:
        viewer = Viewer.parse(text)
    except ValueError as bad:
        raise BadRequest(f"{field} {text!r} is not {named}", field=field) from bad
    if viewer.seat is not None and not 0 <= viewer.seat < seats:
        raise BadRequest(f"{field} {text!r}: this game has seats 0 to {seats - 1}", field=field)
    return viewer


def parse_actor(text: str, seats: int, field: str = "actor") -> str:
    """An actor named in a request (``seat:N`` or ``arbiter``), in the record's spelling."""
    actor = parse_viewer(text, seats, field, "seat:N (N in digits 0-9) or arbiter")
    if actor.role == "spectator":
        raise BadRequest(f"{field}: a spectator makes no moves; use seat:N or arbiter", field=field)
    return str(actor)


def first_seq(from_seq: int) -> int:
    """Where a stream of rows starts: ``from_seq``, 0 and 1 both the genesis; a negative
    one is BadRequest (as a negative seq is everywhere else)."""
    if from_seq < 0:
        raise BadRequest(
            f"from_seq {from_seq} is not a seq: 0 or 1 starts at the genesis", field="from_seq"
        )
    return max(from_seq, 1)


def checked_seq(game: LiveGame, seq: int, field: str = "seq") -> int:
    """A seq of the game (0 = the last), or BadRequest."""
    seq = seq or game.last_seq
    if not 1 <= seq <= game.last_seq:
        raise BadRequest(f"seq {seq} is not in 1..{game.last_seq}", field=field)
    return seq


def shown_report(viewer: Viewer, report: AuditReport, release: Open) -> AuditReport:
    """A report as ``viewer`` may read it: fault messages may name hidden gems or cards, so
    they are the arbiter's until the record is public."""
    if sees_all(viewer, release):
        return report
    return replace(report, faults=tuple(replace(f, message="") for f in report.faults))


def export_text(stored: StoredGame, proof: dict[str, Any] | None = None) -> str:
    """The export file of a stored game (the seed and the result only once revealed), with
    its proof section (the server's keys, a signed head and every row's inclusion in it)."""
    document = export_record(stored.rows, stored.pack_body)
    if proof is not None:
        document["proof"] = proof
    return to_text(document)


def what_if_for(
    game: LiveGame, seq: int, actor: str, command: record_pb2.Command
) -> dict[str, Any]:
    """What-if at ``seq`` of a game (seq 2.. n; the genesis has no table before it).

    Without an actor, the command is tried as sent by the actor of row ``seq``.
    """
    seq = checked_seq(game, seq)
    if seq < 2:
        raise BadRequest("what-if needs a seq after the genesis (2 or more)", field="seq")
    if command.WhichOneof("game") is None:
        raise BadRequest("the command is empty", field="command")
    seats = len(game.genesis.seats)
    if not actor and game.rows[seq - 1].kind != COMMAND:
        raise BadRequest(
            f"row {seq} is not a command: say who acts (seat:N or arbiter)", field="actor"
        )
    return what_if(game, seq, parse_actor(actor or game.rows[seq - 1].actor, seats), command)


def explanation_lines(found: dict[str, Any]) -> list[str]:
    """An explanation in plain words."""
    lines = [
        f"seq {found['seq']}: {found['kind']} by {found['actor_name']} ({found['actor']}), "
        f"command_id {found['command_id'] or '-'}, recorded at {found['recorded_at']}",
    ]
    if "superseded_by" in found:
        lines.append(f"superseded by the rewind at seq {found['superseded_by']}: an abandoned line")
    if "command" in found:
        lines.append("command: " + json.dumps(found["command"], sort_keys=True))
    if found["checks"]:
        lines.append("rule checks passed, in order:")
        lines += [f"  {c['rule_id']} ({c['section']}): {c['text']}" for c in found["checks"]]
    lines.append("what happened:")
    lines += [f"  {line}" for line in found["narrative"]]
    lines.append("values computed (facts):")
    lines += [f"  {json.dumps(f, sort_keys=True)}" for f in found["facts"]]
    lines.append("state change:")
    lines += [
        f"  {c['path']}: {json.dumps(c['before'])} -> {json.dumps(c['after'])}"
        for c in found["state_change"]
    ]
    lines.append("who could see what at that moment:")
    for seen_by in found["visibility"]:
        command = "the command" if seen_by["command"] else "not the command"
        told = "; ".join(seen_by["narrative"]) or "nothing"
        lines.append(f"  {seen_by['viewer']}: {command}; told: {told}")
    return lines
