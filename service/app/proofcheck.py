"""Checking the server's word offline: receipts against a record, a record against a signed
tree head, and a later head against an earlier one (docs/record-format.md, "Proof beyond
the operator").  No server, no database: the files and the signatures.

- A **receipts file** is JSON lines, one receipt each (``Receipt``'s fields, and, for a
  command its seat sent, the ``body`` hex and ``command_id`` it sent), as ``feastlog play``
  and ``demo`` keep them with ``--receipts FILE``.
- A **head file** is a JSON object: ``{"format": "feastlog-tree-head", "tree_head": {…},
  "consistency": [{"first", "first_root", "path"}, …]}``, the consistency proofs from
  earlier heads' sizes to this one (``feastlog head``, ``feastlog witness``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from feastlog.replay.proof.merkle import verify_consistency, verify_inclusion
from feastlog.replay.proof.signed import Receipt, TreeHead, leaf_hash_of
from feastlog.replay.record.rows import Row, commitment_of, row_salt
from feastlog.service.app.notary import signed_by

RECEIPT_FORMAT = "feastlog-receipt"
HEAD_FORMAT = "feastlog-tree-head"


class BadProofFile(Exception):
    """A receipts or head file that is not one: one line naming the file and the field."""


@dataclass(frozen=True)
class Kept:
    """A receipt as a player keeps it: the receipt, and what the seat sent (if it sent it)."""

    receipt: Receipt
    body: str = ""  # hex
    command_id: str = ""


@dataclass(frozen=True)
class HeadFile:
    """A signed tree head, and consistency proofs to it from earlier sizes."""

    head: TreeHead
    consistency: tuple[tuple[int, str, tuple[str, ...]], ...] = ()  # (first, first root, path)

    def to_dict(self) -> dict[str, Any]:
        """The head file's JSON object."""
        proofs = [
            {"first": first, "first_root": root, "path": list(path)}
            for first, root, path in self.consistency
        ]
        return {"format": HEAD_FORMAT, "tree_head": vars(self.head), "consistency": proofs}


def receipt_line(receipt: Receipt, body: bytes = b"", command_id: str = "") -> str:
    """One line of a receipts file."""
    entry: dict[str, Any] = {"format": RECEIPT_FORMAT, **vars(receipt)}
    if body:
        entry["body"], entry["command_id"] = body.hex(), command_id
    return json.dumps(entry, sort_keys=True)


def _typed(entry: Any, cls: type[Any], where: str) -> Any:
    """A dataclass from a JSON object, every field of its type (else BadProofFile)."""
    if not isinstance(entry, dict):
        raise BadProofFile(f"{where} is not a JSON object")
    values = {}
    for f in fields(cls):
        value = entry.get(f.name)
        wanted = int if f.type in ("int", int) else str
        if f.name == "signature" and value is None:
            value = ""
        if not isinstance(value, wanted) or isinstance(value, bool):
            raise BadProofFile(f"{where}.{f.name} is missing or not a {wanted.__name__}")
        values[f.name] = value
    return cls(**values)


def read_receipts(path: str, text: str) -> list[Kept]:
    """The receipts of a receipts file."""
    kept = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise BadProofFile(f"{path}:{n} is not JSON") from None
        receipt = _typed(entry, Receipt, f"{path}:{n}")
        body, command_id = entry.get("body", ""), entry.get("command_id", "")
        if not isinstance(body, str) or not isinstance(command_id, str):
            raise BadProofFile(f"{path}:{n}: body and command_id are strings")
        kept.append(Kept(receipt, body, command_id))
    return kept


def read_head(path: str, text: str) -> HeadFile:
    """The head of a head file (or of an export's proof section)."""
    try:
        document = json.loads(text)
    except ValueError:
        raise BadProofFile(f"{path} is not JSON") from None
    if not isinstance(document, dict):
        raise BadProofFile(f"{path} is not a head file")
    if document.get("format") == "feastlog-record":  # an export: its proof section's head
        document = document.get("proof") or {}
    head = _typed(document.get("tree_head"), TreeHead, f"{path}: tree_head")
    proofs = []
    for i, entry in enumerate(document.get("consistency") or []):
        where = f"{path}: consistency[{i}]"
        if not isinstance(entry, dict):
            raise BadProofFile(f"{where} is not a JSON object")
        first, root, steps = entry.get("first"), entry.get("first_root"), entry.get("path")
        if not isinstance(first, int) or not isinstance(root, str) or not isinstance(steps, list):
            raise BadProofFile(f"{where}: first, first_root and path are its fields")
        proofs.append((first, root, tuple(str(s) for s in steps)))
    return HeadFile(head, tuple(proofs))


def _bytes(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        return b""


def server_keys(document: dict[str, Any], genesis_key: str) -> set[str]:
    """The keys a record says its server signs with: its genesis's, and its export's list."""
    listed = (document.get("proof") or {}).get("server_keys") or []
    keys = {k.get("public_key", "") for k in listed if isinstance(k, dict)}
    return {k for k in {genesis_key, *keys} if k}


def check_receipts(
    rows: Sequence[Row], keys: set[str], server_seed: bytes | None, kept: Sequence[Kept]
) -> tuple[list[str], int]:
    """What the record contradicts of the receipts of its game: (problems, receipts checked).

    Each receipt must carry a good signature by one of ``keys``, and its row must be in the
    record unchanged; once the seed is revealed, what the seat sent must open the row's
    commitment and be the row's body.
    """
    problems: list[str] = []
    game_id = rows[0].game_id if rows else ""
    mine = [k for k in kept if k.receipt.game_id == game_id]
    by_seq = {r.seq: r for r in rows}
    for k in mine:
        r = k.receipt
        if not signed_by(r) or r.public_key not in keys:
            problems.append(f"the receipt of seq {r.seq} is not signed by this record's server")
            continue
        row = by_seq.get(r.seq)
        if row is None:
            problems.append(
                f"the server acknowledged seq {r.seq} ({r.kind}, hash {r.hash[:16]}…) "
                f"at {r.signed_at}: the record has no such row"
            )
            continue
        changed = r.matches(row)
        if changed:
            words = ", ".join(
                f"{name} {getattr(r, name)[:16]}… is now {getattr(row, name)[:16]}…"
                for name in changed
            )
            problems.append(f"seq {r.seq} was changed after the server acknowledged it: {words}")
            continue
        if k.body and server_seed is not None and r.commitment:
            opened = commitment_of(
                row_salt(server_seed, game_id, r.seq), _bytes(k.body), k.command_id
            )
            if opened != r.commitment or row.body.hex() != k.body:
                problems.append(f"seq {r.seq} does not hold the command its seat sent")
    return problems, len(mine)


def check_inclusion(
    rows: Sequence[Row], document: dict[str, Any], keys: set[str]
) -> tuple[TreeHead | None, list[str]]:
    """Whether every row of an export is in the log tree under the export's own signed head:
    (that head, problems)."""
    proof = document.get("proof")
    if not isinstance(proof, dict):
        return None, ["the record carries no proof section (exported before servers signed)"]
    try:
        head = _typed(proof.get("tree_head"), TreeHead, "proof.tree_head")
    except BadProofFile as bad:
        return None, [str(bad)]
    if not signed_by(head) or head.public_key not in keys:
        return head, ["the record's tree head is not signed by its server"]
    paths = {e.get("seq"): e for e in proof.get("inclusion") or [] if isinstance(e, dict)}
    problems = []
    root = _bytes(head.root)
    for row in rows:
        entry = paths.get(row.seq)
        if entry is None:
            problems.append(f"seq {row.seq} has no inclusion proof")
            continue
        path = [_bytes(str(p)) for p in entry.get("path") or []]
        index = entry.get("leaf_index")
        if not isinstance(index, int) or not verify_inclusion(
            index, head.size, leaf_hash_of(row), path, root
        ):
            problems.append(
                f"seq {row.seq} is not in the tree of the record's head ({head.names()})"
            )
    return head, problems


def check_extends(earlier: TreeHead, later: HeadFile, keys: set[str] | None = None) -> list[str]:
    """Whether ``later`` is signed and extends ``earlier`` (a consistency proof it carries,
    or the same root at the same size).  A different root at the same size is a split view."""
    head = later.head
    problems = []
    for h in (earlier, head):
        if not signed_by(h) or (keys is not None and h.public_key not in keys):
            problems.append(f"the head {h.names()} is not signed by the server's key")
    if problems:
        return problems
    if earlier.size == 0:
        return []  # the empty tree is a prefix of every tree
    if head.size == earlier.size:
        if head.root != earlier.root:
            return [
                f"split view: two roots for size {head.size}: {earlier.names()} and {head.names()}"
            ]
        return []
    if head.size < earlier.size:
        return [f"the head {head.names()} is older than {earlier.names()}: it cannot extend it"]
    for first, first_root, path in later.consistency:
        if first == earlier.size and first_root == earlier.root:
            ok = verify_consistency(
                first, head.size, _bytes(first_root), _bytes(head.root), [_bytes(p) for p in path]
            )
            return (
                []
                if ok
                else [
                    f"the head {head.names()} does not extend {earlier.names()}: "
                    "its consistency proof fails"
                ]
            )
    return [
        f"the head file holds no consistency proof from size {earlier.size} "
        f"(root {earlier.root[:16]}…)"
    ]


def check_record_in_head(record_head: TreeHead, given: HeadFile) -> list[str]:
    """Whether the record's own head is the given head, or one the given head extends (so
    every row in the record's head is in the given one too)."""
    if given.head.size == record_head.size:
        return check_extends(record_head, given)
    if given.head.size < record_head.size:
        return [
            f"the head given ({given.head.names()}) is older than the record's "
            f"({record_head.names()}): fetch a later head (feastlog head --since)"
        ]
    return check_extends(record_head, given)


__all__ = [
    "BadProofFile",
    "HeadFile",
    "Kept",
    "check_extends",
    "check_inclusion",
    "check_receipts",
    "check_record_in_head",
    "read_head",
    "read_receipts",
    "receipt_line",
    "server_keys",
]
