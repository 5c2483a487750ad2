"""The record's hash chain, canonical bytes and commitments, per format (DESIGN.md section 2).

The exact bytes pinned here are the ones docs/record-format.md spells out for verifiers in
other languages.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace

import pytest

from feastlog.replay.record.canonical import canonical_bytes
from feastlog.replay.record.rows import ZERO_HASH, commitment_of, make_row, row_salt


def test_format_1_row_hash_is_sha256_of_prev_hash_and_canonical_json() -> None:
    row = make_row(
        "g_1",
        1,
        "genesis",
        "server",
        b"\x01\x02",
        "2026-11-29T00:00:00Z",
        ZERO_HASH,
        "ab" * 32,
        version=1,
    )
    canonical = (
        b'{"actor":"server","body":"0102","command_id":"","game_id":"g_1","kind":"genesis",'
        b'"recorded_at":"2026-11-29T00:00:00Z","seq":1,"state_hash":"' + b"ab" * 32 + b'"}'
    )
    assert row.canonical(1) == canonical
    assert row.hash == hashlib.sha256(bytes(32) + canonical).hexdigest()
    assert row.commitment == ""


def test_format_2_salt_commitment_and_row_hash_are_the_documented_bytes() -> None:
    seed = bytes(range(32))
    salt = row_salt(seed, "g_1", 2)
    msg = b"row-salt" + (3).to_bytes(4, "big") + b"g_1" + (2).to_bytes(8, "big")
    assert salt == hmac.new(seed, msg, hashlib.sha256).digest()
    row = make_row(
        "g_1",
        2,
        "command",
        "seat:0",
        b"\x01\x02",
        "2026-11-29T00:00:00Z",
        "cd" * 32,
        "ab" * 32,
        "js-1",
        version=2,
        server_seed=seed,
    )
    committed = b'{"body":"0102","command_id":"js-1"}'
    assert row.commitment == hashlib.sha256(salt + committed).hexdigest()
    assert row.commitment == commitment_of(salt, b"\x01\x02", "js-1")
    canonical = (
        b'{"actor":"seat:0","commitment":"' + row.commitment.encode() + b'","game_id":"g_1",'
        b'"kind":"command","recorded_at":"2026-11-29T00:00:00Z","seq":2,"state_hash":"'
        + b"ab" * 32
        + b'"}'
    )
    assert row.canonical(2) == canonical
    assert row.hash == hashlib.sha256(bytes.fromhex("cd" * 32) + canonical).hexdigest()


def test_format_2_genesis_and_reveal_rows_commit_with_an_empty_salt() -> None:
    row = make_row("g_1", 1, "genesis", "server", b"\x01", "t", ZERO_HASH, "ab" * 32, version=2)
    assert row.commitment == hashlib.sha256(b'{"body":"01","command_id":""}').hexdigest()
    assert row.opens(b"")


def test_salts_differ_by_game_and_seq_and_need_the_seed() -> None:
    seed = b"\x05" * 32
    salts = {row_salt(seed, g, s) for g in ("g_a", "g_b") for s in (1, 2, 3)}
    assert len(salts) == 6  # duplicate tables dealt from one seed share no salt
    assert row_salt(b"\x06" * 32, "g_a", 2) != row_salt(seed, "g_a", 2)
    with pytest.raises(ValueError):
        make_row("g", 2, "command", "seat:0", b"b", "t", ZERO_HASH, "11" * 32, version=2)


@pytest.mark.parametrize("version", [1, 2])
def test_any_edit_breaks_the_chain(version: int) -> None:
    seed = b"\x01" * 32
    first = make_row("g", 1, "genesis", "server", b"a", "t", ZERO_HASH, "00" * 32, version=version)
    second = make_row(
        "g",
        2,
        "command",
        "seat:0",
        b"b",
        "t",
        first.hash,
        "11" * 32,
        "c1",
        version=version,
        server_seed=seed,
    )
    assert second.expected_hash(version) == second.hash
    for edited in (
        replace(second, actor="seat:1"),
        replace(second, state_hash="22" * 32),
        replace(second, seq=3),
        replace(second, prev_hash="ff" * 32),
        replace(second, recorded_at="u"),
    ):
        assert edited.expected_hash(version) != second.hash
    salt = row_salt(seed, "g", 2)
    for edited in (replace(second, body=b"c"), replace(second, command_id="c2")):
        if version == 1:
            assert edited.expected_hash(version) != second.hash
        else:  # the chain holds only the commitment; opening it with the salt fails
            assert edited.expected_hash(version) == second.hash
            assert not edited.opens(salt) and second.opens(salt)
    if version == 2:
        assert replace(second, commitment="00" * 32).expected_hash(2) != second.hash


def test_canonical_bytes_sort_keys_and_encode_bytes_as_hex() -> None:
    assert canonical_bytes({"b": (1, 2), "a": b"\xff", "c": frozenset({3, 1})}) == (
        b'{"a":"ff","b":[1,2],"c":[1,3]}'
    )


def test_fast_canonical_encoder_matches_json_dumps_on_real_states() -> None:
    from feastlog.replay.record.canonical import canonical_bytes_slow
    from tests.replay.test_fixtures import FIXTURES, load

    for path in FIXTURES[:3]:
        rows, seed, pack = load(path)
        from feastlog.replay.record.history import refold

        for table in refold(rows, seed, pack).tables:
            assert canonical_bytes(table) == canonical_bytes_slow(table)
            assert canonical_bytes(table) == canonical_bytes(table)  # cached path too
