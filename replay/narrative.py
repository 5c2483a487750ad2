"""The record in plain words: one line per fact worth telling, round by round."""

from __future__ import annotations

from collections.abc import Sequence

from feastlog.v1 import record_pb2
from replay.engine import Engine, Fact
from replay.record import Row


def header(genesis: record_pb2.Genesis, engine: Engine) -> list[str]:
    """The opening lines: game, seats, ruleset, seed commitment."""
    seats = ", ".join(f"{s.name} (seat {i})" for i, s in enumerate(genesis.seats))
    supplied = " (seed supplied by the organiser)" if genesis.seed_supplied else ""
    lines = [
        f"{engine.title} — game {genesis.game_id}, ruleset {genesis.ruleset_version}, "
        f"pack {genesis.pack_id}",
        f"Seats: {seats}",
        f"Seed commitment: {genesis.seed_commitment}{supplied}",
    ]
    if genesis.seat_entropy:
        mixed = ", ".join(
            f"{s.name} {e.hex()}" for s, e in zip(genesis.seats, genesis.seat_entropy, strict=True)
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
        text = engine.narrate(fact, names)
        if text:
            lines.append(text)
    return lines


def _ruling(fact: Fact, names: Sequence[str]) -> str:
    who = names[int(fact["seat"])] if "seat" in fact else ""
    what = {
        "note": f"note: {fact.get('text', '')}",
        "score_adjustment": f"{who} {int(fact.get('points', 0)):+d} points",
        "forfeit": f"{who} forfeits",
        "void_game": "the game is void",
        "close_game": "the game is closed",
    }.get(str(fact["ruling"]), str(fact["ruling"]))
    return f"Arbiter ruling: {what} (reason: {fact['reason']})"
