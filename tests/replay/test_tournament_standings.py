"""Standings and tiebreaks against a table computed by hand, and the fold's refusals
(each with its rule id, changing nothing)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.tournament.fold import apply, begin
from feastlog.replay.tournament.standings import exact, places_of, standings
from feastlog.replay.tournament.state import Tournament
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb

OPTIONS = {"table_sizes": "3", "rounds": "2", "pairing": "fixed"}


def command(**action: object) -> tpb.TournamentCommand:
    return tpb.TournamentCommand(reason="by hand", **action)  # type: ignore[arg-type]


def event() -> Tournament:
    """Six players, two fixed rounds of two tables of three, a game loss for C in round 2."""
    state = begin(record_pb2.Genesis(game_id="t_hand", game_kind="tournament", options=OPTIONS))
    for name in "ABCDEF":
        state = apply(state, command(register=tpb.RegisterPlayer(name=name)))
    rounds = [
        ((("A", "B", "C"), [10, 7, 7], [0]), (("D", "E", "F"), [5, 9, 1], [1])),
        ((("A", "D", "F"), [3, 3, 8], [2]), (("B", "C", "E"), [6, 6, 6], [0, 1, 2])),
    ]
    for number, tables in enumerate(rounds, start=1):
        pods = [tpb.PairedTable(players=players) for players, _, _ in tables]
        state = apply(
            state, command(propose=tpb.ProposePairing(round=number, tables=pods, method="fixed"))
        )
        ids = [f"g{number}{t}" for t in range(2)]
        state = apply(state, command(publish=tpb.PublishRound(round=number, game_ids=ids)))
        for t, (_, points, winners) in enumerate(tables):
            result = tpb.TableResult(
                round=number,
                table=t + 1,
                game_id=ids[t],
                points=points,
                places=places_of(points, winners),
            )
            state = apply(state, command(result=result))
    return apply(state, command(penalty=tpb.PlayerPenalty(name="C", penalty="game_loss", round=2)))


def test_places_share_the_best_place_they_cover() -> None:
    assert places_of([10, 7, 7], [0]) == (1, 2, 2)
    assert places_of([5, 9, 1], [1]) == (2, 1, 3)
    assert places_of([6, 6, 6], [0, 1, 2]) == (1, 1, 1)
    assert places_of([3, 3, 8, 0], [2]) == (2, 2, 1, 4)


def test_standings_are_the_hand_computed_table() -> None:
    # match points, 4/2/1 by place, shared places split: A 4 + 3/2, B 3/2 + 7/3, C 3/2 + 0
    # (game loss), D 2 + 3/2, E 4 + 7/3, F 1 + 4; wins: a first place shared by k is 1/k
    expected = [
        ("E", Fraction(19, 3), 15, Fraction(4, 3)),
        ("A", Fraction(11, 2), 13, Fraction(1)),
        ("F", Fraction(5), 9, Fraction(1)),
        ("B", Fraction(23, 6), 13, Fraction(1, 3)),
        ("D", Fraction(7, 2), 8, Fraction(0)),
        ("C", Fraction(3, 2), 13, Fraction(1, 3)),
    ]
    lines = standings(event())
    assert [(s.name, s.match_points, s.game_points, s.wins) for s in lines] == expected
    # A's table-mates: B and C in round 1 ((23/6 + 3/2) / 2 = 8/3), D and F in round 2
    # ((7/2 + 5) / 2 = 17/4): the average of the two, 83/24
    a = next(s for s in lines if s.name == "A")
    assert a.opponents_average == Fraction(83, 24)
    assert exact(Fraction(23, 6)) == "3 5/6"


def test_refusals_name_their_rule_and_change_nothing() -> None:
    state = event()
    cases = [
        (command(register=tpb.RegisterPlayer(name="A")), "TOUR-REGISTER-TWICE"),
        (command(drop=tpb.DropPlayer(name="Zed")), "TOUR-PLAYER-UNKNOWN"),
        (command(swap=tpb.SwapPlayers(first="A", second="B")), "TOUR-NO-PROPOSAL"),
        (command(propose=tpb.ProposePairing(round=3)), "TOUR-ROUNDS"),
        (command(penalty=tpb.PlayerPenalty(name="A", penalty="yellow", round=1)), "TOUR-PENALTY"),
        (command(start_clock=tpb.StartClock(round=1)), "TOUR-CLOCK"),
    ]
    for sent, rule in cases:
        with pytest.raises(RuleViolation) as refused:
            apply(state, sent)
        assert refused.value.rule_id == rule, sent
    assert standings(state) == standings(event())


def test_a_swap_cannot_seat_a_player_twice_nor_a_dropped_player() -> None:
    state = begin(record_pb2.Genesis(game_id="t_s", game_kind="tournament", options=OPTIONS))
    for name in "ABCDEF":
        state = apply(state, command(register=tpb.RegisterPlayer(name=name)))
    state = apply(state, command(drop=tpb.DropPlayer(name="F")))
    pods = [tpb.PairedTable(players=["A", "B", "C"]), tpb.PairedTable(players=["D", "E", "F"])]
    with pytest.raises(RuleViolation) as dropped:
        apply(state, command(propose=tpb.ProposePairing(round=1, tables=pods, method="fixed")))
    assert dropped.value.rule_id == "TOUR-DROPPED"
    pods = [tpb.PairedTable(players=["A", "B", "C"]), tpb.PairedTable(players=["A", "D", "E"])]
    with pytest.raises(RuleViolation) as twice:
        apply(state, command(propose=tpb.ProposePairing(round=1, tables=pods, method="fixed")))
    assert twice.value.rule_id == "TOUR-FIXED-PODS"
    pods = [tpb.PairedTable(players=["A", "B", "C", "D", "E"])]
    with pytest.raises(RuleViolation) as size:
        apply(state, command(propose=tpb.ProposePairing(round=1, tables=pods, method="fixed")))
    assert size.value.rule_id == "TOUR-TABLE-SIZE"
    pods = [tpb.PairedTable(players=["A", "B", "C"])]
    state = apply(
        state,
        command(propose=tpb.ProposePairing(round=1, tables=pods, byes=["D", "E"], method="fixed")),
    )
    with pytest.raises(RuleViolation) as same:
        apply(state, command(swap=tpb.SwapPlayers(first="A", second="A")))
    assert same.value.rule_id == "TOUR-SWAP"
    with pytest.raises(RuleViolation) as gone:
        apply(state, command(swap=tpb.SwapPlayers(first="A", second="F")))
    assert gone.value.rule_id == "TOUR-DROPPED"
    swapped = apply(state, command(swap=tpb.SwapPlayers(first="A", second="D")))
    assert swapped.rounds[-1].tables == (("D", "B", "C"),) and swapped.rounds[-1].byes == ("A", "E")
