"""A tournament's standings: points by finishing place, byes and penalties, then the
tiebreaks in the format's order (docs/tournament.md gives each formula).

- match points: per table, the format's ``place_points`` by place; seats sharing a place
  share the points of the places they cover equally (two seats tied second at 4/2/1/0
  get (2 + 1) / 2 each); a bye scores ``bye_points``; a game loss scores 0 for its round;
- ``game_points``: the sum of the player's points in their games (rulings included);
- ``opponents_average``: over the player's tables, the mean match points of their
  table-mates now, averaged over those tables;
- ``wins``: first places, a first place shared by k seats counting 1/k;
- ``par`` (duplicate rounds): over the player's duplicate rounds, their points minus the
  round's par for their seat, the mean points scored from that seat across the round's
  tables (every table dealt the same cards).

A disqualified player is ranked after everyone else; the last key is the name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from feastlog.replay.tournament.spec import Format
from feastlog.replay.tournament.state import Round, Tournament


@dataclass(frozen=True)
class Line:
    """One player's line."""

    name: str
    match_points: Fraction
    game_points: int
    opponents_average: Fraction
    wins: Fraction
    played: int
    byes: int
    par: Fraction
    dropped: bool
    disqualified: bool
    warnings: int

    def tiebreak(self, name: str) -> Fraction:
        """The value of one tiebreak."""
        return Fraction(getattr(self, name))


def places_of(points: Sequence[int], winners: Sequence[int]) -> tuple[int, ...]:
    """Finishing places from a game's points and winners: the winners share place 1, the
    others follow by points, best first, tied seats sharing the best place they cover."""
    places = []
    for seat, mine in enumerate(points):
        if seat in winners:
            places.append(1)
            continue
        ahead = sum(
            1 for s, p in enumerate(points) if s in winners or (p > mine and s not in winners)
        )
        places.append(1 + ahead)
    return tuple(places)


def place_points(fmt: Format, places: Sequence[int]) -> tuple[Fraction, ...]:
    """Each seat's match points from its place; shared places split their points."""
    out = []
    for place in places:
        sharing = sum(1 for p in places if p == place)
        covered = fmt.place_points[place - 1 : place - 1 + sharing]
        out.append(Fraction(sum(covered), sharing))
    return tuple(out)


def standings(state: Tournament, rounds: int | None = None) -> list[Line]:
    """Every player's line after ``rounds`` rounds (all complete ones when None), best first."""
    fmt = state.format
    counted = [r for r in state.rounds if r.complete][: rounds if rounds is not None else None]
    lost = {(p.name, p.round) for p in state.penalties if p.penalty == "game_loss"}
    match: dict[str, Fraction] = {p.name: Fraction(0) for p in state.players}
    game = dict.fromkeys(match, 0)
    wins = dict.fromkeys(match, Fraction(0))
    played = dict.fromkeys(match, 0)
    byes = dict.fromkeys(match, 0)
    mates: dict[str, list[tuple[str, ...]]] = {n: [] for n in match}
    par = dict.fromkeys(match, Fraction(0))
    for round_ in counted:
        if fmt.duplicate:
            for name, against in against_par(round_).items():
                par[name] += against
        for name in round_.byes:
            match[name] += fmt.bye_points
            byes[name] += 1
        for players, result in zip(round_.tables, round_.results, strict=True):
            assert result is not None  # a complete round has every result
            shares = place_points(fmt, result.places)
            firsts = sum(1 for p in result.places if p == 1)
            for seat, name in enumerate(players):
                played[name] += 1
                game[name] += result.points[seat]
                match[name] += 0 if (name, round_.number) in lost else shares[seat]
                if result.places[seat] == 1:
                    wins[name] += Fraction(1, firsts)
                mates[name].append(tuple(n for n in players if n != name))
    lines = []
    for entrant in state.players:
        name = entrant.name
        tables = [sum((match[m] for m in t), Fraction(0)) / len(t) for t in mates[name] if t]
        average = sum(tables, Fraction(0)) / len(tables) if tables else Fraction(0)
        warnings = sum(1 for p in state.penalties if p.name == name and p.penalty == "warning")
        lines.append(
            Line(
                name,
                match[name],
                game[name],
                average,
                wins[name],
                played[name],
                byes[name],
                par[name],
                not entrant.active(),
                entrant.disqualified,
                warnings,
            )
        )
    return sorted(lines, key=lambda line: order_key(fmt, line))


def against_par(round_: Round) -> dict[str, Fraction]:
    """Each seated player's points minus the par of their seat in a complete round: the
    mean of the points scored from that seat at the round's tables of its size."""
    out: dict[str, Fraction] = {}
    for players, result in zip(round_.tables, round_.results, strict=True):
        assert result is not None
        for seat, name in enumerate(players):
            same = [
                r.points[seat]
                for t, r in zip(round_.tables, round_.results, strict=True)
                if r is not None and len(t) == len(players)
            ]
            out[name] = result.points[seat] - Fraction(sum(same), len(same))
    return out


def order_key(fmt: Format, line: Line) -> tuple[object, ...]:
    """The sort key of a line: disqualified last, match points, the tiebreaks, the name."""
    return (
        line.disqualified,
        -line.match_points,
        *(-line.tiebreak(t) for t in fmt.tiebreaks),
        line.name,
    )


def exact(value: Fraction) -> str:
    """A number of points exactly: 3, 1/2, 3 1/2."""
    whole, part = divmod(value, 1)
    if not part:
        return str(whole)
    return f"{part}" if not whole else f"{whole} {part}"
