"""The log tree in every store: each appended row gets the next position in the commit that
appends it, nothing for a commit that fails; heads, cosignatures and signing keys are kept.
The same suite on every adapter (the ``store`` fixture of the contract tests)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from feastlog.replay.proof.merkle import Tree
from feastlog.replay.proof.signed import Cosignature, TreeHead, leaf_hash_of
from feastlog.service.app.errors import StoreConflict
from feastlog.service.store import Batch
from feastlog.service.store.port import EventStore, open_store
from tests.recordutil import build, games_batch
from tests.store import test_store_contract as contract

store = contract.store  # the fixture: every adapter


def test_every_appended_row_takes_the_next_position_in_its_commit(store: EventStore) -> None:
    one, two = build(players=2, seed_byte=41), build(players=2, seed_byte=42, stop_after=4)
    store.write(games_batch([one]))
    store.write(games_batch([two]))
    rows = [*one.rows, *two.rows]
    assert store.leaves(0) == [leaf_hash_of(r) for r in rows]
    assert store.leaves(3, 2) == [leaf_hash_of(r) for r in rows[3:5]]
    assert store.leaf_position(two.rows[0].game_id, 2) == len(one.rows) + 1
    assert store.leaf_position("g_nothing", 1) is None
    with pytest.raises(StoreConflict):  # a taken seq: the commit fails, and takes no place
        store.write(Batch(rows=[two.rows[-1]]))
    assert len(store.leaves(0)) == len(rows)


def test_heads_cosignatures_and_keys_are_kept(store: EventStore) -> None:
    built = build(players=2, seed_byte=43, stop_after=3)
    store.write(games_batch([built]))
    root = Tree(store.leaves(0)).root().hex()
    first = TreeHead(len(built.rows), root, "2026-12-02T00:00:01Z", "ab" * 32, "cd" * 64)
    store.add_tree_head(first)
    store.add_tree_head(TreeHead(1, "ee" * 32, "2026-12-02T00:00:00Z", "ab" * 32, "ff" * 64))
    assert [h.size for h in store.tree_heads()] == [1, len(built.rows)]
    assert store.tree_heads(len(built.rows)) == [first]
    witnessed = Cosignature.of(first, "12" * 32, "2026-12-02T00:00:02Z")
    store.add_cosignature(witnessed)
    assert store.cosignatures(first.size) == [witnessed]
    assert store.cosignatures(99) == []
    store.add_server_key("ab" * 32, "2026-12-02T00:00:00Z")
    store.add_server_key("ab" * 32, "2026-12-03T00:00:00Z")  # known already: kept as it was
    store.add_server_key("cd" * 32, "2026-12-04T00:00:00Z")
    assert store.server_keys() == [
        ("ab" * 32, "2026-12-02T00:00:00Z"),
        ("cd" * 32, "2026-12-04T00:00:00Z"),
    ]


def test_a_file_written_before_the_tree_gets_its_leaves_when_opened(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "old.duckdb"
    built = build(players=2, seed_byte=44)
    opened = open_store(str(path))
    opened.write(games_batch([built]))
    opened.close()
    with duckdb.connect(str(path)) as con:  # as a file of the build before the tree
        con.execute("UPDATE events SET tree_position = NULL")
    (tmp_path / "old.duckdb.commits").unlink(missing_ok=True)
    opened = open_store(str(path))
    try:
        assert opened.leaves(0) == [leaf_hash_of(r) for r in built.rows]
    finally:
        opened.close()


def test_nodes_writing_at_once_never_share_a_position(postgres: str) -> None:
    """Two nodes (two stores on one database) commit at once: every position is taken once,
    and each row's leaf is its own."""
    nodes = [open_store(postgres), open_store(postgres)]
    games = [build(players=2, seed_byte=50 + i, stop_after=3) for i in range(8)]
    try:

        def write(node: EventStore, mine: list) -> None:
            for built in mine:
                node.write(games_batch([built]))

        threads = [threading.Thread(target=write, args=(nodes[i], games[i::2])) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rows = [r for g in games for r in g.rows]
        leaves = nodes[0].leaves(0)
        assert sorted(leaves) == sorted(leaf_hash_of(r) for r in rows)
        positions = {nodes[1].leaf_position(r.game_id, r.seq) for r in rows}
        assert positions == set(range(len(rows)))
    finally:
        for node in nodes:
            node.close()
