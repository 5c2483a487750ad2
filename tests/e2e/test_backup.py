"""A backup taken while 16 bot games run on a real ``feastlog serve`` opens, passes
``audit --all``, and holds every row acknowledged before the backup began (issue 48);
the server keeps serving meanwhile, and after it."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from feastlog.cli.wire import bearer, new_game, open_channel, send
from feastlog.client import calls
from feastlog.service.store.duckdb import Store, mark
from feastlog.service.store.duckdb.opening import connect
from feastlog.service.store.errors import StoreLocked
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from tests.serverutil import ProcessServer

KEY = "org_backup-while-serving-organiser-key-0123456789"
GAMES = 16


def feastlog(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, as an operator runs it."""
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": KEY}
    return subprocess.run(
        [sys.executable, "-m", "feastlog.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


async def bot(
    stub: pb_grpc.GameServiceAsyncStub,
    game_id: str,
    tokens: list[str],
    seed: int,
    acked: dict[str, tuple[int, str]],
) -> int:
    """Play a game to its end with random legal commands; each acknowledged row noted."""
    rng = random.Random(seed)
    sent = 0
    while True:
        view = (await send(stub, calls.view(game_id))).table
        if view.get("over"):
            return sent
        for seat in [int(s) for s in view.get("to_act", [])]:
            legal = await send(stub, calls.legal(game_id), bearer(tokens[seat]))
            if not legal.commands:
                continue
            command = rng.choice(legal.commands)
            submitted = calls.submit(game_id, command, legal.seq, typed_facts_only=True)
            recorded = await send(stub, submitted, bearer(tokens[seat]))
            acked[game_id] = (recorded.seq, recorded.hash)
            sent += 1


def test_a_backup_taken_while_16_bot_games_run_holds_every_acknowledged_row(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hall" / "feastlog.duckdb"
    out = tmp_path / "backups" / "hall.duckdb"
    out.parent.mkdir()
    server = ProcessServer(db, KEY)
    try:
        before, result = asyncio.run(_bots_and_a_backup(server.address, db, out))
        assert result.returncode == 0, result.stderr
        made = json.loads(result.stdout)
        assert made["path"] == str(out)
        assert made["paused_seconds"] < 5  # commits waited for the copy alone
        # the server served on: all 16 games ended after the backup
        assert len(before) == GAMES
        # and it holds its file still: reading it for the copy let go of no lock
        with pytest.raises(StoreLocked):
            connect(db, read_only=True)
    finally:
        server.terminate()
    assert sorted(p.name for p in out.parent.iterdir()) == ["hall.duckdb", "hall.duckdb.commits"]
    copy = Store(str(out), read_only=True)  # opens, held to its own mark
    try:
        for game_id, (seq, digest) in before.items():
            rows = {r.seq: r for r in copy.rows(game_id)}
            assert seq in rows, f"{game_id}: row {seq} acknowledged before the backup is missing"
            assert rows[seq].hash == digest
        held = mark.held_by(copy.con)
    finally:
        copy.close()
    kept = mark.read(out)
    assert kept is not None and kept.tally.rows == held.rows
    audited = feastlog("audit", "--all", "--db", str(out), cwd=tmp_path)
    assert audited.returncode == 0, audited.stdout + audited.stderr


async def _bots_and_a_backup(
    address: str, db: Path, out: Path
) -> tuple[dict[str, tuple[int, str]], subprocess.CompletedProcess[str]]:
    """16 games played by bots; once each has rows, a backup through the CLI: the rows
    acknowledged when it began, and what the CLI said."""
    channel = open_channel(address, None)
    stub = pb_grpc.GameServiceStub(channel)
    acked: dict[str, tuple[int, str]] = {}
    made = [await new_game(stub, KEY, "bon-appetit", ["A", "B", "C"]) for _ in range(GAMES)]
    tasks = [
        asyncio.create_task(
            bot(stub, g.game_id, [t.token for t in g.seat_tokens], seed=n, acked=acked)
        )
        for n, g in enumerate(made)
    ]
    while len(acked) < GAMES and not all(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    before = dict(acked)  # every row acknowledged before the backup began
    result = await asyncio.to_thread(
        feastlog, "backup", "--db", str(db), str(out), "--json", cwd=db.parent
    )
    running = sum(not t.done() for t in tasks)
    await asyncio.gather(*tasks)
    await channel.close()
    assert running, "every game had ended before the backup: it was not taken while they ran"
    return before, result


def test_the_server_refuses_a_backup_over_a_file_and_on_a_relative_path(tmp_path: Path) -> None:
    db = tmp_path / "feastlog.duckdb"
    server = ProcessServer(db, KEY)
    try:
        (tmp_path / "taken.duckdb.wal").write_bytes(b"")
        over = feastlog("backup", "--db", str(db), str(tmp_path / "taken.duckdb"), cwd=tmp_path)
        assert over.returncode == 2, over.stderr
        assert "taken.duckdb.wal exists: a backup never overwrites a file" in over.stderr
        missing = feastlog(
            "backup", "--db", str(db), str(tmp_path / "no" / "b.duckdb"), cwd=tmp_path
        )
        assert missing.returncode == 2
        assert "there is no folder" in missing.stderr
        # without the organiser key: refused by the server, nothing written
        env = {k: v for k, v in os.environ.items() if k != "FEASTLOG_ORGANISER_KEY"}
        anonymous = subprocess.run(
            [sys.executable, "-m", "feastlog.cli.main", "backup", "--server", server.address,
             str(tmp_path / "anon.duckdb")],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert anonymous.returncode == 4, anonymous.stderr
        assert not (tmp_path / "anon.duckdb").exists()
    finally:
        server.terminate()


def test_restore_refuses_a_file_its_server_holds(tmp_path: Path) -> None:
    db = tmp_path / "feastlog.duckdb"
    server = ProcessServer(db, KEY)
    try:
        made = feastlog("backup", "--db", str(db), str(tmp_path / "b.duckdb"), cwd=tmp_path)
        assert made.returncode == 0, made.stderr
        refused = feastlog("restore", str(tmp_path / "b.duckdb"), "--db", str(db), cwd=tmp_path)
        assert refused.returncode == 3, refused.stderr
        assert "is in use by a server: stop it before restoring over it" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    finally:
        server.terminate()
