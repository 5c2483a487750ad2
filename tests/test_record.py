"""The record's hash chain and canonical bytes (DESIGN.md section 2)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from replay.canonical import canonical_bytes
from replay.record import ZERO_HASH, make_row


def test_row_hash_is_sha256_of_prev_hash_and_canonical_json() -> None:
    row = make_row(
        "g_1", 1, "genesis", "server", b"\x01\x02", "2026-11-29T00:00:00Z", ZERO_HASH, "ab" * 32
    )
    canonical = (
        b'{"actor":"server","body":"0102","command_id":"","game_id":"g_1","kind":"genesis",'
        b'"recorded_at":"2026-11-29T00:00:00Z","seq":1,"state_hash":"' + b"ab" * 32 + b'"}'
    )
    assert row.canonical() == canonical
    assert row.hash == hashlib.sha256(bytes(32) + canonical).hexdigest()


def test_any_edit_breaks_the_chain() -> None:
    first = make_row("g", 1, "genesis", "server", b"a", "t", ZERO_HASH, "00" * 32)
    second = make_row("g", 2, "command", "seat:0", b"b", "t", first.hash, "11" * 32, "c1")
    assert second.expected_hash() == second.hash
    for edited in (
        replace(second, body=b"c"),
        replace(second, actor="seat:1"),
        replace(second, state_hash="22" * 32),
        replace(second, seq=3),
        replace(second, prev_hash="ff" * 32),
    ):
        assert edited.expected_hash() != second.hash


def test_canonical_bytes_sort_keys_and_encode_bytes_as_hex() -> None:
    assert canonical_bytes({"b": (1, 2), "a": b"\xff", "c": frozenset({3, 1})}) == (
        b'{"a":"ff","b":[1,2],"c":[1,3]}'
    )


def test_fast_canonical_encoder_matches_json_dumps_on_real_states() -> None:
    from replay.canonical import canonical_bytes_slow
    from tests.test_fixtures import FIXTURES, load

    for path in FIXTURES[:3]:
        rows, seed, pack = load(path)
        from replay.history import refold

        for table in refold(rows, seed, pack).tables:
            assert canonical_bytes(table) == canonical_bytes_slow(table)
            assert canonical_bytes(table) == canonical_bytes(table)  # cached path too
