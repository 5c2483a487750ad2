"""Whole games played through a real server while every seat and a spectator call every
RPC they may call, recording everything they receive before the seed reveal.

``play`` drives seeded bots over gRPC (command ids empty, ``js-N`` and random, as real
clients send them); after every row one observer watches it arrive, and at probe points
one observer calls GetView, WatchGame, ListLegalCommands, GetStateAt, StreamReplay,
ExportRecord, VerifyGame, VerifyAllGames, ExplainEvent, WhatIf, ListRejections,
ListGames, GetStandings and JoinGame, and sends commands that are refused.
Each reply (or error) is kept as a ``Receipt``: who received it, at which seq, its
RecordEvents and its text.  After the game the public export is refolded, so the tests
know every table, fact and command, and can ask what each viewer was allowed to know.

``Secrets`` turns the engine's arbiter view versus a viewer's view into probes: what the
arbiter sees that the viewer does not (other hands, sealed bids, deck order), the sealed
commands of other seats, and the seed.  A probe that the viewer already saw legitimately
(its own view, visible facts and commands, its own legal commands and sends) is dropped,
so a probe found in a receipt is a leak and nothing else.
"""

from __future__ import annotations

import json
import random
import uuid
from base64 import b64encode
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from feastlog.cli.wire import error_info
from feastlog.replay import games
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Engine, Fact, Viewer
from feastlog.replay.games.fold import wrap_command
from feastlog.replay.record.export import load_record
from feastlog.replay.record.history import Folded, refold
from feastlog.replay.record.rows import Row, actor_seat
from feastlog.replay.record.visibility import sees_fact
from feastlog.replay.table.rules import TABLE_MEMBERS
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc
from tests.serverutil import ThreadedServer, bearer

NAMES = ["Ann", "Brian", "Celia", "Dev", "Eve", "Farid"]
TOURNAMENT = "leak-cup"


def plain(value: Any) -> Any:
    """JSON-able data with whole floats (protobuf Struct numbers) back as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def compact(value: Any) -> str:
    """Compact, key-sorted JSON: the one text form receipts and probes are compared in."""
    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def message_text(message: Message) -> str:
    """A message as compact JSON (bytes fields come out as base64, as the JSON mapping says)."""
    data = json_format.MessageToDict(message, preserving_proto_field_name=True)
    if isinstance(message, rpb.ExportRecordResponse) and message.content:
        data["content"] = json.loads(message.content)
    return compact(data)


def error_text(error: grpc.RpcError) -> str:
    """Everything a client learns from an error: code, message and ErrorInfo."""
    info = error_info(error)
    details = json_format.MessageToDict(info) if info is not None else {}
    return compact({"code": error.code().name, "details": error.details(), "info": details})


@dataclass
class Receipt:
    """One reply (or error) an observer received while the game was at ``seq``."""

    observer: Viewer
    seq: int
    rpc: str
    text: str
    events: list[pb.RecordEvent] = field(default_factory=list)
    error: str = ""  # the gRPC status code name when the call failed
    as_viewer: Viewer | None = None  # whose view the events hold (the observer's own if None)


@dataclass
class Played:
    """A whole game played through the server, and everything observers received."""

    kind: str
    game_id: str
    seats: int
    server_seed: bytes
    folded: Folded
    command_ids: dict[int, str]  # seq -> the command_id its seat sent
    sent: dict[Viewer, list[record_pb2.Command]]  # commands each seat sent (kept or refused)
    receipts: list[Receipt]
    last_hidden_seq: int  # the last seq some observer received before the reveal

    @property
    def engine(self) -> Engine:
        """The game's rules engine."""
        return games.engine(self.kind)

    @property
    def rows(self) -> tuple[Row, ...]:
        """The stored rows (from the public export after the reveal)."""
        return self.folded.rows

    def table_before(self, seq: int) -> Any:
        """The game state just before row ``seq`` was applied."""
        return self.folded.tables[seq - 2].game

    def command_visible(self, seq: int, viewer: Viewer) -> bool:
        """Whether ``viewer`` may see the command of row ``seq`` before the reveal."""
        row = self.rows[seq - 1]
        if row.kind != "command":
            return True
        command = record_pb2.Command.FromString(row.body)
        which = command.WhichOneof("game")
        if which == "arbiter" or viewer.role == "arbiter" or row.actor == str(viewer):
            return True
        if which in TABLE_MEMBERS:  # a call to the arbiter: public at the table
            return True
        return self.engine.command_public(getattr(command, which or ""))


class Client:
    """The stubs an observer uses, with its credentials."""

    def __init__(self, address: str) -> None:
        channel = grpc.insecure_channel(address)
        self.game = pb_grpc.GameServiceStub(channel)
        self.replay = rpb_grpc.ReplayServiceStub(channel)
        self.audit = apb_grpc.AuditServiceStub(channel)
        self.tournament = tpb_grpc.TournamentServiceStub(channel)


def command_id_for(n: int, rng: random.Random) -> str:
    """Command ids as real clients send them: none, ``js-N`` or random."""
    return rng.choice(["", f"js-{n}", uuid.UUID(int=rng.getrandbits(128)).hex])


class Driver:
    """Plays a game with seeded bots and probes it from every observer."""

    def __init__(self, server: ThreadedServer, kind: str, seats: int, seed: int) -> None:
        self.client = Client(server.address)
        self.key = server.key
        self.kind = kind
        self.rng = random.Random(seed)
        request = pb.CreateGameRequest(
            game_kind=kind,
            players=NAMES[:seats],
            seed=bytes([seed]) * 32,
            tournament_id=TOURNAMENT,
        )
        created = self.client.game.CreateGame(request, metadata=bearer(self.key))
        self.game_id = created.game_id
        self.tokens = [t.token for t in created.seat_tokens]
        self.seats = seats
        self.receipts: list[Receipt] = []
        self.command_ids: dict[int, str] = {}
        self.sent: dict[Viewer, list[record_pb2.Command]] = {
            Viewer.of_seat(s): [] for s in range(seats)
        }
        self.own_ids: dict[Viewer, list[str]] = {Viewer.of_seat(s): [] for s in range(seats)}
        self.seq = 1
        self.followed = 0  # the last seq some observer has watched
        self.sends = 0

    def token(self, viewer: Viewer) -> str | None:
        """The observer's credential (a spectator sends none)."""
        return (
            self.tokens[viewer.seat] if viewer.role == "seat" and viewer.seat is not None else None
        )

    def keep(self, viewer: Viewer, rpc: str, call: Any, as_viewer: Viewer | None = None) -> Any:
        """Make one call as ``viewer``; keep its reply or error as a receipt."""
        try:
            reply = call(bearer(self.token(viewer)))
            # a stream's refusal arrives while it is read
            replies = list(reply) if isinstance(reply, Iterator | list) else [reply]
        except grpc.RpcError as error:
            self.receipts.append(
                Receipt(viewer, self.seq, rpc, error_text(error), error=error.code().name)
            )
            return None
        events = [r.event for r in replies if hasattr(r, "event")]
        text = "\n".join(message_text(r) for r in replies)
        self.receipts.append(Receipt(viewer, self.seq, rpc, text, events, "", as_viewer))
        return replies

    def play(self, probe_every: int, sweep_every: int) -> int:
        """Play to the end; probe every ``probe_every`` rows; the last seq before the reveal."""
        observers = [Viewer.of_seat(s) for s in range(self.seats)] + [SPECTATOR]
        last_hidden = 1
        step = 0
        while True:
            view = self.client.game.GetView(pb.GetViewRequest(game_id=self.game_id))
            to_act = sorted(int(s) for s in json_format.MessageToDict(view.view)["to_act"])
            for seat in to_act:
                if self.submit(Viewer.of_seat(seat)):
                    return last_hidden
                last_hidden = self.seq
                self.follow(observers[step % len(observers)])
                step += 1
                if step % probe_every == 0:
                    self.probe(observers[step // probe_every % len(observers)])
                if step % sweep_every == 0:
                    for observer in observers:
                        self.sweep(observer)

    def submit(self, seat: Viewer) -> bool:
        """One seeded bot move for ``seat``; True when it ended the game."""
        meta = bearer(self.token(seat))
        legal = self.client.game.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=self.game_id), metadata=meta
        )
        if not legal.commands:
            return False
        command = self.rng.choice(list(legal.commands))
        self.sends += 1
        command_id = command_id_for(self.sends, self.rng)
        request = pb.SubmitCommandRequest(
            game_id=self.game_id, command_id=command_id, command=command, expected_seq=legal.seq
        )
        reply = self.client.game.SubmitCommand(request, metadata=meta)
        self.sent[seat].append(command)
        self.command_ids[reply.seq] = command_id
        self.own_ids[seat].append(command_id)
        if reply.game_over:
            return True
        self.seq = reply.seq
        self.receipts.append(Receipt(seat, self.seq, "SubmitCommand", message_text(reply)))
        if seat.role == "seat":
            self.receipts.append(Receipt(seat, self.seq, "ListLegalCommands", message_text(legal)))
        return False

    def watch(self, from_seq: int, meta: Any) -> list[pb.WatchGameResponse]:
        """WatchGame from ``from_seq`` up to the current row, then hang up."""
        request = pb.WatchGameRequest(game_id=self.game_id, from_seq=from_seq)
        stream = self.client.game.WatchGame(request, metadata=meta)
        replies = []
        for reply in stream:
            replies.append(reply)
            if reply.event.seq >= self.seq:
                break
        stream.cancel()
        return replies

    def follow(self, observer: Viewer) -> None:
        """The rows since the last one followed, as ``observer`` watches them arrive."""
        start, self.followed = self.followed + 1, self.seq
        self.keep(observer, "WatchGame", lambda m: self.watch(start, m))

    def sweep(self, observer: Viewer) -> None:
        """The whole record so far, as ``observer`` can stream it."""
        game_id = self.game_id
        self.keep(observer, "WatchGame", lambda m: self.watch(1, m))
        self.keep(
            observer,
            "StreamReplay",
            lambda m: self.client.replay.StreamReplay(
                rpb.StreamReplayRequest(game_id=game_id, from_seq=1), metadata=m
            ),
        )

    def probe(self, observer: Viewer) -> None:
        """Every read RPC once as ``observer``, and a few commands the server refuses."""
        c, game_id, seq = self.client, self.game_id, self.seq
        recent = max(1, seq - 4)
        keep = self.keep
        keep(
            observer,
            "GetView",
            lambda m: c.game.GetView(pb.GetViewRequest(game_id=game_id), metadata=m),
        )
        keep(observer, "WatchGame", lambda m: self.watch(recent, m))
        for viewer, at in (("", 0), ("", recent), ("spectator", seq), ("arbiter", seq)):
            request = rpb.GetStateAtRequest(game_id=game_id, seq=at, viewer=viewer)
            keep(
                observer,
                "GetStateAt",
                lambda m, r=request: c.replay.GetStateAt(r, metadata=m),
                Viewer.parse(viewer) if viewer else None,
            )
        stream = rpb.StreamReplayRequest(game_id=game_id, from_seq=recent)
        keep(observer, "StreamReplay", lambda m: c.replay.StreamReplay(stream, metadata=m))
        export = rpb.ExportRecordRequest(game_id=game_id)
        keep(observer, "ExportRecord", lambda m: c.replay.ExportRecord(export, metadata=m))
        verify = apb.VerifyGameRequest(game_id=game_id)
        keep(observer, "VerifyGame", lambda m: c.audit.VerifyGame(verify, metadata=m))
        every = apb.VerifyAllGamesRequest()
        keep(observer, "VerifyAllGames", lambda m: c.audit.VerifyAllGames(every, metadata=m))
        join = pb.JoinGameRequest(game_id=game_id, entropy=b"late")
        keep(observer, "JoinGame", lambda m: c.game.JoinGame(join, metadata=m))
        explain = apb.ExplainEventRequest(game_id=game_id, seq=seq)
        keep(observer, "ExplainEvent", lambda m: c.audit.ExplainEvent(explain, metadata=m))
        rejections = apb.ListRejectionsRequest(game_id=game_id)
        keep(observer, "ListRejections", lambda m: c.audit.ListRejections(rejections, metadata=m))
        listing = pb.ListGamesRequest(tournament_id=TOURNAMENT)
        keep(observer, "ListGames", lambda m: c.game.ListGames(listing, metadata=m))
        standings = tpb.GetStandingsRequest(tournament_id=TOURNAMENT)
        keep(observer, "GetStandings", lambda m: c.tournament.GetStandings(standings, metadata=m))
        if observer.role == "seat":
            self.refused(observer)

    def refused(self, seat: Viewer) -> None:
        """Commands built from what the seat itself knows, that the server refuses or denies."""
        c, game_id, seq = self.client, self.game_id, self.seq
        own = self.sent[seat][-1] if self.sent[seat] else None
        legal = c.game.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(self.token(seat))
        )
        self.receipts.append(Receipt(seat, seq, "ListLegalCommands", message_text(legal)))
        tries = [own] if own is not None else []
        tries += list(legal.commands[:1])
        for command in tries:
            what = apb.WhatIfRequest(game_id=game_id, seq=seq, command=command)
            self.keep(seat, "WhatIf", lambda m, r=what: c.audit.WhatIf(r, metadata=m))
            stale = pb.SubmitCommandRequest(
                game_id=game_id, command_id="", command=command, expected_seq=seq - 1
            )
            self.keep(seat, "SubmitCommand", lambda m, r=stale: c.game.SubmitCommand(r, metadata=m))
        if own is not None and not legal.commands:  # not its turn: the rules refuse it
            again = pb.SubmitCommandRequest(game_id=game_id, command_id="", command=own)
            self.keep(seat, "SubmitCommand", lambda m: c.game.SubmitCommand(again, metadata=m))
        reuse = next((i for i in reversed(self.own_ids[seat]) if i), "")
        if reuse and own is not None:  # its own id again, with another command
            again = pb.SubmitCommandRequest(game_id=game_id, command_id=reuse, command=own)
            self.keep(seat, "SubmitCommand", lambda m: c.game.SubmitCommand(again, metadata=m))

    def finish(self, last_hidden: int) -> Played:
        """The public export after the reveal, refolded: every table, fact and command."""
        export = self.client.replay.ExportRecord(rpb.ExportRecordRequest(game_id=self.game_id))
        assert export.complete
        record = load_record(export.content.decode())
        assert record.server_seed is not None
        folded = refold(record.rows, record.server_seed, record.pack_bytes)
        return Played(
            self.kind,
            self.game_id,
            self.seats,
            record.server_seed,
            folded,
            self.command_ids,
            self.sent,
            self.receipts,
            last_hidden,
        )


def play(
    server: ThreadedServer, kind: str, seats: int, seed: int, probe_every: int, sweep_every: int
) -> Played:
    """Play one whole game of ``kind`` through ``server``, probing as it goes."""
    driver = Driver(server, kind, seats, seed)
    last_hidden = driver.play(probe_every, sweep_every)
    return driver.finish(last_hidden)


@dataclass
class Secrets:
    """What each viewer may know of a played game, and the probes for what it may not."""

    played: Played
    # text -> the first seq from which the viewer legitimately had it
    known: dict[Viewer, dict[str, int]] = field(default_factory=dict)
    views: dict[tuple[int, Viewer], dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for viewer in self.viewers():
            self.known[viewer] = self._known(viewer)

    def viewers(self) -> list[Viewer]:
        """Every seat and the spectator."""
        return [Viewer.of_seat(s) for s in range(self.played.seats)] + [SPECTATOR]

    def view(self, seq: int, viewer: Viewer) -> dict[str, Any]:
        """The engine's view after row ``seq`` for ``viewer``."""
        found = self.views.get((seq, viewer))
        if found is None:
            table = self.played.folded.tables[seq - 1]
            found = self.views[seq, viewer] = plain(self.played.engine.view(table.game, viewer))
        return found

    def facts(self, seq: int, viewer: Viewer) -> list[Fact]:
        """The facts of row ``seq`` ``viewer`` may see while the game runs."""
        return [f for f in self.played.folded.facts[seq - 1] if sees_fact(viewer, f, public=False)]

    def _known(self, viewer: Viewer) -> dict[str, int]:
        """Every string and list the viewer legitimately had, with the seq it had it from."""
        played, engine = self.played, self.played.engine
        known: dict[str, int] = {}

        def learn(value: Any, seq: int) -> None:
            for text in value if isinstance(value, set) else pieces(value):
                known.setdefault(text, seq)

        learn(json_format.MessageToDict(played.folded.genesis, preserving_proto_field_name=True), 1)
        learn([*NAMES, TOURNAMENT, played.game_id], 1)
        sent = iter(played.sent.get(viewer, []))
        for seq in range(1, played.last_hidden_seq + 1):
            learn(self.view(seq, viewer), seq)
            learn(self.facts(seq, viewer), seq)
            row = played.rows[seq - 1]
            if row.kind == "command" and played.command_visible(seq, viewer):
                learn(command_pieces(record_pb2.Command.FromString(row.body)), seq)
            if viewer.role == "seat" and viewer.seat is not None:
                table = played.folded.tables[seq - 1].game
                for inner in engine.legal_commands(table, viewer.seat):
                    learn(command_pieces(wrap_command(engine.spec.command_field, inner)), seq)
        for command in sent:  # what the seat sent itself: known to it from the start
            learn(command_pieces(command), 1)
        return known

    def probes(self, seq: int, viewer: Viewer) -> dict[str, str]:
        """Texts that must not reach ``viewer`` while the game is at ``seq``, and why."""
        played, known = self.played, self.known[viewer]
        out: dict[str, str] = {}
        seed = played.server_seed
        for text in (seed.hex(), b64encode(seed).decode(), seed.hex().upper()):
            out[text] = "the server seed"
        hidden = secret_parts(self.view(seq, ARBITER), self.view(seq, viewer))
        for path, value in hidden:
            for text in pieces(value):
                if known.get(text, seq + 1) > seq:
                    out.setdefault(text, f"arbiter-only {path}")
        for q in range(2, seq + 1):
            row = played.rows[q - 1]
            command_id = played.command_ids.get(q, "")
            if row.actor != str(viewer) and command_id and json.dumps(command_id) not in known:
                out.setdefault(json.dumps(command_id), f"the command_id of seq {q}")
            if played.command_visible(q, viewer):
                continue
            # a command's text alone is no secret (the viewer may send the same one): it is
            # a probe only where the viewer never had that text from anywhere allowed
            command = record_pb2.Command.FromString(row.body)
            for text in command_pieces(command) - known.keys():
                out.setdefault(text, f"the sealed command of seq {q}")
        return out


def pieces(value: Any) -> set[str]:
    """The texts of a value: each string (key or leaf) quoted, each list of 2+ items holding
    some text as JSON.  Numbers alone are too common in any reply to be told apart."""
    found: set[str] = set()
    if isinstance(value, str):
        found.add(json.dumps(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            found.add(json.dumps(key))
            found |= pieces(item)
    elif isinstance(value, list):
        inner: set[str] = set()
        for item in value:
            inner |= pieces(item)
        if len(value) >= 2 and inner:
            found.add(compact(value))
        found |= inner
    return found


def command_pieces(command: record_pb2.Command) -> set[str]:
    """A command as every text it can take in a reply: JSON, body hex and base64."""
    body = command.SerializeToString(deterministic=True)
    as_json = json_format.MessageToDict(command, preserving_proto_field_name=True)
    texts = pieces(as_json) | ({compact(as_json)} if as_json else set())
    # the name of the game's own oneof says only the game kind, which the genesis makes
    # public (and the typed views and facts carry it as their member's name)
    texts.discard(json.dumps(command.WhichOneof("game")))
    if len(body) >= 4:  # shorter bodies are too common as substrings to mean anything
        texts |= {json.dumps(body.hex()), json.dumps(b64encode(body).decode())}
    return texts


def secret_parts(arbiter: Any, seen: Any, path: str = "") -> list[tuple[str, Any]]:
    """The parts of the arbiter's view a viewer's view lacks or shows otherwise."""
    if isinstance(arbiter, dict) and isinstance(seen, dict):
        out: list[tuple[str, Any]] = []
        for key, value in arbiter.items():
            if key not in seen:
                out.append((f"{path}.{key}", value))
            else:
                out += secret_parts(value, seen[key], f"{path}.{key}")
        return out
    if isinstance(arbiter, list) and isinstance(seen, list) and len(arbiter) == len(seen):
        out = []
        for i, (a, s) in enumerate(zip(arbiter, seen, strict=True)):
            out += secret_parts(a, s, f"{path}[{i}]")
        return out
    return [] if arbiter == seen else [(path, arbiter)]


def leaks(secrets: Secrets, receipts: list[Receipt] | None = None) -> list[str]:
    """Every probe found in what observers received before the reveal (all they received,
    unless other ``receipts`` are given)."""
    found = []
    cache: dict[tuple[int, Viewer], dict[str, str]] = {}
    for receipt in secrets.played.receipts if receipts is None else receipts:
        key = (receipt.seq, receipt.observer)
        if key not in cache:
            cache[key] = secrets.probes(*key)
        for text, why in cache[key].items():
            if text in receipt.text:
                found.append(
                    f"{receipt.observer} at seq {receipt.seq}, {receipt.rpc}: {why} {text}"
                )
    return found


def actor_of(row: Row) -> Viewer | None:
    """The viewer a command row's actor is (None for the arbiter or the server)."""
    seat = actor_seat(row.actor)
    return None if seat is None else Viewer.of_seat(seat)
