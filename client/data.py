"""Replies as plain data: dicts and lists of JSON types, numbers as numbers (int64 and
whole doubles as ints), the form the CLI prints and ``--json`` writes.  Each reader takes
the reply (or the part of it) that ``Client``'s methods return."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from google.protobuf import json_format, struct_pb2

from feastlog.replay.proof.signed import Cosignature, TreeHead
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import seat_link_service_pb2 as slpb
from feastlog.v1 import table_service_pb2 as tabpb
from feastlog.v1 import tournament_service_pb2 as tpb


def as_dict(message: Any) -> dict[str, Any]:
    """A protobuf Struct as a dict, whole numbers back as ints (Struct carries doubles).

    What ``json_format.MessageToDict`` gives, whole numbers then made ints, in about half
    its time: every row of a replay carries its view and facts as Structs.
    """
    return {key: _plain(value) for key, value in message.fields.items()}


def _plain(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return {key: _plain(item) for key, item in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_plain(item) for item in value.list_value.values]
    if kind == "number_value":
        number = value.number_value
        if math.isinf(number) or math.isnan(number):  # as MessageToDict refuses them
            raise ValueError(f"a Struct holds {number}, which JSON cannot")
        return int(number) if number.is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None  # null, or a Value never set (as MessageToDict reads it)


def message(reply: Any, defaults: bool = True) -> dict[str, Any]:
    """Any message as data, by its fields' proto names (with their defaults too)."""
    found: dict[str, Any] = json_format.MessageToDict(
        reply, preserving_proto_field_name=True, always_print_fields_with_no_presence=defaults
    )
    return found


def number(value: float) -> float | int:
    """A whole float as an int (JSON: 2, not 2.0)."""
    return int(value) if float(value).is_integer() else value


def created(reply: pb.CreateGameResponse) -> dict[str, Any]:
    """A new game: its id, seed commitment, ruleset, seats with their tokens, warnings."""
    return {
        "game_id": reply.game_id,
        "seed_commitment": reply.seed_commitment,
        "ruleset_version": reply.ruleset_version,
        "seats": [{"seat": t.seat, "name": t.name, "token": t.token} for t in reply.seat_tokens],
        "warnings": list(reply.warnings),
    }


def game(summary: pb.GameSummary) -> dict[str, Any]:
    """One game of the list."""
    return {
        "game_id": summary.game_id,
        "game_kind": summary.game_kind,
        "players": list(summary.players),
        "last_seq": int(summary.last_seq),
        "over": summary.over,
        "created_at": summary.created_at,
        "waiting_for_entropy": summary.waiting_for_entropy,
        "tournament_id": summary.tournament_id,
    }


def rejection(refused: apb.Rejection) -> dict[str, Any]:
    """A refusal."""
    return {
        "after_seq": int(refused.after_seq),
        "actor": refused.actor,
        "command_id": refused.command_id,
        "recorded_at": refused.recorded_at,
        "status": refused.status,
        "reason": refused.reason,
        "rule_id": refused.rule_id,
        "message": refused.message,
    }


def report(audit: apb.AuditReport) -> dict[str, Any]:
    """An audit report, as the same dict ``AuditReport.to_dict`` gives."""
    faults = [
        {
            "seq": int(f.seq),
            "kind": apb.FaultKind.Name(f.kind).removeprefix("FAULT_KIND_").lower(),
            "message": f.message,
            "rule_id": f.rule_id,
        }
        for f in audit.faults
    ]
    first = faults[0]["seq"] if faults else None
    outcome = None
    if audit.over and (audit.points or audit.winners):
        outcome = {"points": list(audit.points), "winners": list(audit.winners)}
    return {
        "game_id": audit.game_id,
        "game_kind": audit.game_kind,
        "ok": audit.ok,
        "rows": int(audit.rows),
        "commands_checked": int(audit.commands_checked),
        "states_checked": audit.states_checked,
        "over": audit.over,
        "first_bad_seq": first,
        "first_kinds": list(dict.fromkeys(f["kind"] for f in faults if f["seq"] == first)),
        "faults": faults,
        "outcome": outcome,
        "notes": list(audit.notes),
        "record_version": int(audit.record_version),
    }


def standings(reply: tpb.GetStandingsResponse) -> dict[str, Any]:
    """A tournament's standings."""
    return {
        "standings": [
            {
                "name": s.name,
                "games": int(s.games),
                "wins": number(s.wins),
                "wins_exact": s.wins_exact,
                "points": int(s.points),
            }
            for s in reply.standings
        ],
        "games_finished": int(reply.games_finished),
        "games_running": int(reply.games_running),
    }


def stats(reply: tpb.GetStatsResponse) -> list[dict[str, Any]]:
    """Per game kind: games, win rate by seat, a figure."""
    return [
        {
            "game_kind": k.game_kind,
            "games": int(k.games),
            "win_rate_by_seat": list(k.win_rate_by_seat),
            "figure": k.figure,
            "value": k.value if k.HasField("value") else None,
        }
        for k in reply.kinds
    ]


def clocks(reply: tabpb.GetClocksResponse) -> dict[str, Any] | None:
    """A game's clocks (None for a game without)."""
    if not reply.clocked:
        return None
    found = message(reply)
    for seat in found["seats"]:  # int64 as numbers, not JSON strings
        seat["remaining_ms"], seat["used_ms"] = int(seat["remaining_ms"]), int(seat["used_ms"])
    return found


def seat_link(reply: slpb.CreateSeatLinkResponse) -> dict[str, Any]:
    """A seat's one-time link: its seat, code, path and (served) URL."""
    return {"seat": reply.seat, "code": reply.code, "path": reply.path, "url": reply.url}


def arbiter_added(reply: adpb.AddArbiterResponse) -> dict[str, Any]:
    """A named arbiter and its key."""
    return {"name": reply.name, "key": reply.key}


def arbiter_revoked(reply: adpb.RevokeArbiterResponse) -> dict[str, Any]:
    """A revoked arbiter and when."""
    return {"name": reply.name, "revoked_at": reply.revoked_at}


def arbiter(found: adpb.Arbiter) -> dict[str, Any]:
    """A named arbiter: when added, when revoked (None: never)."""
    return {"name": found.name, "added_at": found.added_at, "revoked_at": found.revoked_at or None}


def server_info(reply: ppb.GetServerInfoResponse) -> dict[str, Any]:
    """The server's signing key, every key it has used, its tree's size."""
    keys = [{"public_key": k.public_key, "first_used": k.first_used} for k in reply.keys]
    return {
        "public_key": reply.public_key,
        "keys": keys,
        "tree_size": int(reply.tree_size),
        "head_interval_ms": int(reply.head_interval_ms),
    }


def tree_head(reply: ppb.GetTreeHeadResponse) -> tuple[TreeHead, list[Cosignature]]:
    """A signed tree head and its witnesses' cosignatures."""
    h = reply.head
    head = TreeHead(int(h.size), h.root, h.signed_at, h.public_key, h.signature)
    cosigned = [
        replace(Cosignature.of(head, c.witness_key, c.witnessed_at), signature=c.signature)
        for c in reply.cosignatures
    ]
    return head, cosigned
