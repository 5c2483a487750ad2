"""``feastlog bench-proof``: the log tree at a million rows, in memory, and the cost of
signing (what a receipt and a head cost the server).

Reported, never asserted: the tree's build rate, the root, inclusion and consistency
proofs (their sizes in hashes and bytes, and the time to make and check each), and one
Ed25519 signature (a receipt per row) and a head over the rows a server takes in at
1,000 rows/s for one head interval.
"""

from __future__ import annotations

import hashlib
import random
import statistics
import time
from collections.abc import Callable, Iterator

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from feastlog.replay.proof.merkle import Tree, verify_consistency, verify_inclusion
from feastlog.replay.proof.signed import leaf_hash_of
from feastlog.replay.record.rows import Row
from feastlog.service.app.logtree import HEAD_INTERVAL
from feastlog.service.app.notary import Notary, signed_by


def timed(work: Callable[[], object], times: int) -> float:
    """The median seconds of ``work`` over ``times`` runs."""
    took = []
    for _ in range(times):
        start = time.perf_counter()
        work()
        took.append(time.perf_counter() - start)
    return statistics.median(took)


def run(rows: int, samples: int) -> Iterator[str]:
    """The report, a line at a time."""
    start = time.perf_counter()
    tree = Tree(hashlib.sha256(i.to_bytes(8, "big")).digest() for i in range(rows))
    built = time.perf_counter() - start
    yield f"log tree of {rows:,} leaves built in {built:.2f} s ({rows / built:,.0f} leaves/s)"
    yield f"root: {1e6 * timed(tree.root, samples):.0f} µs"
    rng = random.Random(1)
    picks = [rng.randrange(rows) for _ in range(samples)]
    paths = [tree.inclusion(i) for i in picks]
    made = timed(lambda: tree.inclusion(picks[0]), samples)
    root = tree.root()
    checked = timed(
        lambda: verify_inclusion(picks[0], rows, tree.leaf(picks[0]), paths[0], root), samples
    )
    most = max(len(p) for p in paths)
    yield (
        f"inclusion proof: {most} hashes ({most * 32} bytes, {most * 64} hex digits) at most; "
        f"made in {1e6 * made:.0f} µs, checked in {1e6 * checked:.0f} µs"
    )
    first = rows - rows // 3
    proof = tree.consistency(first)
    made = timed(lambda: tree.consistency(first), samples)
    old = tree.root(first)
    checked = timed(lambda: verify_consistency(first, rows, old, root, proof), samples)
    yield (
        f"consistency proof {first:,} -> {rows:,}: {len(proof)} hashes ({len(proof) * 32} "
        f"bytes); made in {1e6 * made:.0f} µs, checked in {1e6 * checked:.0f} µs"
    )
    notary = Notary(Ed25519PrivateKey.generate(), "bench")
    row = Row("g_0123456789abcdef", 7, "command", "seat:1", "c", b"\x01", "2026-12-02T00:00:00Z",
              "00" * 32, "ab" * 32, "cd" * 32, "ef" * 32)  # fmt: skip
    receipt = notary.receipt(row, "2026-12-02T00:00:00.000000Z")
    signing = timed(lambda: notary.receipt(row, "2026-12-02T00:00:00.000000Z"), samples * 10)
    checking = timed(lambda: signed_by(receipt), samples * 10)
    leaf = timed(lambda: leaf_hash_of(row), samples * 10)
    yield (
        f"receipt: signed in {1e6 * signing:.0f} µs, checked in {1e6 * checking:.0f} µs "
        f"(one per row on the submit path; its leaf hash {1e6 * leaf:.1f} µs)"
    )
    arriving = int(1000 * HEAD_INTERVAL)  # rows between two heads at 1,000 rows/s
    fresh = [hashlib.sha256(b"x" + i.to_bytes(8, "big")).digest() for i in range(arriving)]

    def one_head() -> None:  # the tree grows by an interval's rows each time, as a server's
        for leaf in fresh:
            tree.append(leaf)
        notary.head(tree.size, tree.root(), "2026-12-02T00:00:00.000000Z")

    head = timed(one_head, 5)
    yield (
        f"a head at 1,000 rows/s: {arriving:,} leaves taken in and signed every "
        f"{HEAD_INTERVAL:g} s in {1e3 * head:.1f} ms "
        f"({100 * head / HEAD_INTERVAL:.2f}% of one core)"
    )
