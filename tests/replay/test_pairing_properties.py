"""Pairing properties over random events (hypothesis): players registered, rounds played
with random points, drops and late entries between rounds.

By default a bounded run for CI (few examples, up to 24 players); longer with
``FEASTLOG_PAIRING_EXAMPLES=200 FEASTLOG_PAIRING_PLAYERS=200 python -m pytest
tests/replay/test_pairing_properties.py``.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from feastlog.replay.tournament import pairing
from feastlog.replay.tournament.fold import apply, begin
from feastlog.replay.tournament.standings import places_of
from feastlog.replay.tournament.state import Tournament
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb

EXAMPLES = int(os.environ.get("FEASTLOG_PAIRING_EXAMPLES", "4"))
MOST = int(os.environ.get("FEASTLOG_PAIRING_PLAYERS", "24"))
SEED = bytes(range(32))
BOUNDED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI stays deterministic
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example runs the solver
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def command(**action: object) -> tpb.TournamentCommand:
    return tpb.TournamentCommand(reason="test", **action)  # type: ignore[arg-type]


def new_event(players: int, sizes: str, rounds: int) -> Tournament:
    options = {"table_sizes": sizes, "rounds": str(rounds), "game_kind": "menu-masters"}
    state = begin(record_pb2.Genesis(game_id="t_p", game_kind="tournament", options=options))
    for i in range(players):
        state = apply(state, command(register=tpb.RegisterPlayer(name=f"p{i:03d}")))
    return state


def play(state: Tournament, found: pairing.Proposal, number: int, points: list[int]) -> Tournament:
    """Record a proposal, publish it, and give every table its result."""
    tables = [tpb.PairedTable(players=t) for t in found.tables]
    propose = tpb.ProposePairing(
        round=number,
        tables=tables,
        byes=found.byes,
        method=found.method,
        solver=found.solver,
        objective=found.objective,
        status=found.status,
    )
    state = apply(state, command(propose=propose))
    ids = [f"g{number}-{t}" for t in range(len(found.tables))]
    state = apply(state, command(publish=tpb.PublishRound(round=number, game_ids=ids)))
    for t, table in enumerate(found.tables):
        mine = [points[(t * 7 + s) % len(points)] for s in range(len(table))]
        best = max(mine)
        result = tpb.TableResult(
            round=number,
            table=t + 1,
            game_id=ids[t],
            points=mine,
            places=places_of(mine, [s for s, p in enumerate(mine) if p == best]),
        )
        state = apply(state, command(result=result))
    return state


def check_round(state: Tournament, found: pairing.Proposal) -> None:
    """Every active player seated once or given a bye; every table of an allowed size."""
    seated = [n for t in found.tables for n in t] + list(found.byes)
    assert sorted(seated) == sorted(state.active())
    assert all(len(t) in state.format.sizes() for t in found.tables)
    assert len(found.byes) == pairing.table_plan(len(state.active()), state.format)[1]


@st.composite
def events(draw: st.DrawFn) -> tuple[int, str, int, list[int], list[tuple[int, int]]]:
    players = draw(st.integers(8, MOST))
    sizes = draw(st.sampled_from(["3-4", "4", "3-5"]))
    rounds = draw(st.integers(2, 3))
    points = draw(st.lists(st.integers(0, 30), min_size=5, max_size=12))
    changes = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), max_size=rounds))
    return players, sizes, rounds, points, changes


@BOUNDED
@given(events())
def test_every_round_seats_every_active_player_once_and_re_derives(
    event: tuple[int, str, int, list[int], list[tuple[int, int]]],
) -> None:
    players, sizes, rounds, points, changes = event
    state = new_event(players, sizes, rounds)
    for number in range(1, rounds + 1):
        for drops, late in changes[number - 1 : number] if number > 1 else []:
            for name in state.active()[:drops]:
                state = apply(state, command(drop=tpb.DropPlayer(name=name)))
            for i in range(late):
                state = apply(state, command(register=tpb.RegisterPlayer(name=f"late{number}-{i}")))
        found = pairing.propose(state, SEED)
        check_round(state, found)
        pairing._DERIVED.clear()
        assert pairing.propose(state, SEED) == found  # derived again: the same pairing
        ok, how = pairing.check_proposal(state, SEED, found)
        assert ok, how
        state = play(state, found, number, points)


def fewest_repeats(
    state: Tournament, sizes: tuple[int, ...], byes: tuple[str, ...], balanced: bool
) -> int:
    """The fewest repeated meetings any pairing of the plan has (CP-SAT on repeats alone),
    among those that keep every player's seats balanced within one when ``balanced``."""
    from ortools.sat.python import cp_model

    met, seats, _ = pairing.history(state)
    players = [n for n in state.active() if n not in byes]
    model = cp_model.CpModel()
    x = {
        (p, t): model.new_bool_var(f"x{p}{t}")
        for p in range(len(players))
        for t in range(len(sizes))
    }
    for p in range(len(players)):
        model.add_exactly_one(x[p, t] for t in range(len(sizes)))
    for t, size in enumerate(sizes):
        model.add(sum(x[p, t] for p in range(len(players))) == size)
    if balanced:  # one player of the least-used seat s at each table, for every seat s
        largest = state.format.largest
        sat = {
            (p, t, s): model.new_bool_var(f"s{p}{t}{s}")
            for p in range(len(players))
            for t in range(len(sizes))
            for s in range(sizes[t])
            if pairing.over(seats[players[p]], s, largest) == 0
        }
        for p in range(len(players)):
            for t in range(len(sizes)):
                model.add(sum(v for (q, u, _), v in sat.items() if (q, u) == (p, t)) == x[p, t])
        for t, size in enumerate(sizes):
            for s in range(size):
                model.add_exactly_one(v for (_, u, k), v in sat.items() if (u, k) == (t, s))
    terms = []
    for p, q in itertools.combinations(range(len(players)), 2):
        times = met[min(players[p], players[q]), max(players[p], players[q])]
        if times:
            both = model.new_bool_var(f"z{p}_{q}")
            for t in range(len(sizes)):
                model.add(both >= x[p, t] + x[q, t] - 1)
            terms.append(times * both)
    model.minimize(sum(terms))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = 20.0
    assert solver.solve(model) == cp_model.OPTIMAL
    return int(solver.objective_value)


@BOUNDED
@given(
    st.integers(8, 16),
    st.sampled_from(["4", "3-4"]),
    st.lists(st.integers(0, 30), min_size=5, max_size=9),
)
def test_no_table_mates_repeat_when_a_pairing_without_them_exists(
    players: int, sizes: str, points: list[int]
) -> None:
    """Checked against the optimum of repeats alone, on small events (one model): among
    the pairings that keep seats balanced within one, when the round keeps them."""
    state = new_event(players, sizes, 3)
    for number in (1, 2, 3):
        found = pairing.propose(state, SEED)
        if found.status.startswith("OPTIMAL"):
            met, _, _ = pairing.history(state)
            repeats = sum(
                met[a, b] for t in found.tables for a, b in itertools.combinations(sorted(t), 2)
            )
            plan = tuple(len(t) for t in found.tables)
            balanced = not found.status.endswith("SEATS-SOFT")
            assert repeats == fewest_repeats(state, plan, found.byes, balanced), (number, found)
        state = play(state, found, number, points)


@BOUNDED
@given(st.sampled_from([8, 12, 16, 20]), st.lists(st.integers(0, 30), min_size=5, max_size=9))
def test_seat_positions_stay_balanced_within_one(players: int, points: list[int]) -> None:
    """Tables of 4 for as many rounds as there are seats: each player's seat counts
    differ by at most one after every round."""
    state = new_event(players, "4", 4)
    for number in range(1, 5):
        found = pairing.propose(state, SEED)
        state = play(state, found, number, points)
        _, seats, _ = pairing.history(state)
        worst = {
            n: max(c[s] for s in range(4)) - min(c[s] for s in range(4)) for n, c in seats.items()
        }
        assert max(worst.values()) <= 1, (number, Counter(worst.values()))


def test_a_round_robin_seats_every_pair_together_exactly_once() -> None:
    """9 players at tables of 3 (4 rounds), 16 at 4 (5 rounds), 25 at 5 (6 rounds)."""
    for q in (3, 4, 5):
        options = {
            "table_sizes": str(q),
            "rounds": str(q + 1),
            "pairing": "round_robin",
            "game_kind": "menu-masters",
        }
        genesis = record_pb2.Genesis(game_id="t_rr", game_kind="tournament", options=options)
        state = begin(genesis)
        for i in range(q * q):
            state = apply(state, command(register=tpb.RegisterPlayer(name=f"r{i:02d}")))
        for number in range(1, q + 2):
            found = pairing.round_robin(state, SEED)
            check_round(state, found)
            assert pairing.check_proposal(state, SEED, found) == (True, "round robin re-derived")
            state = play(state, found, number, [3, 1, 4, 1, 5])
        met, seats, _ = pairing.history(state)
        assert len(met) == q * q * (q * q - 1) // 2 and set(met.values()) == {1}
        assert all(max(c.values()) - min(c[s] for s in range(q)) <= 1 for c in seats.values())
