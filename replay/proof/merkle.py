"""The log tree: RFC 9162 (Certificate Transparency 2.0) Merkle tree hashing, section 2.1.

Pure: no I/O, no clock.  A leaf's hash is ``SHA-256(0x00 || leaf)``, a node's
``SHA-256(0x01 || left || right)``; the root of no leaves is ``SHA-256()``.  The root of n
leaves splits them at k, the largest power of two smaller than n: MTH(D[0:k]) on the left,
MTH(D[k:n]) on the right (section 2.1.1).  Inclusion proofs (2.1.3) and consistency
proofs (2.1.4) are made and checked as the RFC says, with its verification algorithms
step by step, so a verifier written from the RFC agrees with this one.

``Tree`` keeps every complete, aligned subtree's hash as leaves arrive (level k holds the
roots of the subtrees of 2**k leaves), so appending costs one hash a level at most and any
root, inclusion proof or consistency proof over a million leaves takes about 2·log2(n)
node hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

HASH_SIZE = 32
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(leaf: bytes) -> bytes:
    """SHA-256(0x00 || leaf): the hash of one entry of the log."""
    return hashlib.sha256(LEAF_PREFIX + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 || left || right): the hash of an inner node."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n >= 2): where the RFC splits n leaves."""
    return 1 << ((n - 1).bit_length() - 1)


class Tree:
    """An append-only Merkle tree over leaf hashes, with every complete subtree cached."""

    def __init__(self, leaf_hashes: Iterable[bytes] = ()) -> None:
        self._levels: list[list[bytes]] = [[]]
        for hashed in leaf_hashes:
            self.append(hashed)

    @property
    def size(self) -> int:
        """How many leaves the tree holds."""
        return len(self._levels[0])

    def append(self, hashed: bytes) -> int:
        """Add a leaf by its hash (``leaf_hash``); its index."""
        if len(hashed) != HASH_SIZE:
            raise ValueError(f"a leaf hash is {HASH_SIZE} bytes, not {len(hashed)}")
        index = self.size
        self._levels[0].append(hashed)
        level, at = 0, index
        while at % 2 == 1:  # a right child completes its parent
            below = self._levels[level]
            if len(self._levels) == level + 1:
                self._levels.append([])
            self._levels[level + 1].append(node_hash(below[at - 1], below[at]))
            level, at = level + 1, at // 2
        return index

    def leaf(self, index: int) -> bytes:
        """The hash of leaf ``index``."""
        return self._levels[0][index]

    def root(self, size: int | None = None) -> bytes:
        """The root of the tree's first ``size`` leaves (all of them by default)."""
        size = self.size if size is None else size
        self._within(size)
        return self._subtree(0, size) if size else EMPTY_ROOT

    def inclusion(self, index: int, size: int | None = None) -> list[bytes]:
        """PATH(index, D[0:size]): the audit path of leaf ``index`` in the tree of ``size``."""
        size = self.size if size is None else size
        self._within(size)
        if not 0 <= index < size:
            raise ValueError(f"leaf {index} is not in a tree of {size} leaves")
        return self._path(index, 0, size)

    def consistency(self, first: int, second: int | None = None) -> list[bytes]:
        """PROOF(first, D[0:second]): that the tree of ``first`` leaves is a prefix of the
        tree of ``second`` (empty when they are the same size)."""
        second = self.size if second is None else second
        self._within(second)
        if not 0 < first <= second:
            raise ValueError(f"no consistency proof from {first} leaves to {second}")
        return self._subproof(first, 0, second, True)

    def _within(self, size: int) -> None:
        if not 0 <= size <= self.size:
            raise ValueError(f"the tree has {self.size} leaves, not {size}")

    def _subtree(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]), from the cache where the subtree is complete and aligned."""
        n = end - start
        if n & (n - 1) == 0 and start % n == 0:
            return self._levels[n.bit_length() - 1][start // n]
        k = split(n)
        return node_hash(self._subtree(start, start + k), self._subtree(start + k, end))

    def _path(self, m: int, start: int, end: int) -> list[bytes]:
        """PATH(m, D[start:end]) of RFC 9162 section 2.1.3.1, ``m`` relative to ``start``."""
        n = end - start
        if n == 1:
            return []
        k = split(n)
        if m < k:
            return [*self._path(m, start, start + k), self._subtree(start + k, end)]
        return [*self._path(m - k, start + k, end), self._subtree(start, start + k)]

    def _subproof(self, m: int, start: int, end: int, whole: bool) -> list[bytes]:
        """SUBPROOF(m, D[start:end], b) of RFC 9162 section 2.1.4.1."""
        n = end - start
        if m == n:
            return [] if whole else [self._subtree(start, end)]
        k = split(n)
        if m <= k:
            return [*self._subproof(m, start, start + k, whole), self._subtree(start + k, end)]
        return [*self._subproof(m - k, start + k, end, False), self._subtree(start, start + k)]


def root_of(leaf_hashes: Sequence[bytes]) -> bytes:
    """The root of a list of leaf hashes."""
    return Tree(leaf_hashes).root()


def verify_inclusion(
    index: int, size: int, hashed: bytes, path: Sequence[bytes], root: bytes
) -> bool:
    """Whether ``path`` proves leaf hash ``hashed`` at ``index`` in the tree of ``size``
    leaves whose root is ``root`` (RFC 9162 section 2.1.3.2, step by step)."""
    if not 0 <= index < size or not _hashes(hashed, root, *path):
        return False
    fn, sn, r = index, size - 1, hashed
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, path: Sequence[bytes]
) -> bool:
    """Whether ``path`` proves the tree of ``first`` leaves (root ``first_root``) a prefix
    of the tree of ``second`` (root ``second_root``): RFC 9162 section 2.1.4.2, step by
    step.  Two trees of one size are consistent with an empty path when their roots are
    the same; no proof starts from the empty tree."""
    if not 0 < first <= second:
        return False
    if first == second:
        return not path and first_root == second_root
    if not path or not _hashes(first_root, second_root, *path):
        return False
    steps = list(path)
    if first & (first - 1) == 0:
        steps.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = steps[0]
    for c in steps[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


def _hashes(*values: bytes) -> bool:
    """Whether every value is a hash (32 bytes)."""
    return all(isinstance(v, bytes) and len(v) == HASH_SIZE for v in values)
