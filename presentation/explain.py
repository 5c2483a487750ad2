"""Explaining one row of a record, and what-if: another command at the same point.

``explain`` says what a row was (the command, who sent it, when), every rule it was
checked against in the order the fold checks them (id, rulebook section and text), the
values the fold computed (the facts: bid breakdowns, tie-break rounds, costs, scoring),
the state change, and what each viewer could see at that moment.  ``what_if`` evaluates
an alternative command against the table before a seq; nothing is written anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from feastlog.presentation.narrative import row_lines
from feastlog.replay.games import fold
from feastlog.replay.games.engine import (
    ARBITER,
    Engine,
    Fact,
    MalformedCommand,
    Rule,
    RuleViolation,
    Viewer,
)
from feastlog.replay.games.fold import RECORD_RULES, Table, state_hash
from feastlog.replay.games.text import plain_number
from feastlog.replay.record.rows import COMMAND, GENESIS, Row
from feastlog.replay.record.visibility import (
    Record,
    command_for,
    facts_for,
    public_row,
    sees_fact,
    viewers_of,
)
from feastlog.replay.table import desk
from feastlog.v1 import record_pb2

MAX_CHANGES = 200


def rule_entry(engine: Engine, rule_id: str) -> dict[str, str]:
    """A rule id with its rulebook section and text."""
    rule: Rule | None = engine.spec.rules.get(rule_id) or RECORD_RULES.get(rule_id)
    if rule is None:
        return {"rule_id": rule_id, "section": "", "text": ""}
    return {"rule_id": rule.id, "section": rule.section, "text": rule.text}


def message_dict(message: Message) -> dict[str, Any]:
    """A protobuf message as JSON-able data (field names as in the .proto)."""
    out: dict[str, Any] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return out


def changes(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """The leaves that differ between two JSON-able values, with their paths."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(set(before) | set(after), key=str):
            out += changes(before.get(key), after.get(key), f"{path}.{key}" if path else key)
        return out[:MAX_CHANGES]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        out = []
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            out += changes(b, a, f"{path}[{i}]")
        return out[:MAX_CHANGES]
    return [{"path": path, "before": before, "after": after}]


def table_view(engine: Engine, table: Table, viewer: Viewer) -> dict[str, Any]:
    """The table as ``viewer`` may see it: the game's view and the arbiter's rulings."""
    return {
        **engine.view(table.game, viewer),
        "rulings": {
            "notes": list(table.notes),
            "adjustments": list(table.adjustments),
            "forfeited": sorted(table.forfeited),
            "voided": table.voided,
            "closed": table.closed,
        },
    }


def explain(record: Record, seq: int) -> dict[str, Any]:
    """Everything about row ``seq``: command, checks, values, state change, visibility."""
    genesis = record.genesis
    engine = fold.engine_of(genesis)
    names = [s.name for s in genesis.seats]
    row, facts = record.rows[seq - 1], list(record.facts[seq - 1])
    after = record.tables[seq - 1]
    out: dict[str, Any] = {
        "game_id": genesis.game_id,
        "seq": seq,
        "kind": row.kind,
        "actor": row.actor,
        "actor_name": _actor_name(row.actor, names),
        "command_id": row.command_id,
        "recorded_at": row.recorded_at,
        "hash": row.hash,
        "state_hash": row.state_hash,
        "checks": [],
        "facts": facts,
        "narrative": row_lines(engine, row, facts, names),
    }
    if row.kind == COMMAND:
        command = record_pb2.Command.FromString(row.body)
        out["command"] = message_dict(command)
        out["checks"] = [
            {**rule_entry(engine, r), "result": "passed"}
            for r in fold.checked_rules(engine, command)
        ]
    elif row.kind == GENESIS:
        out["command"] = message_dict(genesis)
    before_view = table_view(engine, record.tables[seq - 2], ARBITER) if seq > 1 else {}
    out["state_change"] = changes(before_view, table_view(engine, after, ARBITER))
    out["visibility"] = [_seen_by(engine, row, facts, names, v) for v in viewers_of(len(names))]
    by = desk.superseded(record.rows).get(seq)
    if by is not None:  # a rewind took it back: it stays, checked in its place, abandoned
        out["superseded_by"] = by
    return out


def _seen_by(
    engine: Engine, row: Row, facts: list[Fact], names: list[str], viewer: Viewer
) -> dict[str, Any]:
    """What ``viewer`` could see of a row when it was written."""
    public = public_row(row)
    shown = facts_for(viewer, facts, public)
    return {
        "viewer": str(viewer),
        "command": row.kind != COMMAND or command_for(viewer, engine, row, public) is not None,
        "facts": [i for i, f in enumerate(facts) if sees_fact(viewer, f, public)],
        "narrative": row_lines(engine, row, shown, names),
    }


def _actor_name(actor: str, names: Sequence[str]) -> str:
    """A seat actor's player name, or the actor itself."""
    seat = plain_number(actor[5:]) if actor.startswith("seat:") else None
    return names[seat] if seat is not None and seat < len(names) else actor


def what_if(record: Record, seq: int, actor: str, command: record_pb2.Command) -> dict[str, Any]:
    """``command`` by ``actor`` in place of row ``seq``: legal or not, and what it would do."""
    genesis = record.genesis
    engine = fold.engine_of(genesis)
    names = [s.name for s in genesis.seats]
    before = record.tables[seq - 2]
    out: dict[str, Any] = {"game_id": genesis.game_id, "seq": seq, "actor": actor}
    out["command"] = message_dict(command)
    out["checks"] = [rule_entry(engine, r) for r in fold.checked_rules(engine, command)]
    try:
        at = desk.At(seq, record.tables[: seq - 1], record.rows[seq - 1].recorded_at)
        after, facts = fold.step(engine, before, actor, command, at)
    except RuleViolation as broken:
        return {
            **out,
            "legal": False,
            **rule_entry(engine, broken.rule_id),
            "message": broken.message,
        }
    except MalformedCommand as bad:
        return {**out, "legal": False, "rule_id": "", "field": bad.field, "message": bad.message}
    fake = Row(genesis.game_id, seq, COMMAND, actor, "", b"", "", "", "", "")
    return {
        **out,
        "legal": True,
        "facts": facts,
        "narrative": row_lines(engine, fake, facts, names),
        "state_hash": state_hash(after),
        "state_change": changes(
            table_view(engine, before, ARBITER), table_view(engine, after, ARBITER)
        ),
    }
