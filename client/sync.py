"""``Client``: a feastlog server's RPCs from blocking Python code; and the calls it
offers, declared once (``Conveniences``): ``AsyncClient`` offers the same, awaited."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import closing
from typing import Any, Generic, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from feastlog.client import calls as rpcs  # the call table (a method is named calls)
from feastlog.client.calls import Call, Created, Legal, Recorded, Stream, Turn, View
from feastlog.client.channel import Metadata, bearer, open_blocking_channel
from feastlog.client.errors import FeastlogError, from_rpc
from feastlog.client.locate import DEFAULT_DB, Where, locate
from feastlog.client.methods import (
    Asked,
    Awaited,
    Pages,
    Resumed,
    Sent,
    Streamed,
    ended,
    streamed,
    unary,
)
from feastlog.replay.proof.signed import Cosignature, TreeHead
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import feed_service_pb2_grpc as fpb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import seat_link_service_pb2 as slpb
from feastlog.v1 import seat_link_service_pb2_grpc as slpb_grpc
from feastlog.v1 import table_service_pb2 as tabpb
from feastlog.v1 import table_service_pb2_grpc as tabpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc

T = TypeVar("T")
C = TypeVar("C")  # a channel, blocking or asyncio

RETRIES = 6  # a call that could not reach the server is sent again this many times
BACKOFF = (0.2, 3.0)  # the first wait between tries, doubling up to the second
TIMEOUT = 30.0  # seconds a unary call may take
SPECTATOR = ""  # as ``token``: call with no credentials at all
STUBS: Mapping[str, Any] = {
    "GameService": pb_grpc.GameServiceStub,
    "ReplayService": rpb_grpc.ReplayServiceStub,
    "AuditService": apb_grpc.AuditServiceStub,
    "TournamentService": tpb_grpc.TournamentServiceStub,
    "AdminService": adpb_grpc.AdminServiceStub,
    "FeedService": fpb_grpc.FeedServiceStub,
    "ProofService": ppb_grpc.ProofServiceStub,
    "TableService": tabpb_grpc.TableServiceStub,
    "SeatLinkService": slpb_grpc.SeatLinkServiceStub,
    "Health": health_pb2_grpc.HealthStub,
}
SEED_REVEAL = "seed_reveal"  # the last row of a game


def find(
    server: str | None,
    db: str,
    organiser_key: str | None,
    ca: str | None,
    tls_cert: str | None,
    tls_key: str | None,
) -> Where:
    """The server as the CLI finds it; FeastlogError when there is none to call."""
    where = locate(server, db, organiser_key, tls_cert, tls_key, ca)
    if where.server is None:
        raise FeastlogError(
            f"no server announced itself beside {db}: pass server='host:port'",
            "UNAVAILABLE",
            "NO_SERVER",
        )
    return where


def reach(
    server: str | None,
    db: str,
    organiser_key: str | None,
    tls: tuple[str | None, str | None, str | None],
    channel: C | None,
    opened: Callable[[str, grpc.ChannelCredentials | None], C],
) -> tuple[str, str | None, C]:
    """The server's address, the organiser key it may be sent and a channel to it: the
    ``channel`` given (found by the caller), or one ``opened`` to the server found as
    the CLI finds it (``tls``: the CA, certificate and key files)."""
    if channel is not None:
        return server or "", organiser_key, channel
    ca, tls_cert, tls_key = tls
    where = find(server, db, organiser_key, ca, tls_cert, tls_key)
    credentials = where.tls.channel_credentials() if where.tls else None
    return where.server or "", where.key, opened(where.server or "", credentials)


def waits(retries: int) -> Iterator[float]:
    """The waits before each retry: doubling from BACKOFF[0] up to BACKOFF[1]."""
    wait = BACKOFF[0]
    for _ in range(retries):
        yield wait
        wait = min(wait * 2, BACKOFF[1])


def retry_wait(failure: FeastlogError, tries: Iterator[float]) -> float:
    """How long to wait before sending again after ``failure``; the failure raised when
    it cannot succeed sent again, or the tries are spent."""
    wait = next(tries, None) if failure.retryable else None
    if wait is None:
        raise failure from None
    return wait


def followed(game_id: str, from_seq: int, token: str | None) -> Resumed[pb.RecordEvent]:
    """A game's rows from ``from_seq`` to the seed reveal, resumed where it was after a
    dropped connection (``follow``, ``my_turn``)."""
    at = [from_seq]

    def seen(event: pb.RecordEvent) -> bool:
        at[0] = event.seq + 1
        return event.kind == SEED_REVEAL

    return Resumed(lambda: rpcs.watch(game_id, at[0]), seen, token)


class Conveniences(Generic[C]):
    """A client on a channel (``C``: blocking or asyncio) and the calls both clients
    offer (see ``Client``'s doc): each method's body is its call and the token it is
    sent with (None: the client's own)."""

    def __init__(
        self,
        server: str | None = None,
        *,
        db: str = DEFAULT_DB,
        token: str | None = None,
        organiser_key: str | None = None,
        ca: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
        retries: int = RETRIES,
        timeout: float | None = TIMEOUT,
        channel: C | None = None,
    ) -> None:
        self.token, self.retries, self.timeout = token, retries, timeout
        tls = (ca, tls_cert, tls_key)
        self.address, self.organiser_key, self.channel = reach(
            server, db, organiser_key, tls, channel, self.opened
        )
        self.stubs = {name: stub(self.channel) for name, stub in STUBS.items()}

    def opened(self, address: str, credentials: grpc.ChannelCredentials | None) -> C:
        """A channel of this client's kind to ``address``."""
        raise NotImplementedError

    def metadata(self, token: str | None) -> Metadata:
        """The credentials a call carries (see ``Client``'s doc)."""
        if token is not None:
            return bearer(token)
        return bearer(self.token or self.organiser_key)

    # GameService

    @unary
    def create_game(
        self,
        kind: str,
        players: Sequence[str],
        seed: bytes = b"",
        options: Mapping[str, str] | None = None,
        content_pack: bytes = b"",
        seat_entropy: bool = False,
        tournament_id: str = "",
    ) -> Sent[Created]:
        """A new game (organiser): its id, seed commitment and seat tokens."""
        return rpcs.create_game(
            kind, players, seed, options, content_pack, seat_entropy, tournament_id
        ), None

    @unary
    def join(
        self, game_id: str, entropy: bytes, token: str | None = None
    ) -> Sent[pb.JoinGameResponse]:
        """A seat's entropy (a game created with seat entropy)."""
        return rpcs.join_game(game_id, entropy), token

    @unary
    def submit(
        self,
        game_id: str,
        command: record_pb2.Command,
        expected_seq: int | None = None,
        token: str | None = None,
        command_id: str | None = None,
        typed_facts_only: bool = False,
    ) -> Sent[Recorded]:
        """Send a command (refused as stale unless the game is at ``expected_seq``, when
        given); retried with the same command_id."""
        return rpcs.submit(game_id, command, expected_seq, command_id, typed_facts_only), token

    @unary
    def view(self, game_id: str, token: str | None = None) -> Sent[View]:
        """The table now, as the caller may see it."""
        return rpcs.view(game_id), token

    @unary
    def legal(self, game_id: str, token: str | None = None) -> Sent[Legal]:
        """The caller's seat's legal commands now."""
        return rpcs.legal(game_id), token

    @streamed
    def games(
        self, kind: str = "", tournament_id: str = "", most: int = 0
    ) -> Pages[pb.GameSummary]:
        """Every game (of a kind, of a tournament), or the first ``most``, page by page in
        the server's order."""
        return Pages(
            lambda page, size: rpcs.list_games(kind, tournament_id, size, page),
            lambda listed: listed.games,
            most,
        )

    @streamed
    def follow(
        self, game_id: str, from_seq: int = 1, token: str | None = None
    ) -> Resumed[pb.RecordEvent]:
        """A game's rows from ``from_seq``, the stored ones then each as it is recorded,
        to the seed reveal; after a dropped connection it resumes where it was (no row
        missed or repeated)."""
        return followed(game_id, from_seq, token)

    @streamed
    def feed(
        self, kind: str = "", tournament_id: str = "", position: str = "", token: str | None = None
    ) -> Resumed[fpb.WatchAllResponse]:
        """Every game's rows the caller may see (of a kind, of a tournament), in the log's
        order, from a stored ``position`` (each reply's ``position``: store it to resume
        there), then live; after a dropped connection it resumes from the last row it gave
        (no row missed or repeated).  A feed the server ended for falling behind raises
        (``FELL_BEHIND``): resume from the last position handled."""
        at = [position]

        def seen(reply: fpb.WatchAllResponse) -> bool:
            at[0] = reply.position
            return False

        return Resumed(lambda: rpcs.watch_all(kind, tournament_id, at[0]), seen, token)

    @unary
    def my_turn(self, game_id: str, token: str | None = None) -> Awaited[Turn]:
        """Wait until the caller's seat may act (its legal commands are not empty) or the
        game is over, and return a ``Turn``: the seat's ``legal`` commands and its
        ``view``, both at the same seq (``over`` true, no commands: the game ended).  It
        asks ``legal`` and ``view`` now, then follows the game's rows from there (as
        ``follow`` does, resuming after a dropped connection) and asks again after each;
        it returns at once when the seat may already act."""
        at = [1]

        def check() -> Asked[Turn | None]:
            while True:
                legal: Legal = yield rpcs.legal(game_id)
                view: View = yield rpcs.view(game_id)
                if view.seq == legal.seq:  # else a row came between: ask again
                    break
            at[0] = legal.seq + 1
            return Turn(legal, view) if legal.commands or view.over else None

        return Awaited(check, lambda: followed(game_id, at[0], token), token)

    # ReplayService

    @unary
    def state_at(
        self, game_id: str, seq: int = 0, viewer: str = "", token: str | None = None
    ) -> Sent[rpb.GetStateAtResponse]:
        """The table after ``seq`` (0: now) as ``viewer`` saw it (default: the caller)."""
        return rpcs.state_at(game_id, seq, viewer), token

    @streamed
    def replay(
        self, game_id: str, to_seq: int = 0, viewer: str = "", token: str | None = None
    ) -> Streamed[pb.RecordEvent]:
        """Rows 1..``to_seq`` (0: all) as ``viewer`` saw them."""
        return rpcs.replay(game_id, 0, to_seq, viewer), token

    @unary
    def export(self, game_id: str, token: str | None = None) -> Sent[rpb.ExportRecordResponse]:
        """The game's record file (``content``) and whether it is complete."""
        return rpcs.export(game_id), token

    # AuditService

    @unary
    def verify(self, game_id: str, token: str | None = None) -> Sent[apb.AuditReport]:
        """One game's audit report."""
        return rpcs.verify(game_id), token

    @streamed
    def verify_all(self, kind: str = "") -> Streamed[apb.AuditReport]:
        """Every game's audit report (organiser)."""
        return rpcs.verify_all(kind), None

    @streamed
    def verify_all_counted(self, kind: str = "") -> Streamed[apb.VerifyAllGamesResponse]:
        """Every game's audit report with the number of games (``total``): a progress bar's."""
        return rpcs.verify_all_counted(kind), None

    @unary
    def explain(
        self, game_id: str, seq: int, token: str | None = None
    ) -> Sent[apb.ExplainEventResponse]:
        """One row explained: the command, its checks, the change."""
        return rpcs.explain(game_id, seq), token

    @unary
    def what_if(
        self, game_id: str, seq: int, actor: str, command: record_pb2.Command
    ) -> Sent[apb.WhatIfResponse]:
        """``command`` by ``actor`` in place of row ``seq``: legal, and what it would do."""
        return rpcs.what_if(game_id, seq, actor, command), None

    @unary
    def rejections(self, game_id: str, token: str | None = None) -> Sent[list[apb.Rejection]]:
        """The refused commands the caller may see."""
        return rpcs.rejections(game_id), token

    @unary
    def rule(
        self, game_id: str, ruling: record_pb2.ArbiterCommand, command_id: str | None = None
    ) -> Sent[apb.SubmitRulingResponse]:
        """Append a ruling (organiser or arbiter); retried with the same command_id."""
        return rpcs.rule(game_id, ruling, command_id), None

    # TableService

    @unary
    def call_arbiter(
        self,
        game_id: str,
        about_seq: int,
        claim: str,
        hold: bool = False,
        alternative: record_pb2.Command | None = None,
        token: str | None = None,
    ) -> Sent[int]:
        """A seat calls the arbiter about row ``about_seq``: the call's id (its seq)."""
        return rpcs.call_arbiter(game_id, about_seq, claim, hold, alternative), token

    @unary
    def calls(
        self,
        game_id: str = "",
        tournament_id: str = "",
        open_only: bool = False,
        token: str | None = None,
    ) -> Sent[list[tabpb.ArbiterCall]]:
        """The calls of a game, or of the running games (of a tournament)."""
        return rpcs.list_calls(game_id, tournament_id, open_only), token

    @streamed
    def watch_calls(self, tournament_id: str = "") -> Streamed[tabpb.ArbiterCall]:
        """The open calls, then each call made or answered, as it commits."""
        return rpcs.watch_calls(tournament_id), None

    @unary
    def case_file(self, game_id: str, call: int, token: str | None = None) -> Sent[str]:
        """The case file of a call as the caller may see it (canonical JSON text)."""
        return rpcs.case_file(game_id, call), token

    @unary
    def clocks(self, game_id: str, token: str | None = None) -> Sent[tabpb.GetClocksResponse]:
        """A game's clocks now (``clocked`` false for a game without)."""
        return rpcs.clocks(game_id), token

    # SeatLinkService, ProofService, Health; TournamentService, AdminService: as built

    @unary
    def create_seat_link(self, game_id: str, seat: int) -> Sent[slpb.CreateSeatLinkResponse]:
        """A one-time link to a seat's page (organiser)."""
        return rpcs.create_seat_link(game_id, seat), None

    @unary
    def server_info(self) -> Sent[ppb.GetServerInfoResponse]:
        """The server's signing keys and its log tree's size."""
        return rpcs.server_info(), None

    @unary
    def tree_head(self, size: int = 0) -> Sent[ppb.GetTreeHeadResponse]:
        """A signed tree head (0: the latest) and its cosignatures."""
        return rpcs.tree_head(size), None

    @unary
    def consistency_proof(self, first: int, second: int) -> Sent[ppb.GetConsistencyProofResponse]:
        """That the tree of ``first`` leaves is a prefix of ``second``'s."""
        return rpcs.consistency_proof(first, second), None

    @unary
    def inclusion_proof(
        self, game_id: str, seq: int, tree_size: int = 0
    ) -> Sent[ppb.GetInclusionProofResponse]:
        """That a game's row is a leaf of the tree at ``tree_size`` (0: the latest head's)."""
        return rpcs.inclusion_proof(game_id, seq, tree_size), None

    @unary
    def add_cosignature(self, head: TreeHead, cosignature: Cosignature) -> Sent[int]:
        """A witness's cosignature of a head, given to its server: how many it has now."""
        return rpcs.add_cosignature(head, cosignature), None

    @unary
    def health(self, service: str = "") -> Sent[health_pb2.HealthCheckResponse]:
        """Whether the server (or one of its services) serves (grpc.health.v1), asked
        with no credentials."""
        return rpcs.health(service), SPECTATOR

    @unary
    def create_tournament(
        self, format: Mapping[str, str], players: Sequence[str] = ()
    ) -> Sent[tpb.CreateTournamentResponse]:
        """A new tournament (organiser)."""
        return rpcs.create_tournament(format, players), None

    @unary
    def register_player(self, tournament_id: str, name: str) -> Sent[tpb.RegisterPlayerResponse]:
        """A player registered."""
        return rpcs.register_player(tournament_id, name), None

    @unary
    def drop_player(
        self, tournament_id: str, name: str, reason: str
    ) -> Sent[tpb.DropPlayerResponse]:
        """A player dropped."""
        return rpcs.drop_player(tournament_id, name, reason), None

    @unary
    def pair_round(
        self, tournament_id: str, tables: Sequence[Sequence[str]] = (), byes: Sequence[str] = ()
    ) -> Sent[tpb.PairRoundResponse]:
        """The next round proposed."""
        return rpcs.pair_round(tournament_id, tables, byes), None

    @unary
    def swap_players(
        self, tournament_id: str, first: str, second: str, reason: str
    ) -> Sent[tpb.SwapPlayersResponse]:
        """Two players of the proposed round exchanged."""
        return rpcs.swap_players(tournament_id, first, second, reason), None

    @unary
    def fix_table(
        self, tournament_id: str, name: str, table: int, seat: int, reason: str
    ) -> Sent[tpb.FixTableResponse]:
        """A player put at a table and seat of the proposed round."""
        return rpcs.fix_table(tournament_id, name, table, seat, reason), None

    @unary
    def publish_round(self, tournament_id: str) -> Sent[tpb.PublishRoundResponse]:
        """The proposed round published: its games and seat tokens."""
        return rpcs.publish_round(tournament_id), None

    @unary
    def start_clock(self, tournament_id: str, minutes: int) -> Sent[tpb.StartClockResponse]:
        """The round clock started."""
        return rpcs.start_clock(tournament_id, minutes), None

    @unary
    def extend_clock(
        self, tournament_id: str, minutes: int, reason: str, table: int = 0
    ) -> Sent[tpb.ExtendClockResponse]:
        """More time for one table (0: every table)."""
        return rpcs.extend_clock(tournament_id, minutes, reason, table), None

    @unary
    def call_time(self, tournament_id: str) -> Sent[tpb.CallTimeResponse]:
        """Time called on the round."""
        return rpcs.call_time(tournament_id), None

    @unary
    def add_penalty(
        self, tournament_id: str, name: str, penalty: str, reason: str, round: int = 0
    ) -> Sent[tpb.AddPenaltyResponse]:
        """A penalty recorded."""
        return rpcs.add_penalty(tournament_id, name, penalty, reason, round), None

    @unary
    def end_tournament(self, tournament_id: str) -> Sent[tpb.EndTournamentResponse]:
        """The tournament ended, its seed revealed."""
        return rpcs.end_tournament(tournament_id), None

    @unary
    def get_tournament(
        self, tournament_id: str, at_seq: int = 0
    ) -> Sent[tpb.GetTournamentResponse]:
        """The tournament now, or after its row ``at_seq``."""
        return rpcs.get_tournament(tournament_id, at_seq), None

    @unary
    def export_tournament(self, tournament_id: str) -> Sent[tpb.ExportTournamentResponse]:
        """The tournament's record, as this caller may see it."""
        return rpcs.export_tournament(tournament_id), None

    @streamed
    def watch_tournament(self, tournament_id: str, from_seq: int = 1) -> Streamed[Any]:
        """A tournament's rows from ``from_seq``, stored then live."""
        return rpcs.watch_tournament(tournament_id, from_seq), None

    @unary
    def standings(self, tournament_id: str) -> Sent[tpb.GetStandingsResponse]:
        """A tournament's standings."""
        return rpcs.standings(tournament_id), None

    @unary
    def stats(self, tournament_id: str = "") -> Sent[tpb.GetStatsResponse]:
        """Per game kind: games, win rate by seat, a figure."""
        return rpcs.stats(tournament_id), None

    @unary
    def add_arbiter(self, name: str) -> Sent[adpb.AddArbiterResponse]:
        """A named arbiter and its key (organiser)."""
        return rpcs.add_arbiter(name), None

    @unary
    def revoke_arbiter(self, name: str) -> Sent[adpb.RevokeArbiterResponse]:
        """Revoke a named arbiter (organiser)."""
        return rpcs.revoke_arbiter(name), None

    @unary
    def arbiters(self) -> Sent[list[adpb.Arbiter]]:
        """The named arbiters (organiser)."""
        return rpcs.arbiters(), None

    @unary
    def backup(self, path: str) -> Sent[adpb.BackupResponse]:
        """A consistent copy of the server's DuckDB file at ``path``, an absolute path on
        the server's machine (organiser)."""
        return rpcs.backup(path), None


class Client(Conveniences[grpc.Channel]):
    """A feastlog server's RPCs, blocking.

    The server is found as the CLI finds it (``feastlog.client.locate``): ``server``
    (host:port), else the one announced beside ``db``; TLS with ``ca`` (and ``tls_cert``,
    ``tls_key`` for mutual TLS).  Each call is sent with ``token`` (a seat's token) when
    given, else the organiser key (given, or the key file beside ``db`` for its own
    server), else none; a method's own ``token`` overrides both (``SPECTATOR``: none).
    Calls that could not reach the server are sent again (``retries``), a command with
    the same command_id, so it is recorded once.  Every failure is a ``FeastlogError``.

    ``channel``: a channel already open (found and opened by the caller: a server's, or
    one answered in the caller's own process, as the CLI's offline commands are) in place
    of ``server``; it is closed with the client.
    """

    def opened(self, address: str, credentials: grpc.ChannelCredentials | None) -> grpc.Channel:
        """A blocking channel to ``address``, calls carrying the routing header."""
        return open_blocking_channel(address, credentials)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel (streams being read end)."""
        self.channel.close()

    def run(self, call: Call[T], token: str | None = None) -> T:
        """One unary call, sent again while the server cannot be reached."""
        method = getattr(self.stubs[call.service], call.method)
        tries = waits(self.retries)
        while True:
            try:
                reply = method(call.request, metadata=self.metadata(token), timeout=self.timeout)
            except grpc.RpcError as error:
                time.sleep(retry_wait(from_rpc(error), tries))
                continue
            return call.answer(reply)

    def stream(self, stream: Stream[T], token: str | None = None) -> Iterator[T]:
        """A server stream's replies (not retried: ``follow`` resumes a game's)."""
        method = getattr(self.stubs[stream.service], stream.method)
        try:
            replies = method(stream.request, metadata=self.metadata(token))
        except grpc.RpcError as error:  # refused before its first reply (in process)
            raise from_rpc(error) from None
        try:
            for reply in replies:
                yield stream.each(reply)
        except grpc.RpcError as error:
            raise from_rpc(error) from None
        finally:
            replies.cancel()

    def paged(self, pages: Pages[T]) -> Iterator[T]:
        """A list's items, page by page."""
        while not pages.done:
            yield from pages.read(self.run(pages.call()))

    def resumed(self, resumed: Resumed[T]) -> Generator[T, None, None]:
        """A stream's items, opened again after each dropped connection (``retries``
        times in a row at most) from where it stood."""
        tries = waits(self.retries)
        while True:
            try:
                for item in self.stream(resumed.opened(), resumed.token):
                    yield item
                    tries = waits(self.retries)
                    if resumed.seen(item):
                        return
                return
            except FeastlogError as failure:
                time.sleep(retry_wait(failure, tries))

    def awaited(self, awaited: Awaited[T]) -> T:
        """A value waited for: asked now, then after each item of its stream."""

        def asked(asking: Asked[T | None]) -> T | None:
            try:
                call = next(asking)
                while True:
                    call = asking.send(self.run(call, awaited.token))
            except StopIteration as answered:
                return answered.value

        found = asked(awaited.check())
        if found is not None:
            return found
        with closing(self.resumed(awaited.follow())) as items:
            for _ in items:
                found = asked(awaited.check())
                if found is not None:
                    return found
        raise ended()
