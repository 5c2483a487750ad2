"""The project's HMAC-SHA256 is RFC 2104's: the same bytes as the standard library's."""

from __future__ import annotations

import hmac
import random

from feastlog.replay.record.rng import hmac_sha256


def test_hmac_sha256_matches_the_standard_library_for_keys_and_messages_of_every_length() -> None:
    draw = random.Random(7)
    for key_length in (0, 1, 16, 32, 63, 64, 65, 100, 200):
        for message_length in (0, 1, 9, 55, 64, 65, 1000, 3000):
            key = draw.randbytes(key_length)
            message = draw.randbytes(message_length)
            assert hmac_sha256(key, message) == hmac.digest(key, message, "sha256")


def test_a_key_used_again_gives_the_same_digest_and_keys_do_not_mix() -> None:
    first, second = b"k" * 32, b"j" * 32
    assert hmac_sha256(first, b"m") == hmac_sha256(first, b"m")
    assert hmac_sha256(first, b"m") != hmac_sha256(second, b"m")
    assert hmac_sha256(first, b"m") == hmac.digest(first, b"m", "sha256")
