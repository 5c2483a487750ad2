"""Replays from the stored record: state at a seq, step streams, exports.

A live game keeps the table after every row in memory (``LiveGame.tables``), so the
state at any seq is a lookup once the game is folded; the tables are derived from the
log and never stored.  The same functions serve the gRPC servicer and the CLI offline
(``--db``), where the game is folded from a DuckDB file no server holds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from feastlog.v1 import replay_service_pb2 as pb
from feastlog.v1 import replay_service_pb2_grpc as pb_grpc
from replay import fold
from replay.engine import ARBITER, Viewer
from replay.explain import table_view
from replay.export import export_record, to_text
from replay.history import refold
from replay.record import Row
from service.app import Games, Step, step_for
from service.auth import Caller
from service.convert import event, participant, participant_text, struct
from service.errors import BadRequest, GameNotFound, PermissionDenied, streaming, unary
from service.live import LiveGame, live_from_folded
from service.store import Store, StoredGame


def parse_viewer(text: str, seats: int, field: str = "viewer") -> Viewer:
    """A viewer named in a request (``seat:N``, ``spectator``, ``arbiter``) of a game of
    ``seats`` seats, or BadRequest naming the field."""
    try:
        viewer = Viewer.parse(text)
    except ValueError as bad:
        raise BadRequest(
            f"{field} {text!r} is not seat:N, spectator or arbiter", field=field
        ) from bad
    if viewer.seat is not None and not 0 <= viewer.seat < seats:
        raise BadRequest(f"{field} {text!r}: this game has seats 0 to {seats - 1}", field=field)
    return viewer


def parse_actor(text: str, seats: int, field: str = "actor") -> str:
    """An actor named in a request (``seat:N`` or ``arbiter``), in the record's spelling."""
    actor = parse_viewer(text, seats, field)
    if actor.role == "spectator":
        raise BadRequest(f"{field}: a spectator makes no moves; use seat:N or arbiter", field=field)
    return str(actor)


def viewer_for(caller: Caller, game: LiveGame, requested: str) -> Viewer:
    """The viewer a caller asks for: its own, a spectator's, or (arbiter only) anyone's."""
    own = caller.viewer(game.game_id)
    if not requested:
        return own
    wanted = parse_viewer(requested, len(game.genesis.seats))
    if own.role != "arbiter" and wanted.role != "spectator" and wanted != own:
        raise PermissionDenied(f"{own} cannot look at the game as {wanted}")
    return wanted


def checked_seq(game: LiveGame, seq: int, field: str = "seq") -> int:
    """A seq of the game (0 = the last), or BadRequest."""
    seq = seq or game.last_seq
    if not 1 <= seq <= game.last_seq:
        raise BadRequest(f"seq {seq} is not in 1..{game.last_seq}", field=field)
    return seq


def rulings_at(game: LiveGame, seq: int) -> dict[str, Any]:
    """The arbiter's rulings in force after row ``seq`` (public: rulings are never secret)."""
    rulings: dict[str, Any] = table_view(game.tables[seq - 1], ARBITER)["rulings"]
    return rulings


def state_at(game: LiveGame, seq: int, viewer: Viewer) -> Step:
    """Row ``seq`` and the table after it as ``viewer`` may see it (then, if the game runs)."""
    return step_for(game, checked_seq(game, seq), viewer)


def steps(game: LiveGame, from_seq: int, to_seq: int, viewer: Viewer) -> list[Step]:
    """Rows ``from_seq..to_seq`` as ``viewer`` may see them."""
    last = checked_seq(game, to_seq, "to_seq")
    return [step_for(game, s, viewer) for s in range(max(from_seq, 1), last + 1)]


def export_text(stored: StoredGame, viewer: Viewer) -> tuple[str, bool]:
    """The export file of a stored game, and whether it is complete (seed revealed).

    A running game's record holds sealed bids in its command bytes, so only the arbiter
    may export it before the end; even then it carries no seed.
    """
    over = stored.rows[-1].kind == "seed_reveal"
    if not over and viewer.role != "arbiter":
        raise PermissionDenied("only the arbiter can export a game that is still running")
    outcome = None
    if over:
        table = refold(stored.rows, stored.server_seed, stored.pack_body).tables[-1]
        outcome = fold.outcome(table)
    return to_text(export_record(stored.rows, stored.pack_body, outcome)), over


def record_game(rows: Sequence[Row], server_seed: bytes, pack_bytes: bytes) -> LiveGame:
    """A finished game folded from an exported record (offline, as the CLI reads one)."""
    folded = refold(rows, server_seed, pack_bytes)
    return live_from_folded(folded, server_seed, tuple(s.name for s in folded.genesis.seats))


@dataclass
class OfflineFile:
    """A DuckDB file read with no server: games folded on demand."""

    path: str

    def stored(self, game_id: str) -> StoredGame:
        """A stored game, or GameNotFound."""
        found = self.read(lambda store: store.load(game_id))
        if found is None:
            raise GameNotFound(f"there is no game {game_id!r} in {self.path}", game_id=game_id)
        stored: StoredGame = found
        return stored

    def game(self, game_id: str) -> LiveGame:
        """A game folded from the file."""
        stored = self.stored(game_id)
        folded = refold(stored.rows, stored.server_seed, stored.pack_body)
        return live_from_folded(folded, stored.server_seed, stored.seat_names)

    def read(self, fn: Any) -> Any:
        """Run ``fn(store)`` on the file opened read-only."""
        if not Path(self.path).exists():
            raise GameNotFound(f"no database at {self.path}")
        store = Store(self.path, read_only=True)
        try:
            return fn(store)
        finally:
            store.close()


class ReplayService(pb_grpc.ReplayServiceServicer):
    """feastlog.v1.ReplayService."""

    def __init__(self, games: Games) -> None:
        self.games = games

    def caller(self, context: grpc.aio.ServicerContext) -> Caller:
        """Who is calling, from the authorization metadata."""
        return self.games.credentials.caller(tuple(context.invocation_metadata() or ()))

    @unary
    async def GetStateAt(
        self, request: pb.GetStateAtRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStateAtResponse:
        game = await self.games.get(request.game_id)
        wanted = participant_text(request.viewer, request.typed_viewer, "typed_viewer")
        viewer = viewer_for(self.caller(context), game, wanted)
        step = state_at(game, request.seq, viewer)
        return pb.GetStateAtResponse(
            event=event(step, game.engine.command_field),
            viewer=str(viewer),
            typed_viewer=participant(str(viewer)),
            rulings=struct(rulings_at(game, step.row.seq)),
            last_seq=game.last_seq,
        )

    @streaming
    async def StreamReplay(
        self, request: pb.StreamReplayRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.StreamReplayResponse]:
        game = await self.games.get(request.game_id)
        wanted = participant_text(request.viewer, request.typed_viewer, "typed_viewer")
        viewer = viewer_for(self.caller(context), game, wanted)
        for step in steps(game, request.from_seq, request.to_seq, viewer):
            yield pb.StreamReplayResponse(event=event(step, game.engine.command_field))

    @unary
    async def ExportRecord(
        self, request: pb.ExportRecordRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExportRecordResponse:
        viewer = self.caller(context).viewer(request.game_id)
        stored = await self.games.db.call(self.games.db.store.load, request.game_id)
        if stored is None:
            raise GameNotFound(f"there is no game {request.game_id!r}", game_id=request.game_id)
        text, complete = await self.games.refolds.run(export_text, stored, viewer)
        name = f"{request.game_id}.feastlog.json"
        return pb.ExportRecordResponse(content=text.encode(), file_name=name, complete=complete)


def add_to(server: grpc.aio.Server, games: Games) -> None:
    """Register the ReplayService on a server."""
    pb_grpc.add_ReplayServiceServicer_to_server(ReplayService(games), server)
