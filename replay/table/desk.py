"""At the table: calls to the arbiter, holds, answers and rewinds, folded like any row.

A game's table (``fold.Table``) gains a ``Desk`` the first time something happens at the
table: a seat calls the arbiter (``SeatCall``), a ruling answers a call, the arbiter
rewinds the game.  Until then the table is the plain ``Table`` it always was, so every
record written before these rows existed keeps its state hashes byte for byte; from that
row on it is a ``SeatedTable`` (the same fields, and ``desk``), whose canonical JSON has
one more key, ``"desk"`` (docs/record-format.md, "At the table").

Rules, each with its id (``RULES``), checked in this order:

- a call (from a seat): FL-CALL-ROW (the row it is about exists: 1 to the last seq),
  FL-CALL-CLAIM (a claim in words), FL-CALL-LIMIT (at most ``OPEN_CALLS`` open calls a
  seat), FL-CALL-SECOND-HOLD (one hold at a time), FL-CALL-ALTERNATIVE (an alternative is
  a command of this game);
- a seat's move: FL-CALL-HOLD while a call holds the game;
- a ruling that answers a call: FL-CALL-UNKNOWN (the call exists), FL-CALL-ANSWERED (it
  is still open), FL-CALL-VERDICT (upheld or denied, exactly when a call is answered);
- a rewind: FL-REWIND-TARGET (to a row before this one), FL-REWIND-RULING (not before an
  earlier rewind: that would abandon the ruling), FL-REWIND-NOTHING (a seat move follows
  the target).

A rewind to seq N puts the game's own state back to what it was after row N (its RNG
counters included, so the same cards come next); the arbiter's rulings and the calls
made since stand, and the seat moves between N and the ruling stay in the record,
superseded by it (``superseded``).  Nothing here reads a clock or does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from feastlog.replay.games.engine import (
    Engine,
    Fact,
    MalformedCommand,
    RuleViolation,
    evolve,
)
from feastlog.replay.games.fold import Table, play
from feastlog.replay.record.rows import COMMAND, Row
from feastlog.replay.table import clocks as timing
from feastlog.replay.table.rules import OPEN_CALLS, TABLE_RULES
from feastlog.v1 import record_pb2

UPHELD = "upheld"
DENIED = "denied"
VERDICTS = {record_pb2.CALL_VERDICT_UPHELD: UPHELD, record_pb2.CALL_VERDICT_DENIED: DENIED}


RULES = TABLE_RULES


@dataclass(frozen=True)
class Call:
    """A seat's call to the arbiter; ``seq`` (its row) is its id."""

    seq: int
    seat: int
    about_seq: int
    claim: str
    hold: bool
    verdict: str = ""  # "" while open, then "upheld" or "denied"
    answered_seq: int = 0
    ruled_by: str = ""
    reason: str = ""

    @property
    def open(self) -> bool:
        """Whether the arbiter has not answered it yet."""
        return not self.verdict


@dataclass(frozen=True)
class Rewound:
    """A rewind ruling at ``seq``: the game went back to its state after ``to_seq``."""

    seq: int
    to_seq: int


@dataclass(frozen=True)
class Desk:
    """What happened at the table: the calls and the rewinds, in record order, and the
    seats' clocks (``replay/table/clocks.py``) in a game that has them."""

    calls: tuple[Call, ...] = ()
    rewinds: tuple[Rewound, ...] = ()
    clocks: timing.Clocks | None = None


@dataclass(frozen=True)
class SeatedTable(Table):
    """A table once something happened at it: a ``Table`` with its ``desk``."""

    desk: Desk = field(default_factory=Desk)


@dataclass(frozen=True)
class At:
    """Where a row is folded: its seq, the tables after every row before it (``earlier[i]``
    after seq i + 1), and its ``recorded_at`` (what a game's clocks read)."""

    seq: int
    earlier: Sequence[Table]
    recorded_at: str = ""


def desk_of(table: Table) -> Desk:
    """The table's desk (empty for a plain table)."""
    return table.desk if isinstance(table, SeatedTable) else Desk()


def seated(table: Table, desk: Desk) -> SeatedTable:
    """The table with ``desk``: a ``SeatedTable`` from now on."""
    if isinstance(table, SeatedTable):
        return evolve(table, desk=desk)
    return SeatedTable(
        table.kind,
        table.game,
        table.adjustments,
        table.forfeited,
        table.voided,
        table.closed,
        table.notes,
        desk,
    )


def holding(table: Table) -> Call | None:
    """The open call that holds the game, if any."""
    return next((c for c in desk_of(table).calls if c.open and c.hold), None)


def check_not_held(table: Table) -> None:
    """FL-CALL-HOLD: no seat moves while a call holds the game."""
    held = holding(table)
    if held is not None:
        raise RuleViolation(
            "FL-CALL-HOLD",
            f"the game is held by seat {held.seat}'s call at seq {held.seq} (about seq "
            f"{held.about_seq}): no move is taken until the arbiter answers it",
        )


def _need(at: At | None) -> At:
    if at is None:
        raise ValueError("a call or a rewind is folded at its place in a record")
    return at


def call(
    engine: Engine, table: Table, seat: int, made: record_pb2.SeatCall, at: At | None
) -> tuple[Table, list[Fact]]:
    """A seat calls the arbiter (the checks of the module docstring, in order)."""
    at = _need(at)
    if not 1 <= made.about_seq < at.seq:
        raise RuleViolation(
            "FL-CALL-ROW",
            f"there is no row {made.about_seq} to call about: the record's rows are 1 to "
            f"{at.seq - 1}",
        )
    claim = made.claim.strip()
    if not claim:
        raise RuleViolation("FL-CALL-CLAIM", "a call says what it claims: the claim is empty")
    desk = desk_of(table)
    mine = [c for c in desk.calls if c.seat == seat and c.open]
    if len(mine) >= OPEN_CALLS:
        raise RuleViolation(
            "FL-CALL-LIMIT",
            f"seat {seat} already has {len(mine)} calls open: wait for the arbiter's answers",
        )
    held = holding(table)
    if made.hold and held is not None:
        raise RuleViolation(
            "FL-CALL-SECOND-HOLD",
            f"the game is already held by the call at seq {held.seq}: call without holding, "
            "or wait for its answer",
        )
    if made.HasField("alternative"):
        which = made.alternative.WhichOneof("game")
        if which != engine.spec.command_field:
            raise RuleViolation(
                "FL-CALL-ALTERNATIVE",
                f"the alternative is not a {engine.spec.title} command",
            )
    new = Call(at.seq, seat, int(made.about_seq), claim, made.hold)
    fact: Fact = {
        "type": "call",
        "call": at.seq,
        "seat": seat,
        "about_seq": int(made.about_seq),
        "claim": claim,
        "hold": made.hold,
    }
    return seated(table, evolve(desk, calls=(*desk.calls, new))), [fact]


def check_answer(table: Table, ruling: record_pb2.ArbiterCommand) -> Call | None:
    """The open call a ruling answers (None when it answers none), or the refusal."""
    verdict = VERDICTS.get(ruling.verdict)
    if not ruling.answers_call:
        if ruling.verdict:
            raise RuleViolation(
                "FL-CALL-VERDICT", "a verdict answers a call: name the call it answers"
            )
        return None
    found = next((c for c in desk_of(table).calls if c.seq == ruling.answers_call), None)
    if found is None:
        raise RuleViolation(
            "FL-CALL-UNKNOWN", f"there is no call at seq {ruling.answers_call} to answer"
        )
    if not found.open:
        raise RuleViolation(
            "FL-CALL-ANSWERED",
            f"the call at seq {found.seq} was already {found.verdict} at seq {found.answered_seq}",
        )
    if verdict is None:
        raise RuleViolation(
            "FL-CALL-VERDICT", f"answering the call at seq {found.seq} needs upheld or denied"
        )
    return found


def answer(
    table: Table, ruling: record_pb2.ArbiterCommand, answered: Call, at: At | None
) -> tuple[Table, Fact]:
    """The call answered by this ruling (checked by ``check_answer``): the table and fact."""
    at = _need(at)
    desk = desk_of(table)
    done = evolve(
        answered,
        verdict=VERDICTS[ruling.verdict],
        answered_seq=at.seq,
        ruled_by=ruling.ruled_by,
        reason=ruling.reason,
    )
    calls = tuple(done if c.seq == answered.seq else c for c in desk.calls)
    fact: Fact = {
        "type": "call_answered",
        "call": answered.seq,
        "seat": answered.seat,
        "verdict": done.verdict,
        "reason": ruling.reason,
    }
    return seated(table, evolve(desk, calls=calls)), fact


def check_rewind(engine: Engine, table: Table, to_seq: int, at: At) -> None:
    """The rewind's checks, in order (the module docstring)."""
    if not 1 <= to_seq < at.seq:
        raise RuleViolation(
            "FL-REWIND-TARGET",
            f"a rewind goes back to a row of the record before it (1 to {at.seq - 1}), "
            f"not to seq {to_seq}",
        )
    rewinds = desk_of(table).rewinds
    if rewinds and to_seq < rewinds[-1].seq:
        last = rewinds[-1]
        raise RuleViolation(
            "FL-REWIND-RULING",
            f"seq {to_seq} is before the rewind at seq {last.seq} (to seq {last.to_seq}): "
            f"going back there would abandon that ruling; rewind to seq {last.seq} or later",
        )
    target = at.earlier[to_seq - 1]
    if all(t.game is target.game for t in at.earlier[to_seq:]) and table.game is target.game:
        raise RuleViolation(
            "FL-REWIND-NOTHING",
            f"no seat has moved since seq {to_seq}: there is nothing to take back",
        )


def rewind(
    engine: Engine, table: Table, ruling: record_pb2.ArbiterCommand, at: At | None
) -> tuple[Table, Fact]:
    """The game back to its state after ``ruling.rewind.to_seq``; rulings and calls stand."""
    at = _need(at)
    to_seq = int(ruling.rewind.to_seq)
    check_rewind(engine, table, to_seq, at)
    desk = desk_of(table)
    back = evolve(table, game=at.earlier[to_seq - 1].game)
    fact: Fact = {
        "type": "rewound",
        "to_seq": to_seq,
        "superseded_from": to_seq + 1,
        "superseded_to": at.seq - 1,
    }
    return seated(back, evolve(desk, rewinds=(*desk.rewinds, Rewound(at.seq, to_seq)))), fact


def is_table_move(row: Row) -> bool:
    """Whether a command row is a seat's game move or a clock row: what a rewind supersedes.

    Read from the actor, and from the body only to tell a seat's call from its move, so
    it holds for a row whose body its reader may not see (a sealed move: no call)."""
    if row.actor == "server":
        return True
    if not row.actor.startswith("seat:"):
        return False
    return record_pb2.Command.FromString(row.body).WhichOneof("game") != "call"


def superseded(rows: Sequence[Row]) -> dict[int, int]:
    """Every superseded row of a record: its seq → the seq of the rewind that abandoned it.

    A rewind ruling at seq R to seq N supersedes every seat move (and clock row) of seqs
    N + 1 to R − 1; rulings and calls stand.
    """
    found: dict[int, int] = {}
    for row in rows:
        if row.kind != COMMAND or row.actor != "arbiter":
            continue
        command = record_pb2.Command.FromString(row.body)
        if command.arbiter.WhichOneof("ruling") != "rewind":
            continue
        for earlier in rows[int(command.arbiter.rewind.to_seq) : row.seq - 1]:
            if earlier.kind == COMMAND and earlier.seq not in found and is_table_move(earlier):
                found[earlier.seq] = row.seq
    return found


def calls_of(table: Table) -> tuple[Call, ...]:
    """The calls of a game, in record order."""
    return desk_of(table).calls


def call_dict(game_id: str, found: Call) -> dict[str, Any]:
    """A call as plain data (the queue's entry)."""
    return {
        "game_id": game_id,
        "call": found.seq,
        "seat": found.seat,
        "about_seq": found.about_seq,
        "claim": found.claim,
        "hold": found.hold,
        "state": found.verdict or "open",
        "answered_seq": found.answered_seq,
        "ruled_by": found.ruled_by,
        "reason": found.reason,
    }


def malformed_member(which: str) -> MalformedCommand:
    """A table member a build cannot fold."""
    return MalformedCommand("command", f"the {which} command is not one this table takes")


def started(engine: Engine, table: Table, options: dict[str, str], created_at: str) -> Table:
    """The table after setup, with its clocks when the game has the option (SetupRefused
    FL-CLOCK-OPTION for one out of form or range)."""
    found = timing.parse(options, len(table.adjustments), created_at)
    if found is None:
        return table
    found = timing.restarted(engine, found, table.game, None, False, False)
    return seated(table, Desk(clocks=found))


def before_row(table: Table, at: At | None) -> Table:
    """The table with every running clock charged up to this row's time."""
    found = desk_of(table).clocks
    if found is None or at is None or not at.recorded_at:
        return table
    charged = timing.charged(found, timing.time_ms(at.recorded_at))
    return seated(table, evolve(desk_of(table), clocks=charged))


def after_row(engine: Engine, table: Table, mover: int | None, over: bool) -> Table:
    """The table with its clocks restarted after a row (``mover``: a seat's game move)."""
    found = desk_of(table).clocks
    if found is None:
        return table
    stopped = holding(table) is not None
    again = timing.restarted(engine, found, table.game, mover, stopped, over)
    return seated(table, evolve(desk_of(table), clocks=again))


def _clocks_of(table: Table) -> timing.Clocks:
    found = desk_of(table).clocks
    if found is None:
        raise RuleViolation("FL-CLOCK-NONE", "this game has no clocks")
    return found


def default_move(engine: Engine, game: object, seat: int) -> Message | None:
    """The seat's legal pass (a move named ``pass…``, such as Picky Eaters' pass for the
    round), the default move a time-out plays with ``clock_timeout=pass``; None when the
    rulebook gives the seat none now."""
    for inner in engine.legal_commands(game, seat):
        oneofs = inner.DESCRIPTOR.oneofs
        member = inner.WhichOneof(oneofs[0].name) if oneofs else None
        if member is not None and member.startswith("pass"):
            return inner
    return None


def time_out(
    engine: Engine, table: Table, event: record_pb2.ClockEvent, at: At | None
) -> tuple[Table, list[Fact]]:
    """A seat's time ran out: the consequence of the game's clock option.  ``pass``: the
    seat's default move, when it has one (its clock keeps running); otherwise, and with
    ``arbiter`` or ``forfeit``, a call that holds the game for the arbiter (the seat plays
    on without a clock; ``forfeit`` forfeits it)."""
    at = _need(at)
    found = _clocks_of(table)
    if event.WhichOneof("event") != "timeout":
        raise MalformedCommand("command.clock", "the clock row holds no event")
    seat = event.timeout.seat
    timing.check_timeout(found, seat)
    desk = desk_of(table)
    default = default_move(engine, table.game, seat) if found.on_timeout == "pass" else None
    if default is not None:
        game, facts = play(engine, table.game, seat, default)  # the fold's checks, then it
        fact: Fact = {"type": "clock_timeout", "seat": seat, "consequence": "pass"}
        return evolve(table, game=game), [fact, *facts]
    consequence = "arbiter" if found.on_timeout == "pass" else found.on_timeout
    claim = f"seat {seat}'s time ran out ({consequence}: FL-CLOCK-TIMEOUT)"
    held = Call(at.seq, seat, at.seq - 1, claim, True)
    spent = evolve(found, timed_out=(*found.timed_out, seat))
    forfeited = table.forfeited | {seat} if consequence == "forfeit" else table.forfeited
    out = seated(
        evolve(table, forfeited=forfeited),
        evolve(desk, calls=(*desk.calls, held), clocks=spent),
    )
    fact = {"type": "clock_timeout", "seat": seat, "consequence": consequence}
    return out, [fact]


def pause(table: Table, ruling: record_pb2.ArbiterCommand) -> Table:
    """The arbiter pauses or resumes every clock (FL-CLOCK-NONE, FL-CLOCK-PAUSED)."""
    found = _clocks_of(table)
    paused = ruling.WhichOneof("ruling") == "pause_clocks"
    if found.paused == paused:
        state = "paused" if paused else "running"
        raise RuleViolation("FL-CLOCK-PAUSED", f"the clocks are already {state}")
    return seated(table, evolve(desk_of(table), clocks=evolve(found, paused=paused)))
