"""The record in plain words: one line per fact worth telling, round by round."""

from __future__ import annotations

import json
from collections.abc import Sequence

from feastlog.replay.games import fold
from feastlog.replay.games.engine import Engine, Fact, Viewer
from feastlog.replay.record.history import Folded
from feastlog.replay.record.rows import Row
from feastlog.replay.record.visibility import seen
from feastlog.v1 import record_pb2


def header(genesis: record_pb2.Genesis, engine: Engine) -> list[str]:
    """The opening lines: game, seats, ruleset, seed commitment."""
    seats = ", ".join(f"{s.name} (seat {i})" for i, s in enumerate(genesis.seats))
    supplied = " (seed supplied by the organiser)" if genesis.seed_supplied else ""
    lines = [
        f"{engine.spec.title} — game {genesis.game_id}, ruleset {genesis.ruleset_version}, "
        f"pack {genesis.pack_id}",
        f"Seats: {seats}",
        f"Seed commitment: {genesis.seed_commitment}{supplied}",
    ]
    if genesis.seat_entropy:
        mixed = ", ".join(
            # none: the seat never joined (the arbiter ended the game before it began)
            f"{s.name} {e.hex() or '(none)'}"
            for s, e in zip(genesis.seats, genesis.seat_entropy, strict=True)
        )
        lines.append(f"Seat entropy mixed into the seed: {mixed}")
    return lines


def row_lines(engine: Engine, row: Row, facts: Sequence[Fact], names: Sequence[str]) -> list[str]:
    """The lines one row's facts give."""
    lines = []
    for fact in facts:
        if fact.get("type") == "seed_revealed":
            lines.append(f"Seed revealed: {fact['server_seed']}")
            continue
        if fact.get("type") == "ruling":
            lines.append(_ruling(fact, names))
            continue
        if fact.get("type") in TABLE_FACTS:
            lines.append(_at_the_table(fact, names))
            continue
        text = engine.narrate(fact, names)
        if text:
            lines.append(text)
    return lines


TABLE_FACTS = ("call", "call_answered", "rewound", "clock_timeout")  # replay/table/desk.py's


def _at_the_table(fact: Fact, names: Sequence[str]) -> str:
    """A call to the arbiter, its answer, or a rewind, in words."""
    seat = int(fact.get("seat", -1))
    who = names[seat] if 0 <= seat < len(names) else f"seat {seat}"
    if fact["type"] == "call":
        hold = ", holding the game" if fact.get("hold") else ""
        return f"{who} calls the arbiter about seq {fact['about_seq']}{hold}: {fact['claim']}"
    if fact["type"] == "clock_timeout":
        forfeits = " and forfeits" if fact["consequence"] == "forfeit" else ""
        return f"{who}'s time runs out{forfeits}: the arbiter is called, the game held"
    if fact["type"] == "call_answered":
        return f"{who}'s call at seq {fact['call']} is {fact['verdict']}: {fact['reason']}"
    return (
        f"The game goes back to its state after seq {fact['to_seq']}: the seats' moves of "
        f"seqs {fact['superseded_from']} to {fact['superseded_to']} are superseded (they stay "
        "in the record; calls and rulings stand)"
    )


def _ruling(fact: Fact, names: Sequence[str]) -> str:
    who = names[int(fact["seat"])] if "seat" in fact else ""
    what = {
        "note": f"note: {fact.get('text', '')}",
        "score_adjustment": f"{who} {int(fact.get('points', 0)):+d} points",
        "forfeit": f"{who} forfeits",
        "void_game": "the game is void",
        "close_game": "the game is closed",
        "rewind": f"rewind to seq {fact.get('to_seq', '?')}",
        "pause_clocks": "every clock paused",
        "resume_clocks": "the clocks run again",
    }.get(str(fact["ruling"]), str(fact["ruling"]))
    by = f" by {fact['ruled_by']}" if fact.get("ruled_by") else ""
    return f"Arbiter ruling{by}: {what} (reason: {fact['reason']})"


def check_viewer(genesis: record_pb2.Genesis, viewer: Viewer) -> None:
    """ValueError, in words, for a seat the game does not have."""
    seats = len(genesis.seats)
    if viewer.role == "seat" and not 0 <= (viewer.seat or 0) < seats:
        named = ", ".join(f"seat:{i} ({s.name})" for i, s in enumerate(genesis.seats))
        raise ValueError(f"there is no seat {viewer.seat} in this game; its seats are {named}")


def as_seen_then(folded: Folded, at: int | None, viewer: Viewer) -> list[str]:
    """The game up to seq ``at`` as ``viewer`` saw it then, and the table after ``at``.

    What a seat saw then: the facts it was shown while the game ran (its own private ones,
    not the others'), and the table with its own hand and the others' counts; the seed
    reveal row was public to everyone (``replay.record.visibility``).  ValueError for an unknown
    seat or seq.
    """
    genesis = folded.genesis
    check_viewer(genesis, viewer)
    last = len(folded.rows) if at is None else at
    if not 1 <= last <= len(folded.rows):
        raise ValueError(f"seq {last} is not in this record: it has seqs 1 to {len(folded.rows)}")
    engine = fold.engine_of(genesis)
    names = [s.name for s in genesis.seats]
    lines = header(genesis, engine)
    steps = [seen(folded, seq, viewer) for seq in range(1, last + 1)]
    for step in steps:
        lines += row_lines(engine, step.row, step.facts, names)
    lines.append(f"-- the table after seq {last}, as {viewer} saw it --")
    return lines + json.dumps(steps[-1].view, indent=1, sort_keys=True).splitlines()
