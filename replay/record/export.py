"""The portable record: one self-contained JSON file per game (docs/record-format.md).

An export holds the rows exactly as stored (bodies as hex, with their hashes, and in
format 2 their commitments), the content pack the genesis names, the server seed once it
is revealed (it is copied from the reveal row, so a record without one has no seed
anywhere), and the claimed final result.  The file's ``version`` is the record's format
version (its genesis says which); a format-1 record exports exactly as before format 2.
``verify_document`` checks it with nothing but this file and this package.  The
``decoded`` entries are for people reading the file; verification never trusts them.

A file is anyone's: ``read_export`` takes every field it reads by its type first and
refuses a file where one is missing or of another type (``BadExport``, naming the field);
whatever else is wrong with it is then a fault of its record, found by ``verify``.
"""

from __future__ import annotations

import errno
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from feastlog.replay.games import fold
from feastlog.replay.games.engine import MalformedCommand, Outcome, PackError, RuleViolation
from feastlog.replay.record.audit import FAULT_KINDS, HASH, PACK, SEED, AuditReport, Fault, verify
from feastlog.replay.record.history import record_version, refold, revealed_seed
from feastlog.replay.record.rows import (
    COMMAND,
    FORMAT_1,
    GENESIS,
    MAX_SEQ,
    ROW_KINDS,
    SEED_REVEAL,
    VERSIONS,
    Row,
)
from feastlog.replay.tournament.spec import KIND as TOURNAMENT
from feastlog.v1 import record_pb2, tournament_record_pb2

FORMAT = "feastlog-record"
# lower-case, as every export has written them (bytes.fromhex would take upper-case and
# spaces between too: then two spellings of one body, or one seed, would read the same)
_HEX = re.compile(r"(?:[0-9a-f]{2})*")
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


def decoded(row: Row, tournament: bool = False) -> dict[str, Any]:
    """A row's body as protobuf JSON, for people reading the file (a tournament's command
    rows hold a ``TournamentCommand``)."""
    message = (
        tournament_record_pb2.TournamentCommand()
        if tournament and row.kind == COMMAND
        else _MESSAGES[row.kind]()
    )
    message.ParseFromString(row.body)
    out: dict[str, Any] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return out


def row_entry(row: Row, version: int, tournament: bool = False) -> dict[str, Any]:
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
        "decoded": decoded(row, tournament),
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


def export_record(rows: Sequence[Row], pack_bytes: bytes) -> dict[str, Any]:
    """The export document of a record; the seed appears only if the record reveals it,
    and the result is what the rows fold to (``folded_result``).  DecodeError for a row
    whose body does not decode (its ``decoded`` entry cannot be written)."""
    seed = revealed_seed(rows)
    genesis = record_pb2.Genesis.FromString(rows[0].body)
    version = record_version(genesis)
    tournament = genesis.game_kind == TOURNAMENT  # its own record: no result of its own
    outcome = None if tournament else folded_result(rows, pack_bytes)
    result = None
    if outcome is not None:
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
        "rows": [row_entry(r, version, tournament) for r in rows],
    }


def folded_result(rows: Sequence[Row], pack_bytes: bytes) -> Outcome | None:
    """The result a record claims: the final points (with the arbiter's adjustments) and
    winners its rows fold to once its seed is revealed; None while it runs, for a void
    game or one the arbiter closed before it ended, and for a record that does not fold
    (it is exported as stored, claiming no result: verifying it names what is wrong)."""
    seed = revealed_seed(rows)
    if seed is None:
        return None
    try:
        folded = refold(rows, seed, pack_bytes)
    except (DecodeError, MalformedCommand, PackError, RuleViolation, ValueError):
        return None
    return fold.outcome(fold.engine_of(folded.genesis), folded.tables[-1])


def to_text(document: dict[str, Any]) -> str:
    """The file's text: sorted keys, one-space indent, a final newline."""
    return json.dumps(document, sort_keys=True, indent=1, ensure_ascii=True) + "\n"


# The longest line an exported record's file may hold: a record of one game is one line
# of export --all's file (about 30 KB; its content pack at most 256 KB of hex), and a
# .json export is many short lines.  A file past it (/dev/zero, a binary) is refused as
# it is read, not read whole into memory first.
MOST_RECORD_LINE = 64 * 1024 * 1024


def read_record_file(path: str) -> str:
    """An exported record's file as text, read a line at a time up to MOST_RECORD_LINE;
    OSError (EFBIG) for a longer line, UnicodeDecodeError for bytes that are not UTF-8."""
    lines = []
    with open(path, "rb") as file:
        while line := file.readline(MOST_RECORD_LINE + 1):
            if len(line) > MOST_RECORD_LINE:
                raise OSError(
                    errno.EFBIG,
                    f"a line is longer than a record may be ({MOST_RECORD_LINE // 2**20} MiB)",
                    path,
                )
            lines.append(line)
    return b"".join(lines).decode()


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
    except (ValueError, RecursionError):
        return False


def read_export(text: str) -> tuple[dict[str, Any], Record]:
    """An export's JSON object and the record it carries, every field a verifier reads
    checked for its type (docs/record-format.md); BadExport naming the first that is not.

    Past this point the values are what the format says they are: what a verifier finds
    wrong with them is a fault of the record, never an exception.
    """
    try:
        document = json.loads(text)
    except RecursionError:
        raise _unreadable("its JSON is nested too deeply") from None
    except ValueError as bad:
        raise _unreadable(str(bad)) from bad
    if not isinstance(document, dict):
        raise BadExport("it holds no JSON object")
    version = document.get("version")
    if document.get("format") != FORMAT or type(version) is not int or version not in VERSIONS:
        known = " or ".join(str(v) for v in VERSIONS)
        raise BadExport(f"not a {FORMAT} file of version {known}")
    entries = _given(document, "rows")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise BadExport("its rows are not a list of row objects")
    game_id = _text(document, "game_id")
    for header in ("game_kind", "ruleset_version"):  # compared with the genesis: header_faults
        _text(document, header)
    pack_bytes = _pack_bytes(_given(document, "content_pack"))
    seed = None  # a running game's: null (or absent)
    if document.get("server_seed") is not None:
        seed = bytes.fromhex(_hex(document, "server_seed"))
    claimed = None if document.get("result") is None else _claimed(document["result"])
    rows = tuple(_row(game_id, entry, f"rows[{i}]") for i, entry in enumerate(entries))
    return document, Record(_of_genesis_game(rows), pack_bytes, seed, claimed)


def _of_genesis_game(rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """The rows with their genesis's game id: an export's rows carry none, and the id in
    each row's hashed fields and salt is the genesis's, not the file's ``game_id`` (which
    ``header_faults`` holds to it).  Rows that start with no genesis that decodes keep the
    file's (the verifier reports that genesis)."""
    if not rows or rows[0].kind != GENESIS:
        return rows
    try:
        game_id = record_pb2.Genesis.FromString(rows[0].body).game_id
    except DecodeError:
        return rows
    return tuple(replace(r, game_id=game_id) for r in rows)


def load_record(text: str) -> Record:
    """Read an export; raises BadExport for anything that is not one, naming what is wrong."""
    return read_export(text)[1]


def _unreadable(what: str) -> BadExport:
    """The file is not a readable export, and why."""
    return BadExport(f"not a readable {FORMAT} file: {what}")


def _name(where: str, key: str) -> str:
    """A field's name in the file: ``rows[3].prev_hash``, ``content_pack.text``, ``game_id``."""
    return f"{where}.{key}" if where else key


def _given(entry: Any, key: str, where: str = "") -> Any:
    """``entry[key]``, where ``entry`` is the JSON object named ``where`` (the file's own: "")."""
    if not isinstance(entry, dict):
        raise _unreadable(f"{where} is not an object")
    if key not in entry:
        raise _unreadable(f"{_name(where, key)} is missing")
    return entry[key]


def _text(entry: Any, key: str, where: str = "") -> str:
    """A string field, UTF-8 text (a JSON ``\\ud800`` escape is a lone surrogate: not text)."""
    value = _given(entry, key, where)
    if not isinstance(value, str):
        raise _unreadable(f"{_name(where, key)} is not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _unreadable(f"{_name(where, key)} is not UTF-8 text (a lone surrogate)") from None
    return value


def _hex(entry: Any, key: str, where: str = "") -> str:
    """A field of lower-case hex digits, two a byte: an upper-case digit is refused here, as
    no export ever wrote one (``body`` and the pack's ``hex`` are read as bytes, so no
    check after this one could tell ``AB`` from ``ab``)."""
    value = _given(entry, key, where)
    if not isinstance(value, str) or not _HEX.fullmatch(value):
        raise _unreadable(f"{_name(where, key)} is not a hex string (lower-case, two a byte)")
    return value


def _whole(value: Any, name: str) -> int:
    """A JSON whole number: not a string of digits (``"١"``), a float or a boolean."""
    if type(value) is not int:
        raise _unreadable(f"{name} is not a whole number")
    return value


def _seq(entry: dict[str, Any], where: str) -> int:
    """A row's seq: a whole number from 1 to 2**63 - 1 (an int64, as the store and the
    wire hold it)."""
    seq = _whole(_given(entry, "seq", where), f"{where}.seq")
    if not 1 <= seq <= MAX_SEQ:
        raise _unreadable(f"{where}.seq is not from 1 to 2**63 - 1")
    return seq


def _row(game_id: str, entry: dict[str, Any], where: str) -> Row:
    """A row from its export entry (``decoded`` is for people: never read)."""
    kind = _text(entry, "kind", where)
    if kind not in ROW_KINDS:
        raise _unreadable(f"{where}.kind {kind!r} is not one of {', '.join(ROW_KINDS)}")
    return Row(
        game_id,
        _seq(entry, where),
        kind,
        _text(entry, "actor", where),
        _text(entry, "command_id", where),
        bytes.fromhex(_hex(entry, "body", where)),
        _text(entry, "recorded_at", where),
        _hex(entry, "prev_hash", where),
        _hex(entry, "hash", where),
        _hex(entry, "state_hash", where),
        _hex(entry, "commitment", where) if "commitment" in entry else "",
    )


def _pack_bytes(pack: Any) -> bytes:
    """The content pack's bytes: its ``text`` as UTF-8, or its ``hex``, with its sha256."""
    _text(pack, "sha256", "content_pack")
    if ("text" in pack) == ("hex" in pack):
        raise _unreadable("content_pack holds neither or both of text and hex")
    if "text" in pack:
        return _text(pack, "text", "content_pack").encode("utf-8")
    return bytes.fromhex(_hex(pack, "hex", "content_pack"))


def _claimed(result: Any) -> Outcome:
    """The claimed result: ``points`` per seat and the ``winners``' seats, whole numbers."""
    said = []
    for key in ("points", "winners"):
        values = _given(result, key, "result")
        if not isinstance(values, list):
            raise _unreadable(f"result.{key} is not a list")
        said.append(tuple(_whole(v, f"result.{key}[{i}]") for i, v in enumerate(values)))
    return Outcome(*said)


def header_faults(document: dict[str, Any], rows: Sequence[Row]) -> list[Fault]:
    """Every header field of the file checked against the genesis and the reveal row.

    The header (``game_id``, ``game_kind``, ``ruleset_version``, ``version``,
    ``content_pack.sha256``, ``server_seed``) is for readers; a verifier trusts the rows,
    so a header that says anything else is a fault.  ``result`` is checked against the
    fold (``verify``'s ``claimed``), the pack's bytes against the genesis's sha256.
    """
    try:
        genesis = record_pb2.Genesis.FromString(rows[0].body)
    except (DecodeError, IndexError):
        return []  # the chain check reports a genesis that does not decode
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
    }
    try:
        seed = revealed_seed(rows)
    except DecodeError:
        pass  # no seed to compare: the seed check reports a reveal that does not decode
    else:
        seen = seed.hex() if seed is not None else None
        said["server_seed"] = (document.get("server_seed"), seen, SEED, rows[-1].seq)
    return [
        Fault(seq, kind, f"the file's {name} is {header!r}, the record's is {record!r}")
        for name, (header, record, kind, seq) in said.items()
        if header != record
    ]


def verify_document(text: str) -> AuditReport:
    """Verify an export with nothing but itself: header, chain, seed, rules, states, result."""
    return verify_read(*read_export(text))


def verify_read(document: Any, record: Record) -> AuditReport:
    """``verify_document`` of an export already read (``read_export``): read it once.

    The one check of a file, whoever asks (``verify``, ``import``, an offline ``replay``
    or audit of it): every header field against the rows, the result against the fold
    (``null`` claims that the game has none).
    """
    report = verify(record.rows, record.pack_bytes, record.server_seed, record.claimed)
    faults = header_faults(document, record.rows)
    if not faults:
        return report
    ordered = sorted(
        {*report.faults, *faults}, key=lambda f: (f.seq, FAULT_KINDS.index(f.kind), f.message)
    )
    return replace(report, faults=tuple(ordered))
