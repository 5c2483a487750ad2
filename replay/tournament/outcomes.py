"""Tournament standings from finished games' outcomes (arbiter rulings applied).

A shared victory splits the win: each of k tied winners gets 1/k.  Void games and
forfeited seats count as played; a forfeited seat cannot win.  Players are matched by
name across the tournament's games.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from feastlog.replay.games import fold
from feastlog.replay.games.fold import Table
from feastlog.v1 import record_pb2


@dataclass(frozen=True)
class Result:
    """One finished game of a tournament: seat names, points, winners (empty when void)."""

    game_id: str
    names: Sequence[str]
    points: Sequence[int]
    winners: Sequence[int]
    void: bool = False


@dataclass(frozen=True)
class Standing:
    """A player's line in the standings."""

    name: str
    games: int
    wins: Fraction
    points: int

    @property
    def average(self) -> Fraction:
        """Points per game counted (void games count no points)."""
        return Fraction(self.points, self.games) if self.games else Fraction(0)


def standings(results: Iterable[Result]) -> list[Standing]:
    """Every player's games, wins and points, best first (wins, then points, then name)."""
    games: dict[str, int] = {}
    wins: dict[str, Fraction] = {}
    points: dict[str, int] = {}
    for result in results:
        for seat, name in enumerate(result.names):
            games[name] = games.get(name, 0) + 1
            wins.setdefault(name, Fraction(0))
            points[name] = points.get(name, 0) + (0 if result.void else result.points[seat])
            if not result.void and seat in result.winners:
                wins[name] += Fraction(1, len(result.winners))
    lines = [Standing(n, games[n], wins[n], points[n]) for n in games]
    return sorted(lines, key=lambda s: (-s.wins, -s.points, s.name))


def result_of(genesis: record_pb2.Genesis, table: Table) -> Result:
    """A finished game's result; void when the arbiter voided or closed it unscored."""
    names = [s.name for s in genesis.seats]
    outcome = fold.outcome(fold.engine_of(genesis), table)
    if outcome is None:
        return Result(genesis.game_id, names, [0] * len(names), [], void=True)
    return Result(genesis.game_id, names, outcome.points, outcome.winners)


def exact(value: Fraction) -> str:
    """A number of wins as a mixed fraction: 3, 1/2, 3 1/2."""
    whole, part = divmod(value, 1)
    if not part:
        return str(whole)
    return f"{part}" if not whole else f"{whole} {part}"
