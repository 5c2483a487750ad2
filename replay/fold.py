"""Folding a record into state: genesis, then each command, deterministically.

The fold wraps the engine's state in a ``Table`` that also carries the arbiter's rulings
(notes, score adjustments, forfeits, a voided or closed game).  The state hash is the
sha256 of the table's canonical bytes; the table holds the ``Rng`` and so the seed, which
means a state hash published during a game reveals nothing about hidden cards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from google.protobuf.message import Message

from feastlog.v1 import record_pb2
from replay import games
from replay.canonical import canonical_bytes, sha256_hex
from replay.engine import (
    Engine,
    Fact,
    MalformedCommand,
    Outcome,
    Rule,
    RuleViolation,
    catalogue,
)
from replay.rng import Rng, derive_seed

RECORD_RULES: Mapping[str, Rule] = catalogue(
    Rule(
        "FL-GAME-CLOSED",
        "feastlog record",
        "No command is taken once the game has ended, was closed or voided.",
    ),
    Rule("FL-RULING-REASON", "feastlog record", "Every arbiter ruling states its reason."),
    Rule("FL-RULING-SEAT", "feastlog record", "A ruling about a seat names a seat of the game."),
    Rule("FL-ARBITER-ONLY", "feastlog record", "Only the arbiter rules; only seats play."),
)


@dataclass(frozen=True)
class Table:
    """A game's folded state: the engine's state and the arbiter's rulings."""

    kind: str
    game: Any
    adjustments: tuple[int, ...]
    forfeited: frozenset[int] = frozenset()
    voided: bool = False
    closed: bool = False
    notes: tuple[str, ...] = ()


def wrap_command(field: str, inner: Message) -> record_pb2.Command:
    """A game's own command wrapped in ``feastlog.v1.Command`` (``field``: its oneof name)."""
    command = record_pb2.Command()
    getattr(command, field).CopyFrom(inner)
    return command


def state_hash(table: Table) -> str:
    """The canonical state hash of a table."""
    return sha256_hex(canonical_bytes(table))


def engine_of(genesis: record_pb2.Genesis) -> Engine:
    """The rules engine a genesis row names."""
    return games.engine(genesis.game_kind)


def ruleset_of(genesis: record_pb2.Genesis) -> str:
    """The ruleset version a genesis folds under; ValueError for one this build lacks.

    A genesis naming no version (only hand-built test records) folds under the current one.
    """
    engine = engine_of(genesis)
    version = genesis.ruleset_version or engine.ruleset_version
    if version not in engine.rulesets:
        folded = ", ".join(engine.rulesets)
        raise ValueError(
            f"{engine.title} ruleset {version!r} is not one this build folds ({folded})"
        )
    return version


def start(genesis: record_pb2.Genesis, server_seed: bytes, pack: Any) -> tuple[Table, list[Fact]]:
    """The table after setup, from the genesis row, the server seed and the loaded pack.

    The game seed mixes in the seats' entropy recorded in the genesis, if any (DESIGN 3).
    The genesis's ruleset version picks the rules and the defaults of options it omits.
    """
    engine = engine_of(genesis)
    version = ruleset_of(genesis)
    rng = Rng(derive_seed(server_seed, tuple(genesis.seat_entropy)))
    options = {**engine.rulesets[version], **dict(genesis.options)}
    seats = tuple(s.name for s in genesis.seats)
    game, facts = engine.setup(seats, options, pack, rng, version)
    return Table(genesis.game_kind, game, (0,) * len(seats)), facts


def is_over(table: Table) -> bool:
    """Whether no more commands are taken: the game ended, or the arbiter closed or voided it."""
    return table.closed or table.voided or games.engine(table.kind).is_over(table.game)


def step(table: Table, actor: str, command: record_pb2.Command) -> tuple[Table, list[Fact]]:
    """Apply one accepted-or-not command; raises RuleViolation or MalformedCommand."""
    which = command.WhichOneof("game")
    if which is None:
        raise MalformedCommand("command", "the command is empty")
    if which == "arbiter":
        if actor != "arbiter":
            raise RuleViolation("FL-ARBITER-ONLY", "only the arbiter can make a ruling")
        return _rule(table, command.arbiter)
    if actor == "arbiter":
        raise RuleViolation("FL-ARBITER-ONLY", "the arbiter rules; players make the moves")
    engine = games.engine(table.kind)
    if which != engine.command_field:
        raise MalformedCommand(
            "command", f"this is a {engine.title} game; the command is for {which}"
        )
    check_open(table)
    seat = int(actor.removeprefix("seat:"))
    game, facts = engine.apply(table.game, seat, getattr(command, which))
    return replace(table, game=game), facts


def check_open(table: Table) -> None:
    """Refuse a move once the game has ended.

    One rule id per refusal: an arbiter's close or void cites FL-GAME-CLOSED; a game that
    ended by its rulebook cites the game's own end rule (BA-END, MM-GAME-OVER,
    PE-GAME-END) and names FL-GAME-CLOSED in the message, so both rules are cited.
    """
    if table.closed or table.voided:
        raise RuleViolation("FL-GAME-CLOSED", "the arbiter has ended this game")
    engine = games.engine(table.kind)
    if engine.is_over(table.game):
        raise RuleViolation(
            engine.end_rule,
            f"this game of {engine.title} has ended by its rules: no command is taken "
            "after the end (FL-GAME-CLOSED)",
        )


def _rule(table: Table, ruling: record_pb2.ArbiterCommand) -> tuple[Table, list[Fact]]:
    """Apply an arbiter ruling; nothing earlier in the record changes."""
    if not ruling.reason.strip():
        raise RuleViolation("FL-RULING-REASON", "a ruling needs a reason")
    which = ruling.WhichOneof("ruling")
    fact: Fact = {"type": "ruling", "ruling": which, "reason": ruling.reason}
    if ruling.ruled_by:  # who ruled: recorded since named arbiters; older rulings have none
        fact["ruled_by"] = ruling.ruled_by
    seats = len(table.adjustments)
    if which == "note":
        return replace(table, notes=(*table.notes, ruling.note.text)), [
            {**fact, "text": ruling.note.text}
        ]
    if which == "score_adjustment":
        seat, points = ruling.score_adjustment.seat, ruling.score_adjustment.points
        _check_seat(seat, seats)
        adjusted = tuple(a + points if i == seat else a for i, a in enumerate(table.adjustments))
        return replace(table, adjustments=adjusted), [{**fact, "seat": seat, "points": points}]
    if which == "forfeit":
        _check_seat(ruling.forfeit.seat, seats)
        forfeited = table.forfeited | {ruling.forfeit.seat}
        return replace(table, forfeited=forfeited), [{**fact, "seat": ruling.forfeit.seat}]
    if which == "void_game":
        return replace(table, voided=True), [fact]
    if which == "close_game":
        return replace(table, closed=True), [fact]
    raise MalformedCommand("command.arbiter.ruling", "the ruling is empty")


def _check_seat(seat: int, seats: int) -> None:
    if not 0 <= seat < seats:
        raise RuleViolation("FL-RULING-SEAT", f"there is no seat {seat} in this game")


def outcome(table: Table) -> Outcome | None:
    """The final result with rulings applied; None for a void game or an unfinished one."""
    engine = games.engine(table.kind)
    if table.voided or not engine.is_over(table.game):
        return None
    base = engine.outcome(table.game)
    points = tuple(p + a for p, a in zip(base.points, table.adjustments, strict=True))
    if points == base.points and not table.forfeited:
        return base
    contenders = [s for s in range(len(points)) if s not in table.forfeited]
    if not contenders:
        return Outcome(points, (), base.tiebreak)
    key = {s: (points[s], base.tiebreak[s] if base.tiebreak else 0) for s in contenders}
    best = max(key.values())
    return Outcome(points, tuple(s for s in contenders if key[s] == best), base.tiebreak)
