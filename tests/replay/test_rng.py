"""Golden tests for the RNG of DESIGN.md section 3: the spec can never drift."""

from __future__ import annotations

import hashlib
import hmac
import struct

import pytest

from feastlog.replay.record.rng import Rng, block, derive_seed, seed_commitment, stream_word

SEED = bytes(range(32))


def spec_block(seed: bytes, label: str, i: int) -> bytes:
    """Block i written straight from the spec text, independently of replay.rng."""
    return hmac.new(seed, label.encode() + b"\x00" + struct.pack(">Q", i), hashlib.sha256).digest()


def test_block_is_hmac_of_label_zero_and_index() -> None:
    assert block(SEED, "bon-appetit/dish-deck", 0) == spec_block(SEED, "bon-appetit/dish-deck", 0)
    assert block(SEED, "bon-appetit/dish-deck", 0).hex() == (
        "650792c8f3cf64ed7c4ee38f78dad84c00375026973ce8e03ffdc9e7b2abd027"
    )


def test_each_block_yields_four_big_endian_words_in_order() -> None:
    raw = spec_block(SEED, "test/label", 0) + spec_block(SEED, "test/label", 1)
    words = [int.from_bytes(raw[i * 8 : i * 8 + 8], "big") for i in range(5)]
    assert [stream_word(SEED, "test/label", i) for i in range(5)] == words
    assert words == [
        16770239328520874747,
        14752424863149702428,
        18099585579783618608,
        13515530724282233262,
        14703470903475631868,
    ]


def test_uniform_golden_values() -> None:
    rng = Rng(SEED)
    values = []
    for n in (1, 2, 3, 6, 13, 52, 2**63 + 1):
        value, rng = rng.uniform("test/uniform", n)
        values.append(value)
    assert values == [0, 1, 0, 2, 9, 14, 4563083399493982455]
    assert rng.position("test/uniform") == 7


def test_uniform_rejects_words_at_or_above_the_limit() -> None:
    n = 2**63 + 1
    limit = 2**64 - (2**64 % n)
    assert stream_word(SEED, "test/reject-1", 0) >= limit
    value, rng = Rng(SEED).uniform("test/reject-1", n)
    assert value == 3592372701811607851
    assert rng.position("test/reject-1") == 3  # two words rejected, the third taken


def test_shuffle_is_fisher_yates_from_the_end() -> None:
    shuffled, rng = Rng(SEED).shuffle("test/shuffle", list(range(13)))
    assert shuffled == (10, 3, 5, 11, 1, 12, 2, 9, 7, 4, 6, 0, 8)
    # the same by hand from the spec: j = uniform(i + 1) for i from 12 down to 1
    items, by_hand = list(range(13)), Rng(SEED)
    for i in range(12, 0, -1):
        j, by_hand = by_hand.uniform("test/shuffle", i + 1)
        items[i], items[j] = items[j], items[i]
    assert tuple(items) == shuffled
    assert rng == by_hand


def test_draw_sorts_the_bag_then_takes_uniform_index() -> None:
    item, left, _ = Rng(SEED).draw("test/bag", ["red", "blue", "blue", "green"])
    assert (item, left) == ("blue", ("blue", "green", "red"))
    index, _ = Rng(SEED).uniform("test/bag", 4)
    assert sorted(["red", "blue", "blue", "green"])[index] == item


def test_streams_are_independent_and_rng_is_a_value() -> None:
    rng = Rng(SEED)
    a, after_a = rng.uniform("one", 1000)
    b, _ = after_a.uniform("two", 1000)
    b_alone, _ = rng.uniform("two", 1000)
    assert b == b_alone
    again, _ = rng.uniform("one", 1000)
    assert again == a  # the original value did not move


def test_seat_entropy_derivation() -> None:
    assert derive_seed(SEED, []) == SEED
    assert derive_seed(SEED, [b"", b""]) == SEED
    msg = b"\x00\x00\x00\x03ann" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x05celia"
    expected = hmac.new(SEED, msg, hashlib.sha256).digest()
    assert derive_seed(SEED, [b"ann", b"", b"celia"]) == expected
    assert expected.hex() == "26fad6fceb7b1c7e19850af46d1bd2a130e32e12e45b00dd0b876716f9f23306"


def test_seed_commitment_is_sha256_hex() -> None:
    assert seed_commitment(SEED) == hashlib.sha256(SEED).hexdigest()


def test_uniform_needs_a_positive_n() -> None:
    with pytest.raises(ValueError):
        Rng(SEED).uniform("x", 0)
