"""Who may call what: every RPC (from the descriptors) × every kind of caller, each RPC's
expected row the one of the access its proto declares (``(feastlog.v1.access)``).

Callers: none (a spectator), a malformed and an unknown token, the organiser, the seat
the request concerns, another seat of the same game, and a seat of another game; and a
named arbiter, for the organiser's own calls and the tournaments it runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import grpc
import pytest

from feastlog.service.grpc import services
from feastlog.v1 import access_pb2 as access
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

BAD = grpc.StatusCode.INVALID_ARGUMENT

# Expected status per access (each RPC's (feastlog.v1.access), proto/feastlog/v1/access.proto),
# in the order of PRINCIPALS:
# none, malformed, unknown, organiser, own seat, other seat, other game's seat.
# fmt: off
BY_ACCESS: dict[int, tuple[grpc.StatusCode, ...]] = {
    access.ACCESS_ANYONE: (OK, UNAUTH, UNAUTH, OK, OK, OK, OK),
    access.ACCESS_GAME_VIEWER: (OK, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    access.ACCESS_GAME_CREDENTIAL: (UNAUTH, UNAUTH, UNAUTH, OK, OK, OK, DENIED),
    # each seat acts for itself: the "other" seat joins, or calls the arbiter, as itself
    access.ACCESS_SEAT: (UNAUTH, UNAUTH, UNAUTH, DENIED, OK, OK, DENIED),
    # the requests name the own seat's viewer: only that seat and the arbiter
    access.ACCESS_NAMED_VIEWER: (DENIED, UNAUTH, UNAUTH, OK, OK, DENIED, DENIED),
    access.ACCESS_ARBITER_VIEW: (DENIED, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    access.ACCESS_ARBITER: (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    access.ACCESS_ORGANISER: (UNAUTH, UNAUTH, UNAUTH, OK, DENIED, DENIED, DENIED),
    # the request names the own seat
    access.ACCESS_SEAT_OR_ORGANISER: (UNAUTH, UNAUTH, UNAUTH, OK, OK, DENIED, DENIED),
}
# Where a request's content, not the caller, decides a cell.
OVERRIDES: dict[str, dict[str, grpc.StatusCode]] = {
    # the other seat is not to act: a rule refuses it
    "/feastlog.v1.GameService/SubmitCommand": {"other": RULES},
    # any witness may hand a cosignature in: its signature decides, not who sends it (the
    # template's is not a valid one)
    "/feastlog.v1.ProofService/AddCosignature": {
        who: BAD for who in ("none", "organiser", "own", "other", "foreign")
    },
}
# fmt: on


def expected(path: str) -> tuple[grpc.StatusCode, ...]:
    """An RPC's row: its access's, with its overrides."""
    row = BY_ACCESS[services.RPCS[path].access]
    changed = OVERRIDES.get(path, {})
    return tuple(changed.get(who, code) for who, code in zip(PRINCIPALS, row, strict=True))


# (an RPC whose access has no row here is named by the first test below)
EXPECTED: dict[str, tuple[grpc.StatusCode, ...]] = {
    path: expected(path) for path, rpc in services.RPCS.items() if rpc.access in BY_ACCESS
}

# A named arbiter's key: the arbiter's rights (every write of a tournament the organiser
# created among them), none of the organiser's own (creating games and tournaments,
# managing arbiters).
ARBITER: dict[str, grpc.StatusCode] = {
    path: OK if rpc.access == access.ACCESS_ARBITER else DENIED
    for path, rpc in services.RPCS.items()
    if rpc.access in (access.ACCESS_ARBITER, access.ACCESS_ORGANISER)
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
