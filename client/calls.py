"""Each RPC once, as a value: which service and method, the request, and how its reply
becomes what the client returns (typed views for the game's table, the protobuf reply
message otherwise).  ``Client`` (blocking) and ``AsyncClient`` (asyncio) run the same
calls; only how they wait differs."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from grpc_health.v1 import health_pb2

from feastlog.client.data import as_dict
from feastlog.replay.proof.signed import Cosignature, TreeHead
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import proof_pb2, record_pb2, view_pb2
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import seat_link_service_pb2 as slpb
from feastlog.v1 import table_service_pb2 as tabpb
from feastlog.v1 import tournament_service_pb2 as tpb

T = TypeVar("T")


def plain(message: Any) -> dict[str, Any]:
    """A Struct as a dict, whole numbers as ints (Struct carries doubles)."""
    return as_dict(message)


@dataclass(frozen=True)
class Created:
    """A new game: its id, seed commitment, and each seat's token by seat."""

    game_id: str
    seed_commitment: str
    tokens: list[str]
    reply: pb.CreateGameResponse


@dataclass(frozen=True)
class View:
    """The table as the caller may see it at ``seq``: as data (``table``) and typed
    (``typed``: a ``feastlog.v1.TableView`` holding the game's own view message)."""

    seq: int
    viewer: str
    table: dict[str, Any]
    typed: view_pb2.TableView

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return bool(self.table.get("over"))

    @property
    def to_act(self) -> list[int]:
        """The seats to act now."""
        return [int(s) for s in self.table.get("to_act", [])]


@dataclass(frozen=True)
class Legal:
    """The caller's legal commands at ``seq`` (``partial``: the first 1000 of more)."""

    seq: int
    commands: list[record_pb2.Command]
    partial: bool


@dataclass(frozen=True)
class Turn:
    """What a seat waited for (``my_turn``), both at one seq: its legal commands
    (``legal``) and the table as it may see it (``view``) once it may act, or once the
    game is over (``over``; ``legal.commands`` then empty, ``view`` the last table)."""

    legal: Legal
    view: View

    @property
    def over(self) -> bool:
        """Whether the game has ended (then the seat has nothing to send)."""
        return self.view.over


@dataclass(frozen=True)
class Recorded:
    """A command recorded: its row's seq and hashes, the facts the caller may see, and
    whether this answers a retry of a command already recorded (``replayed``)."""

    seq: int
    hash: str
    state_hash: str
    facts: list[dict[str, Any]]
    game_over: bool
    replayed: bool
    command_id: str
    reply: pb.SubmitCommandResponse | None = None  # the whole reply (its receipts)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One unary RPC: service, method, request, and the reply's conversion."""

    service: str
    method: str
    request: Any
    answer: Callable[[Any], T]

    def unread(self) -> Call[Any]:
        """The same request, its reply given as it came: a call made once and sent many
        times by a load generator, which reads nothing of the replies."""
        return Call(self.service, self.method, self.request, _same)


@dataclass(frozen=True)
class Stream(Generic[T]):
    """One server-streaming RPC: service, method, request, each reply's conversion."""

    service: str
    method: str
    request: Any
    each: Callable[[Any], T]


def _same(reply: T) -> T:
    return reply


# --- GameService -------------------------------------------------------------------


def create_game(
    kind: str,
    players: Sequence[str],
    seed: bytes = b"",
    options: Mapping[str, str] | None = None,
    content_pack: bytes = b"",
    seat_entropy: bool = False,
    tournament_id: str = "",
) -> Call[Created]:
    """CreateGame (organiser)."""
    request = pb.CreateGameRequest(
        game_kind=kind,
        players=list(players),
        seed=seed,
        options=dict(options or {}),
        content_pack=content_pack,
        seat_entropy=seat_entropy,
        tournament_id=tournament_id,
    )

    def answer(reply: pb.CreateGameResponse) -> Created:
        tokens = [t.token for t in sorted(reply.seat_tokens, key=lambda t: t.seat)]
        return Created(reply.game_id, reply.seed_commitment, tokens, reply)

    return Call("GameService", "CreateGame", request, answer)


def join_game(game_id: str, entropy: bytes) -> Call[pb.JoinGameResponse]:
    """JoinGame: a seat's entropy for a game created with seat entropy."""
    request = pb.JoinGameRequest(game_id=game_id, entropy=entropy)
    return Call("GameService", "JoinGame", request, _same)


def submit(
    game_id: str,
    command: record_pb2.Command,
    expected_seq: int | None = None,
    command_id: str | None = None,
    typed_facts_only: bool = False,
) -> Call[Recorded]:
    """SubmitCommand, with a command_id (made here when not given) that stays the same
    however often the call is retried (``typed_facts_only``: no facts as data)."""
    command_id = command_id or uuid.uuid4().hex
    request = pb.SubmitCommandRequest(
        game_id=game_id,
        command_id=command_id,
        command=command,
        expected_seq=expected_seq,
        typed_facts_only=typed_facts_only,
    )

    def answer(reply: pb.SubmitCommandResponse) -> Recorded:
        facts = [plain(f) for f in reply.facts]
        return Recorded(
            int(reply.seq),
            reply.hash,
            reply.state_hash,
            facts,
            reply.game_over,
            reply.replayed,
            command_id,
            reply,
        )

    return Call("GameService", "SubmitCommand", request, answer)


def view(game_id: str) -> Call[View]:
    """GetView."""

    def answer(reply: pb.GetViewResponse) -> View:
        return View(int(reply.seq), reply.viewer, plain(reply.view), reply.typed_view)

    return Call("GameService", "GetView", pb.GetViewRequest(game_id=game_id), answer)


def legal(game_id: str) -> Call[Legal]:
    """ListLegalCommands."""

    def answer(reply: pb.ListLegalCommandsResponse) -> Legal:
        return Legal(int(reply.seq), list(reply.commands), reply.partial)

    request = pb.ListLegalCommandsRequest(game_id=game_id)
    return Call("GameService", "ListLegalCommands", request, answer)


def list_games(
    kind: str = "", tournament_id: str = "", page_size: int = 0, page_token: str = ""
) -> Call[pb.ListGamesResponse]:
    """ListGames: one page."""
    request = pb.ListGamesRequest(
        game_kind=kind, tournament_id=tournament_id, page_size=page_size, page_token=page_token
    )
    return Call("GameService", "ListGames", request, _same)


def get_game(game_id: str) -> Call[pb.GameSummary]:
    """GetGame: one game's line of the game list."""
    request = pb.GetGameRequest(game_id=game_id)
    return Call("GameService", "GetGame", request, lambda reply: reply.game)


def watch(game_id: str, from_seq: int = 1) -> Stream[pb.RecordEvent]:
    """WatchGame: the rows from ``from_seq``, stored then live."""
    request = pb.WatchGameRequest(game_id=game_id, from_seq=from_seq)
    return Stream("GameService", "WatchGame", request, lambda reply: reply.event)


def watch_all(
    kind: str = "", tournament_id: str = "", position: str = ""
) -> Stream[fpb.WatchAllResponse]:
    """WatchAll (FeedService): every game's rows, from a stored position."""
    request = fpb.WatchAllRequest(game_kind=kind, tournament_id=tournament_id, position=position)
    return Stream("FeedService", "WatchAll", request, _same)


# --- ReplayService -----------------------------------------------------------------


def state_at(game_id: str, seq: int = 0, viewer: str = "") -> Call[rpb.GetStateAtResponse]:
    """GetStateAt: the table after ``seq`` (0: the last) as ``viewer`` saw it."""
    request = rpb.GetStateAtRequest(game_id=game_id, seq=seq, viewer=viewer)
    return Call("ReplayService", "GetStateAt", request, _same)


def replay(
    game_id: str, from_seq: int = 0, to_seq: int = 0, viewer: str = ""
) -> Stream[pb.RecordEvent]:
    """StreamReplay: rows ``from_seq``..``to_seq`` as ``viewer`` saw them."""
    request = rpb.StreamReplayRequest(
        game_id=game_id, from_seq=from_seq, to_seq=to_seq, viewer=viewer
    )
    return Stream("ReplayService", "StreamReplay", request, lambda reply: reply.event)


def export(game_id: str) -> Call[rpb.ExportRecordResponse]:
    """ExportRecord: the game's record file."""
    request = rpb.ExportRecordRequest(game_id=game_id)
    return Call("ReplayService", "ExportRecord", request, _same)


# --- AuditService ------------------------------------------------------------------


def verify(game_id: str) -> Call[apb.AuditReport]:
    """VerifyGame: the game's audit report."""
    request = apb.VerifyGameRequest(game_id=game_id)
    return Call("AuditService", "VerifyGame", request, lambda reply: reply.report)


def verify_all(kind: str = "") -> Stream[apb.AuditReport]:
    """VerifyAllGames (organiser): every game's report."""
    request = apb.VerifyAllGamesRequest(game_kind=kind)
    return Stream("AuditService", "VerifyAllGames", request, lambda reply: reply.report)


def verify_all_counted(kind: str = "") -> Stream[apb.VerifyAllGamesResponse]:
    """VerifyAllGames (organiser): each reply, its report with the number of games."""
    request = apb.VerifyAllGamesRequest(game_kind=kind)
    return Stream("AuditService", "VerifyAllGames", request, _same)


def explain(game_id: str, seq: int) -> Call[apb.ExplainEventResponse]:
    """ExplainEvent: one row explained."""
    request = apb.ExplainEventRequest(game_id=game_id, seq=seq)
    return Call("AuditService", "ExplainEvent", request, _same)


def what_if(
    game_id: str, seq: int, actor: str, command: record_pb2.Command
) -> Call[apb.WhatIfResponse]:
    """WhatIf: ``command`` by ``actor`` in place of row ``seq``."""
    request = apb.WhatIfRequest(game_id=game_id, seq=seq, actor=actor, command=command)
    return Call("AuditService", "WhatIf", request, _same)


def rejections(game_id: str) -> Call[list[apb.Rejection]]:
    """ListRejections: the refusals the caller may see."""
    request = apb.ListRejectionsRequest(game_id=game_id)
    return Call("AuditService", "ListRejections", request, lambda reply: list(reply.rejections))


def rule(
    game_id: str, ruling: record_pb2.ArbiterCommand, command_id: str | None = None
) -> Call[apb.SubmitRulingResponse]:
    """SubmitRuling (arbiter), with a command_id kept across retries."""
    request = apb.SubmitRulingRequest(
        game_id=game_id, command_id=command_id or uuid.uuid4().hex, ruling=ruling
    )
    return Call("AuditService", "SubmitRuling", request, _same)


# --- TableService ------------------------------------------------------------------


def call_arbiter(
    game_id: str,
    about_seq: int,
    claim: str,
    hold: bool = False,
    alternative: record_pb2.Command | None = None,
    command_id: str | None = None,
) -> Call[int]:
    """CallArbiter (a seat): the call's id, its row's seq."""
    request = tabpb.CallArbiterRequest(
        game_id=game_id,
        command_id=command_id or uuid.uuid4().hex,
        about_seq=about_seq,
        claim=claim,
        hold=hold,
        alternative=alternative,
    )
    return Call("TableService", "CallArbiter", request, lambda reply: int(reply.call))


def list_calls(
    game_id: str = "", tournament_id: str = "", open_only: bool = False
) -> Call[list[tabpb.ArbiterCall]]:
    """ListCalls: a game's calls, or those of the running games (of a tournament)."""
    request = tabpb.ListCallsRequest(
        game_id=game_id, tournament_id=tournament_id, open_only=open_only
    )
    return Call("TableService", "ListCalls", request, lambda reply: list(reply.calls))


def watch_calls(tournament_id: str = "") -> Stream[tabpb.ArbiterCall]:
    """WatchCalls: the open calls, then each call made or answered."""
    request = tabpb.WatchCallsRequest(tournament_id=tournament_id)
    return Stream("TableService", "WatchCalls", request, lambda reply: reply.call)


def case_file(game_id: str, call: int) -> Call[str]:
    """GetCaseFile: a call's case file (canonical JSON text)."""
    request = tabpb.GetCaseFileRequest(game_id=game_id, call=call)
    return Call("TableService", "GetCaseFile", request, lambda reply: str(reply.bundle))


def clocks(game_id: str) -> Call[tabpb.GetClocksResponse]:
    """GetClocks: a game's clocks now."""
    request = tabpb.GetClocksRequest(game_id=game_id)
    return Call("TableService", "GetClocks", request, _same)


# --- SeatLinkService and ProofService ------------------------------------------------


def create_seat_link(game_id: str, seat: int) -> Call[slpb.CreateSeatLinkResponse]:
    """CreateSeatLink (organiser): a one-time link to a seat's page."""
    request = slpb.CreateSeatLinkRequest(game_id=game_id, seat=seat)
    return Call("SeatLinkService", "CreateSeatLink", request, _same)


def server_info() -> Call[ppb.GetServerInfoResponse]:
    """GetServerInfo: the signing keys and the log tree's size."""
    return Call("ProofService", "GetServerInfo", ppb.GetServerInfoRequest(), _same)


def tree_head(size: int = 0) -> Call[ppb.GetTreeHeadResponse]:
    """GetTreeHead: a signed head (0: the latest) with its cosignatures."""
    return Call("ProofService", "GetTreeHead", ppb.GetTreeHeadRequest(size=size), _same)


def consistency_proof(first: int, second: int) -> Call[ppb.GetConsistencyProofResponse]:
    """GetConsistencyProof: that the tree of ``first`` leaves is a prefix of ``second``'s."""
    request = ppb.GetConsistencyProofRequest(first=first, second=second)
    return Call("ProofService", "GetConsistencyProof", request, _same)


def inclusion_proof(
    game_id: str, seq: int, tree_size: int = 0
) -> Call[ppb.GetInclusionProofResponse]:
    """GetInclusionProof: that a game's row is a leaf of the tree at ``tree_size`` (0: the
    latest signed head's size)."""
    request = ppb.GetInclusionProofRequest(game_id=game_id, seq=seq, tree_size=tree_size)
    return Call("ProofService", "GetInclusionProof", request, _same)


def add_cosignature(head: TreeHead, cosignature: Cosignature) -> Call[int]:
    """AddCosignature (a witness): how many cosignatures the head has now."""
    request = ppb.AddCosignatureRequest(
        head=proof_pb2.TreeHead(**vars(head)),
        cosignature=proof_pb2.Cosignature(
            witness_key=cosignature.witness_key,
            witnessed_at=cosignature.witnessed_at,
            signature=cosignature.signature,
        ),
    )
    return Call("ProofService", "AddCosignature", request, lambda reply: int(reply.cosignatures))


def health(service: str = "") -> Call[health_pb2.HealthCheckResponse]:
    """Health.Check (grpc.health.v1): whether the server (or one of its services) serves."""
    request = health_pb2.HealthCheckRequest(service=service)
    return Call("Health", "Check", request, _same)


# --- TournamentService and AdminService --------------------------------------------


def create_tournament(
    format: Mapping[str, str], players: Sequence[str] = ()
) -> Call[tpb.CreateTournamentResponse]:
    """CreateTournament (organiser): its format (docs/tournament.md) and first players."""
    request = tpb.CreateTournamentRequest(format=dict(format), players=list(players))
    return Call("TournamentService", "CreateTournament", request, _same)


def register_player(tournament_id: str, name: str) -> Call[tpb.RegisterPlayerResponse]:
    """RegisterPlayer: before round 1, or between rounds with late entry."""
    request = tpb.RegisterPlayerRequest(tournament_id=tournament_id, name=name)
    return Call("TournamentService", "RegisterPlayer", request, _same)


def drop_player(tournament_id: str, name: str, reason: str) -> Call[tpb.DropPlayerResponse]:
    """DropPlayer: not paired from the next round on."""
    request = tpb.DropPlayerRequest(tournament_id=tournament_id, name=name, reason=reason)
    return Call("TournamentService", "DropPlayer", request, _same)


def pair_round(
    tournament_id: str, tables: Sequence[Sequence[str]] = (), byes: Sequence[str] = ()
) -> Call[tpb.PairRoundResponse]:
    """PairRound: the next round proposed (Swiss from the seed, or the tables given)."""
    pods = [tpb.PodTable(players=list(players)) for players in tables]
    request = tpb.PairRoundRequest(tournament_id=tournament_id, tables=pods, byes=list(byes))
    return Call("TournamentService", "PairRound", request, _same)


def swap_players(
    tournament_id: str, first: str, second: str, reason: str
) -> Call[tpb.SwapPlayersResponse]:
    """SwapPlayers: two players of the proposed round exchanged."""
    request = tpb.SwapPlayersRequest(
        tournament_id=tournament_id, first=first, second=second, reason=reason
    )
    return Call("TournamentService", "SwapPlayers", request, _same)


def fix_table(
    tournament_id: str, name: str, table: int, seat: int, reason: str
) -> Call[tpb.FixTableResponse]:
    """FixTable: a player put at a table (from 1) and seat (from 0) of the proposed round."""
    request = tpb.FixTableRequest(
        tournament_id=tournament_id, name=name, table=table, seat=seat, reason=reason
    )
    return Call("TournamentService", "FixTable", request, _same)


def publish_round(tournament_id: str) -> Call[tpb.PublishRoundResponse]:
    """PublishRound: every table's game in one commit, and the seat tokens."""
    request = tpb.PublishRoundRequest(tournament_id=tournament_id)
    return Call("TournamentService", "PublishRound", request, _same)


def start_clock(tournament_id: str, minutes: int) -> Call[tpb.StartClockResponse]:
    """StartClock: the round clock, ``minutes`` long."""
    request = tpb.StartClockRequest(tournament_id=tournament_id, minutes=minutes)
    return Call("TournamentService", "StartClock", request, _same)


def extend_clock(
    tournament_id: str, minutes: int, reason: str, table: int = 0
) -> Call[tpb.ExtendClockResponse]:
    """ExtendClock: one table (0: every table) given more time."""
    request = tpb.ExtendClockRequest(
        tournament_id=tournament_id, table=table, minutes=minutes, reason=reason
    )
    return Call("TournamentService", "ExtendClock", request, _same)


def call_time(tournament_id: str) -> Call[tpb.CallTimeResponse]:
    """CallTime: the round's unfinished tables ruled on as the format's at_time says."""
    request = tpb.CallTimeRequest(tournament_id=tournament_id)
    return Call("TournamentService", "CallTime", request, _same)


def add_penalty(
    tournament_id: str, name: str, penalty: str, reason: str, round: int = 0
) -> Call[tpb.AddPenaltyResponse]:
    """AddPenalty: a warning, game loss or disqualification (round 0: the current one)."""
    request = tpb.AddPenaltyRequest(
        tournament_id=tournament_id, name=name, penalty=penalty, round=round, reason=reason
    )
    return Call("TournamentService", "AddPenalty", request, _same)


def end_tournament(tournament_id: str) -> Call[tpb.EndTournamentResponse]:
    """EndTournament: the tournament ended and its seed revealed."""
    request = tpb.EndTournamentRequest(tournament_id=tournament_id)
    return Call("TournamentService", "EndTournament", request, _same)


def get_tournament(tournament_id: str, at_seq: int = 0) -> Call[tpb.GetTournamentResponse]:
    """GetTournament: the tournament now, or after its row ``at_seq``."""
    request = tpb.GetTournamentRequest(tournament_id=tournament_id, at_seq=at_seq)
    return Call("TournamentService", "GetTournament", request, _same)


def export_tournament(tournament_id: str) -> Call[tpb.ExportTournamentResponse]:
    """ExportTournament: its record and its games', as the caller may see them."""
    request = tpb.ExportTournamentRequest(tournament_id=tournament_id)
    return Call("TournamentService", "ExportTournament", request, _same)


def watch_tournament(tournament_id: str, from_seq: int = 1) -> Stream[Any]:
    """WatchTournament: a tournament's rows from ``from_seq``, stored then live."""
    request = tpb.WatchTournamentRequest(tournament_id=tournament_id, from_seq=from_seq)
    return Stream("TournamentService", "WatchTournament", request, _same)


def standings(tournament_id: str) -> Call[tpb.GetStandingsResponse]:
    """GetStandings."""
    request = tpb.GetStandingsRequest(tournament_id=tournament_id)
    return Call("TournamentService", "GetStandings", request, _same)


def stats(tournament_id: str = "") -> Call[tpb.GetStatsResponse]:
    """GetStats."""
    request = tpb.GetStatsRequest(tournament_id=tournament_id)
    return Call("TournamentService", "GetStats", request, _same)


def add_arbiter(name: str) -> Call[adpb.AddArbiterResponse]:
    """AddArbiter (organiser): the new arbiter's key."""
    request = adpb.AddArbiterRequest(name=name)
    return Call("AdminService", "AddArbiter", request, _same)


def revoke_arbiter(name: str) -> Call[adpb.RevokeArbiterResponse]:
    """RevokeArbiter (organiser)."""
    request = adpb.RevokeArbiterRequest(name=name)
    return Call("AdminService", "RevokeArbiter", request, _same)


def arbiters() -> Call[list[adpb.Arbiter]]:
    """ListArbiters (organiser)."""
    request = adpb.ListArbitersRequest()
    return Call("AdminService", "ListArbiters", request, lambda reply: list(reply.arbiters))


def backup(path: str) -> Call[adpb.BackupResponse]:
    """Backup (organiser): a copy of the server's file at ``path`` on its machine."""
    request = adpb.BackupRequest(path=path)
    return Call("AdminService", "Backup", request, _same)
