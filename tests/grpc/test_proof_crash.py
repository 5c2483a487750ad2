"""kill -9 under load: no head a client was shown is lost, and the log tree in the file is
the tree of its rows (every row one leaf, in commit order, every kept head its root); the
server started again signs heads that extend the last one shown."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import grpc

from feastlog.replay.proof.merkle import Tree, verify_consistency
from feastlog.replay.proof.signed import TreeHead, leaf_hash_of
from feastlog.service.app.notary import signed_by
from feastlog.service.store.port import open_store
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from tests.cli.test_proof_cli import headed
from tests.serverutil import ProcessServer, create, play_to_end, stub

KEY = "org_test-organiser-key-0123456789abcdef"
LOAD_SECONDS = 5.0  # two heads at least (one every 2 s) while rows arrive


def head_of(message: ppb.GetTreeHeadResponse) -> TreeHead:
    h = message.head
    return TreeHead(h.size, h.root, h.signed_at, h.public_key, h.signature)


def test_kill_9_under_load_loses_no_head_and_keeps_the_tree_consistent(tmp_path: Path) -> None:
    db = tmp_path / "games.duckdb"
    server = ProcessServer(db, KEY)
    client = stub(server.address)
    proofs = ppb_grpc.ProofServiceStub(grpc.insecure_channel(server.address))
    stop = threading.Event()

    def seats(seed: int) -> None:
        while not stop.is_set():
            try:
                game = create(client, KEY, "bon-appetit", ["Ann", "Bo", "Cy"])
                tokens = [t.token for t in game.seat_tokens]
                play_to_end(client, game.game_id, tokens, seed=seed, stop_after=40)
            except grpc.RpcError:
                return  # the server is gone

    players = [threading.Thread(target=seats, args=(i,), daemon=True) for i in range(3)]
    for p in players:
        p.start()
    shown: list[TreeHead] = []
    deadline = time.monotonic() + LOAD_SECONDS
    while time.monotonic() < deadline:
        with contextlib.suppress(grpc.RpcError):  # no head yet
            shown.append(head_of(proofs.GetTreeHead(ppb.GetTreeHeadRequest())))
        time.sleep(0.25)
    server.kill()  # mid-load: commands in flight
    stop.set()
    for p in players:
        p.join(timeout=20)
    assert len({h.size for h in shown}) >= 2, shown

    store = open_store(str(db))
    try:
        rows = [r for game in store.scan() for r in game.rows]
        leaves = store.leaves(0, 10**7)
        kept = store.tree_heads()
    finally:
        store.close()
    # every row exactly one leaf, each game's rows in seq order in the tree
    assert sorted(leaves) == sorted(leaf_hash_of(r) for r in rows)
    place = {leaf: i for i, leaf in enumerate(leaves)}
    for game_id in {r.game_id for r in rows}:
        places = [place[leaf_hash_of(r)] for r in rows if r.game_id == game_id]
        assert places == sorted(places)
    tree = Tree(leaves)
    for head in kept:
        assert signed_by(head)
        assert tree.root(head.size).hex() == head.root, head
    assert {(h.size, h.root) for h in shown} <= {(h.size, h.root) for h in kept}

    again = ProcessServer(db, KEY)
    try:
        proofs = ppb_grpc.ProofServiceStub(grpc.insecure_channel(again.address))
        headed(again.address)
        now = head_of(proofs.GetTreeHead(ppb.GetTreeHeadRequest()))
        last = max(shown, key=lambda h: h.size)
        proof = proofs.GetConsistencyProof(
            ppb.GetConsistencyProofRequest(first=last.size, second=now.size)
        )
        path = [bytes.fromhex(p) for p in proof.path]
        assert verify_consistency(
            last.size, now.size, bytes.fromhex(last.root), bytes.fromhex(now.root), path
        )
    finally:
        again.terminate()
