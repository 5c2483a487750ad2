"""The portable record: one self-contained JSON file per game (docs/record-format.md).

An export holds the rows exactly as stored (bodies as hex, with their hashes, and in
format 2 their commitments), the content pack the genesis names, the server seed once it
is revealed (it is copied from the reveal row, so a record without one has no seed
anywhere), and the claimed final result.  The file's ``version`` is the record's format
version (its genesis says which); a format-1 record exports exactly as before format 2.
``verify_document`` checks it with nothing but this file and this package.  The
``decoded`` entries are for people reading the file; verification never trusts them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from feastlog.replay.audit import FAULT_KINDS, HASH, PACK, SEED, AuditReport, Fault, verify
from feastlog.replay.engine import Outcome
from feastlog.replay.history import record_version, revealed_seed
from feastlog.replay.record import COMMAND, FORMAT_1, GENESIS, SEED_REVEAL, VERSIONS, Row
from feastlog.v1 import record_pb2

FORMAT = "feastlog-record"
_MESSAGES: dict[str, type[Message]] = {
    GENESIS: record_pb2.Genesis,
    COMMAND: record_pb2.Command,
    SEED_REVEAL: record_pb2.SeedReveal,
}


class BadExport(ValueError):
    """A file that is not a feastlog record export."""


@dataclass(frozen=True)
class Record:
    """A record read back from an export."""

    rows: tuple[Row, ...]
    pack_bytes: bytes
    server_seed: bytes | None
    claimed: Outcome | None


def decoded(row: Row) -> dict[str, Any]:
    """A row's body as protobuf JSON, for people reading the file."""
    message = _MESSAGES[row.kind]()
    message.ParseFromString(row.body)
    out: dict[str, Any] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return out


def row_entry(row: Row, version: int) -> dict[str, Any]:
    """One row as the export stores it (with its commitment from format 2 on)."""
    entry = {
        "seq": row.seq,
        "kind": row.kind,
        "actor": row.actor,
        "command_id": row.command_id,
        "body": row.body.hex(),
        "recorded_at": row.recorded_at,
        "prev_hash": row.prev_hash,
        "hash": row.hash,
        "state_hash": row.state_hash,
        "decoded": decoded(row),
    }
    if version != FORMAT_1:
        entry["commitment"] = row.commitment
    return entry


def _pack_entry(pack_bytes: bytes) -> dict[str, str]:
    """The pack as text when it is UTF-8 (TOML always is), else hex."""
    try:
        return {"text": pack_bytes.decode("utf-8")}
    except UnicodeDecodeError:
        return {"hex": pack_bytes.hex()}


def export_record(
    rows: Sequence[Row], pack_bytes: bytes, outcome: Outcome | None = None
) -> dict[str, Any]:
    """The export document of a record; the seed appears only if the record reveals it."""
    seed = revealed_seed(rows)
    genesis = record_pb2.Genesis.FromString(rows[0].body)
    version = record_version(genesis)
    result = None
    if outcome is not None and seed is not None:
        result = {"points": list(outcome.points), "winners": list(outcome.winners)}
    return {
        "format": FORMAT,
        "version": version,
        "game_id": genesis.game_id,
        "game_kind": genesis.game_kind,
        "ruleset_version": genesis.ruleset_version,
        "content_pack": {"sha256": genesis.pack_sha256, **_pack_entry(pack_bytes)},
        "server_seed": seed.hex() if seed is not None else None,
        "result": result,
        "rows": [row_entry(r, version) for r in rows],
    }


def to_text(document: dict[str, Any]) -> str:
    """The file's text: sorted keys, one-space indent, a final newline."""
    return json.dumps(document, sort_keys=True, indent=1, ensure_ascii=True) + "\n"


def _row(game_id: str, entry: dict[str, Any]) -> Row:
    """A row from its export entry."""
    return Row(
        game_id,
        _whole(entry["seq"], "seq"),
        str(entry["kind"]),
        str(entry["actor"]),
        str(entry["command_id"]),
        bytes.fromhex(entry["body"]),
        str(entry["recorded_at"]),
        str(entry["prev_hash"]),
        str(entry["hash"]),
        str(entry["state_hash"]),
        str(entry.get("commitment", "")),
    )


def _whole(value: Any, name: str) -> int:
    """A JSON whole number: not a string of digits (``"١"``), a float or a boolean."""
    if type(value) is not int:
        raise ValueError(f"{name} {value!r} is not a whole number")
    return value


def records_in(path: str, text: str) -> list[tuple[str, str]]:
    """(where, text) of every record a file holds.

    A file of ``export --all`` holds one record a line, each named ``path:line``: its name
    ends in ``.jsonl``, or (saved under another name) its first line is a whole JSON
    object and more lines follow.  Any other file is one record, named ``path``: a single
    export is indented, so its first line alone is no object.
    """
    lines = [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
    if path.endswith(".jsonl") or (len(lines) > 1 and _one_object(lines[0][1])):
        return [(f"{path}:{i}", line) for i, line in lines]
    return [(path, text)]


def _one_object(line: str) -> bool:
    """Whether a line is a JSON object by itself."""
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def load_record(text: str) -> Record:
    """Read an export; raises BadExport for anything that is not one."""
    try:
        document = json.loads(text)
        if not isinstance(document, dict):
            raise BadExport("it holds no JSON object")
        if document.get("format") != FORMAT or document.get("version") not in VERSIONS:
            known = " or ".join(str(v) for v in VERSIONS)
            raise BadExport(f"not a {FORMAT} file of version {known}")
        entries = document["rows"]
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise BadExport("its rows are not a list of row objects")
        rows = tuple(_row(document["game_id"], e) for e in entries)
        pack = document["content_pack"]
        pack_bytes = pack["text"].encode("utf-8") if "text" in pack else bytes.fromhex(pack["hex"])
        seed = document.get("server_seed")
        result = document.get("result")
    except (KeyError, TypeError, ValueError, AttributeError) as bad:
        raise BadExport(f"not a readable {FORMAT} file: {bad}") from bad
    claimed = None
    if result is not None:
        claimed = Outcome(tuple(result["points"]), tuple(result["winners"]))
    return Record(rows, pack_bytes, bytes.fromhex(seed) if seed else None, claimed)


def header_faults(document: dict[str, Any], rows: Sequence[Row]) -> list[Fault]:
    """Every header field of the file checked against the record it carries.

    The header (``game_id``, ``game_kind``, ``ruleset_version``, ``version``,
    ``content_pack.sha256``, ``server_seed``) is for readers; a verifier trusts the rows,
    so a header that says anything else is a fault.
    """
    try:
        genesis = record_pb2.Genesis.FromString(rows[0].body)
    except (DecodeError, IndexError):
        return []  # the chain check reports a genesis that does not decode
    seed = revealed_seed(rows)
    said = {
        "game_id": (document.get("game_id"), genesis.game_id, HASH, 1),
        "game_kind": (document.get("game_kind"), genesis.game_kind, HASH, 1),
        "ruleset_version": (document.get("ruleset_version"), genesis.ruleset_version, HASH, 1),
        "version": (document.get("version"), record_version(genesis), HASH, 1),
        "content_pack.sha256": (
            (document.get("content_pack") or {}).get("sha256"),
            genesis.pack_sha256,
            PACK,
            1,
        ),
        "server_seed": (
            document.get("server_seed"),
            seed.hex() if seed is not None else None,
            SEED,
            rows[-1].seq,
        ),
    }
    return [
        Fault(seq, kind, f"the file's {name} is {header!r}, the record's is {record!r}")
        for name, (header, record, kind, seq) in said.items()
        if header != record
    ]


def verify_document(text: str) -> AuditReport:
    """Verify an export with nothing but itself: header, chain, seed, rules, states, result."""
    record = load_record(text)
    report = verify(record.rows, record.pack_bytes, record.server_seed, record.claimed)
    faults = header_faults(json.loads(text), record.rows)
    if not faults:
        return report
    ordered = sorted(
        {*report.faults, *faults}, key=lambda f: (f.seq, FAULT_KINDS.index(f.kind), f.message)
    )
    return replace(report, faults=tuple(ordered))
