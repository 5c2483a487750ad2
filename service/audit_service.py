"""Audits from the stored record: verify, explain, what-if, rejections and rulings.

Verification always reads the log from the store (never the live tables, which are
derived).  While a game runs, explanations and what-ifs show hidden cards and sealed
bids, so only the arbiter gets them; once the seed is revealed the record is public.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Generator, Sequence
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from feastlog.v1 import audit_service_pb2 as pb
from feastlog.v1 import audit_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2
from replay import typed
from replay.audit import AuditReport, verify
from replay.engine import Viewer
from replay.explain import explain, what_if
from replay.record import COMMAND
from service.app import Games
from service.auth import Caller
from service.convert import (
    kind_enum,
    kind_text,
    participant,
    participant_text,
    struct,
    structs,
    typed_facts,
)
from service.errors import BadRequest, GameNotFound, PermissionDenied, streaming, unary
from service.live import LiveGame
from service.replay_service import checked_seq, parse_actor
from service.store import Rejection, Store, StoredGame


def audit_stored(stored: StoredGame) -> AuditReport:
    """Verify a stored game; the server's seed lets it check a running game's states too."""
    return verify(stored.rows, stored.pack_body, stored.server_seed or None)


def report_message(report: AuditReport, redact: bool = False) -> pb.AuditReport:
    """A report as its message; ``redact`` drops fault messages (they may name hidden gems)."""
    faults = [
        pb.Fault(
            seq=f.seq,
            kind=pb.FaultKind.Value(f"FAULT_KIND_{f.kind.upper()}"),
            message="" if redact else f.message,
            rule_id=f.rule_id,
        )
        for f in report.faults
    ]
    outcome = report.outcome
    return pb.AuditReport(
        game_id=report.game_id,
        game_kind=report.game_kind,
        kind=kind_enum(report.game_kind),
        ok=report.ok,
        rows=report.rows,
        commands_checked=report.commands_checked,
        states_checked=report.states_checked,
        over=report.over,
        first_bad_seq=report.first_bad_seq or 0,
        faults=faults,
        points=list(outcome.points) if outcome else [],
        winners=list(outcome.winners) if outcome else [],
        notes=list(report.notes),
        record_version=report.record_version,
    )


def require_public(game: LiveGame, viewer: Viewer) -> None:
    """Refuse unless the game is over or the viewer is the arbiter."""
    if not game.over and viewer.role != "arbiter":
        raise PermissionDenied("while the game runs, only the arbiter can look behind the screen")


def explanation_lines(found: dict[str, Any]) -> list[str]:
    """An explanation in plain words."""
    lines = [
        f"seq {found['seq']}: {found['kind']} by {found['actor_name']} ({found['actor']}), "
        f"command_id {found['command_id'] or '-'}, recorded at {found['recorded_at']}",
    ]
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
    for seen in found["visibility"]:
        command = "the command" if seen["command"] else "not the command"
        told = "; ".join(seen["narrative"]) or "nothing"
        lines.append(f"  {seen['viewer']}: {command}; told: {told}")
    return lines


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


def visible_rejections(
    rejections: Sequence[Rejection], viewer: Viewer, over: bool
) -> list[Rejection]:
    """Refusals the viewer may see: all for the arbiter or a finished game, else its own."""
    if over or viewer.role == "arbiter":
        return list(rejections)
    return [r for r in rejections if viewer.role == "seat" and r.actor == str(viewer)]


def rejection_message(rejection: Rejection) -> pb.Rejection:
    """A stored refusal as its message."""
    out = pb.Rejection(
        after_seq=rejection.after_seq,
        actor=rejection.actor,
        command_id=rejection.command_id,
        recorded_at=rejection.recorded_at,
        status=rejection.status,
        reason=rejection.reason,
        rule_id=rejection.rule_id,
        message=rejection.message,
        typed_actor=participant(rejection.actor),
    )
    try:
        out.command.ParseFromString(rejection.body)
    except DecodeError:  # a malformed command is refused as such; its bytes may not decode
        out.ClearField("command")
    return out


class AuditService(pb_grpc.AuditServiceServicer):
    """feastlog.v1.AuditService."""

    def __init__(self, games: Games) -> None:
        self.games = games

    def caller(self, context: grpc.aio.ServicerContext) -> Caller:
        """Who is calling, from the authorization metadata."""
        return self.games.credentials.caller(tuple(context.invocation_metadata() or ()))

    async def stored(self, game_id: str) -> StoredGame:
        """A game's log from the store, or GameNotFound."""
        found = await self.games.db.call(self.games.db.store.load, game_id)
        if found is None:
            raise GameNotFound(f"there is no game {game_id!r}", game_id=game_id)
        return found

    @unary
    async def VerifyGame(
        self, request: pb.VerifyGameRequest, context: grpc.aio.ServicerContext
    ) -> pb.VerifyGameResponse:
        viewer = self.caller(context).viewer(request.game_id)
        report = await self.games.refolds.run(audit_stored, await self.stored(request.game_id))
        redact = not report.over and viewer.role != "arbiter"
        return pb.VerifyGameResponse(report=report_message(report, redact))

    @streaming
    async def VerifyAllGames(
        self, request: pb.VerifyAllGamesRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.VerifyAllGamesResponse]:
        self.games.credentials.organiser(self.caller(context))
        db = self.games.db
        wanted = kind_text(request.game_kind, request.kind)
        total, _ = await db.read(Store.count_games, wanted)
        # one ordered scan of the log on the read connection, a game at a time; a
        # cancelled call stops between games
        games: Generator[StoredGame] = await db.read(Store.scan, None, wanted)
        try:
            while (stored := await db.read(lambda _, found=games: next(found, None))) is not None:
                report = await self.games.refolds.run(audit_stored, stored)
                yield pb.VerifyAllGamesResponse(report=report_message(report), total=total)
        finally:
            await db.read(lambda _: games.close())

    @unary
    async def ExplainEvent(
        self, request: pb.ExplainEventRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExplainEventResponse:
        game = await self.games.get(request.game_id)
        require_public(game, self.caller(context).viewer(request.game_id))
        found = explain(game, checked_seq(game, request.seq))
        return pb.ExplainEventResponse(explanation=struct(found), lines=explanation_lines(found))

    @unary
    async def WhatIf(
        self, request: pb.WhatIfRequest, context: grpc.aio.ServicerContext
    ) -> pb.WhatIfResponse:
        game = await self.games.get(request.game_id)
        require_public(game, self.caller(context).viewer(request.game_id))
        actor = participant_text(request.actor, request.typed_actor, "typed_actor")
        found = what_if_for(game, request.seq, actor, request.command)
        return pb.WhatIfResponse(
            legal=found["legal"],
            rule_id=found.get("rule_id", ""),
            rule_text=found.get("text", ""),
            message=found.get("message", ""),
            facts=structs(found.get("facts", [])),
            lines=found.get("narrative", []),
            details=struct(found),
            typed_facts=typed_facts(typed.member_of(game.engine.spec.kind), found.get("facts", [])),
        )

    @unary
    async def ListRejections(
        self, request: pb.ListRejectionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListRejectionsResponse:
        game = await self.games.get(request.game_id)
        viewer = self.caller(context).viewer(request.game_id)
        found = await self.games.db.call(self.games.db.store.rejections, request.game_id)
        shown = visible_rejections(found, viewer, game.over)
        return pb.ListRejectionsResponse(rejections=[rejection_message(r) for r in shown])

    @unary
    async def SubmitRuling(
        self, request: pb.SubmitRulingRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitRulingResponse:
        command = record_pb2.Command(arbiter=request.ruling)
        done = await self.games.submit(
            self.caller(context), request.game_id, request.command_id, None, command
        )
        game = await self.games.get(request.game_id)
        return pb.SubmitRulingResponse(
            seq=done.row.seq,
            hash=done.row.hash,
            state_hash=done.row.state_hash,
            facts=structs(done.facts),
            game_over=done.game_over,
            typed_facts=typed_facts(typed.member_of(game.engine.spec.kind), done.facts),
        )


def add_to(server: grpc.aio.Server, games: Games) -> None:
    """Register the AuditService on a server."""
    pb_grpc.add_AuditServiceServicer_to_server(AuditService(games), server)
