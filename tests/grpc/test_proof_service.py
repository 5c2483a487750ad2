"""Proof beyond the operator, on a real server: a signed receipt for every kind of row, signed
tree heads, inclusion and consistency proofs that verify (RFC 9162), and the signing key in
no answer, log line or export."""

from __future__ import annotations

import json
import logging
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest

from feastlog.replay.proof.merkle import leaf_hash, verify_consistency, verify_inclusion
from feastlog.replay.proof.signed import Receipt, TreeHead, leaf_of
from feastlog.replay.record.rows import commitment_of, row_salt
from feastlog.service.app.clock import ManualClock, utc_now
from feastlog.service.app.logtree import HEAD_INTERVAL
from feastlog.service.app.notary import SIGNING_KEY_FILE, signature_holds, signed_by
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import proof_pb2, record_pb2
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests.serverutil import ThreadedServer, bearer, create, error_info, stub, view_of

KEY = "org_test-organiser-key-0123456789abcdef"


def receipt_of(message: proof_pb2.Receipt) -> Receipt:
    """A receipt message as the value it signs."""
    return Receipt(**{f: getattr(message, f) for f in proof_pb2.Receipt.DESCRIPTOR.fields_by_name})


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("FEASTLOG_ORGANISER_KEY", KEY)
    running = ThreadedServer(tmp_path / "games.duckdb")
    yield running
    running.stop()


def play_kept(server: ThreadedServer, seed: int = 5) -> dict[str, Any]:
    """A Bon Appetit! game played to its end with a ruling in it, every receipt kept with
    what was sent: {"game_id", "receipts": [(receipt, body, command_id)]}."""
    import random

    client = stub(server.address)
    made = create(client, server.key, "bon-appetit", ["Ann", "Bo", "Cy"])
    kept: list[tuple[Receipt, bytes, str]] = [(receipt_of(r), b"", "") for r in made.receipts]
    tokens = [t.token for t in made.seat_tokens]
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    note = record_pb2.ArbiterCommand(reason="a word", note=record_pb2.Note(text="from the arbiter"))
    ruled = audit.SubmitRuling(
        apb.SubmitRulingRequest(game_id=made.game_id, command_id="note-1", ruling=note),
        metadata=bearer(server.key),
    )
    kept += [(receipt_of(r), b"", "") for r in ruled.receipts]
    rng = random.Random(seed)
    while True:
        view = view_of(client.GetView(pb.GetViewRequest(game_id=made.game_id)))
        if view["over"]:
            break
        for seat in [int(s) for s in view["to_act"]]:
            legal = client.ListLegalCommands(
                pb.ListLegalCommandsRequest(game_id=made.game_id), metadata=bearer(tokens[seat])
            )
            if not legal.commands:
                continue
            command = rng.choice(list(legal.commands))
            command_id = uuid.uuid4().hex
            reply = client.SubmitCommand(
                pb.SubmitCommandRequest(
                    game_id=made.game_id, command_id=command_id, command=command
                ),
                metadata=bearer(tokens[seat]),
            )
            body = command.SerializeToString(deterministic=True)
            kept += [
                (receipt_of(r), body if i == 0 else b"", command_id if i == 0 else "")
                for i, r in enumerate(reply.receipts)
            ]
    return {"game_id": made.game_id, "receipts": kept}


def proofs(address: str) -> ppb_grpc.ProofServiceStub:
    return ppb_grpc.ProofServiceStub(grpc.insecure_channel(address))


def exported(address: str, game_id: str) -> dict[str, Any]:
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(address))
    reply = replay.ExportRecord(rpb.ExportRecordRequest(game_id=game_id))
    return json.loads(reply.content)


def test_every_kind_of_row_gets_a_receipt_that_verifies(server: ThreadedServer) -> None:
    played = play_kept(server)
    key = proofs(server.address).GetServerInfo(ppb.GetServerInfoRequest()).public_key
    document = exported(server.address, played["game_id"])
    rows = {r["seq"]: r for r in document["rows"]}
    genesis = record_pb2.Genesis.FromString(bytes.fromhex(rows[1]["body"]))
    assert genesis.server_key == key  # the record names the key that signs its receipts
    kinds = {r.kind for r, _, _ in played["receipts"]}
    assert kinds == {"genesis", "command", "seed_reveal"}
    assert any(r.seq == 2 and r.kind == "command" for r, _, _ in played["receipts"])  # the ruling
    assert len(played["receipts"]) == len(rows)  # one receipt per row, none twice
    seed = bytes.fromhex(document["server_seed"])
    sealed = 0
    for receipt, body, command_id in played["receipts"]:
        assert signed_by(receipt, key), receipt
        row = rows[receipt.seq]
        assert (row["hash"], row["state_hash"], row["commitment"], row["kind"]) == (
            receipt.hash, receipt.state_hash, receipt.commitment, receipt.kind,
        )  # fmt: skip
        if body:  # a seat's command: its sealed commitment opens to what it sent, now
            salt = row_salt(seed, played["game_id"], receipt.seq)
            assert commitment_of(salt, body, command_id) == receipt.commitment
            sealed += 1
        forged = Receipt(**{**vars(receipt), "hash": "00" * 32})
        assert not signed_by(forged, key)
    assert sealed > 5


def test_heads_prove_every_row_and_each_other(server: ThreadedServer) -> None:
    played = play_kept(server)
    server.call(server.running.app.signing.issue())
    service = proofs(server.address)
    first = service.GetTreeHead(ppb.GetTreeHeadRequest()).head
    head = TreeHead(first.size, first.root, first.signed_at, first.public_key, first.signature)
    assert signed_by(head)
    document = exported(server.address, played["game_id"])
    for row in document["rows"]:
        found = service.GetInclusionProof(
            ppb.GetInclusionProofRequest(game_id=played["game_id"], seq=row["seq"])
        )
        leaf = leaf_hash(leaf_of(played["game_id"], row["seq"], row["hash"]))
        assert found.leaf_hash == leaf.hex() and found.tree_size == head.size
        path = [bytes.fromhex(p) for p in found.path]
        assert verify_inclusion(found.leaf_index, head.size, leaf, path, bytes.fromhex(head.root))
    # the export's proof section proves the same with the keys and head it carries
    assert document["proof"]["tree_head"]["size"] >= head.size
    assert len(document["proof"]["inclusion"]) == len(document["rows"])
    play_kept(server, seed=6)
    server.call(server.running.app.signing.issue())
    later = service.GetTreeHead(ppb.GetTreeHeadRequest()).head
    assert later.size > head.size
    proof = service.GetConsistencyProof(ppb.GetConsistencyProofRequest(first=head.size))
    path = [bytes.fromhex(p) for p in proof.path]
    one, two = bytes.fromhex(head.root), bytes.fromhex(later.root)
    assert verify_consistency(head.size, later.size, one, two, path)
    assert service.GetTreeHead(ppb.GetTreeHeadRequest(size=head.size)).head.root == head.root


def test_a_proof_refused_names_its_field(server: ThreadedServer) -> None:
    client = stub(server.address)
    made = create(client, server.key, "bon-appetit", ["Ann", "Bo"])
    service = proofs(server.address)
    with pytest.raises(grpc.RpcError) as refused:
        service.GetInclusionProof(ppb.GetInclusionProofRequest(game_id=made.game_id, seq=9))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(refused.value).metadata["field"] == "seq"
    with pytest.raises(grpc.RpcError) as refused:
        service.GetConsistencyProof(ppb.GetConsistencyProofRequest(first=1, second=10**6))
    assert error_info(refused.value).metadata["field"] == "second"
    with pytest.raises(grpc.RpcError) as refused:
        service.GetTreeHead(ppb.GetTreeHeadRequest(size=10**6))
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    server.call(server.running.app.signing.issue())
    head = service.GetTreeHead(ppb.GetTreeHeadRequest()).head
    bad = proof_pb2.Cosignature(witness_key="ab" * 32, witnessed_at="x", signature="cd" * 64)
    with pytest.raises(grpc.RpcError) as refused:
        service.AddCosignature(ppb.AddCosignatureRequest(head=head, cosignature=bad))
    assert error_info(refused.value).metadata["field"] == "cosignature.signature"


def test_the_signing_key_is_never_in_an_answer_a_log_line_or_an_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("FEASTLOG_ORGANISER_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    log_path = tmp_path / "requests.jsonl"
    with open(log_path, "w") as request_log:
        running = ThreadedServer(tmp_path / "games.duckdb", request_log=request_log)
        try:
            played = play_kept(running)
            running.call(running.running.app.signing.issue())
            service = proofs(running.address)
            answers = [
                service.GetServerInfo(ppb.GetServerInfoRequest()),
                service.GetTreeHead(ppb.GetTreeHeadRequest()),
                service.GetInclusionProof(
                    ppb.GetInclusionProofRequest(game_id=played["game_id"], seq=2)
                ),
            ]
            document = exported(running.address, played["game_id"])
        finally:
            running.stop()
    private = (tmp_path / SIGNING_KEY_FILE).read_text().strip()
    assert len(private) == 64
    secret = bytes.fromhex(private)
    seen = [
        json.dumps(document),
        log_path.read_text(),
        caplog.text,
        *(repr(r) for r, _, _ in played["receipts"]),
        *(str(a) for a in answers),
    ]
    for text in seen:
        assert private not in text
        assert private.upper() not in text
    for answer in answers:
        assert secret not in answer.SerializeToString()
    # and what is shown is the public half: it checks the signatures
    info, shown = answers[0], answers[1]
    assert isinstance(info, ppb.GetServerInfoResponse)
    assert isinstance(shown, ppb.GetTreeHeadResponse)
    head = shown.head
    message = TreeHead(head.size, head.root, head.signed_at, head.public_key).message()
    assert signature_holds(info.public_key, message, head.signature)


def test_the_join_that_begins_a_game_gets_the_receipt_of_its_genesis(
    server: ThreadedServer,
) -> None:
    client = stub(server.address)
    request = pb.CreateGameRequest(
        game_kind="bon-appetit", players=["Ann", "Bo"], seat_entropy=True
    )
    made = client.CreateGame(request, metadata=bearer(server.key))
    assert list(made.receipts) == []  # nothing recorded yet: the genesis waits for the seats
    tokens = [t.token for t in made.seat_tokens]
    first = client.JoinGame(
        pb.JoinGameRequest(game_id=made.game_id, entropy=b"a"), metadata=bearer(tokens[0])
    )
    assert not first.started and list(first.receipts) == []
    last = client.JoinGame(
        pb.JoinGameRequest(game_id=made.game_id, entropy=b"b"), metadata=bearer(tokens[1])
    )
    assert last.started and [r.kind for r in last.receipts] == ["genesis"]
    receipt = receipt_of(last.receipts[0])
    key = proofs(server.address).GetServerInfo(ppb.GetServerInfoRequest()).public_key
    assert signed_by(receipt, key)


def test_heads_come_on_the_application_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The head task measures its interval on the application's clock: with a
    ``ManualClock`` no head follows new rows until the test moves it HEAD_INTERVAL on, and
    then one does at once, with nothing waited out."""
    monkeypatch.setenv("FEASTLOG_ORGANISER_KEY", KEY)
    clock = ManualClock(utc_now())
    running = ThreadedServer(tmp_path / "games.duckdb", clock=clock)
    try:
        client = stub(running.address)
        proofs = ppb_grpc.ProofServiceStub(grpc.insecure_channel(running.address))
        create(client, running.key, "bon-appetit", ["Ann", "Bo"])
        rows = proofs.GetServerInfo(ppb.GetServerInfoRequest()).tree_size
        time.sleep(HEAD_INTERVAL + 0.5)  # the machine's time passes: the service's does not
        with pytest.raises(grpc.RpcError) as none_yet:
            proofs.GetTreeHead(ppb.GetTreeHeadRequest())
        assert none_yet.value.code() == grpc.StatusCode.NOT_FOUND
        started = time.monotonic()
        clock.advance(HEAD_INTERVAL)
        while True:
            try:
                head = proofs.GetTreeHead(ppb.GetTreeHeadRequest()).head
                break
            except grpc.RpcError:
                assert time.monotonic() - started < 1.0, "no head once the clock moved on"
                time.sleep(0.01)
        assert head.size == rows
        create(client, running.key, "bon-appetit", ["Cy", "Di"])
        clock.advance(HEAD_INTERVAL)
        for _ in range(100):
            if proofs.GetTreeHead(ppb.GetTreeHeadRequest()).head.size > rows:
                break
            time.sleep(0.01)
        assert proofs.GetTreeHead(ppb.GetTreeHeadRequest()).head.size > rows
    finally:
        running.stop()
