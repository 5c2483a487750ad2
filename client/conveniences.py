"""What ``Client`` and ``AsyncClient`` offer, written once: each method names its call of
``feastlog.client.calls`` and the token it goes with; ``Client`` runs it blocking and
``AsyncClient`` awaited (``unary``, ``streamed``).  A list read page by page (``Pages``)
and a stream followed across dropped connections (``Resumed``) are said once here too:
each client only reads them its own way.  So the two offer the same calls, by the same
names, with the same arguments."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import grpc
from grpc_health.v1 import health_pb2_grpc

from feastlog.client import calls as table  # the call table (a method is named calls)
from feastlog.client.calls import Call, Legal, Recorded, Stream, View
from feastlog.client.channel import Metadata, bearer
from feastlog.client.errors import FeastlogError
from feastlog.client.locate import DEFAULT_DB, Where, locate
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import feed_service_pb2_grpc as fpb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import seat_link_service_pb2_grpc as slpb_grpc
from feastlog.v1 import table_service_pb2 as tabpb
from feastlog.v1 import table_service_pb2_grpc as tabpb_grpc
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc

if TYPE_CHECKING:
    from feastlog.client.aio import AsyncClient
    from feastlog.client.sync import Client

P = ParamSpec("P")
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


Sent = tuple[Call[T], str | None]  # a unary call and the token it is sent with
Streamed = tuple[Stream[T], str | None]  # a server stream and its token


class Pages(Generic[T]):
    """A list read page by page, in the server's order: ``page(page_token, size)`` is the
    call for one page (a reply with ``next_page_token``), ``items`` its items; at most
    ``most`` items (0: every one)."""

    def __init__(
        self,
        page: Callable[[str, int], Call[Any]],
        items: Callable[[Any], Sequence[T]],
        most: int = 0,
    ) -> None:
        self.page, self.items, self.most = page, items, most
        self.token, self.given, self.done = "", 0, False

    def call(self) -> Call[Any]:
        """The next page's call."""
        size = min(self.most - self.given, PAGE_SIZE) if self.most else PAGE_SIZE
        return self.page(self.token, size)

    def read(self, reply: Any) -> Sequence[T]:
        """A page's items, its place noted (``done`` after the last page, or ``most``)."""
        found = self.items(reply)
        self.given += len(found)
        self.token = reply.next_page_token
        self.done = not self.token or bool(self.most and self.given >= self.most)
        return found


class Resumed(Generic[T]):
    """A stream opened again after each dropped connection from where it stood:
    ``opened()`` is the stream from there, ``seen`` notes an item's place and says
    whether the stream is done; sent with ``token``."""

    def __init__(
        self, opened: Callable[[], Stream[T]], seen: Callable[[T], bool], token: str | None
    ) -> None:
        self.opened, self.seen, self.token = opened, seen, token


def _named(method: Any, made: Callable[..., Any]) -> None:
    """A decorated method named and documented as its body (for ``help``)."""
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(method, name, getattr(made, name))
    method.__wrapped__ = made


def _bound(made: Callable[..., Any], instance: Any, runs: Callable[[Any, Any], Any]) -> Any:
    @functools.wraps(made)
    def method(*args: Any, **kwargs: Any) -> Any:
        return runs(instance, made(instance, *args, **kwargs))

    return method


class unary(Generic[P, T]):
    """A method whose body names a unary call and its token: ``Client`` returns the
    call's answer, ``AsyncClient`` an awaitable of it."""

    def __init__(self, made: Callable[Concatenate[Any, P], Sent[T]]) -> None:
        self.made = made
        _named(self, made)

    @overload
    def __get__(self, instance: None, owner: type) -> unary[P, T]: ...
    @overload
    def __get__(self, instance: Client, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, instance: AsyncClient, owner: type
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return _bound(self.made, instance, lambda client, sent: client.run(*sent))


class streamed(Generic[P, T]):
    """A method whose body names a server stream (or a ``Pages`` list, a ``Resumed``
    stream) and its token: ``Client`` iterates it, ``AsyncClient`` iterates it async."""

    def __init__(
        self, made: Callable[Concatenate[Any, P], Streamed[T] | Pages[T] | Resumed[T]]
    ) -> None:
        self.made = made
        _named(self, made)

    @overload
    def __get__(self, instance: None, owner: type) -> streamed[P, T]: ...
    @overload
    def __get__(self, instance: Client, owner: type) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, instance: AsyncClient, owner: type) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, instance: Any, owner: type) -> Any:
        if instance is None:
            return self
        return _bound(self.made, instance, _iterated)


def unary_of(builder: Callable[P, Call[T]], token: str | None = None) -> unary[P, T]:
    """The unary call ``builder`` makes, by its arguments, sent with the client's own
    token (or ``token``)."""

    def made(_client: Any, *args: P.args, **kwargs: P.kwargs) -> Sent[T]:
        return builder(*args, **kwargs), token

    _named(made, builder)
    return unary(made)


def streamed_of(builder: Callable[P, Stream[T]]) -> streamed[P, T]:
    """The server stream ``builder`` makes, by its arguments, with the client's token."""

    def made(_client: Any, *args: P.args, **kwargs: P.kwargs) -> Streamed[T]:
        return builder(*args, **kwargs), None

    _named(made, builder)
    return streamed(made)


def _iterated(client: Any, made: Any) -> Any:
    """What a ``streamed`` method's body named, iterated the client's way."""
    if isinstance(made, Pages):
        return client.paged(made)
    if isinstance(made, Resumed):
        return client.resumed(made)
    return client.stream(*made)


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

    create_game = unary_of(table.create_game)

    @unary
    def join(
        self, game_id: str, entropy: bytes, token: str | None = None
    ) -> Sent[pb.JoinGameResponse]:
        """A seat's entropy (a game created with seat entropy)."""
        return table.join_game(game_id, entropy), token

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
        return table.submit(game_id, command, expected_seq, command_id, typed_facts_only), token

    @unary
    def view(self, game_id: str, token: str | None = None) -> Sent[View]:
        """The table now, as the caller may see it."""
        return table.view(game_id), token

    @unary
    def legal(self, game_id: str, token: str | None = None) -> Sent[Legal]:
        """The caller's seat's legal commands now."""
        return table.legal(game_id), token

    @streamed
    def games(
        self, kind: str = "", tournament_id: str = "", most: int = 0
    ) -> Pages[pb.GameSummary]:
        """Every game (of a kind, of a tournament), or the first ``most``, page by page in
        the server's order."""
        return Pages(
            lambda page, size: table.list_games(kind, tournament_id, size, page),
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
        at = [from_seq]

        def seen(event: pb.RecordEvent) -> bool:
            at[0] = event.seq + 1
            return event.kind == SEED_REVEAL

        return Resumed(lambda: table.watch(game_id, at[0]), seen, token)

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

        return Resumed(lambda: table.watch_all(kind, tournament_id, at[0]), seen, token)

    # ReplayService

    @unary
    def state_at(
        self, game_id: str, seq: int = 0, viewer: str = "", token: str | None = None
    ) -> Sent[rpb.GetStateAtResponse]:
        """The table after ``seq`` (0: now) as ``viewer`` saw it (default: the caller)."""
        return table.state_at(game_id, seq, viewer), token

    @streamed
    def replay(
        self, game_id: str, to_seq: int = 0, viewer: str = "", token: str | None = None
    ) -> Streamed[pb.RecordEvent]:
        """Rows 1..``to_seq`` (0: all) as ``viewer`` saw them."""
        return table.replay(game_id, 0, to_seq, viewer), token

    @unary
    def export(self, game_id: str, token: str | None = None) -> Sent[rpb.ExportRecordResponse]:
        """The game's record file (``content``) and whether it is complete."""
        return table.export(game_id), token

    # AuditService

    @unary
    def verify(self, game_id: str, token: str | None = None) -> Sent[apb.AuditReport]:
        """One game's audit report."""
        return table.verify(game_id), token

    verify_all = streamed_of(table.verify_all)
    verify_all_counted = streamed_of(table.verify_all_counted)

    @unary
    def explain(
        self, game_id: str, seq: int, token: str | None = None
    ) -> Sent[apb.ExplainEventResponse]:
        """One row explained: the command, its checks, the change."""
        return table.explain(game_id, seq), token

    what_if = unary_of(table.what_if)

    @unary
    def rejections(self, game_id: str, token: str | None = None) -> Sent[list[apb.Rejection]]:
        """The refused commands the caller may see."""
        return table.rejections(game_id), token

    rule = unary_of(table.rule)

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
        return table.call_arbiter(game_id, about_seq, claim, hold, alternative), token

    @unary
    def calls(
        self,
        game_id: str = "",
        tournament_id: str = "",
        open_only: bool = False,
        token: str | None = None,
    ) -> Sent[list[tabpb.ArbiterCall]]:
        """The calls of a game, or of the running games (of a tournament)."""
        return table.list_calls(game_id, tournament_id, open_only), token

    watch_calls = streamed_of(table.watch_calls)

    @unary
    def case_file(self, game_id: str, call: int, token: str | None = None) -> Sent[str]:
        """The case file of a call as the caller may see it (canonical JSON text)."""
        return table.case_file(game_id, call), token

    @unary
    def clocks(self, game_id: str, token: str | None = None) -> Sent[tabpb.GetClocksResponse]:
        """A game's clocks now (``clocked`` false for a game without)."""
        return table.clocks(game_id), token

    # SeatLinkService, ProofService, Health; TournamentService, AdminService: as built

    create_seat_link = unary_of(table.create_seat_link)
    server_info = unary_of(table.server_info)
    tree_head = unary_of(table.tree_head)
    consistency_proof = unary_of(table.consistency_proof)
    inclusion_proof = unary_of(table.inclusion_proof)
    add_cosignature = unary_of(table.add_cosignature)
    health = unary_of(table.health, SPECTATOR)  # asked with no credentials

    create_tournament = unary_of(table.create_tournament)
    register_player = unary_of(table.register_player)
    drop_player = unary_of(table.drop_player)
    pair_round = unary_of(table.pair_round)
    swap_players = unary_of(table.swap_players)
    fix_table = unary_of(table.fix_table)
    publish_round = unary_of(table.publish_round)
    start_clock = unary_of(table.start_clock)
    extend_clock = unary_of(table.extend_clock)
    call_time = unary_of(table.call_time)
    add_penalty = unary_of(table.add_penalty)
    end_tournament = unary_of(table.end_tournament)
    get_tournament = unary_of(table.get_tournament)
    export_tournament = unary_of(table.export_tournament)
    watch_tournament = streamed_of(table.watch_tournament)
    standings = unary_of(table.standings)
    stats = unary_of(table.stats)
    add_arbiter = unary_of(table.add_arbiter)
    revoke_arbiter = unary_of(table.revoke_arbiter)
    arbiters = unary_of(table.arbiters)
