"""docs/record-format.md's "Proof beyond the operator" is enough: a checker written from its
text alone (the standard library, and Ed25519 from the cryptography package; no feastlog
code) checks a real server's receipts, its signed head and every row's inclusion in it,
and finds a receipt or a path that was tampered with."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from tests.grpc.test_proof_service import KEY, exported, play_kept
from tests.serverutil import ThreadedServer


def canonical(value: dict[str, Any]) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def signed(public_key: str, message: dict[str, Any], signature: str) -> bool:
    """The page's signature: Ed25519 over canonical(message), keys and signatures in hex."""
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
        key.verify(bytes.fromhex(signature), canonical(message))
    except (ValueError, InvalidSignature):
        return False
    return True


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def included(index: int, size: int, leaf: bytes, path: list[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2, as the page points to it."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while fn and not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def receipt_message(r: dict[str, Any]) -> dict[str, Any]:
    names = ("commitment", "game_id", "hash", "kind", "seq", "signed_at", "state_hash")
    return {**{n: r[n] for n in names}, "type": "feastlog-receipt"}


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mp = pytest.MonkeyPatch()
    mp.setenv("FEASTLOG_ORGANISER_KEY", KEY)
    server = ThreadedServer(Path(tmp_path_factory.mktemp("proof")) / "games.duckdb")
    try:
        played = play_kept(server)
        document = exported(server.address, played["game_id"])
    finally:
        server.stop()
        mp.undo()
    receipts = [vars(r) for r, _, _ in played["receipts"]]
    return {"document": document, "receipts": receipts}


def check(document: dict[str, Any], receipts: list[dict[str, Any]]) -> list[str]:
    """Everything the page says to check: receipts, then the head and each row's path."""
    rows = {r["seq"]: r for r in document["rows"]}
    proof = document["proof"]
    keys = {k["public_key"] for k in proof["server_keys"]}
    problems = []
    for r in receipts:
        if r["public_key"] not in keys or not signed(
            r["public_key"], receipt_message(r), r["signature"]
        ):
            problems.append(f"receipt {r['seq']}: signature")
        row = rows.get(r["seq"])
        if row is None or any(row[n] != r[n] for n in ("kind", "hash", "state_hash", "commitment")):
            problems.append(f"receipt {r['seq']}: row changed")
    head = proof["tree_head"]
    message = {
        "root": head["root"],
        "signed_at": head["signed_at"],
        "size": head["size"],
        "type": "feastlog-tree-head",
    }
    if head["public_key"] not in keys or not signed(head["public_key"], message, head["signature"]):
        problems.append("head: signature")
    for entry in proof["inclusion"]:
        row = rows[entry["seq"]]
        leaf = canonical({"game_id": document["game_id"], "hash": row["hash"], "seq": row["seq"]})
        leaf_hash = hashlib.sha256(b"\x00" + leaf).digest()
        path = [bytes.fromhex(p) for p in entry["path"]]
        if not included(
            entry["leaf_index"], head["size"], leaf_hash, path, bytes.fromhex(head["root"])
        ):
            problems.append(f"row {entry['seq']}: not in the head")
    return problems


def test_a_checker_from_the_page_alone_checks_a_servers_proofs(game: dict[str, Any]) -> None:
    document, receipts = game["document"], game["receipts"]
    assert len(receipts) == len(document["rows"]) == len(document["proof"]["inclusion"])
    assert check(document, receipts) == []


def test_the_same_checker_finds_a_changed_row_and_a_bad_path(game: dict[str, Any]) -> None:
    document = json.loads(json.dumps(game["document"]))
    document["rows"][3]["hash"] = "00" * 32
    document["proof"]["inclusion"][5]["path"][0] = "11" * 32
    found = check(document, game["receipts"])
    assert "receipt 4: row changed" in found
    assert "row 4: not in the head" in found and "row 6: not in the head" in found
