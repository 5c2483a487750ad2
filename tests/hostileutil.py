"""Hostile clients for tests: every RPC called with raw bytes, taken from the descriptors.

``populate`` puts a few games on a server (one running with a seat to act, another game,
one waiting for seat entropy, one finished, all in one tournament); ``TEMPLATES`` holds a
valid request per RPC aimed at them; ``call_raw`` sends any bytes to any RPC and returns
the status it got; ``hostile_payloads`` is the fuzz corpus for any request type, and
``UNDECODABLE`` bytes no request type decodes.  The fuzz tests (feastlog's RPCs, health
and reflection) and the authorisation matrix share them.
"""

from __future__ import annotations

import atexit
import os
import random
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message

from feastlog.cli.wire import as_dict
from feastlog.cli.wire import error_info as client_error_info
from feastlog.replay import games
from feastlog.service.app.bounds import field_of
from feastlog.service.app.clock import ManualClock, utc_now
from feastlog.service.app.logtree import HEAD_INTERVAL
from feastlog.service.grpc.guard import methods, request_limit
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import seat_link_service_pb2 as slpb
from feastlog.v1 import table_service_pb2 as tabpb
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc
from tests.serverutil import ThreadedServer, bearer, error_info, stub

TOURNAMENT = "hostile-cup"
SEED = bytes(range(32))
PRINCIPALS = ("none", "malformed", "unknown", "organiser", "own", "other", "foreign")


@dataclass
class Targets:
    """The games a hostile client aims at, and every seat token of them."""

    key: str
    running: str  # a Menu Masters game where one seat is to act
    own: int  # the seat to act in ``running``
    other: int  # a seat of ``running`` not to act
    foreign: str  # another running game
    pending: str  # a game waiting for seat entropy
    finished: str  # a game the arbiter closed
    move: record_pb2.Command  # a legal command for ``own`` now
    tokens: dict[str, list[str]] = field(default_factory=dict)
    tournament: str = ""  # a tournament run on the record, of one round, not yet paired

    def metadata(self, principal: str, game_id: str) -> tuple[tuple[str, str], ...]:
        """Call metadata for a principal, relative to the game a request names."""
        own, other = (0, 1) if game_id == self.pending else (self.own, self.other)
        tokens = {
            "none": None,
            "unknown": "seat_" + "x" * 32,
            "organiser": self.key,
            "own": self.tokens[game_id][own],
            "other": self.tokens[game_id][other],
            "foreign": self.tokens[self.foreign][0],
        }
        if principal == "malformed":
            return (("authorization", "Bearer"),)
        return bearer(tokens[principal])


def populate(address: str, key: str, clock: ManualClock | None = None) -> Targets:
    """Put the target games on a server (``clock``: the server's, if a test moves it)."""
    client = stub(address)
    org = bearer(key)
    made: dict[str, pb.CreateGameResponse] = {}
    for name, kind, players, entropy in (
        ("running", "menu-masters", ["Ann", "Brian", "Celia"], False),
        ("foreign", "bon-appetit", ["Dora", "Emil"], False),
        ("pending", "picky-eaters", ["Fay", "Gus", "Hal"], True),
        ("finished", "picky-eaters", ["Ida", "Jon"], False),
    ):
        request = pb.CreateGameRequest(
            game_kind=kind,
            players=players,
            seed=SEED,
            tournament_id=TOURNAMENT,
            seat_entropy=entropy,
        )
        made[name] = client.CreateGame(request, metadata=org)
    close = record_pb2.ArbiterCommand(reason="test over", close_game=record_pb2.CloseGame())
    client.SubmitCommand(
        pb.SubmitCommandRequest(
            game_id=made["finished"].game_id,
            command_id="close",
            command=record_pb2.Command(arbiter=close),
        ),
        metadata=org,
    )
    running = made["running"].game_id
    client.SubmitCommand(  # a second row, so that what-if has a seq 2 to try
        pb.SubmitCommandRequest(
            game_id=running, command_id="note", command=record_pb2.Command(arbiter=_note("hi"))
        ),
        metadata=org,
    )
    tokens = {g.game_id: [t.token for t in g.seat_tokens] for g in made.values()}
    call = record_pb2.SeatCall(about_seq=1, claim="matrix")  # seq 3: a call to the arbiter
    client.SubmitCommand(
        pb.SubmitCommandRequest(
            game_id=running, command_id="call", command=record_pb2.Command(call=call)
        ),
        metadata=bearer(tokens[running][0]),
    )
    view = as_dict(client.GetView(pb.GetViewRequest(game_id=running)).view)
    own = int(view["to_act"][0])
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=running), metadata=bearer(tokens[running][own])
    )
    tournaments = tpb_grpc.TournamentServiceStub(grpc.insecure_channel(address))
    cup = tpb.CreateTournamentRequest(
        format={"table_sizes": "3-4", "rounds": "1"}, players=["Kai", "Lea", "Max", "Noa"]
    )
    tournament = tournaments.CreateTournament(cup, metadata=org).tournament.tournament_id
    _head_over_every_row(address, clock)
    return Targets(
        key,
        running,
        own,
        (own + 1) % 3,
        made["foreign"].game_id,
        made["pending"].game_id,
        made["finished"].game_id,
        legal.commands[0],
        tokens,
        tournament,
    )


def _head_over_every_row(address: str, clock: ManualClock | None) -> None:
    """Wait for the server's signed tree head to cover every row written (a head comes
    every HEAD_INTERVAL while rows arrive: on a ``clock`` the test moves, moved on to it),
    so that the proofs' templates have a head to prove in."""
    import time

    proofs = ppb_grpc.ProofServiceStub(grpc.insecure_channel(address))
    rows = proofs.GetServerInfo(ppb.GetServerInfoRequest()).tree_size
    if clock is not None:
        clock.advance(HEAD_INTERVAL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if proofs.GetTreeHead(ppb.GetTreeHeadRequest()).head.size >= rows:
                return
        except grpc.RpcError as none_yet:
            if none_yet.code() != grpc.StatusCode.NOT_FOUND:
                raise
        time.sleep(0.2)
    raise AssertionError(f"no signed tree head over the {rows} rows written after 20 s")


def populated_server(
    factory: pytest.TempPathFactory, name: str
) -> Iterator[tuple[ThreadedServer, Targets]]:
    """A server on a fresh file holding ``populate``'s games, for a module's tests; stopped
    when they are done.  A module's fixture yields from it."""
    clock = ManualClock(utc_now())  # the heads' interval, moved on when populated
    server = ThreadedServer(factory.mktemp(name) / "games.duckdb", clock=clock)
    try:
        yield server, populate(server.address, server.key, clock)
    finally:
        server.stop()


def _note(text: str) -> record_pb2.ArbiterCommand:
    return record_pb2.ArbiterCommand(reason="matrix", note=record_pb2.Note(text=text))


# Where the organiser's Backup calls write their copies.
BACKUPS = tempfile.mkdtemp(prefix="feastlog-matrix-backups-")
atexit.register(shutil.rmtree, BACKUPS, True)
# A valid request per RPC, aimed at the target games: (request, the game it names).
Template = Callable[[Targets], tuple[Message, str]]
TEMPLATES: dict[str, Template] = {
    "/feastlog.v1.GameService/CreateGame": lambda t: (
        pb.CreateGameRequest(game_kind="bon-appetit", players=["Kim", "Lou"]),
        t.running,
    ),
    "/feastlog.v1.GameService/JoinGame": lambda t: (
        pb.JoinGameRequest(game_id=t.pending, entropy=b"e" * 32),
        t.pending,
    ),
    "/feastlog.v1.GameService/SubmitCommand": lambda t: (
        pb.SubmitCommandRequest(game_id=t.running, command_id=uuid.uuid4().hex, command=t.move),
        t.running,
    ),
    "/feastlog.v1.GameService/GetView": lambda t: (pb.GetViewRequest(game_id=t.running), t.running),
    "/feastlog.v1.GameService/ListLegalCommands": lambda t: (
        pb.ListLegalCommandsRequest(game_id=t.running),
        t.running,
    ),
    "/feastlog.v1.GameService/WatchGame": lambda t: (
        pb.WatchGameRequest(game_id=t.running, from_seq=1),
        t.running,
    ),
    "/feastlog.v1.GameService/ListGames": lambda t: (
        pb.ListGamesRequest(tournament_id=TOURNAMENT),
        t.running,
    ),
    "/feastlog.v1.GameService/GetGame": lambda t: (pb.GetGameRequest(game_id=t.running), t.running),
    "/feastlog.v1.ReplayService/GetStateAt": lambda t: (
        rpb.GetStateAtRequest(game_id=t.running, seq=1, viewer=f"seat:{t.own}"),
        t.running,
    ),
    "/feastlog.v1.ReplayService/StreamReplay": lambda t: (
        rpb.StreamReplayRequest(game_id=t.running, viewer=f"seat:{t.own}"),
        t.running,
    ),
    "/feastlog.v1.ReplayService/ExportRecord": lambda t: (
        rpb.ExportRecordRequest(game_id=t.running),
        t.running,
    ),
    "/feastlog.v1.AuditService/VerifyGame": lambda t: (
        apb.VerifyGameRequest(game_id=t.running),
        t.running,
    ),
    "/feastlog.v1.AuditService/VerifyAllGames": lambda t: (apb.VerifyAllGamesRequest(), t.running),
    "/feastlog.v1.AuditService/ExplainEvent": lambda t: (
        apb.ExplainEventRequest(game_id=t.running, seq=1),
        t.running,
    ),
    "/feastlog.v1.AuditService/WhatIf": lambda t: (
        apb.WhatIfRequest(game_id=t.running, seq=2, actor=f"seat:{t.own}", command=t.move),
        t.running,
    ),
    "/feastlog.v1.AuditService/ListRejections": lambda t: (
        apb.ListRejectionsRequest(game_id=t.running),
        t.running,
    ),
    "/feastlog.v1.AuditService/SubmitRuling": lambda t: (
        apb.SubmitRulingRequest(
            game_id=t.running, command_id=uuid.uuid4().hex, ruling=_note("matrix")
        ),
        t.running,
    ),
    "/feastlog.v1.TournamentService/GetStandings": lambda t: (
        tpb.GetStandingsRequest(tournament_id=TOURNAMENT),
        t.running,
    ),
    "/feastlog.v1.TournamentService/GetStats": lambda t: (
        tpb.GetStatsRequest(tournament_id=TOURNAMENT),
        t.running,
    ),
    # a tournament run on the record: the organiser's cells take it through one round
    "/feastlog.v1.TournamentService/CreateTournament": lambda t: (
        tpb.CreateTournamentRequest(format={"rounds": "1"}, players=["Kim", "Lou", "Mo"]),
        t.running,
    ),
    "/feastlog.v1.TournamentService/RegisterPlayer": lambda t: (
        tpb.RegisterPlayerRequest(tournament_id=t.tournament, name="Matrix"),
        t.running,
    ),
    "/feastlog.v1.TournamentService/DropPlayer": lambda t: (
        tpb.DropPlayerRequest(tournament_id=t.tournament, name="Matrix", reason="matrix"),
        t.running,
    ),
    "/feastlog.v1.TournamentService/PairRound": lambda t: (
        tpb.PairRoundRequest(tournament_id=t.tournament),
        t.running,
    ),
    "/feastlog.v1.TournamentService/SwapPlayers": lambda t: (
        tpb.SwapPlayersRequest(tournament_id=t.tournament, first="Kai", second="Lea", reason="m"),
        t.running,
    ),
    "/feastlog.v1.TournamentService/FixTable": lambda t: (
        tpb.FixTableRequest(tournament_id=t.tournament, name="Kai", table=1, seat=0, reason="m"),
        t.running,
    ),
    "/feastlog.v1.TournamentService/PublishRound": lambda t: (
        tpb.PublishRoundRequest(tournament_id=t.tournament),
        t.running,
    ),
    "/feastlog.v1.TournamentService/StartClock": lambda t: (
        tpb.StartClockRequest(tournament_id=t.tournament),
        t.running,
    ),
    "/feastlog.v1.TournamentService/ExtendClock": lambda t: (
        tpb.ExtendClockRequest(tournament_id=t.tournament, minutes=5, reason="matrix"),
        t.running,
    ),
    "/feastlog.v1.TournamentService/CallTime": lambda t: (
        tpb.CallTimeRequest(tournament_id=t.tournament),
        t.running,
    ),
    "/feastlog.v1.TournamentService/AddPenalty": lambda t: (
        tpb.AddPenaltyRequest(
            tournament_id=t.tournament, name="Kai", penalty="warning", reason="matrix"
        ),
        t.running,
    ),
    "/feastlog.v1.TournamentService/EndTournament": lambda t: (
        tpb.EndTournamentRequest(tournament_id=t.tournament),
        t.running,
    ),
    "/feastlog.v1.TournamentService/GetTournament": lambda t: (
        tpb.GetTournamentRequest(tournament_id=t.tournament),
        t.running,
    ),
    "/feastlog.v1.TournamentService/WatchTournament": lambda t: (
        tpb.WatchTournamentRequest(tournament_id=t.tournament, from_seq=1),
        t.running,
    ),
    "/feastlog.v1.TournamentService/ExportTournament": lambda t: (
        tpb.ExportTournamentRequest(tournament_id=t.tournament),
        t.running,
    ),
    # the organiser adds "matrix" and then revokes it
    "/feastlog.v1.AdminService/AddArbiter": lambda t: (
        adpb.AddArbiterRequest(name="matrix"),
        t.running,
    ),
    "/feastlog.v1.AdminService/RevokeArbiter": lambda t: (
        adpb.RevokeArbiterRequest(name="matrix"),
        t.running,
    ),
    "/feastlog.v1.AdminService/ListArbiters": lambda t: (adpb.ListArbitersRequest(), t.running),
    # each to a path of its own: a backup never overwrites a file
    "/feastlog.v1.AdminService/Backup": lambda t: (
        adpb.BackupRequest(path=os.path.join(BACKUPS, f"{uuid.uuid4().hex}.duckdb")),
        t.running,
    ),
    "/feastlog.v1.FeedService/WatchAll": lambda t: (fpb.WatchAllRequest(), t.running),
    "/feastlog.v1.ProofService/GetServerInfo": lambda t: (ppb.GetServerInfoRequest(), t.running),
    "/feastlog.v1.ProofService/GetTreeHead": lambda t: (ppb.GetTreeHeadRequest(), t.running),
    "/feastlog.v1.ProofService/GetInclusionProof": lambda t: (
        ppb.GetInclusionProofRequest(game_id=t.running, seq=1),
        t.running,
    ),
    "/feastlog.v1.ProofService/GetConsistencyProof": lambda t: (
        ppb.GetConsistencyProofRequest(first=1, second=0),
        t.running,
    ),
    # a cosignature that does not verify: refused for whoever sends it
    "/feastlog.v1.ProofService/AddCosignature": lambda t: (ppb.AddCosignatureRequest(), t.running),
    "/feastlog.v1.TableService/CallArbiter": lambda t: (
        tabpb.CallArbiterRequest(game_id=t.running, about_seq=1, claim="matrix"),
        t.running,
    ),
    "/feastlog.v1.TableService/ListCalls": lambda t: (
        tabpb.ListCallsRequest(game_id=t.running),
        t.running,
    ),
    "/feastlog.v1.TableService/WatchCalls": lambda t: (tabpb.WatchCallsRequest(), t.running),
    "/feastlog.v1.TableService/GetClocks": lambda t: (
        tabpb.GetClocksRequest(game_id=t.running),
        t.running,
    ),
    "/feastlog.v1.TableService/GetCaseFile": lambda t: (
        tabpb.GetCaseFileRequest(game_id=t.running, call=3),
        t.running,
    ),
    "/feastlog.v1.SeatLinkService/CreateSeatLink": lambda t: (
        slpb.CreateSeatLinkRequest(game_id=t.running, seat=t.own),
        t.running,
    ),
}


@dataclass(frozen=True)
class Answer:
    """What the server answered: a status, its details, the ErrorInfo reason, a reply."""

    code: grpc.StatusCode
    details: str = ""
    reason: str | None = None  # None: no ErrorInfo came with the status
    reply: bytes = b""


def rpc_paths() -> list[tuple[str, MethodDescriptor]]:
    """Every feastlog RPC, from the service descriptors."""
    return methods()


def call_raw(
    channel: grpc.Channel,
    method: MethodDescriptor,
    raw: bytes,
    metadata: tuple[tuple[str, str], ...] = (),
    timeout: float = 20.0,
) -> Answer:
    """Send raw request bytes to an RPC; a stream answers with its first reply or its status."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    try:
        if method.server_streaming:
            streaming: Any = channel.unary_stream(path)
            stream = streaming(raw, metadata=metadata, timeout=timeout)
            try:
                first = next(stream)
            except StopIteration:
                return Answer(stream.code())
            stream.cancel()
            return Answer(grpc.StatusCode.OK, reply=first)
        unary: Any = channel.unary_unary(path)
        reply = unary(raw, metadata=metadata, timeout=timeout)
        return Answer(grpc.StatusCode.OK, reply=reply)
    except grpc.RpcError as error:
        info = client_error_info(error)
        return Answer(error.code(), error.details() or "", info.reason if info else None)


def message_class(descriptor: Descriptor) -> Any:
    """The Python class of a message type."""
    return message_factory.GetMessageClass(descriptor)


STRINGS = [
    "",
    "seat:0",
    "seat:",
    "seat:0:1",
    "seat:99",
    "seat:-1",
    "arbiter",
    "spectator",
    "bon-appetit",
    "menu-masters",
    "名前\u202e\u0000😀",
    "ǅ\u0301" * 3,
    "x" * 129,
]
INTS = [0, 1, 2, 3, -1, 7, 1_000_000]


def random_message(
    descriptor: Descriptor, rng: random.Random, ids: list[str], depth: int = 0
) -> Message:
    """A random message of a type: any field may be set, to plausible or hostile values."""
    out: Message = message_class(descriptor)()
    for f in descriptor.fields:
        if rng.random() < 0.4 or (f.message_type and depth > 4):
            continue
        values = getattr(out, f.name)
        if f.message_type and f.message_type.GetOptions().map_entry:
            key_field, value_field = (
                f.message_type.fields_by_name["key"],
                f.message_type.fields_by_name["value"],
            )
            for _ in range(rng.randint(1, 3)):
                values[_scalar(key_field, rng, ids)] = _scalar(value_field, rng, ids)
        elif f.is_repeated:
            for _ in range(rng.randint(0, 3)):
                if f.message_type:
                    values.add().CopyFrom(random_message(f.message_type, rng, ids, depth + 1))
                else:
                    values.append(_scalar(f, rng, ids))
        elif f.message_type:
            values.CopyFrom(random_message(f.message_type, rng, ids, depth + 1))
        else:
            setattr(out, f.name, _scalar(f, rng, ids))
    return out


def _scalar(f: FieldDescriptor, rng: random.Random, ids: list[str]) -> Any:
    if f.type == FieldDescriptor.TYPE_STRING:
        return rng.choice([*STRINGS, *ids, "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(8))])
    if f.type == FieldDescriptor.TYPE_BYTES:
        return rng.randbytes(rng.choice([0, 1, 32, 33, 200]))
    if f.type == FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if f.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return rng.choice([0.0, -1.5, 1e300])
    if f.type == FieldDescriptor.TYPE_ENUM:
        numbers = [v.number for v in f.enum_type.values] if f.enum_type else []
        return rng.choice([*numbers, 99, -3])
    wide = f.cpp_type in (FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64)
    extra = [2**62, -(2**62)] if wide else [2**31 - 1, -(2**31)]
    return rng.choice([*INTS, *extra])


def unknown_field(number: int = 2903) -> bytes:
    """The bytes of a varint field with a number no feastlog message has."""
    tag = number << 3
    out = bytearray()
    while True:
        byte, tag = tag & 0x7F, tag >> 7
        out.append(byte | (0x80 if tag else 0))
        if not tag:
            return bytes(out) + b"\x01"


def mutate(raw: bytes, rng: random.Random) -> bytes:
    """A valid request's bytes, damaged one way or another."""
    data = bytearray(raw)
    how = rng.randrange(6)
    if how == 0 and data:
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == 1 and data:
        del data[rng.randrange(len(data)) :]
    elif how == 2:
        at = rng.randrange(len(data) + 1)
        data[at:at] = rng.randbytes(rng.randint(1, 8))
    elif how == 3:
        data += bytes(data)  # two copies merge: repeated fields double
    elif how == 4:
        data += unknown_field(rng.randint(100, 50_000))
    else:
        data += b"\x0a" + bytes([0x7F])  # a length that runs past the end
    return bytes(data)


# Bytes that are no message of any type: a length that runs past the end (0a ff ff: field
# 1's length, a varint cut short, as hostile clients sent to health), a tag cut short.
UNDECODABLE = (b"\x0a\xff\xff", b"\xff\xff\xff", b"\x0a\x7f")


def varint(value: int) -> bytes:
    """A protobuf varint."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def text_fields(message: Message) -> list[Any]:
    """A message's single string fields."""
    return [
        f
        for f in message.DESCRIPTOR.fields
        if f.type == FieldDescriptor.TYPE_STRING and not f.is_repeated
    ]


def hostile_payloads(
    request_type: Descriptor, template: Callable[[], Message], rng: random.Random, ids: list[str]
) -> Iterator[tuple[str, bytes]]:
    """The fuzz corpus for one request type, as (kind of attack, request bytes): random
    bytes, random messages built from the descriptor, damaged valid requests (``template``
    makes one), oversized and unicode fields, requests over the RPC's size and over the
    server's, unknown fields; last, the valid request itself (``valid request``)."""
    for _ in range(8):
        yield "random bytes", rng.randbytes(rng.randint(1, 300))
    for _ in range(16):
        yield "random message", random_message(request_type, rng, ids).SerializeToString()
    for _ in range(16):
        yield "damaged valid request", mutate(template().SerializeToString(), rng)
    base: Any = template()
    for f in text_fields(base)[:3]:
        long = message_class(request_type)()
        long.CopyFrom(base)
        bound = field_of(f.name).bound  # a field that takes more (WatchAll's position): past it
        setattr(long, f.name, "ü" * 5000 if bound < 5000 else "z" * (bound + 1))
        yield "oversized field", long.SerializeToString()
        unicode = message_class(request_type)()
        unicode.CopyFrom(base)
        setattr(unicode, f.name, "\u202e名\u0000😀" + rng.choice(["", "seat:1", "\ufeff"]))
        yield "unicode field", unicode.SerializeToString()
    raw = base.SerializeToString()
    for size in (request_limit(request_type), 3 * 1024 * 1024):
        filler = size - len(raw)  # one unknown bytes field fills it
        yield "oversized request", raw + b"\x9a\x05" + varint(filler) + b"z" * filler
    yield "unknown field", raw + unknown_field()
    if "command" in base.DESCRIPTOR.fields_by_name and base.HasField("command"):
        which = base.command.WhichOneof("game") or ""
        inner = getattr(base.command, which)
        damaged = type(inner).FromString(inner.SerializeToString() + unknown_field(77))
        nested = message_class(request_type)()
        nested.CopyFrom(base)
        getattr(nested.command, which).CopyFrom(damaged)
        yield "unknown field in command", nested.SerializeToString()
    yield "valid request", raw


def refused(call: Any, *args: Any, **kwargs: Any) -> grpc.RpcError:
    """The error a call fails with (the test fails if it succeeds)."""
    with pytest.raises(grpc.RpcError) as failed:
        call(*args, **kwargs)
    return failed.value


def pack_refused(
    server: ThreadedServer, kind: str, old: str, new: str, card: str, field: str
) -> grpc.RpcError:
    """CreateGame with the game's bundled pack, ``old`` replaced by ``new``: refused
    INVALID_ARGUMENT, BAD_CONTENT_PACK naming ``card`` and ``field``, and no game made."""
    client = stub(server.address)
    listed = pb.ListGamesRequest(page_size=500)
    before = len(client.ListGames(listed).games)
    text = games.engine(kind).default_pack_bytes().decode()
    assert old in text
    pack = text.replace(old, new, 1).encode()
    request = pb.CreateGameRequest(game_kind=kind, players=["Ann", "Bo"], content_pack=pack)
    error = refused(client.CreateGame, request, metadata=bearer(server.key))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    info = error_info(error)
    assert (info.reason, info.metadata["card"], info.metadata["field"]) == (
        "BAD_CONTENT_PACK",
        card,
        field,
    ), error.details()
    assert len(client.ListGames(listed).games) == before
    return error
