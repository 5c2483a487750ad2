"""A tournament's state: its players, its rounds and their tables, clocks and results,
and its penalties.  Immutable values; ``fold.apply`` returns new ones."""

from __future__ import annotations

from dataclasses import dataclass

from feastlog.replay.tournament.spec import Format


@dataclass(frozen=True)
class Entrant:
    """A registered player: the first round they may play (1: from the start), and once
    they drop the last round they played in (None while they have not dropped)."""

    name: str
    entered: int
    last_round: int | None = None
    disqualified: bool = False

    def active(self) -> bool:
        """Whether the player is paired in rounds to come."""
        return self.last_round is None


@dataclass(frozen=True)
class Result:
    """A table's result: per seat the game's points and the place (1 first), and whether
    the game ended without a result of its own (closed at time, or void)."""

    game_id: str
    points: tuple[int, ...]
    places: tuple[int, ...]
    closed: bool = False


@dataclass(frozen=True)
class Round:
    """One round: its tables (players in seat order), byes, how it was paired, and once
    published its games, clock and results (one per table, None until the game ends)."""

    number: int
    tables: tuple[tuple[str, ...], ...]
    byes: tuple[str, ...]
    method: str
    solver: str
    objective: int
    status: str
    changes: int = 0  # swaps and fixes made to the proposal
    game_ids: tuple[str, ...] = ()
    minutes: int = 0  # 0: the clock has not started
    extensions: tuple[tuple[int, int], ...] = ()  # (table, minutes), table 0 for all
    called: bool = False
    results: tuple[Result | None, ...] = ()

    @property
    def published(self) -> bool:
        """Whether the round's games exist."""
        return bool(self.game_ids)

    @property
    def complete(self) -> bool:
        """Whether every table has its result."""
        return self.published and all(r is not None for r in self.results)

    def table_of(self, name: str) -> tuple[int, int] | None:
        """(table index, seat) of a player this round, None when not seated."""
        for t, players in enumerate(self.tables):
            if name in players:
                return t, players.index(name)
        return None

    def minutes_for(self, table: int) -> int:
        """The minutes one table (1-based) has: the round's, and its extensions."""
        return self.minutes + sum(m for t, m in self.extensions if t in (0, table))


@dataclass(frozen=True)
class Penalty:
    """A penalty against a player: its kind, the round, by whom and why."""

    name: str
    penalty: str
    round: int
    by: str
    reason: str


@dataclass(frozen=True)
class Tournament:
    """Everything a tournament's stream says, folded."""

    tournament_id: str
    format: Format
    players: tuple[Entrant, ...] = ()
    rounds: tuple[Round, ...] = ()
    penalties: tuple[Penalty, ...] = ()
    ended: bool = False

    def entrant(self, name: str) -> Entrant | None:
        """A registered player by name."""
        for player in self.players:
            if player.name == name:
                return player
        return None

    def active(self) -> tuple[str, ...]:
        """The players to pair next, in registration order."""
        return tuple(p.name for p in self.players if p.active())

    @property
    def current(self) -> Round | None:
        """The last round paired, if any."""
        return self.rounds[-1] if self.rounds else None

    def between_rounds(self) -> bool:
        """Whether no round is proposed or running."""
        return self.current is None or self.current.complete
