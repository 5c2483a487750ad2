"""Folding a record into state: genesis, then each command, deterministically.

The fold wraps the engine's state in a ``Table`` that also carries the arbiter's rulings
(notes, score adjustments, forfeits, a voided or closed game).  The state hash is the
sha256 of the table's canonical bytes; the table holds the ``Rng`` and so the seed, which
means a state hash published during a game reveals nothing about hidden cards.

Every command is checked here, in one order, before the game's own rules (``step``):

1. the game is closed: FL-GAME-CLOSED once the arbiter closed or voided it, or the game's
   end rule (BA-END, MM-GAME-OVER, PE-GAME-END) once it ended by its rules;
2. the actor's role: FL-ARBITER-ONLY (``WrongRole``) for a ruling from a seat or a move
   from the arbiter; a ruling then states its reason (FL-RULING-REASON) and names a seat
   of the game (FL-RULING-SEAT), and a score adjustment keeps the seat's total adjustment
   within ADJUSTMENT_LIMIT points (FL-RULING-POINTS);
3. the command is read: it is this game's, from a seat of the game, and well formed
   (``MalformedCommand`` names the field);
4. the seat is to act (the engine's ``to_act``; the refusal cites the game's turn rule);
5. the move's own checks, in the order its ``Move`` lists them; then its effect.

Steps 1, 3, 4 and 5 for a seat's move on a game's own state are ``play``.  The engine is
passed in: a caller looks it up once (``engine_of``) and keeps it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from feastlog.replay import games
from feastlog.replay.games.engine import (
    Engine,
    Fact,
    MalformedCommand,
    Outcome,
    PackError,
    Rule,
    RuleViolation,
    WrongRole,
    catalogue,
    evolve,
    how_many,
)
from feastlog.replay.games.text import plain_number
from feastlog.replay.record.canonical import canonical_bytes, sha256_hex
from feastlog.replay.record.rng import Rng, derive_seed
from feastlog.replay.table import clocks
from feastlog.replay.table.rules import TABLE_RULES
from feastlog.v1 import record_pb2

# The most a seat's score adjustments may add up to, either way: far beyond any game's
# points, and well inside the 32-bit scores of the outcomes projection, so the row that
# ends a game can always be written.
ADJUSTMENT_LIMIT = 1_000_000
SERVER_ACTOR = "server"  # the actor of the rows the server appends (a clock's time-out)

RECORD_RULES: Mapping[str, Rule] = catalogue(
    Rule(
        "FL-GAME-CLOSED",
        "feastlog record",
        "No command is taken once the game has ended, was closed or voided.",
    ),
    Rule("FL-RULING-REASON", "feastlog record", "Every arbiter ruling states its reason."),
    Rule("FL-RULING-SEAT", "feastlog record", "A ruling about a seat names a seat of the game."),
    Rule(
        "FL-RULING-POINTS",
        "feastlog record",
        "Score adjustments keep each seat's total adjustment within ±1,000,000 points.",
    ),
    Rule("FL-ARBITER-ONLY", "feastlog record", "Only the arbiter rules; only seats play."),
    *TABLE_RULES.values(),
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


# Parsed packs by (game kind, sha256): a pack is an immutable value, and a season holds
# thousands of games on the same few packs, so each is parsed and validated once.
_PACKS: dict[tuple[str, str], Any] = {}
_PACKS_LIMIT = 64


def loaded_pack(engine: Engine, pack_bytes: bytes) -> Any:
    """``engine.load_pack(pack_bytes)``, parsed once per pack; PackError for a pack that
    does not load, whatever the reason (a record's pack is whatever its file held)."""
    key = (engine.spec.kind, hashlib.sha256(pack_bytes).hexdigest())
    pack = _PACKS.get(key)
    if pack is None:
        try:
            pack = engine.load_pack(pack_bytes)
        except PackError:
            raise
        except Exception as bad:  # nested past the recursion limit, a value no check foresaw
            why = f"it does not load ({type(bad).__name__}: {bad})"
            raise PackError("(pack)", "(file)", why) from bad
        if len(_PACKS) >= _PACKS_LIMIT:
            _PACKS.clear()
        _PACKS[key] = pack
    return pack


def ruleset_of(genesis: record_pb2.Genesis) -> str:
    """The ruleset version a genesis folds under; ValueError for one this build lacks.

    A genesis naming no version (only hand-built test records) folds under the current one.
    """
    spec = engine_of(genesis).spec
    version = genesis.ruleset_version or spec.ruleset_version
    if version not in spec.rulesets:
        folded = ", ".join(spec.rulesets)
        raise ValueError(f"{spec.title} ruleset {version!r} is not one this build folds ({folded})")
    return version


def start(genesis: record_pb2.Genesis, server_seed: bytes, pack: Any) -> tuple[Table, list[Fact]]:
    """The table after setup, from the genesis row, the server seed and the loaded pack.

    The game seed mixes in the seats' entropy recorded in the genesis, if any (DESIGN 3):
    one entry a seat, in seat order (ValueError for any other count).
    The genesis's ruleset version picks the rules and the defaults of options it omits.
    """
    engine = engine_of(genesis)
    version = ruleset_of(genesis)
    seats = tuple(s.name for s in genesis.seats)
    if genesis.seat_entropy and len(genesis.seat_entropy) != len(seats):
        given = how_many(len(genesis.seat_entropy), "seat")
        raise ValueError(f"the genesis has seat entropy for {given}, not its {len(seats)}")
    rng = Rng(derive_seed(server_seed, tuple(genesis.seat_entropy)))
    game, facts = engine.setup(seats, clocks.game_options(genesis.options), pack, rng, version)
    table = Table(genesis.game_kind, game, (0,) * len(seats))
    return desk.started(engine, table, dict(genesis.options), genesis.created_at), facts


def is_over(engine: Engine, table: Table) -> bool:
    """Whether no more commands are taken: the game ended, or the arbiter closed or voided it."""
    return table.closed or table.voided or engine.is_over(table.game)


def check_open(engine: Engine, table: Table) -> None:
    """Check 1: refuse any command once the game has ended.

    One rule id per refusal: an arbiter's close or void cites FL-GAME-CLOSED; a game that
    ended by its rulebook cites the game's own end rule and names FL-GAME-CLOSED in the
    message, so both rules are cited.
    """
    if table.closed or table.voided:
        raise RuleViolation("FL-GAME-CLOSED", "the arbiter has ended this game")
    _check_not_over(engine, table.game)


def _check_not_over(engine: Engine, state: Any) -> None:
    if engine.is_over(state):
        spec = engine.spec
        raise RuleViolation(
            spec.end_rule,
            f"this game of {spec.title} has ended by its rules: no command is taken "
            "after the end (FL-GAME-CLOSED)",
        )


def check_role(actor: str, command: record_pb2.Command) -> str:
    """Check 2: the actor's role for the command's oneof member (MalformedCommand for none)."""
    which = command.WhichOneof("game")
    if which is None:
        raise MalformedCommand("command", "the command is empty")
    if which == "arbiter" and actor != "arbiter":
        raise WrongRole("FL-ARBITER-ONLY", "only the arbiter rules: rulings need the organiser key")
    if which != "arbiter" and actor == "arbiter":
        raise WrongRole(
            "FL-ARBITER-ONLY", "the arbiter rules; players make the moves, with their seat tokens"
        )
    return which


def step(
    engine: Engine,
    table: Table,
    actor: str,
    command: record_pb2.Command,
    at: desk.At | None = None,
) -> tuple[Table, list[Fact]]:
    """Check one command in the order of this module's docstring and apply it.

    ``at`` is the row's place in its record (its seq, the tables before it): a call, an
    answer or a rewind needs it (``replay/table/desk.py``).
    Raises RuleViolation (``WrongRole`` for the actor's role) or MalformedCommand.
    """
    if table.kind != engine.spec.kind:
        raise ValueError(f"a {table.kind} table folded with the {engine.spec.kind} engine")
    check_open(engine, table)
    which = check_role(actor, command)
    table = desk.before_row(table, at)  # a clocked game's running clocks, up to this row
    mover = None
    if which == "arbiter":
        table, facts = _ruling(engine, table, command.arbiter, at)
    elif which == "call":
        seat = seat_of(actor, len(table.adjustments))
        table, facts = desk.call(engine, table, seat, command.call, at)
    elif which == "clock":
        if actor != SERVER_ACTOR:
            raise WrongRole("FL-CLOCK-SERVER", "only the server records that a seat's time ran out")
        table, facts = desk.time_out(engine, table, command.clock, at)
    elif which != engine.spec.command_field:
        raise MalformedCommand(
            "command", f"this is a {engine.spec.title} game; the command is for {which}"
        )
    else:
        mover = seat_of(actor, len(table.adjustments))
        desk.check_not_held(table)
        game, facts = _move(engine, table.game, mover, getattr(command, which))
        table = evolve(table, game=game)
    return desk.after_row(engine, table, mover, is_over(engine, table)), facts


def _ruling(
    engine: Engine, table: Table, ruling: record_pb2.ArbiterCommand, at: desk.At | None
) -> tuple[Table, list[Fact]]:
    """A ruling: its reason, the call it answers (if any), then its effect."""
    if not ruling.reason.strip():
        raise RuleViolation("FL-RULING-REASON", "a ruling needs a reason")
    answered = desk.check_answer(table, ruling)
    facts: list[Fact]
    if ruling.WhichOneof("ruling") in ("pause_clocks", "resume_clocks"):
        table, facts = desk.pause(table, ruling), [_ruling_fact(ruling)]
    elif ruling.WhichOneof("ruling") == "rewind":
        table, fact = desk.rewind(engine, table, ruling, at)
        facts = [{**_ruling_fact(ruling), "to_seq": int(ruling.rewind.to_seq)}, fact]
    else:
        table, facts = _rule(table, ruling)
    if answered is not None:
        table, said = desk.answer(table, ruling, answered, at)
        facts.append(said)
    return table, facts


def seat_of(actor: str, seats: int) -> int:
    """The seat number of a ``seat:N`` actor; MalformedCommand for a seat the game lacks."""
    number = plain_number(actor.removeprefix("seat:")) if actor.startswith("seat:") else None
    if number is None or number >= seats:
        raise MalformedCommand("actor", f"{actor!r} is not a seat of this game")
    return number


def play(engine: Engine, state: Any, seat: int, command: Message) -> tuple[Any, list[Fact]]:
    """A seat's move on a game's own state: checks 1, 3, 4 and 5 of ``step``, then its effect.

    For a game's state outside a table (tests, bots): the same checks ``step`` runs.
    """
    _check_not_over(engine, state)
    return _move(engine, state, seat, command)


def _move(engine: Engine, state: Any, seat: int, command: Message) -> tuple[Any, list[Fact]]:
    """Checks 3 to 5 for a game still running, then the move's effect."""
    move, args = engine.read(state, command)
    if seat not in engine.to_act(state):
        raise engine.out_of_turn(state, seat)
    move.check(state, seat, args)
    return move.effect(state, seat, args)


def checked_rules(engine: Engine, command: record_pb2.Command) -> list[str]:
    """The rule ids a command is checked against, in the order ``step`` checks them."""
    which = command.WhichOneof("game")
    closed = ["FL-GAME-CLOSED", engine.spec.end_rule, "FL-ARBITER-ONLY"]
    if which == "arbiter":
        ruling = command.arbiter.WhichOneof("ruling")
        seat = ["FL-RULING-SEAT"] if ruling in ("score_adjustment", "forfeit") else []
        points = ["FL-RULING-POINTS"] if ruling == "score_adjustment" else []
        answers = ["FL-CALL-UNKNOWN", "FL-CALL-ANSWERED", "FL-CALL-VERDICT"]
        answers = answers if command.arbiter.answers_call or command.arbiter.verdict else []
        rewind = ["FL-REWIND-TARGET", "FL-REWIND-RULING", "FL-REWIND-NOTHING"]
        rewind = rewind if ruling == "rewind" else []
        return [*closed, "FL-RULING-REASON", *answers, *seat, *points, *rewind]
    if which == "call":
        calls = ["FL-CALL-ROW", "FL-CALL-CLAIM", "FL-CALL-LIMIT", "FL-CALL-SECOND-HOLD"]
        return [*closed, *calls, "FL-CALL-ALTERNATIVE"]
    own = list(engine.checks(getattr(command, which))) if which else []
    return [*closed, *engine.spec.turn_rules, *own]


def legal_commands(engine: Engine, table: Table, actor: str) -> list[Message]:
    """The game's commands ``actor`` may send now: none once it is over, none for the arbiter."""
    if actor == "arbiter" or is_over(engine, table) or desk.holding(table) is not None:
        return []
    return engine.legal_commands(table.game, seat_of(actor, len(table.adjustments)))


def _rule(table: Table, ruling: record_pb2.ArbiterCommand) -> tuple[Table, list[Fact]]:
    """Apply an arbiter ruling; nothing earlier in the record changes."""
    if not ruling.reason.strip():
        raise RuleViolation("FL-RULING-REASON", "a ruling needs a reason")
    which = ruling.WhichOneof("ruling")
    fact = _ruling_fact(ruling)
    seats = len(table.adjustments)
    if which == "note":
        return evolve(table, notes=(*table.notes, ruling.note.text)), [
            {**fact, "text": ruling.note.text}
        ]
    if which == "score_adjustment":
        seat, points = ruling.score_adjustment.seat, ruling.score_adjustment.points
        _check_seat(seat, seats)
        total = table.adjustments[seat] + points
        if abs(total) > ADJUSTMENT_LIMIT:
            raise RuleViolation(
                "FL-RULING-POINTS",
                f"an adjustment of {points:+d} would take seat {seat}'s total adjustment to "
                f"{total:+d}; it stays within ±{ADJUSTMENT_LIMIT:,} points",
            )
        adjusted = tuple(a + points if i == seat else a for i, a in enumerate(table.adjustments))
        return evolve(table, adjustments=adjusted), [{**fact, "seat": seat, "points": points}]
    if which == "forfeit":
        _check_seat(ruling.forfeit.seat, seats)
        forfeited = table.forfeited | {ruling.forfeit.seat}
        return evolve(table, forfeited=forfeited), [{**fact, "seat": ruling.forfeit.seat}]
    if which == "void_game":
        return evolve(table, voided=True), [fact]
    if which == "close_game":
        return evolve(table, closed=True), [fact]
    raise MalformedCommand("command.arbiter.ruling", "the ruling is empty")


def _ruling_fact(ruling: record_pb2.ArbiterCommand) -> Fact:
    """The ``ruling`` fact of any ruling: which, why, who (and the call it answers)."""
    fact: Fact = {"type": "ruling", "ruling": ruling.WhichOneof("ruling"), "reason": ruling.reason}
    if ruling.ruled_by:  # who ruled: recorded since named arbiters; older rulings have none
        fact["ruled_by"] = ruling.ruled_by
    return fact


def _check_seat(seat: int, seats: int) -> None:
    if not 0 <= seat < seats:
        raise RuleViolation("FL-RULING-SEAT", f"there is no seat {seat} in this game")


def outcome(engine: Engine, table: Table) -> Outcome | None:
    """The final result with rulings applied; None for a void game or an unfinished one."""
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


# the table's own rows (replay/table/desk.py), imported last: desk builds on this module's Table
from feastlog.replay.table import desk  # noqa: E402
