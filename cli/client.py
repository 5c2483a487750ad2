"""The CLI's one client: each use case written once, through a server or on a file.

Every method builds its request, calls the RPC and turns the reply into plain data
(numbers as numbers), raising only ``CliError``.  ``open_client(target)`` picks the
channel it talks through:

- a server's (gRPC, to the server the target names or that announced itself beside the
  file; TLS when the target says so);
- with no server holding the file, a channel answered in this process
  (``service.grpc.inprocess``): the server's own servicers, over the application's reads
  of the file or of an exported record (``service.app.offline``), as the organiser
  (whoever holds the file holds its seeds already).  Requests meet the server's checks
  and refusals come back as a server's, so both take the one error path
  (``cli.errors.from_rpc``), which gives a file's refusal in its own words;
- commands that write (``new``, ``demo``, ``rule``, ``arbiter``) with no server: a
  server started here on the file (``embedded``), stopped when the command ends.

What no RPC does is done on the file by the application itself, offline only: the replay
page (``page``) and the bulk work of ``export --all`` and ``audit --all``, one scan per
worker (``cli.season``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format

from feastlog.cli.errors import (
    REFUSED,
    CliError,
    ServerLog,
    cannot_read,
    failed,
    from_rpc,
    unreachable,
    usage,
)
from feastlog.cli.narrate import Seen
from feastlog.cli.target import Target, require_file
from feastlog.cli.wire import Metadata, as_dict, bearer, open_blocking_channel
from feastlog.client.commands import command_from_json as library_command
from feastlog.client.errors import FeastlogError
from feastlog.presentation.narrative import check_viewer
from feastlog.replay import games
from feastlog.replay.engine import Viewer
from feastlog.replay.export import read_record_file
from feastlog.replay.proof import Cosignature, Receipt, TreeHead
from feastlog.service.app import offline
from feastlog.service.app.auth import ORGANISER, OrganiserKeyError
from feastlog.service.app.errors import BadRequest, WaitingForEntropy
from feastlog.service.app.proofcheck import receipt_line
from feastlog.service.app.reads import MAX_PAGE_SIZE
from feastlog.service.grpc.inprocess import InProcessChannel, answered_here
from feastlog.service.store import CannotOpenStore
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import proof_pb2, record_pb2
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import seat_link_service_pb2 as slpb
from feastlog.v1 import seat_link_service_pb2_grpc as slpb_grpc
from feastlog.v1 import table_service_pb2 as tabpb
from feastlog.v1 import table_service_pb2_grpc as tabpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc

T = TypeVar("T")
RECEIPT_FIELDS = tuple(proof_pb2.Receipt.DESCRIPTOR.fields_by_name)
ppb_head, ppb_cosignature = proof_pb2.TreeHead, proof_pb2.Cosignature


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


def _number(value: float) -> float | int:
    """A whole float as an int (JSON: 2, not 2.0)."""
    return int(value) if float(value).is_integer() else value


class Client:
    """The use cases the CLI runs (see the module doc), through the channel ``channel``
    opens: a server's; without one (``local``), one answered in this process on ``db``
    or on the exported ``record``.  ``key``: the organiser's (or a named arbiter's) key a
    server is sent."""

    def __init__(
        self,
        where: str,
        channel: Callable[[], grpc.Channel] | None = None,
        key: str | None = None,
        key_hint: str = "",
        db: str = "",
        record: str = "",
    ) -> None:
        self.where = where
        self._open = channel
        self.key, self.key_hint = key, key_hint
        self.meta: Metadata = bearer(key)
        self.db, self.record = db, record
        self.local = channel is None  # answered here, on a file no server holds
        self._stop: Callable[[], None] | None = None  # an embedded server's
        self.receipts_file: str | None = None  # where the receipts answered are kept

    @cached_property
    def channel(self) -> grpc.Channel:
        """The channel, opened on first use (in process: the file, or the record, read then)."""
        if self._open is not None:
            return self._open()
        return InProcessChannel(self.file, ORGANISER)

    @cached_property
    def game_service(self) -> pb_grpc.GameServiceStub:
        """feastlog.v1.GameService."""
        return pb_grpc.GameServiceStub(self.channel)

    @cached_property
    def replay_service(self) -> rpb_grpc.ReplayServiceStub:
        """feastlog.v1.ReplayService."""
        return rpb_grpc.ReplayServiceStub(self.channel)

    @cached_property
    def audit_service(self) -> apb_grpc.AuditServiceStub:
        """feastlog.v1.AuditService."""
        return apb_grpc.AuditServiceStub(self.channel)

    @cached_property
    def tournament_service(self) -> tpb_grpc.TournamentServiceStub:
        """feastlog.v1.TournamentService."""
        return tpb_grpc.TournamentServiceStub(self.channel)

    @cached_property
    def admin_service(self) -> adpb_grpc.AdminServiceStub:
        """feastlog.v1.AdminService."""
        return adpb_grpc.AdminServiceStub(self.channel)

    @cached_property
    def proof_service(self) -> ppb_grpc.ProofServiceStub:
        """feastlog.v1.ProofService."""
        return ppb_grpc.ProofServiceStub(self.channel)

    def keep(self, receipts: Sequence[Any], body: bytes = b"", command_id: str = "") -> None:
        """Append the receipts of an answer to the receipts file (when one is kept), each
        with what this client sent for its command row."""
        if self.receipts_file is None or not receipts:
            return
        lines = []
        for i, message in enumerate(receipts):  # the command's row first, then a seed reveal
            receipt = Receipt(**{f: getattr(message, f) for f in RECEIPT_FIELDS})
            lines.append(receipt_line(receipt, body if i == 0 else b"", command_id))
        try:
            with open(self.receipts_file, "a", encoding="utf-8") as out:
                out.write("".join(line + "\n" for line in lines))
        except OSError as bad:
            raise cannot_read(self.receipts_file, bad) from bad

    def server_info(self) -> dict[str, Any]:
        """The server's signing key, every key it has used, its tree's size."""
        reply = self.call(self.proof_service.GetServerInfo, ppb.GetServerInfoRequest())
        keys = [{"public_key": k.public_key, "first_used": k.first_used} for k in reply.keys]
        return {
            "public_key": reply.public_key,
            "keys": keys,
            "tree_size": int(reply.tree_size),
            "head_interval_ms": int(reply.head_interval_ms),
        }

    def tree_head(self, size: int = 0) -> tuple[TreeHead, list[Cosignature]]:
        """A signed tree head (0: the latest) and its witnesses' cosignatures."""
        reply = self.call(self.proof_service.GetTreeHead, ppb.GetTreeHeadRequest(size=size))
        h = reply.head
        head = TreeHead(int(h.size), h.root, h.signed_at, h.public_key, h.signature)
        cosigned = [
            replace(Cosignature.of(head, c.witness_key, c.witnessed_at), signature=c.signature)
            for c in reply.cosignatures
        ]
        return head, cosigned

    def consistency_proof(self, first: int, second: int) -> tuple[list[str], str, str]:
        """That the tree of ``first`` leaves is a prefix of ``second``'s: (path, first
        root, second root)."""
        request = ppb.GetConsistencyProofRequest(first=first, second=second)
        reply = self.call(self.proof_service.GetConsistencyProof, request)
        return list(reply.path), reply.first_root, reply.second_root

    def add_cosignature(self, head: TreeHead, cosignature: Cosignature) -> int:
        """Give a witness's cosignature of a head to its server; how many it has now."""
        request = ppb.AddCosignatureRequest(
            head=ppb_head(**vars(head)),
            cosignature=ppb_cosignature(
                witness_key=cosignature.witness_key,
                witnessed_at=cosignature.witnessed_at,
                signature=cosignature.signature,
            ),
        )
        return int(self.call(self.proof_service.AddCosignature, request).cosignatures)

    @cached_property
    def table_service(self) -> tabpb_grpc.TableServiceStub:
        """feastlog.v1.TableService."""
        return tabpb_grpc.TableServiceStub(self.channel)

    @cached_property
    def seat_link_service(self) -> slpb_grpc.SeatLinkServiceStub:
        """feastlog.v1.SeatLinkService."""
        return slpb_grpc.SeatLinkServiceStub(self.channel)

    def create_seat_link(self, game_id: str, seat: int) -> dict[str, Any]:
        """A one-time link to a seat's page: its code, its path and (served) its URL."""
        request = slpb.CreateSeatLinkRequest(game_id=game_id, seat=seat)
        reply = self.call(self.seat_link_service.CreateSeatLink, request)
        return {"seat": reply.seat, "code": reply.code, "path": reply.path, "url": reply.url}

    def close(self) -> None:
        """Close the channel, and stop an embedded server."""
        if "channel" in self.__dict__:
            self.channel.close()
        if self._stop is not None:
            self._stop()

    def call(self, method: Any, request: Any, token: str | None = None) -> Any:
        """One unary call with the target's key (or ``token``); errors as CliError."""
        try:
            return method(request, metadata=bearer(token) if token else self.meta)
        except grpc.RpcError as error:
            raise self.failure(error) from None

    def failure(self, error: grpc.RpcError) -> CliError:
        """A refusal in words, with why a key file was not sent when that explains it."""
        found = from_rpc(error, self.where, self.local)
        denied = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
        if self.key_hint and error.code() in denied:
            return CliError(f"{found.message} ({self.key_hint})", found.exit_code, found.reason)
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
        try:
            replies = method(request, metadata=metadata)
        except grpc.RpcError as error:  # refused before its first reply (in process)
            raise self.failure(error) from None
        try:
            yield from replies
        except grpc.RpcError as error:
            raise self.failure(error) from None
        finally:
            replies.cancel()

    def here(self, work: Callable[[], T]) -> T:
        """Work the application does in this process with no RPC (offline only: the page,
        bulk work over the file); its refusals as a call's."""
        try:
            return answered_here(work)
        except grpc.RpcError as error:
            raise self.failure(error) from None

    def game(self, game_id: str) -> str:
        """The game a request names: an exported record's own, whatever its file is called."""
        return "" if self.record else game_id

    def create_game(self, **request: Any) -> dict[str, Any]:
        """Create a game (organiser): its id, seed commitment and seat tokens."""
        if not self.key:
            hint = self.key_hint or (
                "run this beside the server's database, or pass --organiser-key "
                "(or set FEASTLOG_ORGANISER_KEY)"
            )
            raise CliError(f"no organiser key: {hint}", REFUSED)  # as the server would
        reply = self.call(self.game_service.CreateGame, pb.CreateGameRequest(**request))
        self.keep(reply.receipts)
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
        """Send a seat's entropy: whether the game started, and who it still waits for."""
        request = pb.JoinGameRequest(game_id=game_id, entropy=entropy)
        reply = self.call(self.game_service.JoinGame, request, token)
        self.keep(reply.receipts)
        return reply.started, list(reply.waiting_for)

    def view(self, game_id: str, token: str | None = None) -> tuple[int, str, dict[str, Any]]:
        """The table now as the caller sees it: (seq, viewer, view)."""
        reply = self.call(self.game_service.GetView, pb.GetViewRequest(game_id=game_id), token)
        return reply.seq, reply.viewer, as_dict(reply.view)

    def legal(self, game_id: str, token: str) -> tuple[int, list[record_pb2.Command], bool]:
        """The seat's legal commands now: (seq, commands, partial)."""
        request = pb.ListLegalCommandsRequest(game_id=game_id)
        reply = self.call(self.game_service.ListLegalCommands, request, token)
        return reply.seq, list(reply.commands), reply.partial

    def submit(self, game_id: str, token: str, command: record_pb2.Command, seq: int) -> int:
        """Send a command guarded by the seq it was chosen at; the seq it was recorded at."""
        request = pb.SubmitCommandRequest(
            game_id=game_id,
            command_id=uuid.uuid4().hex,
            command=command,
            expected_seq=seq,
            typed_facts_only=True,  # the seq is all it reads
        )
        reply = self.call(self.game_service.SubmitCommand, request, token)
        self.keep(reply.receipts, command.SerializeToString(deterministic=True), request.command_id)
        return int(reply.seq)

    def watch(
        self,
        game_id: str,
        from_seq: int = 1,
        token: str | None = None,
        arbiter: bool = False,
        to_seq: int = 0,
    ) -> Iterator[Any]:
        """A game's rows from ``from_seq`` (RecordEvent messages), the stored ones then each
        as it is recorded, to ``to_seq`` (0: until the caller stops): as the seat of
        ``token``, with the target's key (``arbiter``), or as a spectator, who sends no
        credentials at all."""
        request = pb.WatchGameRequest(game_id=game_id, from_seq=from_seq)
        sent = None if arbiter else bearer(token)
        for reply in self.stream(self.game_service.WatchGame, request, metadata=sent):
            yield reply.event
            if to_seq and reply.event.seq >= to_seq:
                return

    def play_bots(self, game_id: str, tokens: Sequence[str], seed: int) -> dict[str, Any]:
        """Bots play every seat to the end (joining first when the game waits for entropy);
        the final view."""
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
        """Rows 1..at (the last without it) as ``viewer`` saw them (by default the caller:
        on a file, the arbiter)."""
        game_id, asked = self.game(game_id), str(viewer) if viewer else ""
        # a file's reader is told which seats and seqs its record has, in the record's
        # words (a server's caller, the server's refusal of the request)
        first = self.call(
            self.replay_service.GetStateAt,
            rpb.GetStateAtRequest(game_id=game_id, seq=1, viewer="" if self.local else asked),
        )
        if self.local:
            in_record(first.event.genesis, int(first.last_seq), at, viewer)
        request = rpb.StreamReplayRequest(game_id=game_id, to_seq=at or 0, viewer=asked)
        rows = [
            Seen(e.seq, e.kind, e.actor, [as_dict(f) for f in e.facts], as_dict(e.view))
            for e in (r.event for r in self.stream(self.replay_service.StreamReplay, request))
        ]
        return Replay(first.event.genesis, rows, asked or first.viewer, int(first.last_seq))

    def page(self, game_id: str, viewer: Viewer) -> str:
        """The replay page, drawn here by the application from the file (offline only: no
        RPC draws one; through a server, ``cli.replay_html`` draws its replies)."""
        game_id = self.game(game_id)
        # the game is asked for as any call asks: its id checked, found, folded
        self.call(self.replay_service.GetStateAt, rpb.GetStateAtRequest(game_id=game_id, seq=1))
        reads = self.file
        return self.here(lambda: offline.answer(reads.page(ORGANISER, game_id, str(viewer))))

    def export(self, game_id: str) -> tuple[str, bool]:
        """A game's export file and whether it is complete (seed revealed)."""
        request = rpb.ExportRecordRequest(game_id=self.game(game_id))
        reply = self.call(self.replay_service.ExportRecord, request)
        return reply.content.decode(), reply.complete

    def export_all(self, output: str, workers: int | None) -> tuple[int, int, int]:
        """Every game's record, one a line: (written, complete, left out).  On a file, in
        one scan per worker; through a server, every game it lists, exported in turn."""
        if self.local:
            from feastlog.cli.season import export_file

            return self.here(lambda: export_file(require_file(self.db), output, workers))
        written = complete = 0
        page = ""
        with Path(output).open("w") as out:
            while True:
                request = pb.ListGamesRequest(page_size=MAX_PAGE_SIZE, page_token=page)
                listed = self.call(self.game_service.ListGames, request)
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
        """One game's audit report."""
        request = apb.VerifyGameRequest(game_id=self.game(game_id))
        return report_dict(self.call(self.audit_service.VerifyGame, request).report)

    def audit_all(self, workers: int | None) -> list[dict[str, Any]]:
        """Every game's audit report, with a progress bar.  On a file, over ``workers``
        processes (and how fast, on standard error); through a server, its stream
        (organiser key)."""
        from feastlog.cli.output import echo_err, progress

        if self.local:
            from feastlog.cli.season import audit_file

            reports, speed = self.here(lambda: audit_file(require_file(self.db), workers))
            echo_err(speed.line("audit"))
            return reports
        found: list[dict[str, Any]] = []
        bar: Any = None
        try:
            for each in self.stream(self.audit_service.VerifyAllGames, apb.VerifyAllGamesRequest()):
                if bar is None:
                    bar = progress(int(each.total), "verifying").__enter__()
                found.append(report_dict(each.report))
                bar.update(1)
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
        return found

    def explain(self, game_id: str, seq: int) -> tuple[dict[str, Any], list[str]]:
        """One row explained: as data and in words."""
        request = apb.ExplainEventRequest(game_id=self.game(game_id), seq=seq)
        reply = self.call(self.audit_service.ExplainEvent, request)
        return as_dict(reply.explanation), list(reply.lines)

    def what_if(
        self, game_id: str, seq: int, actor: str, command: Callable[[str], record_pb2.Command]
    ) -> dict[str, Any]:
        """A command (made for the game's kind) in place of row ``seq``."""
        game_id = self.game(game_id)
        first = self.call(
            self.replay_service.GetStateAt, rpb.GetStateAtRequest(game_id=game_id, seq=1)
        )
        made = command(first.event.genesis.game_kind)
        request = apb.WhatIfRequest(game_id=game_id, seq=seq, actor=actor, command=made)
        return as_dict(self.call(self.audit_service.WhatIf, request).details)

    def rejections(self, game_id: str) -> list[dict[str, Any]]:
        """A game's refused commands the caller may see (on a file: every one)."""
        request = apb.ListRejectionsRequest(game_id=self.game(game_id))
        reply = self.call(self.audit_service.ListRejections, request)
        return [rejection_dict(r) for r in reply.rejections]

    def rule(self, game_id: str, ruling: record_pb2.ArbiterCommand) -> tuple[int, str]:
        """Append a ruling: (seq, hash)."""
        request = apb.SubmitRulingRequest(
            game_id=game_id, command_id=uuid.uuid4().hex, ruling=ruling
        )
        reply = self.call(self.audit_service.SubmitRuling, request)
        self.keep(reply.receipts)
        return int(reply.seq), reply.hash

    def call_arbiter(
        self,
        game_id: str,
        token: str,
        about_seq: int,
        claim: str,
        hold: bool,
        alternative: record_pb2.Command | None = None,
    ) -> int:
        """A seat calls the arbiter about row ``about_seq``: the call's id (its seq)."""
        request = tabpb.CallArbiterRequest(
            game_id=self.game(game_id),
            command_id=uuid.uuid4().hex,
            about_seq=about_seq,
            claim=claim,
            hold=hold,
            alternative=alternative,
        )
        return int(self.call(self.table_service.CallArbiter, request, token).call)

    def calls(
        self, game_id: str, tournament: str, open_only: bool, token: str | None = None
    ) -> list[dict[str, Any]]:
        """The calls of a game, or of the server's (a tournament's) running games."""
        request = tabpb.ListCallsRequest(
            game_id=game_id, tournament_id=tournament, open_only=open_only
        )
        reply = self.call(self.table_service.ListCalls, request, token)
        return [
            json_format.MessageToDict(
                c, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
            )
            for c in reply.calls
        ]

    def watch_calls(self, tournament: str) -> Iterator[dict[str, Any]]:
        """The open calls, then each call made or answered, as it commits."""
        request = tabpb.WatchCallsRequest(tournament_id=tournament)
        for each in self.stream(self.table_service.WatchCalls, request):
            yield json_format.MessageToDict(
                each.call,
                preserving_proto_field_name=True,
                always_print_fields_with_no_presence=True,
            )

    def clocks(self, game_id: str) -> dict[str, Any] | None:
        """A game's clocks now (None for a game without)."""
        request = tabpb.GetClocksRequest(game_id=self.game(game_id))
        reply = self.call(self.table_service.GetClocks, request)
        if not reply.clocked:
            return None
        found: dict[str, Any] = json_format.MessageToDict(
            reply, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        for seat in found["seats"]:  # int64 as numbers, not JSON strings
            seat["remaining_ms"], seat["used_ms"] = int(seat["remaining_ms"]), int(seat["used_ms"])
        return found

    def case_file(self, game_id: str, call: int, token: str | None = None) -> str:
        """The case file of a call as the caller may see it (canonical JSON text)."""
        request = tabpb.GetCaseFileRequest(game_id=self.game(game_id), call=call)
        return str(self.call(self.table_service.GetCaseFile, request, token).bundle)

    def stats(self, tournament: str) -> list[dict[str, Any]]:
        """Per game kind: games, win rate by seat, a figure."""
        reply = self.call(
            self.tournament_service.GetStats, tpb.GetStatsRequest(tournament_id=tournament)
        )
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

    def tournament(self, rpc: str, **request: Any) -> dict[str, Any]:
        """One of the TournamentService calls on a tournament run on the record (``rpc``:
        its name, ``CreateTournament``…, with the request's fields): the reply as data."""
        method = getattr(self.tournament_service, rpc)
        request_type = getattr(tpb, f"{rpc}Request")
        reply = self.call(method, request_type(**request))
        return json_format.MessageToDict(
            reply, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )

    def watch_tournament(self, tournament: str, from_seq: int = 1) -> Iterator[dict[str, Any]]:
        """A tournament's rows from ``from_seq``, stored then live, each as data."""
        request = tpb.WatchTournamentRequest(tournament_id=tournament, from_seq=from_seq)
        for reply in self.stream(self.tournament_service.WatchTournament, request):
            yield json_format.MessageToDict(reply, preserving_proto_field_name=True)

    def standings(self, tournament: str) -> dict[str, Any]:
        """A tournament's standings."""
        request = tpb.GetStandingsRequest(tournament_id=tournament)
        reply = self.call(self.tournament_service.GetStandings, request)
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

    def game_list(self, kind: str, tournament: str, most: int) -> list[dict[str, Any]]:
        """The game list, newest first: at most ``most`` games (0: all), page by page."""
        found: list[dict[str, Any]] = []
        token = ""
        while True:
            size = min(most - len(found), MAX_PAGE_SIZE) if most else MAX_PAGE_SIZE
            request = pb.ListGamesRequest(
                game_kind=kind, tournament_id=tournament, page_size=size, page_token=token
            )
            reply = self.call(self.game_service.ListGames, request)
            found += [
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
            token = reply.next_page_token
            if not token or (most and len(found) >= most):
                return found

    def arbiters(self, action: str, name: str = "") -> Any:
        """Named arbiters: add (their key), revoke, list."""
        if action == "add":
            reply = self.call(self.admin_service.AddArbiter, adpb.AddArbiterRequest(name=name))
            return {"name": reply.name, "key": reply.key}
        if action == "revoke":
            reply = self.call(
                self.admin_service.RevokeArbiter, adpb.RevokeArbiterRequest(name=name)
            )
            return {"name": reply.name, "revoked_at": reply.revoked_at}
        reply = self.call(self.admin_service.ListArbiters, adpb.ListArbitersRequest())
        return [
            {"name": a.name, "added_at": a.added_at, "revoked_at": a.revoked_at or None}
            for a in reply.arbiters
        ]

    @cached_property
    def file(self) -> offline.Offline:
        """The application's reads of the file or the record (in process; read on first
        use): a record that cannot be read says so (exit 3), one that does not fold too
        (exit 1)."""
        if self.record:
            try:
                text = read_record_file(self.record)
            except (OSError, UnicodeDecodeError) as bad:
                raise cannot_read(self.record, bad) from bad
            try:
                return offline.OfflineRecord(text, self.record)
            except BadRequest as bad:
                raise unreachable(bad.message) from bad
            except offline.UNREADABLE as bad:
                raise failed(f"{self.record}: not a record that replays: {bad}") from bad
        return offline.OfflineFile(require_file(self.db))


def in_record(
    genesis: record_pb2.Genesis, last_seq: int, at: int | None, viewer: Viewer | None
) -> None:
    """Usage (2) for a seat the record's game does not have, refused (4) for a seq it has
    not: a file's reader is told what the record holds."""
    if viewer is not None:
        try:
            check_viewer(genesis, viewer)
        except ValueError as bad:
            raise usage(str(bad)) from bad
    if at is not None and not 1 <= at <= last_seq:
        raise CliError(f"there is no seq {at}: it has seqs 1 to {last_seq}", REFUSED)


def on_server(target: Target) -> Client:
    """A client of the server the target names (TLS when it says so)."""
    assert target.server is not None
    server, credentials = target.server, None
    if target.tls is not None:
        credentials = target.tls.channel_credentials()
    # every call about a game carries the routing header (cli.wire.ROUTING_HEADER)
    return Client(
        f"the server at {server}",
        lambda: open_blocking_channel(server, credentials),
        target.key,
        target.key_hint,
    )


def on_file(db: str = "", record: str = "") -> Client:
    """A client answered in this process on a DuckDB file no server holds, or an exported
    record, as the organiser."""
    return Client(record or db, db=db, record=record)


def embedded(target: Target) -> Client:
    """A client of a server started here on the target's file (port 0)."""
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
    client = on_server(inner)

    def stop() -> None:
        stopping = asyncio.run_coroutine_threadsafe(running.stop(1), loop)
        stopping.result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        logging.getLogger("feastlog").removeHandler(log)

    client._stop = stop
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
        return on_file(record=record)
    if target.server:
        return on_server(target)
    if writes:
        if not creates:
            require_file(target.db)
        return embedded(target)
    return on_file(db=target.db)


def command_from_json(text: str, kind: str) -> record_pb2.Command:
    """A command from JSON: a ``feastlog.v1.Command``, or the game's own command message;
    enum values by their short names too (``red``: ``feastlog.client.commands``)."""
    try:
        return library_command(text)
    except FeastlogError as bad:
        if bad.reason != "BAD_JSON":
            raise usage(bad.message) from bad
    command = record_pb2.Command()
    try:
        library_command(text, getattr(command, games.engine(kind).spec.command_field))
    except FeastlogError as bad:
        raise usage(bad.message) from bad
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
