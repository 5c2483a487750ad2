"""The log tree's hashing and proofs (RFC 9162 section 2.1), against published vectors and
against a naive implementation written here from the RFC's definitions alone.

The vectors (tests/fixtures/merkle/transparency-dev-vectors.json) are transparency-dev/merkle's
testdata for inclusion and consistency proofs, with the RFC 6962 reference leaves and the
root of every tree size over them (its testonly/constants.go); the file names its commit.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feastlog.replay.proof.merkle import (
    EMPTY_ROOT,
    Tree,
    leaf_hash,
    node_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

VECTORS = json.loads(
    (
        Path(__file__).parents[1] / "fixtures" / "merkle" / "transparency-dev-vectors.json"
    ).read_text()
)


def b64(value: str | None) -> bytes:
    """A base64 hash of the vectors (null: no bytes)."""
    return base64.b64decode(value) if value else b""


def b64s(values: list[str] | None) -> list[bytes]:
    """A proof of the vectors (null: empty)."""
    return [b64(v) for v in values or []]


# The naive tree: MTH, PATH and PROOF exactly as RFC 9162 section 2.1 writes them, over
# lists of leaves, recomputing everything (no cache, no shared code with the module).


def naive_root(leaves: list[bytes]) -> bytes:
    """MTH(D[n]) over leaf inputs."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    left, right = naive_root(leaves[:k]), naive_root(leaves[k:])
    return hashlib.sha256(b"\x01" + left + right).digest()


def naive_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """PATH(m, D[n])."""
    if len(leaves) == 1:
        return []
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    if m < k:
        return [*naive_path(m, leaves[:k]), naive_root(leaves[k:])]
    return [*naive_path(m - k, leaves[k:]), naive_root(leaves[:k])]


def naive_proof(m: int, leaves: list[bytes], whole: bool = True) -> list[bytes]:
    """SUBPROOF(m, D[n], b)."""
    n = len(leaves)
    if m == n:
        return [] if whole else [naive_root(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return [*naive_proof(m, leaves[:k], whole), naive_root(leaves[k:])]
    return [*naive_proof(m - k, leaves[k:], False), naive_root(leaves[:k])]


REFERENCE = [bytes.fromhex(h) for h in VECTORS["reference"]["leaf_inputs_hex"]]


def test_the_root_of_every_prefix_of_the_rfc_6962_leaves_is_the_published_one() -> None:
    tree = Tree()
    assert tree.root() == EMPTY_ROOT
    for size, expected in enumerate(VECTORS["reference"]["roots_hex"]):
        if size:
            tree.append(leaf_hash(REFERENCE[size - 1]))
        assert tree.root().hex() == expected
        assert tree.root(size).hex() == expected
        assert naive_root(REFERENCE[:size]).hex() == expected


@pytest.mark.parametrize("case", VECTORS["inclusion"], ids=lambda c: c["file"])
def test_inclusion_vectors(case: dict[str, Any]) -> None:
    ok = verify_inclusion(
        case["leafIdx"],
        case["treeSize"],
        b64(case["leafHash"]),
        b64s(case["proof"]),
        b64(case["root"]),
    )
    assert ok is not case["wantErr"], case["desc"]


@pytest.mark.parametrize("case", VECTORS["consistency"], ids=lambda c: c["file"])
def test_consistency_vectors(case: dict[str, Any]) -> None:
    ok = verify_consistency(
        case["size1"], case["size2"], b64(case["root1"]), b64(case["root2"]), b64s(case["proof"])
    )
    assert ok is not case["wantErr"], case["desc"]


def test_the_happy_vectors_are_the_proofs_the_tree_makes() -> None:
    """Every vector that should verify over the reference leaves is the proof made here."""
    tree = Tree(leaf_hash(leaf) for leaf in REFERENCE)
    made = 0
    for case in VECTORS["inclusion"]:
        size, index = case["treeSize"], case["leafIdx"]
        if case["wantErr"] or size > 8 or b64(case["root"]) != tree.root(size):
            continue
        assert tree.inclusion(index, size) == b64s(case["proof"])
        made += 1
    for case in VECTORS["consistency"]:
        first, second = case["size1"], case["size2"]
        if case["wantErr"] or second > 8 or b64(case["root2"]) != tree.root(second):
            continue
        assert tree.consistency(first, second) == b64s(case["proof"])
        made += 1
    assert made >= 8


def test_leaf_and_node_prefixes() -> None:
    assert leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert (
        node_hash(b"a" * 32, b"b" * 32) == hashlib.sha256(b"\x01" + b"a" * 32 + b"b" * 32).digest()
    )


def test_proofs_outside_the_tree_are_refused() -> None:
    tree = Tree(leaf_hash(bytes([i])) for i in range(5))
    for bad in (lambda: tree.inclusion(5), lambda: tree.root(6), lambda: tree.consistency(0, 3)):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(ValueError):
        tree.append(b"short")


leaf_lists = st.lists(st.binary(max_size=8), min_size=1, max_size=70)


@settings(max_examples=60, deadline=None)
@given(leaf_lists, st.data())
def test_inclusion_agrees_with_the_naive_tree_and_verifies(
    leaves: list[bytes], data: st.DataObject
) -> None:
    tree = Tree(leaf_hash(leaf) for leaf in leaves)
    size = data.draw(st.integers(1, len(leaves)))
    index = data.draw(st.integers(0, size - 1))
    path = tree.inclusion(index, size)
    assert path == naive_path(index, leaves[:size])
    root = tree.root(size)
    assert root == naive_root(leaves[:size]) == root_of([leaf_hash(x) for x in leaves[:size]])
    assert verify_inclusion(index, size, leaf_hash(leaves[index]), path, root)
    other = leaf_hash(leaves[index] + b"!")
    assert not verify_inclusion(index, size, other, path, root)
    if path:
        flipped = [bytes([path[0][0] ^ 1]) + path[0][1:], *path[1:]]
        assert not verify_inclusion(index, size, leaf_hash(leaves[index]), flipped, root)
        assert not verify_inclusion(index, size, leaf_hash(leaves[index]), path[:-1], root)


@settings(max_examples=60, deadline=None)
@given(leaf_lists, st.data())
def test_consistency_agrees_with_the_naive_tree_and_verifies(
    leaves: list[bytes], data: st.DataObject
) -> None:
    tree = Tree(leaf_hash(leaf) for leaf in leaves)
    second = data.draw(st.integers(1, len(leaves)))
    first = data.draw(st.integers(1, second))
    proof = tree.consistency(first, second)
    assert proof == naive_proof(first, leaves[:second])
    one, two = tree.root(first), tree.root(second)
    assert verify_consistency(first, second, one, two, proof)
    if first < second:
        # a first tree whose last leaf was rewritten does not extend to the second
        forged = Tree(leaf_hash(x) for x in [*leaves[: first - 1], leaves[first - 1] + b"!"])
        assert not verify_consistency(first, second, forged.root(), two, proof)
        assert not verify_consistency(first, second, one, two, proof[:-1])


def test_a_tree_of_a_million_leaves_proves_in_about_forty_hashes() -> None:
    """Proof sizes grow as log2(n): 20 hashes at most for an inclusion in 2**20 leaves."""
    tree = Tree(hashlib.sha256(i.to_bytes(8, "big")).digest() for i in range(1 << 14))
    size = tree.size
    assert len(tree.inclusion(12345)) == 14
    assert len(tree.consistency(size - 3)) <= 2 * 14
    assert verify_consistency(
        size - 3, size, tree.root(size - 3), tree.root(), tree.consistency(size - 3)
    )
