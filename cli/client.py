"""The CLI's one client: the same use cases through a server or on a file.

``open_client(target)`` gives an ``Online`` client (gRPC, to the server the target names
or found beside the file), or, when no server holds the file, an ``Offline`` one that
reads the file (or an exported record) itself, as the arbiter. Commands that write
(``new``, ``demo``, ``rule``, ``arbiter``) with no server get an ``Online`` client over an
embedded server on the file, stopped when the command ends.

Every method returns plain data (numbers as numbers) and raises only ``CliError``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from feastlog.cli.errors import (
    REFUSED,
    CliError,
    ServerLog,
    cannot_read,
    exit_of,
    failed,
    from_rpc,
    unreachable,
    usage,
)
from feastlog.cli.narrate import Seen
from feastlog.cli.target import Target, require_file
from feastlog.cli.wire import as_dict, bearer, open_blocking_channel
from feastlog.presentation.narrative import check_viewer
from feastlog.replay import games
from feastlog.replay.engine import ARBITER, MalformedCommand, PackError, RuleViolation, Viewer
from feastlog.replay.export import read_record_file
from feastlog.replay.standings import exact
from feastlog.service.app import offline
from feastlog.service.app.auth import ORGANISER, OrganiserKeyError
from feastlog.service.app.errors import KNOWN, BadRequest, WaitingForEntropy
from feastlog.service.app.reads import MAX_PAGE_SIZE
from feastlog.service.grpc.guard import check_fields
from feastlog.service.grpc.servicers.convert import rejection_message
from feastlog.service.grpc.status import describe
from feastlog.service.store import CannotOpenStore, StoreLocked
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc

if TYPE_CHECKING:
    from feastlog.service.grpc.server import Running

T = TypeVar("T")

# What folding a damaged record can raise; each is reported in words (exit 1).
UNREADABLE = (ValueError, KeyError, RuleViolation, MalformedCommand, PackError, DecodeError)
# The service's own refusals, answered offline as a server would (rules and packs are
# UNREADABLE: offline, a rule broken or a pack refused while folding is a record that does
# not replay, not a bad request).
FOLDING = (RuleViolation, MalformedCommand, PackError)
KNOWN_ERRORS = tuple(k for k in KNOWN if not issubclass(k, FOLDING))


@dataclass(frozen=True)
class Replay:
    """A game's rows up to a seq as a viewer saw them."""

    genesis: record_pb2.Genesis
    rows: list[Seen]
    viewer: str
    last_seq: int  # the game's last seq (beyond the rows asked for)


def rejection_dict(message: apb.Rejection) -> dict[str, Any]:
    """A refusal as JSON-able data, numbers as numbers."""
    return {
        "after_seq": int(message.after_seq),
        "actor": message.actor,
        "command_id": message.command_id,
        "recorded_at": message.recorded_at,
        "status": message.status,
        "reason": message.reason,
        "rule_id": message.rule_id,
        "message": message.message,
    }


def report_dict(message: apb.AuditReport) -> dict[str, Any]:
    """An AuditReport message as the same dict ``AuditReport.to_dict`` gives."""
    faults = [
        {
            "seq": int(f.seq),
            "kind": apb.FaultKind.Name(f.kind).removeprefix("FAULT_KIND_").lower(),
            "message": f.message,
            "rule_id": f.rule_id,
        }
        for f in message.faults
    ]
    first = faults[0]["seq"] if faults else None
    outcome = None
    if message.over and (message.points or message.winners):
        outcome = {"points": list(message.points), "winners": list(message.winners)}
    return {
        "game_id": message.game_id,
        "game_kind": message.game_kind,
        "ok": message.ok,
        "rows": int(message.rows),
        "commands_checked": int(message.commands_checked),
        "states_checked": message.states_checked,
        "over": message.over,
        "first_bad_seq": first,
        "first_kinds": list(dict.fromkeys(f["kind"] for f in faults if f["seq"] == first)),
        "faults": faults,
        "outcome": outcome,
        "notes": list(message.notes),
        "record_version": int(message.record_version),
    }


class Client:
    """The use cases the CLI runs; ``Online`` and ``Offline`` answer them alike."""

    where = ""

    def close(self) -> None:
        """Let go of the channel, the file or the embedded server."""

    def _offline_only(self, what: str) -> CliError:
        return unreachable(
            f"{what} needs a running server: no server holds {self.where} "
            "(start one with feastlog serve, or pass --server)"
        )

    def create_game(self, **request: Any) -> dict[str, Any]:
        """Create a game (organiser): its id, seed commitment and seat tokens."""
        raise self._offline_only("creating a game")

    def join(self, game_id: str, token: str, entropy: bytes) -> tuple[bool, list[int]]:
        """Send a seat's entropy: whether the game started, and who it still waits for."""
        raise self._offline_only("joining a game")

    def view(self, game_id: str, token: str | None = None) -> tuple[int, str, dict[str, Any]]:
        """The table now as the caller sees it: (seq, viewer, view)."""
        raise self._offline_only("the live table")

    def legal(self, game_id: str, token: str) -> tuple[int, list[record_pb2.Command], bool]:
        """The seat's legal commands now: (seq, commands, partial)."""
        raise self._offline_only("playing")

    def submit(self, game_id: str, token: str, command: record_pb2.Command, seq: int) -> int:
        """Send a command guarded by the seq it was chosen at; the seq it was recorded at."""
        raise self._offline_only("playing")

    def news(self, game_id: str, token: str, from_seq: int, to_seq: int) -> Iterator[Any]:
        """Rows from_seq..to_seq as the caller sees them (RecordEvent messages)."""
        raise self._offline_only("watching a game")

    def follow(self, game_id: str, token: str | None, arbiter: bool) -> Iterator[Any]:
        """Every row of a game, the stored ones then each as it is recorded (RecordEvent
        messages), as a spectator, as the seat of ``token``, or (``arbiter``) with the
        target's key; until the caller stops."""
        raise self._offline_only("watching a game")

    def play_bots(self, game_id: str, tokens: Sequence[str], seed: int) -> dict[str, Any]:
        """Bots play every seat to the end; the final view."""
        raise self._offline_only("playing")

    def replay(self, game_id: str, at: int | None, viewer: Viewer | None) -> Replay:
        """Rows 1..at (the last without it) as ``viewer`` saw them (the caller by default)."""
        raise NotImplementedError

    def export(self, game_id: str) -> tuple[str, bool]:
        """A game's export file and whether it is complete (seed revealed)."""
        raise NotImplementedError

    def export_all(self, output: str, workers: int | None) -> tuple[int, int, int]:
        """Every game's record, one a line: (written, complete, left out)."""
        raise NotImplementedError

    def audit(self, game_id: str) -> dict[str, Any]:
        """One game's audit report."""
        raise NotImplementedError

    def audit_all(self, workers: int | None) -> list[dict[str, Any]]:
        """Every game's audit report."""
        raise NotImplementedError

    def explain(self, game_id: str, seq: int) -> tuple[dict[str, Any], list[str]]:
        """One row explained: as data and in words."""
        raise NotImplementedError

    def what_if(
        self, game_id: str, seq: int, actor: str, command: Callable[[str], record_pb2.Command]
    ) -> dict[str, Any]:
        """A command (made for the game's kind) in place of row ``seq``."""
        raise NotImplementedError

    def rejections(self, game_id: str) -> list[dict[str, Any]]:
        """A game's refused commands the caller may see."""
        raise NotImplementedError

    def rule(self, game_id: str, ruling: record_pb2.ArbiterCommand) -> tuple[int, str]:
        """Append a ruling: (seq, hash)."""
        raise self._offline_only("a ruling")

    def stats(self, tournament: str) -> list[dict[str, Any]]:
        """Per game kind: games, win rate by seat, a figure."""
        raise NotImplementedError

    def standings(self, tournament: str) -> dict[str, Any]:
        """A tournament's standings."""
        raise NotImplementedError

    def game_list(self, kind: str, tournament: str, most: int) -> list[dict[str, Any]]:
        """The game list, newest first: at most ``most`` games (0: all), page by page."""
        found: list[dict[str, Any]] = []
        token = ""
        while True:
            size = min(most - len(found), MAX_PAGE_SIZE) if most else MAX_PAGE_SIZE
            page, token = self.game_list_page(kind, tournament, size, token)
            found.extend(page)
            if not token or (most and len(found) >= most):
                return found

    def game_list_page(
        self, kind: str, tournament: str, size: int, token: str
    ) -> tuple[list[dict[str, Any]], str]:
        """One page of the game list (ListGames' fields) and the next page's token."""
        raise NotImplementedError

    def arbiters(self, action: str, name: str = "") -> Any:
        """Named arbiters: add (their key), revoke, list."""
        raise self._offline_only("managing arbiters")


class Online(Client):
    """Through a server, over gRPC (TLS when the target says so)."""

    def __init__(self, target: Target, embedded: Running | None = None) -> None:
        assert target.server is not None
        self.target = target
        self.where = f"the server at {target.server}"
        # every call about a game carries the routing header (cli.wire.ROUTING_HEADER)
        credentials = target.tls.channel_credentials() if target.tls is not None else None
        self.channel = open_blocking_channel(target.server, credentials)
        self.games = pb_grpc.GameServiceStub(self.channel)
        self.replays = rpb_grpc.ReplayServiceStub(self.channel)
        self.audits = apb_grpc.AuditServiceStub(self.channel)
        self.tournaments = tpb_grpc.TournamentServiceStub(self.channel)
        self.admin = adpb_grpc.AdminServiceStub(self.channel)
        self.meta = bearer(target.key)
        self.embedded = embedded
        self._loop: Any = None
        self._log: ServerLog | None = None

    def close(self) -> None:
        """Close the channel, and stop an embedded server."""
        self.channel.close()
        if self.embedded is not None and self._loop is not None:
            stop = asyncio.run_coroutine_threadsafe(self.embedded.stop(1), self._loop)
            stop.result(timeout=60)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._log is not None:
            logging.getLogger("feastlog").removeHandler(self._log)

    def call(self, method: Any, request: Any, token: str | None = None) -> Any:
        """One unary call with the target's key (or ``token``); errors as CliError."""
        try:
            return method(request, metadata=bearer(token) if token else self.meta)
        except grpc.RpcError as error:
            raise self.failure(error) from None

    def failure(self, error: grpc.RpcError) -> CliError:
        """A gRPC error in words, with why a key file was not sent when that explains it."""
        found = from_rpc(error, self.where)
        denied = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
        if self.target.key_hint and error.code() in denied:
            return CliError(
                f"{found.message} ({self.target.key_hint})", found.exit_code, found.reason
            )
        return found

    def stream(
        self,
        method: Any,
        request: Any,
        token: str | None = None,
        metadata: Sequence[tuple[str, str]] | None = None,
    ) -> Iterator[Any]:
        """A server stream's replies (with ``token``, else ``metadata``, else the target's
        key); errors as CliError."""
        if metadata is None:
            metadata = bearer(token) if token else self.meta
        replies = method(request, metadata=metadata)
        try:
            yield from replies
        except grpc.RpcError as error:
            raise self.failure(error) from None
        finally:
            replies.cancel()

    def create_game(self, **request: Any) -> dict[str, Any]:
        """Create a game (organiser): its id, seed commitment and seat tokens."""
        if not self.target.key:
            hint = self.target.key_hint or (
                "run this beside the server's database, or pass --organiser-key "
                "(or set FEASTLOG_ORGANISER_KEY)"
            )
            raise CliError(f"no organiser key: {hint}", REFUSED)  # as the server would
        reply = self.call(self.games.CreateGame, pb.CreateGameRequest(**request))
        return {
            "game_id": reply.game_id,
            "seed_commitment": reply.seed_commitment,
            "ruleset_version": reply.ruleset_version,
            "seats": [
                {"seat": t.seat, "name": t.name, "token": t.token} for t in reply.seat_tokens
            ],
            "warnings": list(reply.warnings),
        }

    def join(self, game_id: str, token: str, entropy: bytes) -> tuple[bool, list[int]]:
        """Send a seat's entropy."""
        request = pb.JoinGameRequest(game_id=game_id, entropy=entropy)
        reply = self.call(self.games.JoinGame, request, token)
        return reply.started, list(reply.waiting_for)

    def view(self, game_id: str, token: str | None = None) -> tuple[int, str, dict[str, Any]]:
        """The table now as the caller sees it."""
        reply = self.call(self.games.GetView, pb.GetViewRequest(game_id=game_id), token)
        return reply.seq, reply.viewer, as_dict(reply.view)

    def legal(self, game_id: str, token: str) -> tuple[int, list[record_pb2.Command], bool]:
        """The seat's legal commands now."""
        request = pb.ListLegalCommandsRequest(game_id=game_id)
        reply = self.call(self.games.ListLegalCommands, request, token)
        return reply.seq, list(reply.commands), reply.partial

    def submit(self, game_id: str, token: str, command: record_pb2.Command, seq: int) -> int:
        """Send a command guarded by ``seq``."""
        request = pb.SubmitCommandRequest(
            game_id=game_id, command_id=uuid.uuid4().hex, command=command, expected_seq=seq
        )
        return int(self.call(self.games.SubmitCommand, request, token).seq)

    def news(self, game_id: str, token: str, from_seq: int, to_seq: int) -> Iterator[Any]:
        """Rows from_seq..to_seq as the seat sees them."""
        request = pb.WatchGameRequest(game_id=game_id, from_seq=from_seq)
        for reply in self.stream(self.games.WatchGame, request, token):
            yield reply.event
            if reply.event.seq >= to_seq:
                return

    def follow(self, game_id: str, token: str | None, arbiter: bool) -> Iterator[Any]:
        """WatchGame from the genesis on: a spectator sends no credentials at all."""
        request = pb.WatchGameRequest(game_id=game_id, from_seq=1)
        sent = None if arbiter else bearer(token) if token else ()
        for reply in self.stream(self.games.WatchGame, request, metadata=sent):
            yield reply.event

    def play_bots(self, game_id: str, tokens: Sequence[str], seed: int) -> dict[str, Any]:
        """Bots play every seat to the end (joining first when the game waits for entropy)."""
        import os
        import random

        rng = random.Random(seed)
        try:
            self.view(game_id)
        except CliError as waiting:
            if waiting.reason != WaitingForEntropy.reason:
                raise
            for token in tokens:
                self.join(game_id, token, os.urandom(32))
        while True:
            _, _, view = self.view(game_id)
            if view.get("over"):
                return view
            to_act = [int(s) for s in view.get("to_act", [])]
            if not to_act:
                raise CliError(f"game {game_id} is not over but nobody is to act", 70)
            for seat in to_act:
                seq, commands, _ = self.legal(game_id, tokens[seat])
                if commands:
                    self.submit(game_id, tokens[seat], rng.choice(commands), seq)

    def replay(self, game_id: str, at: int | None, viewer: Viewer | None) -> Replay:
        """The server's replay stream, as ``viewer`` (the caller's own view by default)."""
        asked = str(viewer) if viewer else ""
        first = self.call(
            self.replays.GetStateAt, rpb.GetStateAtRequest(game_id=game_id, seq=1, viewer=asked)
        )
        request = rpb.StreamReplayRequest(game_id=game_id, to_seq=at or 0, viewer=asked)
        rows = [
            Seen(e.seq, e.kind, e.actor, [as_dict(f) for f in e.facts], as_dict(e.view))
            for e in (r.event for r in self.stream(self.replays.StreamReplay, request))
        ]
        return Replay(first.event.genesis, rows, first.viewer, int(first.last_seq))

    def export(self, game_id: str) -> tuple[str, bool]:
        """The server's export of a game."""
        reply = self.call(self.replays.ExportRecord, rpb.ExportRecordRequest(game_id=game_id))
        return reply.content.decode(), reply.complete

    def export_all(self, output: str, workers: int | None) -> tuple[int, int, int]:
        """Every game the server lists, exported one a line: (written, complete, left out)."""
        written = complete = 0
        page = ""
        with Path(output).open("w") as out:
            while True:
                request = pb.ListGamesRequest(page_size=500, page_token=page)
                listed = self.call(self.games.ListGames, request)
                for game in listed.games:
                    if game.waiting_for_entropy:
                        continue  # no record yet: its genesis is written when it starts
                    text, done = self.export(game.game_id)
                    out.write(json.dumps(json.loads(text), sort_keys=True) + "\n")
                    written, complete = written + 1, complete + done
                page = listed.next_page_token
                if not page:
                    return written, complete, 0

    def audit(self, game_id: str) -> dict[str, Any]:
        """The server's audit of a game."""
        reply = self.call(self.audits.VerifyGame, apb.VerifyGameRequest(game_id=game_id))
        return report_dict(reply.report)

    def audit_all(self, workers: int | None) -> list[dict[str, Any]]:
        """Every game, audited by the server (organiser key), with a progress bar."""
        from feastlog.cli.output import progress

        found: list[dict[str, Any]] = []
        bar: Any = None
        try:
            for each in self.stream(self.audits.VerifyAllGames, apb.VerifyAllGamesRequest()):
                if bar is None:
                    bar = progress(int(each.total), "verifying").__enter__()
                found.append(report_dict(each.report))
                bar.update(1)
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
        return found

    def explain(self, game_id: str, seq: int) -> tuple[dict[str, Any], list[str]]:
        """The server's explanation of a row."""
        request = apb.ExplainEventRequest(game_id=game_id, seq=seq)
        reply = self.call(self.audits.ExplainEvent, request)
        return as_dict(reply.explanation), list(reply.lines)

    def what_if(
        self, game_id: str, seq: int, actor: str, command: Callable[[str], record_pb2.Command]
    ) -> dict[str, Any]:
        """The server's what-if."""
        first = self.call(self.replays.GetStateAt, rpb.GetStateAtRequest(game_id=game_id, seq=1))
        made = command(first.event.genesis.game_kind)
        request = apb.WhatIfRequest(game_id=game_id, seq=seq, actor=actor, command=made)
        return as_dict(self.call(self.audits.WhatIf, request).details)

    def rejections(self, game_id: str) -> list[dict[str, Any]]:
        """The refusals the caller may see."""
        reply = self.call(self.audits.ListRejections, apb.ListRejectionsRequest(game_id=game_id))
        return [rejection_dict(r) for r in reply.rejections]

    def rule(self, game_id: str, ruling: record_pb2.ArbiterCommand) -> tuple[int, str]:
        """Append a ruling."""
        request = apb.SubmitRulingRequest(
            game_id=game_id, command_id=uuid.uuid4().hex, ruling=ruling
        )
        reply = self.call(self.audits.SubmitRuling, request)
        return int(reply.seq), reply.hash

    def stats(self, tournament: str) -> list[dict[str, Any]]:
        """The server's statistics."""
        reply = self.call(self.tournaments.GetStats, tpb.GetStatsRequest(tournament_id=tournament))
        return [
            {
                "game_kind": k.game_kind,
                "games": int(k.games),
                "win_rate_by_seat": list(k.win_rate_by_seat),
                "figure": k.figure,
                "value": k.value if k.HasField("value") else None,
            }
            for k in reply.kinds
        ]

    def standings(self, tournament: str) -> dict[str, Any]:
        """The server's standings."""
        request = tpb.GetStandingsRequest(tournament_id=tournament)
        reply = self.call(self.tournaments.GetStandings, request)
        return {
            "standings": [
                {
                    "name": s.name,
                    "games": int(s.games),
                    "wins": _number(s.wins),
                    "wins_exact": s.wins_exact,
                    "points": int(s.points),
                }
                for s in reply.standings
            ],
            "games_finished": int(reply.games_finished),
            "games_running": int(reply.games_running),
        }

    def game_list_page(
        self, kind: str, tournament: str, size: int, token: str
    ) -> tuple[list[dict[str, Any]], str]:
        """A page of the server's ListGames."""
        request = pb.ListGamesRequest(
            game_kind=kind, tournament_id=tournament, page_size=size, page_token=token
        )
        reply = self.call(self.games.ListGames, request)
        found = [
            {
                "game_id": g.game_id,
                "game_kind": g.game_kind,
                "players": list(g.players),
                "last_seq": int(g.last_seq),
                "over": g.over,
                "created_at": g.created_at,
                "waiting_for_entropy": g.waiting_for_entropy,
                "tournament_id": g.tournament_id,
            }
            for g in reply.games
        ]
        return found, reply.next_page_token

    def arbiters(self, action: str, name: str = "") -> Any:
        """Named arbiters through the server."""
        if action == "add":
            reply = self.call(self.admin.AddArbiter, adpb.AddArbiterRequest(name=name))
            return {"name": reply.name, "key": reply.key}
        if action == "revoke":
            reply = self.call(self.admin.RevokeArbiter, adpb.RevokeArbiterRequest(name=name))
            return {"name": reply.name, "revoked_at": reply.revoked_at}
        reply = self.call(self.admin.ListArbiters, adpb.ListArbitersRequest())
        return [
            {"name": a.name, "added_at": a.added_at, "revoked_at": a.revoked_at or None}
            for a in reply.arbiters
        ]


def _number(value: float) -> float | int:
    """A whole float as an int (JSON: 2, not 2.0)."""
    return int(value) if float(value).is_integer() else value


class Offline(Client):
    """On a DuckDB file no server holds, or an exported record: ``service.offline``'s
    reads, asked as the organiser (whoever holds the file holds its seeds already)."""

    def __init__(self, db: str = "", record: str = "") -> None:
        self.db, self.record = db, record
        self.where = record or db
        self._reads: offline.Offline | None = None

    def own(self, game_id: str) -> str:
        """The game asked for: an exported record's own game whatever its file is called."""
        if self.record:
            return ""
        self.bounded(pb.GetViewRequest(game_id=game_id))
        return game_id

    def bounded(self, request: Message) -> None:
        """The request the server would be sent, held to the bounds it holds every request
        to (``service.limits.check_fields``): an over-long id is refused here as there
        (INVALID_ARGUMENT, exit 2), not looked for."""
        with self.reading():
            check_fields(request)

    @property
    def reads(self) -> offline.Offline:
        """The offline reads of the file or the record (opened on first use)."""
        if self._reads is None:
            if self.record:
                try:
                    text = read_record_file(self.record)
                except (OSError, UnicodeDecodeError) as bad:
                    raise cannot_read(self.record, bad) from bad
                try:
                    self._reads = offline.OfflineRecord(text, self.record)
                except BadRequest as bad:
                    raise unreachable(bad.message) from bad
            else:
                self._reads = offline.OfflineFile(require_file(self.db))
        return self._reads

    def ask(self, call: Callable[[offline.Offline], Awaitable[T]]) -> T:
        """One offline call; its errors as CliErrors with their exit codes."""
        with self.reading():
            return offline.answer(call(self.reads))

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Service errors and damaged records as CliErrors."""
        try:
            yield
        except CliError:
            raise
        except CannotOpenStore as bad:
            locked = isinstance(bad, StoreLocked)
            hint = " (another process holds it: pass --server, or stop it)" if locked else ""
            raise unreachable(bad.message + hint) from bad
        except KNOWN_ERRORS as bad:
            code, _, message, _ = describe(bad)
            raise CliError(message, exit_of(code)) from bad
        except OrganiserKeyError as bad:
            raise unreachable(str(bad)) from bad
        except UNREADABLE as bad:
            raise failed(f"{self.where}: not a record that replays: {bad}") from bad

    def game_kind(self, game_id: str) -> str:
        """The kind of a game of the file or the record."""
        game_id = self.own(game_id)
        with self.reading():
            return self.reads.folded(game_id).genesis.game_kind

    def replay(self, game_id: str, at: int | None, viewer: Viewer | None) -> Replay:
        """Rows 1..at folded here, as ``viewer`` saw them (the arbiter by default)."""
        game_id = self.own(game_id)
        with self.reading():
            game = self.reads.folded(game_id)
        if viewer is not None:
            try:
                check_viewer(game.genesis, viewer)
            except ValueError as bad:
                raise usage(str(bad)) from bad
        if at is not None and not 1 <= at <= game.last_seq:
            raise CliError(f"there is no seq {at}: it has seqs 1 to {game.last_seq}", REFUSED)
        asked = str(viewer or ARBITER)
        found = self.ask(lambda reads: reads.replay(ORGANISER, game_id, 1, at or 0, asked))
        rows = [
            Seen(s.row.seq, s.row.kind, s.row.actor, list(s.facts), s.view) for s in found.steps
        ]
        return Replay(game.genesis, rows, str(found.viewer), found.last_seq)

    def page(self, game_id: str, viewer: Viewer) -> str:
        """The replay page drawn here."""
        game_id = self.own(game_id)
        return self.ask(lambda reads: reads.page(ORGANISER, game_id, str(viewer)))

    def export(self, game_id: str) -> tuple[str, bool]:
        """The export file made here."""
        game_id = self.own(game_id)
        found = self.ask(lambda reads: reads.export(ORGANISER, game_id))
        return found.text, found.complete

    def export_all(self, output: str, workers: int | None) -> tuple[int, int, int]:
        """Every game of the file in one scan per worker: (written, complete, left out)."""
        from feastlog.cli.season import export_all

        if self.record:
            raise usage("export --all reads a database (--db), not an exported record")
        with self.reading():
            return export_all(require_file(self.db), output, workers)

    def audit(self, game_id: str) -> dict[str, Any]:
        """The audit made here."""
        game_id = self.own(game_id)
        return self.ask(lambda reads: reads.verify(ORGANISER, game_id)).to_dict()

    def audit_all(self, workers: int | None) -> list[dict[str, Any]]:
        """Every game of the file, over ``workers`` processes."""
        from feastlog.cli.output import echo_err
        from feastlog.cli.season import audit_all

        with self.reading():
            reports, speed = audit_all(require_file(self.db), workers)
        echo_err(speed.line("audit"))
        return reports

    def explain(self, game_id: str, seq: int) -> tuple[dict[str, Any], list[str]]:
        """The explanation made here."""
        game_id = self.own(game_id)
        found = self.ask(lambda reads: reads.explain(ORGANISER, game_id, seq))
        return found.found, found.lines

    def what_if(
        self, game_id: str, seq: int, actor: str, command: Callable[[str], record_pb2.Command]
    ) -> dict[str, Any]:
        """The what-if made here."""
        game_id = self.own(game_id)
        made = command(self.game_kind(game_id))
        return self.ask(lambda reads: reads.what_if(ORGANISER, game_id, seq, actor, made)).found

    def rejections(self, game_id: str) -> list[dict[str, Any]]:
        """Every refusal (the file's reader is the arbiter); none in an exported record."""
        game_id = self.own(game_id)
        found = self.ask(lambda reads: reads.rejections(ORGANISER, game_id))
        return [rejection_dict(rejection_message(r)) for r in found]

    def stats(self, tournament: str) -> list[dict[str, Any]]:
        """SQL over the file's projection."""
        self.bounded(tpb.GetStatsRequest(tournament_id=tournament))
        return [vars(k) for k in self.ask(lambda reads: reads.stats(tournament))]

    def standings(self, tournament: str) -> dict[str, Any]:
        """SQL over the file's projection: the same standings the server gives."""
        self.bounded(tpb.GetStandingsRequest(tournament_id=tournament))
        found = self.ask(lambda reads: reads.standings(tournament))
        return {
            "standings": [
                {
                    "name": s.name,
                    "games": s.games,
                    "wins": _number(float(s.wins)),
                    "wins_exact": exact(s.wins),
                    "points": s.points,
                }
                for s in found.lines
            ],
            "games_finished": found.finished,
            "games_running": found.running,
        }

    def game_list_page(
        self, kind: str, tournament: str, size: int, token: str
    ) -> tuple[list[dict[str, Any]], str]:
        """A page of the file's game list, as the server would list it."""
        if self.record:
            raise usage("games lists a database's games (--db), not an exported record")
        self.bounded(pb.ListGamesRequest(game_kind=kind, tournament_id=tournament))
        page = self.ask(lambda reads: reads.games(kind, size, tournament, token))
        return [vars(g) for g in page.games], page.next_page_token


def embedded(target: Target) -> Online:
    """An Online client over a server started here on the target's file (port 0)."""
    # only a command that writes to a file no server holds needs the server's modules
    from feastlog.service.grpc.server import CannotListen, create_server

    # its log is the user's terminal: an incident in one line, not a page of traceback
    log = ServerLog()
    logging.getLogger("feastlog").addHandler(log)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    # a command's server lives as long as the command: its store stays in this process
    serving = create_server(target.db, "127.0.0.1:0", store_process=False)
    start = asyncio.run_coroutine_threadsafe(serving, loop)
    try:
        running = start.result(timeout=120)
    except (CannotOpenStore, OrganiserKeyError, CannotListen) as refused:
        loop.call_soon_threadsafe(loop.stop)
        logging.getLogger("feastlog").removeHandler(log)
        message = getattr(refused, "message", None) or str(refused)
        raise unreachable(message) from refused
    inner = Target(
        f"127.0.0.1:{running.port}", target.db, target.key or running.organiser_key, None
    )
    client = Online(inner, running)
    client._loop = loop
    client._log = log
    return client


def open_client(
    target: Target, writes: bool = False, record: str = "", creates: bool = True
) -> Client:
    """The client for a command: a server's, the file's, or an exported record's.

    ``creates``: a command that writes may make the file (new, demo, arbiter add); one
    that needs what a file already holds (a ruling on its game, its arbiters) is refused
    when there is none, rather than making a database, its folder and a key to say so.
    """
    if record:
        return Offline(record=record)
    if target.server:
        return Online(target)
    if writes:
        if not creates:
            require_file(target.db)
        return embedded(target)
    return Offline(db=target.db)


def command_from_json(text: str, kind: str) -> record_pb2.Command:
    """A command from JSON: a ``feastlog.v1.Command``, or the game's own command message."""
    try:
        return json_format.Parse(text, record_pb2.Command())
    except json_format.ParseError:
        pass
    command = record_pb2.Command()
    try:
        json_format.Parse(text, getattr(command, games.engine(kind).spec.command_field))
    except json_format.ParseError as bad:
        raise usage(f"not a command: {bad}") from bad
    return command


def command_text(command: record_pb2.Command) -> str:
    """A command as one line of JSON (the form ``whatif`` and clients use too)."""
    return json.dumps(json_format.MessageToDict(command, preserving_proto_field_name=True))


@contextmanager
def connected(
    target: Target, writes: bool = False, record: str = "", creates: bool = True
) -> Iterator[Client]:
    """``open_client`` for the length of a ``with``; closed whatever happens."""
    client = open_client(target, writes, record, creates)
    try:
        yield client
    finally:
        client.close()
