"""Who may see what, and from when: the one visibility policy.

A viewer is a seat, a spectator or the arbiter (``replay.games.engine.Viewer``).  While a game
runs:

- the table: a seat sees its own hidden things (hand, sealed bid, secret Menus) and the
  others only as counts; a spectator sees the public table; the arbiter everything.  Each
  engine's ``view`` draws the table for the viewer it is given (through
  ``Viewer.sees_seat``); this module decides which viewer that is;
- facts: a fact marked ``private_to: k`` (a private draw) is seen by seat k and the
  arbiter; every other fact by everyone;
- commands: a command is seen by its sender and the arbiter, and by everyone when the
  engine calls it public; a sealed bid is hidden from all but its owner until revealed;
  rulings are public;
- refusals: the arbiter sees every refused command, a seat its own, a spectator none;
  a command sent with a seat token of another game (``sender_of_another_game``) is kept
  without its body and seen by the arbiter alone, even once this game is public: it
  was made in that other game, whose hidden cards it may name while it still runs;
- behind the screen (explain, what-if, the audit's fault messages, the export of a
  running game): the arbiter alone;
- replays as another viewer: a seat or a spectator may ask for its own or the
  spectator's; the arbiter for anyone's.

Once the seed is revealed the whole record is public: every fact, command, refusal,
explanation, export and what-if, and a replay as any viewer, the arbiter's included.
A replay shows each row as it was seen then: the rows before the seed reveal as their
viewer saw them, the reveal row (and the export) public; the table a game ended on is
shown whole.

Held back: a game whose server seed was supplied (a duplicate tournament's tables play
one deal) stays as private as a running game, for everyone but the arbiter, while any
other game dealt from the same seed still runs or waits for seat entropy (``Release``):
its seed, the hands it ended with or its export would show those tables' deal, and let
anyone test a guess about their sealed commands.  Its result (scores, winners) is public
as soon as it ends.  The engines' views show hidden things by viewer alone; this module
decides when the arbiter's table is everyone's.

Every path of the service, the web pages and the CLI asks here; nothing else decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from feastlog.replay.games import engine as engine_of
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Engine, Fact, Viewer
from feastlog.replay.games.fold import Table
from feastlog.replay.record.rows import COMMAND, SEED_REVEAL, Row
from feastlog.replay.table.rules import TABLE_MEMBERS
from feastlog.v1 import record_pb2


class Hidden(Exception):
    """A viewer asked for something it may not see (yet): the reason in plain words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Refusal(Protocol):
    """A refused command, as far as the policy reads it: who sent it."""

    @property
    def actor(self) -> str:
        """The sender, as recorded (``seat:N``, ``arbiter``, ``anonymous``, …)."""


R = TypeVar("R", bound=Refusal)


RUNNING = "while the game runs"
HELD = "until every game dealt from the same seed has ended"


@dataclass(frozen=True)
class Release:
    """How open a game's record is now.

    ``over``: its seed is revealed; ``held``: over, but another game dealt from the same
    server seed still runs (or waits for seat entropy), so it stays private till that ends.
    """

    over: bool
    held: bool = False

    @property
    def public(self) -> bool:
        """Whether the whole record is public now."""
        return self.over and not self.held

    @property
    def until(self) -> str:
        """How long its hidden things stay the arbiter's, in words."""
        return HELD if self.over else RUNNING


Open = bool | Release  # a bare bool: the record is public (True) or not, no reason given


@dataclass(frozen=True)
class Dealt:
    """A game dealt from a given server seed: when it was created, and when its seed was
    revealed ('' while it runs or waits for seat entropy)."""

    game_id: str
    created_at: str
    ended_at: str = ""


def seed_out(dealt: Sequence[Dealt]) -> Dealt | None:
    """The first game dealt from a seed whose record was public at its end, so that its
    seed, and every deal made from it, is known to anyone who read it; None when no game
    of the seed ended with no other running (every one held back till the last ends).

    A game created later from that seed would be dealt in the open: CreateGame warns.
    Times are the record's RFC 3339 UTC strings, which sort as the times do.
    """
    for game in sorted((d for d in dealt if d.ended_at), key=lambda d: d.ended_at):
        end = game.ended_at
        running = [
            d
            for d in dealt
            if d is not game and d.created_at <= end and not (d.ended_at and d.ended_at <= end)
        ]
        if not running:
            return game
    return None


def _opened(state: Open) -> tuple[bool, str]:
    """(public now, how long it stays hidden in words) of either spelling."""
    if isinstance(state, Release):
        return state.public, state.until
    return state, RUNNING


def public_row(row: Row) -> bool:
    """Whether a row was public when it was written: the seed reveal, and all after it."""
    return row.kind == SEED_REVEAL


def sees_all(viewer: Viewer, over: Open) -> bool:
    """Whether ``viewer`` may see behind the screen: the arbiter, or anyone once the record
    is public."""
    return _opened(over)[0] or viewer.role == "arbiter"


def behind_screen(viewer: Viewer, over: Open, what: str) -> None:
    """Refuse (``Hidden``) ``what`` unless ``viewer`` may see behind the screen now."""
    if not sees_all(viewer, over):
        raise Hidden(f"{_opened(over)[1]}, only the arbiter can {what}")


def sees_fact(viewer: Viewer, fact: Fact, public: bool) -> bool:
    """Whether ``viewer`` may see ``fact`` (``public``: the record is public by then).

    The seed reveal's fact is the arbiter's until the record is public (a game held back
    has revealed its seed, but not to everyone yet)."""
    if fact.get("type") == "seed_revealed":
        return public or viewer.role == "arbiter"
    owner = fact.get("private_to")
    return public or owner is None or viewer.sees_seat(int(owner))


def facts_for(viewer: Viewer, facts: Sequence[Fact], public: bool) -> tuple[Fact, ...]:
    """The facts ``viewer`` may see, in order."""
    return tuple(f for f in facts if sees_fact(viewer, f, public))


def sees_command(
    viewer: Viewer, engine: Engine, actor: str, command: record_pb2.Command, public: bool
) -> bool:
    """Whether ``viewer`` may see a command ``actor`` sent (a sealed bid: its owner only)."""
    which = command.WhichOneof("game")
    if public or which == "arbiter" or viewer.role == "arbiter" or actor == str(viewer):
        return True
    if which in TABLE_MEMBERS:  # a call to the arbiter, a clock row: public at the table
        return True
    return engine.command_public(getattr(command, which or ""))


def command_for(
    viewer: Viewer, engine: Engine, row: Row, public: bool
) -> record_pb2.Command | None:
    """The command of a command row as ``viewer`` may see it; None when hidden (or no command)."""
    if row.kind != COMMAND:
        return None
    command = record_pb2.Command.FromString(row.body)
    return command if sees_command(viewer, engine, row.actor, command, public) else None


def table_viewer(viewer: Viewer, public: bool) -> Viewer:
    """Whose table ``viewer`` is shown: its own, or everything once the record is public."""
    return ARBITER if public else viewer


OTHER_GAME = " of game "  # how a refused command's sender from another game is named


def sender_of_another_game(seat: int, game_id: str) -> str:
    """How a refused command sent with seat ``seat``'s token of game ``game_id`` names its
    sender in the game it was sent to (``seat:2 of game g_…``)."""
    return f"seat:{seat}{OTHER_GAME}{game_id}"


def sees_refusal(viewer: Viewer, actor: str, over: Open) -> bool:
    """Whether ``viewer`` may see a command refused to ``actor``.

    A command sent with another game's seat token belongs to that game: the arbiter's
    alone (files written before such commands were kept without their body hold it)."""
    if OTHER_GAME in actor:
        return viewer.role == "arbiter"
    return sees_all(viewer, over) or (viewer.role == "seat" and actor == str(viewer))


def refusals_for(viewer: Viewer, refusals: Sequence[R], over: Open) -> list[R]:
    """The refused commands ``viewer`` may see (``over``: the record is public)."""
    return [r for r in refusals if sees_refusal(viewer, r.actor, over)]


def look_as(asker: Viewer, wanted: Viewer, over: Open) -> Viewer:
    """``wanted``, when ``asker`` may look at the game as that viewer; else ``Hidden``.

    Its own view and the spectator's are open to everyone, anyone's to the arbiter, and
    every viewer's to everyone once the record is public.
    """
    if sees_all(asker, over) or wanted.role == "spectator" or wanted == asker:
        return wanted
    raise Hidden(f"{asker} cannot look at the game as {wanted} {_opened(over)[1]}")


def viewers_of(seats: int) -> list[Viewer]:
    """Every viewer of a game of ``seats`` seats: each seat, the spectator, the arbiter."""
    return [*(Viewer.of_seat(s) for s in range(seats)), SPECTATOR, ARBITER]


class Record(Protocol):
    """A record folded row by row (``replay.record.history.Folded`` or a live game)."""

    @property
    def genesis(self) -> record_pb2.Genesis:
        """The genesis message."""

    @property
    def rows(self) -> Sequence[Row]:
        """The rows, seq 1..n."""

    @property
    def tables(self) -> Sequence[Table]:
        """The table after each row."""

    @property
    def facts(self) -> Sequence[Sequence[Fact]]:
        """The facts each row produced."""


@dataclass(frozen=True)
class Step:
    """One row as a viewer saw it: the row, its command (None if hidden), facts and table."""

    row: Row
    command: record_pb2.Command | None
    facts: tuple[Fact, ...]
    view: dict[str, Any]


def drawn_as_released(record: Record, seq: int) -> bool:
    """Whether ``seen`` draws row ``seq`` differently once the record is released: the
    seed reveal, and a table the game ended on (a stream asks ``Release`` only for those)."""
    row, table = record.rows[seq - 1], record.tables[seq - 1]
    return public_row(row) or engine_of(record.genesis.game_kind).is_over(table.game)


def seen(record: Record, seq: int, viewer: Viewer, released: bool = True) -> Step:
    """Row ``seq`` of a folded record as ``viewer`` saw it when it was written.

    ``released``: whether the record is public once its seed is revealed (False for a
    game held back, ``Release``): then the reveal row and the table the game ended on
    are shown as while it ran.
    """
    row, table = record.rows[seq - 1], record.tables[seq - 1]
    engine = engine_of(record.genesis.game_kind)
    public = released and public_row(row)
    facts = facts_for(viewer, record.facts[seq - 1], public)
    whole = public or (released and engine.is_over(table.game))
    view = engine.view(table.game, table_viewer(viewer, whole))
    return Step(row, command_for(viewer, engine, row, public), facts, view)
