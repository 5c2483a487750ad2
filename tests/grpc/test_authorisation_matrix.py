"""Who may call what: every RPC (from the descriptors) × every kind of caller.

Callers: none (a spectator), a malformed and an unknown token, the organiser, the seat
the request concerns, another seat of the same game, and a seat of another game; and a
named arbiter, for the organiser's own calls and the tournaments it runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import grpc
import pytest

from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc
from tests.hostileutil import PRINCIPALS, TEMPLATES, Targets, call_raw, populated_server, rpc_paths
from tests.serverutil import ThreadedServer, bearer, error_info

OK = grpc.StatusCode.OK
UNAUTH = grpc.StatusCode.UNAUTHENTICATED
DENIED = grpc.StatusCode.PERMISSION_DENIED
RULES = grpc.StatusCode.FAILED_PRECONDITION

G, R, A, T, AD, TB, P = (
    f"/feastlog.v1.{s}Service/"
    for s in ("Game", "Replay", "Audit", "Tournament", "Admin", "Table", "Proof")
)
BAD = grpc.StatusCode.INVALID_ARGUMENT

TOURNAMENT_WRITES = (
    "RegisterPlayer", "DropPlayer", "PairRound", "SwapPlayers", "FixTable", "PublishRound",
    "StartClock", "ExtendClock", "CallTime", "AddPenalty", "EndTournament",
)  # fmt: skip

# Expected status per RPC, in the order of PRINCIPALS:
# none, malformed, unknown, organiser, own seat, other seat, other game's seat.
# fmt: off
EXPECTED: dict[str, tuple[grpc.StatusCode, ...]] = {
    G + "CreateGame": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    # each seat sends its own entropy: the "other" seat joins as itself
    G + "JoinGame": (UNAUTH, UNAUTH, UNAUTH, DENIED, OK, OK, DENIED),
    # the other seat is not to act: a rule refuses it
    G + "SubmitCommand": (UNAUTH, UNAUTH, UNAUTH, DENIED, OK, RULES, DENIED),
    G + "GetView": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    G + "ListLegalCommands": (UNAUTH, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    G + "WatchGame": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    G + "ListGames": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    # as the own seat's viewer: only that seat and the arbiter
    R + "GetStateAt": (DENIED, UNAUTH, UNAUTH, OK, OK, DENIED, DENIED),
    R + "StreamReplay": (DENIED, UNAUTH, UNAUTH, OK, OK, DENIED, DENIED),
    # a running game's record holds sealed commands: the arbiter's alone
    R + "ExportRecord": (DENIED, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    A + "VerifyGame": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    A + "VerifyAllGames": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    A + "ExplainEvent": (DENIED, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    A + "WhatIf": (DENIED, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    A + "ListRejections": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    A + "SubmitRuling": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    T + "GetStandings": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    T + "GetStats": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    # a tournament: the organiser's to create, the organiser's (or a named arbiter's) to
    # run (ARBITER below), anyone's to read
    T + "CreateTournament": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    **{
        T + rpc: (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED)
        for rpc in TOURNAMENT_WRITES
    },
    T + "GetTournament": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    T + "WatchTournament": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    T + "ExportTournament": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    # named arbiters: the organiser's alone
    AD + "AddArbiter": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    AD + "RevokeArbiter": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    AD + "ListArbiters": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    # a seat calls the arbiter, any seat of the game, at any time; an arbiter rules instead
    TB + "CallArbiter": (UNAUTH, UNAUTH, UNAUTH, DENIED, OK, OK, DENIED),
    # a game's calls are public at the table; the server's queue is the arbiters'
    TB + "ListCalls": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    TB + "WatchCalls": (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    # each viewer's own case file: what it may see of the game
    TB + "GetCaseFile": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    # the clocks are public at the table
    TB + "GetClocks": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    # every game's rows as the caller may see them (each game's own visibility)
    "/feastlog.v1.FeedService/WatchAll": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    # the server's keys and signed heads are everyone's, hashes only
    P + "GetServerInfo": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    P + "GetTreeHead": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    P + "GetConsistencyProof": (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    # a row's inclusion: whoever may watch its game
    P + "GetInclusionProof": (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    # any witness may hand a cosignature in: its signature decides, not who sends it
    P + "AddCosignature": (BAD, UNAUTH, UNAUTH, BAD, BAD, BAD, BAD),
    # a seat's one-time link: the organiser's for any seat, a seat token's for its own
    "/feastlog.v1.SeatLinkService/CreateSeatLink": (
        UNAUTH, UNAUTH, UNAUTH, OK, OK, DENIED, DENIED,
    ),
}
# fmt: on

# A named arbiter's key: none of the organiser's own calls (creating games and
# tournaments, managing arbiters), every write of a tournament the organiser created.
ARBITER: dict[str, grpc.StatusCode] = {
    G + "CreateGame": DENIED,
    T + "CreateTournament": DENIED,
    **{T + rpc: OK for rpc in TOURNAMENT_WRITES},
    AD + "AddArbiter": DENIED,
    AD + "RevokeArbiter": DENIED,
    AD + "ListArbiters": DENIED,
}

# Callers that may change the game go last, so that each cell sees the same game.
ORDER = ("none", "malformed", "unknown", "foreign", "other", "organiser", "own")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ThreadedServer, Targets]]:
    yield from populated_server(tmp_path_factory, "matrix")


def test_every_rpc_has_an_expected_row_and_a_request() -> None:
    paths = [path for path, _ in rpc_paths()]
    assert [p for p in paths if p not in EXPECTED] == [], "RPCs without an expected row"
    assert [p for p in paths if p not in TEMPLATES] == [], "RPCs without a request template"
    assert sorted(EXPECTED) == sorted(paths), "rows for RPCs that do not exist"


def test_authorisation_matrix(served: tuple[ThreadedServer, Targets]) -> None:
    server, targets = served
    channel = grpc.insecure_channel(server.address)
    got: dict[tuple[str, str], grpc.StatusCode] = {}
    for path, method in rpc_paths():
        for principal in ORDER:
            request, game_id = TEMPLATES[path](targets)
            answer = call_raw(
                channel, method, request.SerializeToString(), targets.metadata(principal, game_id)
            )
            got[path, principal] = answer.code
            if answer.code != OK:
                assert answer.reason, f"{path} as {principal}: {answer.code} without ErrorInfo"
    cells = [(p, who) for p, _ in rpc_paths() for who in PRINCIPALS]
    wrong = [
        f"{p.rsplit('/', 1)[1]} as {who}: got {got[p, who].name}, "
        f"expected {EXPECTED[p][PRINCIPALS.index(who)].name}"
        for p, who in cells
        if got[p, who] != EXPECTED[p][PRINCIPALS.index(who)]
    ]
    print(f"authorisation matrix: {len(cells) - len(wrong)} / {len(cells)} cells as expected")
    assert wrong == []


def test_a_named_arbiter_runs_the_organisers_tournament_and_creates_none(
    served: tuple[ThreadedServer, Targets],
) -> None:
    """docs/api.md: a named arbiter has the arbiter's rights and none of the organiser's
    own; a tournament is the organiser's to create (TOUR-ROLE), and an arbiter runs it
    through a whole round, in the order the matrix takes the organiser through one."""
    server, targets = served
    channel = grpc.insecure_channel(server.address)
    org = bearer(targets.key)
    judge = adpb_grpc.AdminServiceStub(channel).AddArbiter(
        adpb.AddArbiterRequest(name="matrix-judge"), metadata=org
    )
    cup = tpb.CreateTournamentRequest(
        format={"table_sizes": "3-4", "rounds": "1"}, players=["Kai", "Lea", "Max", "Noa"]
    )
    tournaments = tpb_grpc.TournamentServiceStub(channel)
    made = tournaments.CreateTournament(cup, metadata=org).tournament.tournament_id
    theirs = dataclasses.replace(targets, tournament=made)
    got = {}
    for path, method in rpc_paths():
        if path in ARBITER:
            request, _ = TEMPLATES[path](theirs)
            answer = call_raw(channel, method, request.SerializeToString(), bearer(judge.key))
            got[path] = answer.code
    wrong = [
        f"{p.rsplit('/', 1)[1]}: got {got[p].name}, expected {ARBITER[p].name}"
        for p in ARBITER
        if got[p] != ARBITER[p]
    ]
    assert wrong == []
    with pytest.raises(grpc.RpcError) as refused:
        tournaments.CreateTournament(cup, metadata=bearer(judge.key))
    info = error_info(refused.value)
    assert (info.reason, info.metadata["rule_id"]) == ("PERMISSION_DENIED", "TOUR-ROLE")
    final = tournaments.GetTournament(tpb.GetTournamentRequest(tournament_id=made)).tournament
    assert final.ended and final.rounds[0].published
