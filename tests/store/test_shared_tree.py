"""Two nodes on one PostgreSQL database share one log tree: rows committed on either take
positions in one order, each node's signed heads are heads of that one tree, and a head
of one node is proven consistent with a head of the other."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from feastlog.replay.proof.merkle import Tree, verify_consistency
from feastlog.replay.proof.signed import leaf_hash_of
from feastlog.service.app.notary import signed_by
from feastlog.service.store.port import open_store
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from tests.serverutil import ThreadedServer, create, play_to_end, stub


@pytest.fixture
def nodes(postgres: str) -> Iterator[tuple[ThreadedServer, ThreadedServer]]:
    first, second = ThreadedServer(postgres), ThreadedServer(postgres)
    yield first, second
    first.stop()
    second.stop()


def test_two_nodes_sign_heads_of_one_tree(
    nodes: tuple[ThreadedServer, ThreadedServer], postgres: str
) -> None:
    a, b = nodes
    for node, seed in ((a, 1), (b, 2), (a, 3)):
        client = stub(node.address)
        game = create(client, node.key, "bon-appetit", ["Ann", "Bo"])
        play_to_end(
            client, game.game_id, [t.token for t in game.seat_tokens], seed=seed, stop_after=8
        )
    first = a.call(a.running.app.signing.issue())
    client = stub(b.address)
    game = create(client, b.key, "picky-eaters", ["Ann", "Bo"])
    play_to_end(client, game.game_id, [t.token for t in game.seat_tokens], seed=4, stop_after=6)
    second = b.call(b.running.app.signing.issue())
    assert first is not None and second is not None and second.size > first.size
    store = open_store(postgres)
    try:
        rows = [r for g in store.scan() for r in g.rows]
        leaves = store.leaves(0)
        kept = store.tree_heads()
    finally:
        store.close()
    assert sorted(leaves) == sorted(leaf_hash_of(r) for r in rows)
    tree = Tree(leaves)
    assert {(h.size, h.root) for h in kept} >= {
        (first.size, first.root),
        (second.size, second.root),
    }
    for head in kept:
        assert signed_by(head) and tree.root(head.size).hex() == head.root
    # node a proves node b's later head extends its own
    proofs = ppb_grpc.ProofServiceStub(grpc.insecure_channel(a.address))
    proof = proofs.GetConsistencyProof(
        ppb.GetConsistencyProofRequest(first=first.size, second=second.size)
    )
    path = [bytes.fromhex(p) for p in proof.path]
    assert verify_consistency(
        first.size, second.size, bytes.fromhex(first.root), bytes.fromhex(second.root), path
    )
