"""Verifying a stored record from the record alone (DESIGN.md sections 2 and 3).

``verify`` reads every row under the record's own format version (its genesis) and checks,
in this order: the rows are seq 1..n with no gap and in order; every row's hash is
sha256(prev_hash || canonical bytes) and links to the row before (format 2: and the
genesis and seed reveal open their unsalted commitments); the seed revealed at the end
matches the genesis commitment; then, format 2, every command row opens its commitment
under the salt re-derived from that seed (before the reveal only the links can be
checked); the content pack matches its sha256; the ruleset is one this build folds;
then it refolds the record, re-checking every command under the recorded rules and
options, re-deriving every shuffle and draw from the seed, and comparing every state
hash; finally the final scores against a claimed result.

The report names the first bad seq and every kind of fault found there:

- ``missing``: a seq is absent (a row was deleted), or the game ended with no seed reveal;
- ``reordered``: rows out of seq order, or a row linking to a row that comes later;
- ``hash``: a row's hash is not the hash of its content (its bytes were edited), or, in
  format 2, a row's body or command_id does not match its commitment;
- ``seed``: the revealed seed does not match the commitment;
- ``pack``: the content pack does not match the sha256 in the genesis;
- ``rule``: a command breaks a rule when re-checked (or a row cannot be applied at all);
- ``state``: the recomputed state hash differs from the recorded one;
- ``score``: the claimed final result differs from the refolded one: other points or
  winners, a result claimed for a game that has none (running, void, or closed by the
  arbiter before it ended) or none claimed for one that has (``claimed=None``: a file's
  ``result: null``); a stored game's audit claims nothing (``UNCLAIMED``).
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from google.protobuf.message import DecodeError

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import (
    MalformedCommand,
    Outcome,
    PackError,
    RuleViolation,
    how_many,
)
from feastlog.replay.games.fold import Table, state_hash
from feastlog.replay.record.history import apply_row, genesis_of, record_version, seed_of
from feastlog.replay.record.rng import seed_commitment
from feastlog.replay.record.rows import (
    COMMAND,
    FORMAT_2,
    GENESIS,
    SEED_REVEAL,
    VERSIONS,
    ZERO_HASH,
    Row,
    row_salt,
    salted,
)
from feastlog.replay.tournament.spec import KIND as TOURNAMENT
from feastlog.v1 import record_pb2

MISSING = "missing"
REORDERED = "reordered"
HASH = "hash"
SEED = "seed"
PACK = "pack"
RULE = "rule"
STATE = "state"
SCORE = "score"
FAULT_KINDS = (MISSING, REORDERED, HASH, SEED, PACK, RULE, STATE, SCORE)


class _Claim(enum.Enum):
    UNCLAIMED = "unclaimed"


# ``verify``'s ``claimed`` when nothing is claimed of the result (a stored game's audit):
# None is a claim too, that the game has no result (a file's ``"result": null``).
UNCLAIMED: Final = _Claim.UNCLAIMED
Claimed = Outcome | None | Literal[_Claim.UNCLAIMED]


@dataclass(frozen=True)
class Fault:
    """One thing wrong with a record: the seq where it shows and what differs."""

    seq: int
    kind: str
    message: str
    rule_id: str = ""


@dataclass(frozen=True)
class AuditReport:
    """The result of verifying one record."""

    game_id: str
    game_kind: str
    rows: int
    commands_checked: int
    states_checked: bool
    over: bool
    faults: tuple[Fault, ...]
    outcome: Outcome | None = None
    notes: tuple[str, ...] = field(default=())
    record_version: int = 1

    @property
    def ok(self) -> bool:
        """Whether everything verified."""
        return not self.faults

    @property
    def first_bad_seq(self) -> int | None:
        """The lowest seq with a fault, or None."""
        return self.faults[0].seq if self.faults else None

    @property
    def first_kinds(self) -> tuple[str, ...]:
        """The kinds of fault found at the first bad seq."""
        first = self.first_bad_seq
        return tuple(dict.fromkeys(f.kind for f in self.faults if f.seq == first))

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data."""
        return {
            "game_id": self.game_id,
            "game_kind": self.game_kind,
            "ok": self.ok,
            "rows": self.rows,
            "commands_checked": self.commands_checked,
            "states_checked": self.states_checked,
            "over": self.over,
            "first_bad_seq": self.first_bad_seq,
            "first_kinds": list(self.first_kinds),
            "faults": [vars(f) for f in self.faults],
            "outcome": None
            if self.outcome is None
            else {"points": list(self.outcome.points), "winners": list(self.outcome.winners)},
            "notes": list(self.notes),
            "record_version": self.record_version,
        }

    def summary(self) -> str:
        """One line: OK, or the first bad seq and what differs there."""
        return summary_line(self.to_dict())


def summary_line(found: dict[str, Any]) -> str:
    """One line for a report as ``AuditReport.to_dict`` gives it (or a server sent it)."""
    if found["ok"]:
        extra = "" if found["states_checked"] else " (chain only: seed not revealed)"
        shape = f"{how_many(found['rows'], 'row')}, record format {found['record_version']}"
        return f"{found['game_id']}: OK, {shape}{extra}"
    first = [f for f in found["faults"] if f["seq"] == found["first_bad_seq"]]
    what = "; ".join(f"{f['kind']}: {f['message']}".rstrip(": ") for f in first)
    return f"{found['game_id']}: FAILED at seq {found['first_bad_seq']}: {what}"


def result_text(outcome: Outcome | None) -> str:
    """A result in words: ``points 21, 17, 9; winner seat 0`` (``no result`` for none)."""
    if outcome is None:
        return "no result"
    points = ", ".join(str(p) for p in outcome.points)
    seats = ", ".join(f"seat {w}" for w in outcome.winners) or "none"
    return f"points {points}; {'winners' if len(outcome.winners) > 1 else 'winner'} {seats}"


def check_chain(rows: Sequence[Row], version: int) -> list[Fault]:
    """Seq order, gaps, the hash chain, and (format 2) the commitments of unsalted rows."""
    faults: list[Fault] = []
    seqs = [r.seq for r in rows]
    position = {r.hash: i for i, r in enumerate(rows)}
    prev_seq, prev_hash, prev_intact = 0, ZERO_HASH, True
    for i, row in enumerate(rows):
        want = prev_seq + 1
        if row.seq > want:
            later = any(s in seqs[i + 1 :] for s in range(want, row.seq))
            kind = REORDERED if later else MISSING
            faults.append(
                Fault(want, kind, f"seq {want} is {'out of order' if later else 'absent'}")
            )
        elif row.seq < want:
            faults.append(Fault(row.seq, REORDERED, f"seq {row.seq} comes after seq {prev_seq}"))
        intact = _intact(row, version)
        if row.prev_hash != prev_hash:
            linked = position.get(row.prev_hash, -1)
            if linked > i:
                faults.append(Fault(row.seq, REORDERED, "it links to a row that comes later"))
            elif intact and prev_intact:
                faults.append(Fault(row.seq, MISSING, "it links to a row that is not before it"))
        if not intact:
            faults.append(Fault(row.seq, HASH, "the row's hash does not match its content"))
        elif version == FORMAT_2 and not salted(row.kind) and not row.opens(b""):
            faults.append(Fault(row.seq, HASH, "the row's body does not match its commitment"))
        prev_seq, prev_hash, prev_intact = max(prev_seq, row.seq), row.hash, intact
    return faults


def check_game_ids(rows: Sequence[Row], game_id: str) -> list[Fault]:
    """Every row is its genesis's game's: the game id in each row's hashed fields and its
    salt is the genesis's (an export's rows take it from there; a store's are kept under it)."""
    return [
        Fault(r.seq, HASH, f"the row's game_id is {r.game_id!r}, its genesis's is {game_id!r}")
        for r in rows
        if r.game_id != game_id
    ]


def _intact(row: Row, version: int) -> bool:
    """Whether a row's hash is the hash of its content (never with a prev_hash that is no hex)."""
    try:
        return row.expected_hash(version) == row.hash
    except ValueError:
        return False


def _opens_salted(row: Row, server_seed: bytes) -> bool:
    """Whether a command row opens its commitment under its salt (never when its seq or
    game id has no salt: the chain check names the seq)."""
    try:
        return row.opens(row_salt(server_seed, row.game_id, row.seq))
    except ValueError:
        return False


def check_commitments(rows: Sequence[Row], server_seed: bytes) -> list[Fault]:
    """Format 2: every command row opens its commitment under the salt from the seed."""
    faults = []
    for row in rows:
        if salted(row.kind) and not _opens_salted(row, server_seed):
            faults.append(
                Fault(row.seq, HASH, "the command or its command_id does not match the commitment")
            )
    return faults


def _seed_for(
    rows: Sequence[Row], genesis: record_pb2.Genesis, server_seed: bytes | None
) -> tuple[bytes | None, list[Fault]]:
    """The seed to refold with (one that matches the commitment), and seed faults."""
    faults: list[Fault] = []
    candidates = []
    for row in rows:
        if row.kind != SEED_REVEAL:
            continue
        try:
            revealed = seed_of(row)
        except DecodeError:
            faults.append(Fault(row.seq, SEED, "the seed reveal does not decode"))
            continue
        if seed_commitment(revealed) != genesis.seed_commitment:
            faults.append(
                Fault(row.seq, SEED, "the revealed seed does not match the genesis commitment")
            )
        else:
            candidates.append(revealed)
    if server_seed is not None and seed_commitment(server_seed) == genesis.seed_commitment:
        candidates.append(server_seed)
    return (candidates[0] if candidates else None), faults


def _fold(
    rows: Sequence[Row], genesis: record_pb2.Genesis, seed: bytes, pack_bytes: bytes
) -> tuple[Table | None, int, list[Fault]]:
    """Refold, re-checking every command and state hash; stops at the first rule fault.

    The record is whatever a file held: a pack that does not load, a genesis that cannot
    be set up or a row that cannot be applied, for whatever reason, is a fault of the
    record where it shows (no table when nothing could be set up), never an exception.
    """
    engine = fold.engine_of(genesis)
    try:
        pack = fold.loaded_pack(engine, pack_bytes)
    except PackError as bad:  # whatever went wrong loading it (fold.loaded_pack)
        return None, 0, [Fault(1, PACK, f"the content pack does not load: {bad}")]
    try:
        table, _ = fold.start(genesis, seed, pack)
    except RuleViolation as refused:
        return None, 0, [Fault(1, RULE, refused.message, refused.rule_id)]
    except Exception as bad:
        return None, 0, [Fault(1, RULE, f"the game cannot be set up: {_why(bad)}")]
    faults: list[Fault] = []
    if state_hash(table) != rows[0].state_hash:
        faults.append(Fault(1, STATE, "the state after setup differs from the recorded one"))
    checked, tables = 0, [table]
    for row in rows[1:]:
        if row.kind == GENESIS:
            faults.append(Fault(row.seq, RULE, "a second genesis row"))
            break
        if row.kind == SEED_REVEAL and not fold.is_over(engine, table):
            faults.append(Fault(row.seq, RULE, "the seed is revealed before the game ended"))
        try:
            table, _ = apply_row(engine, table, row, tables)
        except RuleViolation as broken:
            faults.append(Fault(row.seq, RULE, broken.message, broken.rule_id))
            break
        except Exception as bad:
            faults.append(Fault(row.seq, RULE, f"the row cannot be applied: {_why(bad)}"))
            break
        checked += row.kind == COMMAND
        tables.append(table)
        if state_hash(table) != row.state_hash:
            faults.append(Fault(row.seq, STATE, "the recomputed state hash differs"))
    return table, checked, faults


def _ending(
    rows: Sequence[Row],
    genesis: record_pb2.Genesis,
    table: Table,
    claimed: Claimed,
    folded_clean: bool,
) -> tuple[Outcome | None, list[Fault]]:
    """The refolded outcome, and its faults: a game over with no reveal (when every row
    folded cleanly), a claimed result that is not the refolded one (``result_faults``)."""
    engine = fold.engine_of(genesis)
    outcome = fold.outcome(engine, table)
    faults = []
    if folded_clean and fold.is_over(engine, table) and rows[-1].kind != SEED_REVEAL:
        faults.append(Fault(rows[-1].seq + 1, MISSING, "the game ended; no seed reveal"))
    why = "the game has not ended"
    if table.voided or table.closed:
        why = "the game was voided" if table.voided else "the arbiter closed it before it ended"
    faults += result_faults(rows, claimed, outcome, why)
    return outcome, faults


def result_faults(
    rows: Sequence[Row], claimed: Claimed, outcome: Outcome | None, why_none: str = ""
) -> list[Fault]:
    """A ``score`` fault at the last seq when the result claimed is not the record's.

    ``outcome`` is the record's (refolded) result; None when it has none, ``why_none``
    saying why (void, not ended, closed before its end, or a running record not folded).
    """
    if claimed is UNCLAIMED:
        return []
    if claimed is None and outcome is None:
        return []
    if claimed is not None and outcome is not None and outcome_key(claimed) == outcome_key(outcome):
        return []
    said = "null" if claimed is None else result_text(claimed)
    found = result_text(outcome) if outcome is not None else f"null: {why_none}"
    return [
        Fault(rows[-1].seq, SCORE, f"the claimed result ({said}) is not the record's ({found})")
    ]


def _why(bad: Exception) -> str:
    """What went wrong in words; the exception's type too when it is none of the fold's own
    (a bug shows for what it is, as the record's fault)."""
    if isinstance(bad, (MalformedCommand, PackError, DecodeError, ValueError)):
        return str(bad)
    return f"{type(bad).__name__}: {bad}"


def verify(
    rows: Sequence[Row],
    pack_bytes: bytes,
    server_seed: bytes | None = None,
    claimed: Claimed = UNCLAIMED,
) -> AuditReport:
    """Verify a record; ``server_seed`` lets the server check a game still running;
    ``claimed`` is the result said of it (None: that it has none), checked against the fold."""
    if not rows or rows[0].kind != GENESIS:
        fault = Fault(1, MISSING, "the record does not start with its genesis row")
        game_id = rows[0].game_id if rows else ""
        return AuditReport(game_id, "", len(rows), 0, False, False, (fault,))
    try:
        genesis = genesis_of(rows[0])
    except DecodeError:
        fault = Fault(1, HASH, "the genesis row does not decode")
        return AuditReport(rows[0].game_id, "", len(rows), 0, False, False, (fault,))
    version = record_version(genesis)
    if version not in VERSIONS:
        fault = Fault(1, RULE, f"record format version {version} is unknown to this build")
        return AuditReport(genesis.game_id, genesis.game_kind, len(rows), 0, False, False, (fault,))
    faults = check_chain(rows, version) + check_game_ids(rows, genesis.game_id)
    seed, seed_faults = _seed_for(rows, genesis, server_seed)
    faults += seed_faults
    notes: list[str] = []
    if version == FORMAT_2 and seed is not None:
        faults += check_commitments(rows, seed)
    elif version == FORMAT_2:
        hidden = sum(1 for r in rows if salted(r.kind))
        notes.append(f"commitments of {hidden} command rows not opened: the seed is not revealed")
    checked, outcome, table = 0, None, None
    if hashlib.sha256(pack_bytes).hexdigest() != genesis.pack_sha256:
        faults.append(Fault(1, PACK, "the content pack does not match the genesis sha256"))
    elif genesis.game_kind == TOURNAMENT:  # a tournament's own record (replay/tournament/)
        from feastlog.replay.tournament.record import fold_faults as tournament_fold

        checked, tournament_faults = tournament_fold(rows)
        faults += tournament_faults + result_faults(rows, claimed, None, "a tournament")
    elif genesis.game_kind not in games.kinds() or (
        genesis.ruleset_version not in fold.engine_of(genesis).spec.rulesets
    ):
        faults.append(
            Fault(1, RULE, f"ruleset {genesis.game_kind} {genesis.ruleset_version} is unknown")
        )
    elif seed is None:
        notes.append("states not checked: the seed is not revealed")
        if rows[-1].kind != SEED_REVEAL:  # (a reveal that does not open: no result to judge)
            faults += result_faults(rows, claimed, None, "the game is running, no seed reveal")
    else:
        table, checked, fold_faults = _fold(rows, genesis, seed, pack_bytes)
        faults += fold_faults
        if table is not None:
            outcome, end_faults = _ending(rows, genesis, table, claimed, not fold_faults)
            faults += end_faults
    ordered = tuple(sorted(_unique(faults), key=lambda f: (f.seq, FAULT_KINDS.index(f.kind))))
    over = rows[-1].kind == SEED_REVEAL
    return AuditReport(
        genesis.game_id,
        genesis.game_kind,
        len(rows),
        checked,
        table is not None,
        over,
        ordered,
        outcome,
        tuple(notes),
        version,
    )


def outcome_key(outcome: Outcome) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The points and winners of an outcome, the part a claimed result states."""
    return tuple(outcome.points), tuple(outcome.winners)


def _unique(faults: Sequence[Fault]) -> list[Fault]:
    """Faults without repeats of the same kind at the same seq."""
    seen: set[tuple[int, str]] = set()
    out = []
    for fault in faults:
        if (fault.seq, fault.kind) not in seen:
            seen.add((fault.seq, fault.kind))
            out.append(fault)
    return out
