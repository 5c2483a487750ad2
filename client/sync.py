"""``Client``: a feastlog server's RPCs from blocking Python code."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2_grpc

from feastlog.client import calls
from feastlog.client.calls import Call, Created, Legal, Recorded, Stream, View
from feastlog.client.channel import Metadata, bearer, open_blocking_channel
from feastlog.client.errors import FeastlogError, from_rpc
from feastlog.client.locate import DEFAULT_DB, Where, locate
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
R = TypeVar("R")  # an item of a stream

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
PAGE_SIZE = 500  # games a page of the list (the most a server gives)
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


def waits(retries: int) -> Iterator[float]:
    """The waits before each retry: doubling from BACKOFF[0] up to BACKOFF[1]."""
    wait = BACKOFF[0]
    for _ in range(retries):
        yield wait
        wait = min(wait * 2, BACKOFF[1])


class Client:
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
        channel: grpc.Channel | None = None,
    ) -> None:
        self.token, self.retries, self.timeout = token, retries, timeout
        if channel is not None:
            self.address, self.organiser_key, self.channel = server or "", organiser_key, channel
        else:
            where = find(server, db, organiser_key, ca, tls_cert, tls_key)
            self.address, self.organiser_key = where.server or "", where.key
            credentials = where.tls.channel_credentials() if where.tls else None
            self.channel = open_blocking_channel(self.address, credentials)
        self.stubs = {name: stub(self.channel) for name, stub in STUBS.items()}

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel (streams being read end)."""
        self.channel.close()

    def metadata(self, token: str | None) -> Metadata:
        """The credentials a call carries (see the class doc)."""
        if token is not None:
            return bearer(token)
        return bearer(self.token or self.organiser_key)

    def run(self, call: Call[T], token: str | None = None) -> T:
        """One unary call, sent again while the server cannot be reached."""
        method = getattr(self.stubs[call.service], call.method)
        tries = waits(self.retries)
        while True:
            try:
                reply = method(call.request, metadata=self.metadata(token), timeout=self.timeout)
            except grpc.RpcError as error:
                failure = from_rpc(error)
                wait = next(tries, None) if failure.retryable else None
                if wait is None:
                    raise failure from None
                time.sleep(wait)
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

    # GameService

    def create_game(
        self,
        kind: str,
        players: Sequence[str],
        seed: bytes = b"",
        options: Mapping[str, str] | None = None,
        content_pack: bytes = b"",
        seat_entropy: bool = False,
        tournament_id: str = "",
    ) -> Created:
        """A new game (organiser): its id, seed commitment and seat tokens."""
        made = calls.create_game(
            kind, players, seed, options, content_pack, seat_entropy, tournament_id
        )
        return self.run(made)

    def join(self, game_id: str, entropy: bytes, token: str | None = None) -> pb.JoinGameResponse:
        """A seat's entropy (a game created with seat entropy)."""
        return self.run(calls.join_game(game_id, entropy), token)

    def submit(
        self,
        game_id: str,
        command: record_pb2.Command,
        expected_seq: int | None = None,
        token: str | None = None,
        command_id: str | None = None,
        typed_facts_only: bool = False,
    ) -> Recorded:
        """Send a command (refused as stale unless the game is at ``expected_seq``, when
        given); retried with the same command_id."""
        sent = calls.submit(game_id, command, expected_seq, command_id, typed_facts_only)
        return self.run(sent, token)

    def view(self, game_id: str, token: str | None = None) -> View:
        """The table now, as the caller may see it."""
        return self.run(calls.view(game_id), token)

    def legal(self, game_id: str, token: str | None = None) -> Legal:
        """The caller's seat's legal commands now."""
        return self.run(calls.legal(game_id), token)

    def games(
        self, kind: str = "", tournament_id: str = "", most: int = 0
    ) -> Iterator[pb.GameSummary]:
        """Every game (of a kind, of a tournament), or the first ``most``, page by page in
        the server's order."""
        page, given = "", 0
        while True:
            size = min(most - given, PAGE_SIZE) if most else PAGE_SIZE
            listed = self.run(calls.list_games(kind, tournament_id, size, page))
            yield from listed.games
            given += len(listed.games)
            page = listed.next_page_token
            if not page or (most and given >= most):
                return

    def follow(
        self, game_id: str, from_seq: int = 1, token: str | None = None
    ) -> Iterator[pb.RecordEvent]:
        """A game's rows from ``from_seq``, the stored ones then each as it is recorded,
        to the seed reveal; after a dropped connection it resumes where it was (no row
        missed or repeated)."""
        at = [from_seq]

        def seen(event: pb.RecordEvent) -> bool:
            at[0] = event.seq + 1
            return event.kind == SEED_REVEAL

        yield from self._resumed(lambda: self.stream(calls.watch(game_id, at[0]), token), seen)

    def feed(
        self, kind: str = "", tournament_id: str = "", position: str = "", token: str | None = None
    ) -> Iterator[fpb.WatchAllResponse]:
        """Every game's rows the caller may see (of a kind, of a tournament), in the log's
        order, from a stored ``position`` (each reply's ``position``: store it to resume
        there), then live; after a dropped connection it resumes from the last row it gave
        (no row missed or repeated).  A feed the server ended for falling behind raises
        (``FELL_BEHIND``): resume from the last position handled."""
        at = [position]

        def seen(reply: fpb.WatchAllResponse) -> bool:
            at[0] = reply.position
            return False

        def opened() -> Iterable[fpb.WatchAllResponse]:
            return self.stream(calls.watch_all(kind, tournament_id, at[0]), token)

        yield from self._resumed(opened, seen)

    def _resumed(self, opened: Callable[[], Iterable[R]], seen: Callable[[R], bool]) -> Iterator[R]:
        """A stream opened again after each dropped connection (``retries`` times in a
        row at most) from where it stood: ``seen`` notes each item's place and says
        whether the stream is done."""
        tries = waits(self.retries)
        while True:
            try:
                for item in opened():
                    yield item
                    tries = waits(self.retries)
                    if seen(item):
                        return
                return
            except FeastlogError as failure:
                wait = next(tries, None) if failure.retryable else None
                if wait is None:
                    raise
                time.sleep(wait)

    # ReplayService

    def state_at(
        self, game_id: str, seq: int = 0, viewer: str = "", token: str | None = None
    ) -> rpb.GetStateAtResponse:
        """The table after ``seq`` (0: now) as ``viewer`` saw it (default: the caller)."""
        return self.run(calls.state_at(game_id, seq, viewer), token)

    def replay(
        self, game_id: str, to_seq: int = 0, viewer: str = "", token: str | None = None
    ) -> Iterator[pb.RecordEvent]:
        """Rows 1..``to_seq`` (0: all) as ``viewer`` saw them."""
        return self.stream(calls.replay(game_id, 0, to_seq, viewer), token)

    def export(self, game_id: str, token: str | None = None) -> rpb.ExportRecordResponse:
        """The game's record file (``content``) and whether it is complete."""
        return self.run(calls.export(game_id), token)

    # AuditService

    def verify(self, game_id: str, token: str | None = None) -> apb.AuditReport:
        """One game's audit report."""
        return self.run(calls.verify(game_id), token)

    def verify_all(self, kind: str = "") -> Iterator[apb.AuditReport]:
        """Every game's audit report (organiser)."""
        return self.stream(calls.verify_all(kind))

    def verify_all_counted(self, kind: str = "") -> Iterator[apb.VerifyAllGamesResponse]:
        """Every game's audit report with the number of games (``total``): a progress bar's."""
        return self.stream(calls.verify_all_counted(kind))

    def explain(self, game_id: str, seq: int, token: str | None = None) -> apb.ExplainEventResponse:
        """One row explained: the command, its checks, the change."""
        return self.run(calls.explain(game_id, seq), token)

    def what_if(
        self, game_id: str, seq: int, actor: str, command: record_pb2.Command
    ) -> apb.WhatIfResponse:
        """``command`` by ``actor`` in place of row ``seq``: legal, and what it would do."""
        return self.run(calls.what_if(game_id, seq, actor, command))

    def rejections(self, game_id: str, token: str | None = None) -> list[apb.Rejection]:
        """The refused commands the caller may see."""
        return self.run(calls.rejections(game_id), token)

    def rule(
        self, game_id: str, ruling: record_pb2.ArbiterCommand, command_id: str | None = None
    ) -> apb.SubmitRulingResponse:
        """Append a ruling (organiser or arbiter); retried with the same command_id."""
        return self.run(calls.rule(game_id, ruling, command_id))

    # TableService

    def call_arbiter(
        self,
        game_id: str,
        about_seq: int,
        claim: str,
        hold: bool = False,
        alternative: record_pb2.Command | None = None,
        token: str | None = None,
    ) -> int:
        """A seat calls the arbiter about row ``about_seq``: the call's id (its seq)."""
        return self.run(calls.call_arbiter(game_id, about_seq, claim, hold, alternative), token)

    def calls(
        self,
        game_id: str = "",
        tournament_id: str = "",
        open_only: bool = False,
        token: str | None = None,
    ) -> list[tabpb.ArbiterCall]:
        """The calls of a game, or of the running games (of a tournament)."""
        return self.run(calls.list_calls(game_id, tournament_id, open_only), token)

    def watch_calls(self, tournament_id: str = "") -> Iterator[tabpb.ArbiterCall]:
        """The open calls, then each call made or answered, as it commits."""
        return self.stream(calls.watch_calls(tournament_id))

    def case_file(self, game_id: str, call: int, token: str | None = None) -> str:
        """The case file of a call as the caller may see it (canonical JSON text)."""
        return self.run(calls.case_file(game_id, call), token)

    def clocks(self, game_id: str, token: str | None = None) -> tabpb.GetClocksResponse:
        """A game's clocks now (``clocked`` false for a game without)."""
        return self.run(calls.clocks(game_id), token)

    # SeatLinkService, ProofService

    def create_seat_link(self, game_id: str, seat: int) -> slpb.CreateSeatLinkResponse:
        """A one-time link to a seat's page (organiser)."""
        return self.run(calls.create_seat_link(game_id, seat))

    def server_info(self) -> ppb.GetServerInfoResponse:
        """The server's signing keys and its log tree's size."""
        return self.run(calls.server_info())

    def tree_head(self, size: int = 0) -> ppb.GetTreeHeadResponse:
        """A signed tree head (0: the latest) and its cosignatures."""
        return self.run(calls.tree_head(size))

    def consistency_proof(self, first: int, second: int) -> ppb.GetConsistencyProofResponse:
        """That the tree of ``first`` leaves is a prefix of ``second``'s."""
        return self.run(calls.consistency_proof(first, second))

    def inclusion_proof(
        self, game_id: str, seq: int, tree_size: int = 0
    ) -> ppb.GetInclusionProofResponse:
        """That a game's row is a leaf of the tree at ``tree_size`` (0: the latest head's)."""
        return self.run(calls.inclusion_proof(game_id, seq, tree_size))

    def add_cosignature(self, head: TreeHead, cosignature: Cosignature) -> int:
        """A witness's cosignature of a head, given to its server: how many it has now."""
        return self.run(calls.add_cosignature(head, cosignature))

    # TournamentService, AdminService

    def create_tournament(
        self, format: Mapping[str, str], players: Sequence[str] = ()
    ) -> tpb.CreateTournamentResponse:
        """A new tournament (organiser)."""
        return self.run(calls.create_tournament(format, players))

    def register_player(self, tournament_id: str, name: str) -> tpb.RegisterPlayerResponse:
        """A player registered."""
        return self.run(calls.register_player(tournament_id, name))

    def drop_player(self, tournament_id: str, name: str, reason: str) -> tpb.DropPlayerResponse:
        """A player dropped."""
        return self.run(calls.drop_player(tournament_id, name, reason))

    def pair_round(
        self, tournament_id: str, tables: Sequence[Sequence[str]] = (), byes: Sequence[str] = ()
    ) -> tpb.PairRoundResponse:
        """The next round proposed."""
        return self.run(calls.pair_round(tournament_id, tables, byes))

    def swap_players(
        self, tournament_id: str, first: str, second: str, reason: str
    ) -> tpb.SwapPlayersResponse:
        """Two players of the proposed round exchanged."""
        return self.run(calls.swap_players(tournament_id, first, second, reason))

    def fix_table(
        self, tournament_id: str, name: str, table: int, seat: int, reason: str
    ) -> tpb.FixTableResponse:
        """A player put at a table and seat of the proposed round."""
        return self.run(calls.fix_table(tournament_id, name, table, seat, reason))

    def publish_round(self, tournament_id: str) -> tpb.PublishRoundResponse:
        """The proposed round published: its games and seat tokens."""
        return self.run(calls.publish_round(tournament_id))

    def start_clock(self, tournament_id: str, minutes: int) -> tpb.StartClockResponse:
        """The round clock started."""
        return self.run(calls.start_clock(tournament_id, minutes))

    def extend_clock(
        self, tournament_id: str, minutes: int, reason: str, table: int = 0
    ) -> tpb.ExtendClockResponse:
        """More time for one table (0: every table)."""
        return self.run(calls.extend_clock(tournament_id, minutes, reason, table))

    def call_time(self, tournament_id: str) -> tpb.CallTimeResponse:
        """Time called on the round."""
        return self.run(calls.call_time(tournament_id))

    def add_penalty(
        self, tournament_id: str, name: str, penalty: str, reason: str, round: int = 0
    ) -> tpb.AddPenaltyResponse:
        """A penalty recorded."""
        return self.run(calls.add_penalty(tournament_id, name, penalty, reason, round))

    def end_tournament(self, tournament_id: str) -> tpb.EndTournamentResponse:
        """The tournament ended, its seed revealed."""
        return self.run(calls.end_tournament(tournament_id))

    def get_tournament(self, tournament_id: str, at_seq: int = 0) -> tpb.GetTournamentResponse:
        """The tournament now, or after its row ``at_seq``."""
        return self.run(calls.get_tournament(tournament_id, at_seq))

    def export_tournament(self, tournament_id: str) -> tpb.ExportTournamentResponse:
        """The tournament's record, as this caller may see it."""
        return self.run(calls.export_tournament(tournament_id))

    def watch_tournament(self, tournament_id: str, from_seq: int = 1) -> Iterator[Any]:
        """A tournament's rows from ``from_seq``, stored then live."""
        return self.stream(calls.watch_tournament(tournament_id, from_seq))

    def standings(self, tournament_id: str) -> tpb.GetStandingsResponse:
        """A tournament's standings."""
        return self.run(calls.standings(tournament_id))

    def stats(self, tournament_id: str = "") -> tpb.GetStatsResponse:
        """Per game kind: games, win rate by seat, a figure."""
        return self.run(calls.stats(tournament_id))

    def add_arbiter(self, name: str) -> adpb.AddArbiterResponse:
        """A named arbiter and its key (organiser)."""
        return self.run(calls.add_arbiter(name))

    def revoke_arbiter(self, name: str) -> adpb.RevokeArbiterResponse:
        """Revoke a named arbiter (organiser)."""
        return self.run(calls.revoke_arbiter(name))

    def arbiters(self) -> list[adpb.Arbiter]:
        """The named arbiters (organiser)."""
        return self.run(calls.arbiters())
