"""``feastlog.client`` against real servers: every RPC, TLS, the one exception class,
finding the server as the CLI does, a retry after a dropped connection (the server
killed and started again), asyncio, and the bot of the docs played to the end."""

from __future__ import annotations

import asyncio
import os
import random
import runpy
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from feastlog.client import SPECTATOR, AsyncClient, Client, FeastlogError
from feastlog.client import calls as client_calls
from feastlog.client.tls import Tls
from feastlog.v1 import bon_appetit_pb2, record_pb2
from tests.serverutil import ProcessServer, ThreadedServer
from tests.tlsutil import make_pki

KEY = "org_test-client-library-key-0123456789abc"
ROOT = Path(__file__).resolve().parents[2]
SEED = bytes(range(32))


def bid(*gems: bon_appetit_pb2.BonAppetitGem.ValueType) -> record_pb2.Command:
    """A Bon Appetit! bid."""
    command = record_pb2.Command()
    command.bon_appetit.bid.gems.extend(gems)
    return command


def test_every_rpc_through_the_library(tmp_path: Path) -> None:
    server = ProcessServer(tmp_path / "feastlog.duckdb", KEY)
    try:
        with Client(server.address, organiser_key=KEY) as organiser:
            made = organiser.create_game("bon-appetit", ["Ann", "Brian"], seed=SEED)
            assert made.game_id.startswith("g_") and len(made.tokens) == 2
            ann = Client(server.address, token=made.tokens[0])
            view = ann.view(made.game_id)
            assert view.seq == 1 and view.viewer == "seat:0" and not view.over
            assert view.typed.WhichOneof("game") == "bon_appetit"  # the typed view
            assert "hand" in view.table["seats"][0]
            legal = ann.legal(made.game_id)
            assert legal.seq == 1 and legal.commands and not legal.partial
            done = ann.submit(made.game_id, legal.commands[0], expected_seq=legal.seq)
            assert done.seq == 2 and not done.replayed
            again = ann.submit(
                made.game_id, legal.commands[0], expected_seq=1, command_id=done.command_id
            )
            assert again.replayed and again.seq == 2  # a retry: its first answer
            # the one exception: a stale seq, a broken rule, a bad field
            with pytest.raises(FeastlogError) as stale:
                ann.submit(made.game_id, legal.commands[0], expected_seq=1)
            assert stale.value.status == "ABORTED" and stale.value.reason == "STALE_EXPECTED_SEQ"
            brian = Client(server.address, token=made.tokens[1])
            greedy = bid(*[bon_appetit_pb2.BON_APPETIT_GEM_RED] * 6)
            with pytest.raises(FeastlogError) as broken:
                brian.submit(made.game_id, greedy)
            assert broken.value.status == "FAILED_PRECONDITION"
            assert broken.value.reason == "RULE_VIOLATION" and broken.value.rule_id
            with pytest.raises(FeastlogError) as bad:
                organiser.create_game("bon-appetit", ["Ann"])
            assert bad.value.status == "INVALID_ARGUMENT" and bad.value.field, bad.value
            with pytest.raises(FeastlogError) as unknown:
                organiser.view("g_nope")
            assert unknown.value.status == "NOT_FOUND" and not unknown.value.retryable
            assert [e.seq for e in organiser.replay(made.game_id)] == [1, 2]
            rejected = organiser.rejections(made.game_id)
            assert {r.reason for r in rejected} >= {"RULE_VIOLATION"}
            ruling = record_pb2.ArbiterCommand(reason="a note", note=record_pb2.Note(text="ok"))
            assert organiser.rule(made.game_id, ruling).seq == 3
            listed = list(organiser.games(kind="bon-appetit"))
            assert [g.game_id for g in listed] == [made.game_id]
            # follow as a spectator while the seats play to the end
            followed: list[int] = []
            watcher = threading.Thread(
                target=lambda: followed.extend(
                    e.seq for e in organiser.follow(made.game_id, token=SPECTATOR)
                )
            )
            watcher.start()
            seats = [ann, brian]
            while not (now := ann.view(made.game_id)).over:
                for seat in now.to_act:
                    moves = seats[seat].legal(made.game_id)
                    seats[seat].submit(made.game_id, moves.commands[0], expected_seq=moves.seq)
            watcher.join(timeout=60)
            assert followed == list(range(1, now.seq + 1))  # no row missed or repeated
            assert organiser.state_at(made.game_id, seq=2).event.seq == 2
            exported = organiser.export(made.game_id)
            assert exported.complete and exported.content
            report = organiser.verify(made.game_id)
            assert report.ok and report.over
            assert [r.ok for r in organiser.verify_all()] == [True]
            explained = organiser.explain(made.game_id, 2)
            assert explained.lines
            what = organiser.what_if(made.game_id, 2, "seat:0", greedy)
            assert not what.legal and what.rule_id
            assert organiser.stats().kinds
            cup = organiser.create_game("bon-appetit", ["Ann", "Brian"], tournament_id="cup")
            assert organiser.standings("cup").games_running == 1, cup
            added = organiser.add_arbiter("dana")
            assert added.key and [a.name for a in organiser.arbiters()] == ["dana"]
            assert organiser.revoke_arbiter("dana").revoked_at
            # seat entropy: JoinGame
            waiting = organiser.create_game("menu-masters", ["Ann", "Brian"], seat_entropy=True)
            joined = [
                Client(server.address).join(waiting.game_id, os.urandom(32), token=t)
                for t in waiting.tokens
            ]
            assert [j.started for j in joined] == [False, True]
            # any call as a value: calls.* through run
            assert organiser.run(client_calls.view(waiting.game_id)).seq == 1
            for seat_client in (ann, brian):
                seat_client.close()
    finally:
        server.terminate()


def test_tls_and_finding_the_server_beside_its_file(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    tls = Tls.load(str(pki.server_cert), str(pki.server_key), None)
    db = tmp_path / "feastlog.duckdb"
    server = ThreadedServer(db, tls=tls)
    try:
        # announced beside the file, with TLS: found as the CLI finds it, key file and all
        with Client(db=str(db), ca=str(pki.ca)) as found:
            assert found.address == server.address
            made = found.create_game("picky-eaters", ["Ann", "Brian"])
            assert found.view(made.game_id).viewer == "arbiter"
        with pytest.raises(FeastlogError) as refused:
            Client(server.address, ca=str(pki.other_ca), retries=0).view(made.game_id)
        assert refused.value.status == "UNAVAILABLE"
        with pytest.raises(FeastlogError) as missing:
            Client(server.address, ca=str(tmp_path / "nope.pem"))
        assert missing.value.status == "" and missing.value.reason == "TLS_FILE"
    finally:
        server.stop()
    with pytest.raises(FeastlogError) as none:
        Client(db=str(tmp_path / "elsewhere.duckdb"))
    assert none.value.reason == "NO_SERVER"


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve(db: Path, port: int) -> subprocess.Popen[str]:
    """``feastlog serve`` on a given port, once it listens."""
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": KEY}
    code = "from feastlog.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert "listening on" in proc.stdout.readline()
    return proc


def test_a_call_and_a_followed_game_outlive_a_dropped_connection(tmp_path: Path) -> None:
    db, port = tmp_path / "feastlog.duckdb", free_port()
    address = f"127.0.0.1:{port}"
    proc = serve(db, port)
    try:
        organiser = Client(address, organiser_key=KEY)
        made = organiser.create_game("bon-appetit", ["Ann", "Brian"], seed=SEED)
        ann = Client(address, token=made.tokens[0], retries=12)
        followed: list[int] = []
        stream = ann.follow(made.game_id)
        followed.append(next(stream).seq)  # the genesis, then the connection drops
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        answered: list[int] = []

        def send() -> None:  # sent while no server listens: retried until one does
            answered.append(ann.submit(made.game_id, bid(), expected_seq=1).seq)

        sender = threading.Thread(target=send)
        sender.start()
        proc = serve(db, port)
        sender.join(timeout=60)
        assert answered == [2]
        followed += [next(stream).seq]  # resumed at seq 2: nothing missed, nothing twice
        assert followed == [1, 2]
        for closing in (organiser, ann):
            closing.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


def test_the_asyncio_client_plays_a_game_to_the_end(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")

    rng = random.Random(4)

    async def main() -> list[int]:
        async with AsyncClient(server.address, organiser_key=server.key) as organiser:
            made = await organiser.create_game("bon-appetit", ["Ann", "Brian"], seed=SEED)
            seats = [AsyncClient(server.address, token=t) for t in made.tokens]
            while not (view := await organiser.view(made.game_id)).over:
                for seat in view.to_act:
                    legal = await seats[seat].legal(made.game_id)
                    await seats[seat].submit(made.game_id, rng.choice(legal.commands), legal.seq)
            seqs = [e.seq async for e in organiser.follow(made.game_id)]
            assert seqs == list(range(1, view.seq + 1))
            assert (await organiser.verify(made.game_id)).ok
            for seat_client in seats:
                await seat_client.close()
            return list(view.table["scores"])

    try:
        assert len(asyncio.run(main())) == 2
    finally:
        server.stop()


@pytest.mark.parametrize("kind", ["bon-appetit", "menu-masters", "picky-eaters"])
def test_the_bot_of_the_docs_plays_any_kind_to_the_end(tmp_path: Path, kind: str) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        bot = runpy.run_path(str(ROOT / "docs" / "examples" / "bot.py"))
        scores = bot["play"](server.address, server.key, kind)
        assert len(scores) == 2 and all(isinstance(s, int) for s in scores)
    finally:
        server.stop()


def test_the_bot_in_the_guide_is_the_bot_that_runs() -> None:
    guide = (ROOT / "docs" / "client.md").read_text()
    assert (ROOT / "docs" / "examples" / "bot.py").read_text() in guide
