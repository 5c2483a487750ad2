"""Seat clocks, folded from the times recorded in rows (docs/table.md, "Clocks").

A game created with the option ``clock`` runs a clock for every seat that has to act:

- ``clock=bank:SECONDS+INCREMENT`` — each seat has a bank of SECONDS; the time a seat
  spends to act is taken from it, and INCREMENT seconds are added after each of its moves;
- ``clock=move:SECONDS`` — each seat has SECONDS for every move, afresh each time it is to
  act.

``clock_timeout`` says what a time-out brings: ``arbiter`` (the default: a call that holds
the game, which the arbiter answers), ``forfeit`` (the seat forfeits, and the same held
call asks the arbiter how play goes on) or ``pass`` (the seat's default move where the
rulebook gives one, such as Picky Eaters' pass; where it gives none, ``arbiter``).

The time is the rows' own ``recorded_at`` (RFC 3339, read to the millisecond): before each
row, every running seat is charged the time since the row before; a clock runs only while
its seat is to act (in a simultaneous phase, such as sealed bids, every seat still to
act), and no clock runs while the arbiter has paused them or a call holds the game.  A
time-out is a row the server appends (actor ``server``, ``ClockEvent.timeout``) once a
seat's time is spent; the fold checks that it is (FL-CLOCK-EARLY).  Nothing here reads a
clock: the same record always folds to the same clocks.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass

from feastlog.replay.games.engine import Engine, RuleViolation, SetupRefused, evolve

OPTIONS = ("clock", "clock_timeout")  # the table's own options, not a game's
CONSEQUENCES = ("arbiter", "forfeit", "pass")
BANK = re.compile(r"bank:(\d{1,6})\+(\d{1,5})")
MOVE = re.compile(r"move:(\d{1,6})")
LIMITS = {"bank": (10, 86_400), "increment": (0, 3_600), "move": (5, 86_400)}  # seconds
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Clocks:
    """Every seat's clock after a row (times in milliseconds)."""

    mode: str  # "bank" or "move"
    allowance_ms: int  # the bank, or the time for one move
    increment_ms: int
    on_timeout: str
    remaining_ms: tuple[int, ...]
    used_ms: tuple[int, ...]
    running: tuple[int, ...]  # the seats whose clock runs (to act, not paused, not held)
    since_ms: int  # the time of the last row
    to_act: tuple[int, ...] = ()  # the seats to act after the last row
    paused: bool = False
    timed_out: tuple[int, ...] = ()


def game_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options a game's engine reads: all but the table's own."""
    return {k: v for k, v in options.items() if k not in OPTIONS}


def _seconds(kind: str, text: str) -> int:
    low, high = LIMITS[kind]
    value = int(text)
    if not low <= value <= high:
        raise SetupRefused(
            "FL-CLOCK-OPTION",
            "options",
            f"the clock's {kind} is {value} seconds; it takes {low} to {high}",
        )
    return value * 1000


def parse(options: Mapping[str, str], seats: int, created_at: str) -> Clocks | None:
    """The clocks a game starts with (None without the option); SetupRefused (rule
    FL-CLOCK-OPTION, field ``options``) for an option out of form or range."""
    text = options.get("clock", "")
    on_timeout = options.get("clock_timeout", "arbiter")
    if not text:
        if "clock_timeout" in options:
            raise SetupRefused("FL-CLOCK-OPTION", "options", "clock_timeout needs a clock")
        return None
    if on_timeout not in CONSEQUENCES:
        raise SetupRefused(
            "FL-CLOCK-OPTION",
            "options",
            f"clock_timeout is {on_timeout!r}; it is one of {', '.join(CONSEQUENCES)}",
        )
    bank, move = BANK.fullmatch(text), MOVE.fullmatch(text)
    if bank:
        mode, allowance, increment = (
            "bank",
            _seconds("bank", bank[1]),
            _seconds("increment", bank[2]),
        )
    elif move:
        mode, allowance, increment = "move", _seconds("move", move[1]), 0
    else:
        raise SetupRefused(
            "FL-CLOCK-OPTION",
            "options",
            f"clock is {text!r}: write bank:SECONDS+INCREMENT (bank:600+5) or move:SECONDS",
        )
    return Clocks(
        mode,
        allowance,
        increment,
        on_timeout,
        (allowance,) * seats,
        (0,) * seats,
        (),
        time_ms(created_at),
    )


def time_ms(recorded_at: str) -> int:
    """Milliseconds since 1970 of an RFC 3339 UTC time; RuleViolation FL-CLOCK-TIME for
    another text (a clocked game reads its rows' times)."""
    try:
        when = datetime.datetime.fromisoformat(recorded_at)
    except ValueError:
        raise RuleViolation("FL-CLOCK-TIME", f"{recorded_at!r} is not an RFC 3339 time") from None
    if when.tzinfo is None:
        raise RuleViolation("FL-CLOCK-TIME", f"{recorded_at!r} names no time zone")
    return (when - EPOCH) // datetime.timedelta(milliseconds=1)


def charged(clocks: Clocks, at_ms: int) -> Clocks:
    """Before a row at ``at_ms``: every running seat is charged the time since the last."""
    spent = max(0, at_ms - clocks.since_ms)
    remaining = tuple(
        r - spent if s in clocks.running else r for s, r in enumerate(clocks.remaining_ms)
    )
    used = tuple(u + spent if s in clocks.running else u for s, u in enumerate(clocks.used_ms))
    return evolve(
        clocks, remaining_ms=remaining, used_ms=used, since_ms=max(at_ms, clocks.since_ms)
    )


def restarted(
    engine: Engine, clocks: Clocks, game: object, mover: int | None, stopped: bool, over: bool
) -> Clocks:
    """After a row: the mover's increment (bank), a fresh allowance (move) for each seat
    newly to act or to act again, and which clocks run now: those of the seats to act,
    but none while ``stopped`` (paused, or a call holds the game), and never a seat's whose
    time ran out (it plays on without a clock)."""
    to_act = () if over else tuple(sorted(engine.to_act(game)))
    remaining = list(clocks.remaining_ms)
    if mover is not None and clocks.mode == "bank":
        remaining[mover] += clocks.increment_ms
    if clocks.mode == "move":
        for seat in to_act:
            if seat not in clocks.to_act or seat == mover:
                remaining[seat] = clocks.allowance_ms
    running = tuple(s for s in to_act if s not in clocks.timed_out)
    return evolve(
        clocks,
        remaining_ms=tuple(remaining),
        to_act=to_act,
        running=() if stopped or clocks.paused else running,
    )


def deadline(clocks: Clocks) -> tuple[int, int] | None:
    """The first running seat to run out, and when (ms); None when no clock runs."""
    if not clocks.running:
        return None
    seat = min(clocks.running, key=lambda s: (clocks.remaining_ms[s], s))
    return seat, clocks.since_ms + max(0, clocks.remaining_ms[seat])


def check_timeout(clocks: Clocks, seat: int) -> None:
    """FL-CLOCK-EARLY: a time-out only for a running seat whose time is spent."""
    if seat not in clocks.running:
        raise RuleViolation("FL-CLOCK-EARLY", f"seat {seat}'s clock is not running")
    if clocks.remaining_ms[seat] > 0:
        raise RuleViolation(
            "FL-CLOCK-EARLY",
            f"seat {seat} has {clocks.remaining_ms[seat]} ms left: its time has not run out",
        )


def as_dict(clocks: Clocks, now_ms: int | None = None) -> dict[str, object]:
    """The clocks as plain data; with ``now_ms``, the running seats charged up to then."""
    shown = charged(clocks, now_ms) if now_ms is not None else clocks
    return {
        "mode": shown.mode,
        "allowance_ms": shown.allowance_ms,
        "increment_ms": shown.increment_ms,
        "on_timeout": shown.on_timeout,
        "remaining_ms": list(shown.remaining_ms),
        "used_ms": list(shown.used_ms),
        "running": list(shown.running),
        "to_act": list(shown.to_act),
        "paused": shown.paused,
        "timed_out": list(shown.timed_out),
    }
