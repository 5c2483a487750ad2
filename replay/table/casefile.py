"""The case file of a call: its digest, and its offline check (docs/table.md).

A case file is one JSON object (``format`` ``feastlog-case``, ``version`` 1) holding the
rows of the game up to the call as the file's viewer saw them, the call, what the
arbiter needs around it, and ``digest``: the sha256 of the canonical JSON of every other
key.  ``check`` verifies one offline, from its bytes alone:

1. its format and version, and its digest;
2. its rows are seqs 1..n, each linked to the one before and hashed as the record's
   format says (``replay/record/rows.py``): a body (or another seat's ``command_id``) the
   viewer may not see is ``null``, which the format-2 chain never needed (it hashes the
   commitment); a format-1 row with a hidden part has only its link checked;
3. its genesis opens its commitment (format 2: empty salt) and names the file's game;
4. the last row is the call: a seat's ``SeatCall`` whose row, claim and hold are the
   file's ``call``, about a row before it (or the server's time-out of the call's seat,
   which holds the game);
5. with ``server_seed`` (a finished game), the seed matches the genesis commitment and
   every visible command row opens its commitment.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from feastlog.replay.record.history import record_version
from feastlog.replay.record.rng import seed_commitment
from feastlog.replay.record.rows import COMMAND, FORMAT_1, GENESIS, ZERO_HASH, Row, row_salt
from feastlog.v1 import record_pb2

FORMAT = "feastlog-case"
VERSION = 1


def canonical_text(value: Any) -> str:
    """Canonical JSON text: keys sorted, compact, ASCII (record-format.md)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest_of(bundle: dict[str, Any]) -> str:
    """The sha256 of the canonical JSON of every key but ``digest``."""
    body = {k: v for k, v in bundle.items() if k != "digest"}
    return hashlib.sha256(canonical_text(body).encode("ascii")).hexdigest()


def sealed(bundle: dict[str, Any]) -> str:
    """The bundle with its digest, as canonical JSON text."""
    return canonical_text({**bundle, "digest": digest_of(bundle)})


def is_case(document: Any) -> bool:
    """Whether a parsed JSON document is a case file."""
    return isinstance(document, dict) and document.get("format") == FORMAT


def _row(game_id: str, entry: dict[str, Any]) -> Row:
    body = entry.get("body")
    return Row(
        game_id,
        int(entry["seq"]),
        str(entry["kind"]),
        str(entry["actor"]),
        str(entry.get("command_id") or ""),
        bytes.fromhex(body) if isinstance(body, str) else b"",
        str(entry["recorded_at"]),
        str(entry["prev_hash"]),
        str(entry["hash"]),
        str(entry["state_hash"]),
        str(entry.get("commitment", "")),
    )


def check(document: dict[str, Any]) -> list[str]:
    """Every fault of a case file, in words; an empty list when it verifies."""
    if document.get("version") != VERSION:
        return [f"a case file of version {document.get('version')!r} is unknown to this build"]
    faults: list[str] = []
    if document.get("digest") != digest_of(document):
        faults.append("the digest is not the sha256 of the file's other keys")
    try:
        faults += _check_rows(document)
    except (KeyError, TypeError, ValueError) as bad:
        faults.append(f"the file's rows cannot be read: {bad}")
    return faults


def _check_rows(document: dict[str, Any]) -> list[str]:
    entries = document["rows"]
    game_id = str(document["game_id"])
    if not entries or entries[0].get("kind") != GENESIS or entries[0].get("body") is None:
        return ["the rows do not start with the game's genesis"]
    genesis = record_pb2.Genesis.FromString(bytes.fromhex(entries[0]["body"]))
    if genesis.game_id != game_id:
        return [f"the genesis is game {genesis.game_id!r}'s, not {game_id!r}'s"]
    version = record_version(genesis)
    rows = [_row(game_id, e) for e in entries]
    faults: list[str] = []
    prev = ZERO_HASH
    for i, row in enumerate(rows):
        if row.seq != i + 1:
            return [*faults, f"row {i + 1} is seq {row.seq}: the rows are not 1..n"]
        hidden = entries[i].get("body") is None or entries[i].get("command_id") is None
        if row.prev_hash != prev:
            faults.append(f"seq {row.seq} does not link to the row before it")
        if not (hidden and version == FORMAT_1) and row.expected_hash(version) != row.hash:
            faults.append(f"seq {row.seq}'s hash is not its row's")
        if version != FORMAT_1 and row.kind != COMMAND and not row.opens(b""):
            faults.append(f"seq {row.seq}'s body does not open its commitment")
        prev = row.hash
    faults += _check_call(document, rows)
    faults += _check_seed(document, genesis, rows, entries, version)
    return faults


def _check_call(document: dict[str, Any], rows: list[Row]) -> list[str]:
    call = document["call"]
    last = rows[-1]
    if last.seq != int(call["call"]) or not last.body:
        return [f"the last row is not the call at seq {call['call']}"]
    made = record_pb2.Command.FromString(last.body)
    if last.actor == "server" and made.WhichOneof("game") == "clock":  # a time-out's call
        seat = made.clock.timeout.seat
        if seat != int(call["seat"]) or int(call["about_seq"]) != last.seq - 1 or not call["hold"]:
            return [f"the time-out at seq {last.seq} is not the call the file describes"]
        return []
    if made.WhichOneof("game") != "call" or not last.actor.startswith("seat:"):
        return [f"seq {last.seq} is not a call to the arbiter"]
    said = made.call
    if (
        int(said.about_seq) != int(call["about_seq"])
        or said.claim.strip() != call["claim"]
        or said.hold != call["hold"]
        or last.actor != f"seat:{call['seat']}"
    ):
        return [f"the call at seq {last.seq} is not the one the file describes"]
    if not 1 <= said.about_seq < last.seq:
        return [f"the call is about seq {said.about_seq}, not a row before it"]
    return []


def _check_seed(
    document: dict[str, Any],
    genesis: record_pb2.Genesis,
    rows: list[Row],
    entries: list[dict[str, Any]],
    version: int,
) -> list[str]:
    seed_hex = document.get("server_seed")
    if seed_hex is None:
        return []
    seed = bytes.fromhex(seed_hex)
    if seed_commitment(seed) != genesis.seed_commitment:
        return ["the server seed is not the one the genesis committed to"]
    if version == FORMAT_1:
        return []
    return [
        f"seq {row.seq}'s body does not open its commitment"
        for row, entry in zip(rows, entries, strict=True)
        if row.kind == COMMAND
        and entry.get("body") is not None
        and entry.get("command_id") is not None
        and not row.opens(row_salt(seed, row.game_id, row.seq))
    ]
