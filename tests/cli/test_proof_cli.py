"""The player's and the witness's side: receipts kept by ``demo``, heads followed by
``witness``, records checked by ``verify --receipts/--head/--later``; and an operator who
rewrites an acknowledged row and makes the whole file agree (``tests/proofutil.py``) is
caught by the receipts and by the witness, and a server that shows two witnesses two
histories is caught when their heads are compared."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner, Result

from feastlog.cli.main import cli
from feastlog.v1 import proof_service_pb2 as ppb
from feastlog.v1 import proof_service_pb2_grpc as ppb_grpc
from tests.proofutil import rewrite_row
from tests.serverutil import ThreadedServer

KEY = "org_test-organiser-key-0123456789abcdef"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def headed(address: str) -> int:
    """Wait until a signed head holds every row the server has (a head is signed every
    2 s while rows arrive); its size."""
    service = ppb_grpc.ProofServiceStub(grpc.insecure_channel(address))
    deadline = time.monotonic() + 15
    while True:
        size = service.GetServerInfo(ppb.GetServerInfoRequest()).tree_size
        try:
            head = service.GetTreeHead(ppb.GetTreeHeadRequest()).head.size
        except grpc.RpcError:
            head = 0
        if head == size or time.monotonic() > deadline:
            return head
        time.sleep(0.2)


def test_receipts_and_a_witness_catch_a_row_rewritten_after_it_was_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEASTLOG_ORGANISER_KEY", KEY)
    db, receipts = tmp_path / "games.duckdb", tmp_path / "receipts.jsonl"
    server = ThreadedServer(db, announce=False)
    try:
        address = server.address
        made = run("demo", "bon-appetit", "--server", address, "--organiser-key", KEY,
                   "--receipts", str(receipts), "--json")  # fmt: skip
        assert made.exit_code == 0, made.output
        game_id = json.loads(made.output)["game_id"]
        server.call(server.running.app.signing.issue())  # now, not at the next interval
        witnessed = run(
            "witness", "--server", address, "--folder", str(tmp_path / "wa"), "--rounds", "1"
        )
        assert witnessed.exit_code == 0, witnessed.output
        assert "witnessed size" in witnessed.output
        before = run("head", "--server", address, "-o", str(tmp_path / "h1.json"))
        assert before.exit_code == 0, before.output
        exported = run("export", game_id, "--server", address, "-o", str(tmp_path / "rec.json"))
        assert exported.exit_code == 0, exported.output
    finally:
        server.stop()
    honest = run("verify", str(tmp_path / "rec.json"), "--receipts", str(receipts),
                 "--head", str(tmp_path / "h1.json"))  # fmt: skip
    assert honest.exit_code == 0, honest.output
    assert "the server's signed word holds" in honest.output
    lines = receipts.read_text().splitlines()
    assert len(lines) == len(json.loads((tmp_path / "rec.json").read_text())["rows"])

    # the operator keeps a copy, then rewrites row 5 of the file and makes it all agree
    shutil.copytree(tmp_path, tmp_path.parent / "copy", ignore=shutil.ignore_patterns("w*"))
    rewrite_row(db, game_id, 5)
    server = ThreadedServer(db, announce=False)  # the same signing key: the file's folder's
    try:
        address = server.address
        server.call(server.running.app.signing.issue())
        assert (
            run("export", game_id, "--server", address, "-o", str(tmp_path / "rec2.json")).exit_code
            == 0
        )
        alarm = run(
            "witness", "--server", address, "--folder", str(tmp_path / "wa"), "--rounds", "1"
        )
        witness_b = run(
            "witness", "--server", address, "--folder", str(tmp_path / "wb"), "--rounds", "1"
        )
    finally:
        server.stop()
    alone = run("verify", str(tmp_path / "rec2.json"))
    assert alone.exit_code == 0, alone.output  # the rewritten file audits clean on its own
    caught = run("verify", str(tmp_path / "rec2.json"), "--receipts", str(receipts))
    assert caught.exit_code == 1, caught.output
    assert "seq 5 was changed after the server acknowledged it" in caught.output
    assert alarm.exit_code == 1, alarm.output
    assert "ALARM" in alarm.output and "size" in alarm.output
    old = json.loads((tmp_path / "h1.json").read_text())["tree_head"]["root"][:16]
    assert old in alarm.output  # both heads named: the one it held, the one shown now
    later = run(
        "verify", "--head", str(tmp_path / "h1.json"), "--later", str(tmp_path / "rec2.json")
    )
    assert later.exit_code == 1, later.output

    # the copy, served as well with the same key: two witnesses, two histories
    copy = tmp_path.parent / "copy"
    other = ThreadedServer(copy / "games.duckdb", announce=False)
    try:
        other.call(other.running.app.signing.issue())
        witness_c = run(
            "witness", "--server", other.address, "--folder", str(tmp_path / "wc"), "--rounds", "1"
        )
    finally:
        other.stop()
    assert witness_b.exit_code == 0 and witness_c.exit_code == 0, (
        witness_b.output,
        witness_c.output,
    )
    compared = run("witness", "--folder", str(tmp_path / "wb"), "--compare", str(tmp_path / "wc"))
    assert compared.exit_code == 1, compared.output
    assert "split view" in compared.output
