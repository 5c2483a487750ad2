"""Tournament standings: shared wins split, void games count no points."""

from __future__ import annotations

from fractions import Fraction

from feastlog.replay.tournament.outcomes import Result, standings


def test_standings_split_shared_wins_and_skip_void_points() -> None:
    table = standings(
        [
            Result("g1", ["Ann", "Brian", "Celia"], [10, 8, 3], [0]),
            Result("g2", ["Brian", "Celia", "Ann"], [7, 7, 5], [0, 1]),
            Result("g3", ["Ann", "Brian"], [9, 2], [], void=True),
        ]
    )
    assert [(s.name, s.games, s.wins, s.points) for s in table] == [
        ("Ann", 3, Fraction(1), 15),
        ("Brian", 3, Fraction(1, 2), 15),
        ("Celia", 2, Fraction(1, 2), 10),
    ]
    assert table[0].average == 5
