"""A server's DuckDB store in a child process: errors cross as themselves, start-up
failures read as they do in process, and the child ends with the server, however it ends.
(The store contract itself runs on the child too: ``tests/store/test_store_contract.py``.)"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from feastlog.replay.proof.signed import Receipt
from feastlog.service.app.notary import SIGNING_KEY_ENV, server_notary, signed_by
from feastlog.service.store import (
    Batch,
    CannotOpenStore,
    StoreConflict,
    StoreError,
    StoreLocked,
    StoreUnavailable,
)
from feastlog.service.store.duckdb import Store, opening
from feastlog.service.store.process import ProcessStore, StoreGone, games_to_register
from feastlog.service.store.writer import Database
from feastlog.v1 import game_service_pb2 as pb
from tests.recordutil import Built, build, games_batch
from tests.serverutil import ProcessServer, create, play_to_end, stub

KEY = "org_" + "p" * 43
PLAYERS = ["Ann", "Brian", "Celia"]


def children(pid: int) -> list[int]:
    """The processes ``pid`` started, from /proc."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def gone(pid: int, within: float = 20.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie), waiting up to ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    "error",
    [
        StoreUnavailable("the game store failed to write (incident i1)", incident_id="i1"),
        StoreConflict("the game store refused a write (incident i2)", incident_id="i2"),
        CannotOpenStore("/x is not a DuckDB database file", path="/x"),
        StoreLocked("/x is in use by another feastlog process", path="/x"),
        StoreGone("the game store failed (incident i3); try again", incident_id="i3"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_the_stores_errors_pickle_as_themselves(error: StoreError) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert (str(again), again.message, again.metadata) == (
        str(error),
        error.message,
        error.metadata,
    )


def test_a_store_error_raised_in_the_child_arrives_as_itself_and_its_cause_is_logged_here(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    built = build(players=2, seed_byte=6, stop_after=6)
    store = ProcessStore(str(tmp_path / "games.duckdb"))
    try:
        store.write(games_batch([built]))
        fork = replace(built.rows[3], actor="seat:1", command_id="fork", hash="ab" * 32)
        with (
            caplog.at_level(logging.ERROR, logger="feastlog.store"),
            pytest.raises(StoreConflict) as refused,
        ):
            store.write(Batch(rows=[fork]))
        incident = refused.value.metadata["incident_id"]
        assert refused.value.message == (
            f"the game store refused a write that was out of date (incident {incident}); try again"
        )
        (logged,) = [r for r in caplog.records if incident in r.getMessage()]
        assert "the store failed in write: ConstraintException" in logged.getMessage()
        assert store.rows(built.rows[0].game_id) == tuple(built.rows)
    finally:
        store.close()


def test_a_file_that_cannot_be_opened_fails_in_the_same_words_as_in_process(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    not_duckdb = tmp_path / "notes.duckdb"
    not_duckdb.write_text("shopping list")
    for path in (folder, not_duckdb):
        with pytest.raises(CannotOpenStore) as here:
            Store(str(path))
        with pytest.raises(CannotOpenStore) as there:
            ProcessStore(str(path))
        assert type(there.value) is type(here.value)
        assert str(there.value) == str(here.value) and "\n" not in str(there.value)
    held = ProcessStore(str(tmp_path / "games.duckdb"))
    try:
        with pytest.raises(StoreLocked) as locked:
            ProcessStore(str(tmp_path / "games.duckdb"))
        assert "is in use by another feastlog process" in str(locked.value)
    finally:
        held.close()


def test_a_closed_store_has_checkpointed_and_let_go_of_its_file(tmp_path: Path) -> None:
    path = tmp_path / "games.duckdb"
    built = build(players=2, seed_byte=7, stop_after=4)
    store = ProcessStore(str(path))
    store.write(games_batch([built]))
    store.close()
    assert store._process.returncode == 0
    assert not Path(f"{path}.wal").exists()  # the close checkpointed
    again = Store(str(path))  # at once: nothing holds the file
    try:
        assert again.rows(built.rows[0].game_id) == tuple(built.rows)
    finally:
        again.close()


def test_a_server_killed_with_9_leaves_no_store_process_and_restarts_on_its_file(
    tmp_path: Path,
) -> None:
    db = tmp_path / "games.duckdb"
    server = ProcessServer(db, KEY)
    try:
        (child,) = children(server.proc.pid)
        client = stub(server.address)
        game = create(client, KEY, "bon-appetit", PLAYERS)
        tokens = [t.token for t in game.seat_tokens]
        play_to_end(client, game.game_id, tokens, seed=5, stop_after=6)
        acknowledged = client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq
    finally:
        server.kill()
    Store(str(db), read_only=True).close()  # at once: the killed server's child lets go
    assert gone(child)
    server = ProcessServer(db, KEY)  # the file is free: the restart opens it
    try:
        client = stub(server.address)
        assert client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq == acknowledged
        (child,) = children(server.proc.pid)
    finally:
        err = server.terminate()
    assert server.proc.returncode == 0, err
    assert gone(child)
    assert not Path(f"{db}.wal").exists()  # a clean stop closed the store in the child
    assert os.path.getsize(db) > 0


def test_a_failed_group_commit_through_the_child_fails_only_the_batch_at_fault(
    tmp_path: Path,
) -> None:
    first, second = (build(players=2, seed_byte=s, stop_after=5) for s in (8, 9))

    def after(built: Built, command_id: str) -> Batch:
        """The row after a game's last, as the next command would write it."""
        last = built.rows[-1]
        return Batch(rows=[replace(last, seq=last.seq + 1, command_id=command_id)])

    async def run() -> tuple[list[BaseException | None], int]:
        db = Database(ProcessStore(str(tmp_path / "games.duckdb")))
        db.start()
        try:
            await db.commit(games_batch([first, second]))
            taken = replace(first.rows[3], actor="seat:1", command_id="fork", hash="ab" * 32)
            outcomes = await asyncio.gather(
                db.commit(after(first, "a")),
                db.commit(Batch(rows=[taken])),
                db.commit(after(second, "c")),
                return_exceptions=True,
            )
            stored = await db.call(db.store.last_seq, first.rows[0].game_id)
            return [o if isinstance(o, BaseException) else None for o in outcomes], stored
        finally:
            await db.close()

    (a, taken, c), last_seq = asyncio.run(run())
    assert a is None and c is None
    assert isinstance(taken, StoreConflict) and "out of date" in str(taken)
    assert last_seq == first.rows[-1].seq + 1
    again = Store(str(tmp_path / "games.duckdb"))  # the child closed the file at the end
    try:
        assert again.last_seq(second.rows[0].game_id) == second.rows[-1].seq + 1
        assert again.rows(first.rows[0].game_id)[3] == first.rows[3]
    finally:
        again.close()


def test_a_store_whose_process_died_fails_each_call_as_unavailable_and_still_closes(
    tmp_path: Path,
) -> None:
    store = ProcessStore(str(tmp_path / "games.duckdb"))
    os.kill(store._process.pid, signal.SIGKILL)
    store._process.wait()
    with pytest.raises(StoreUnavailable) as failed:
        store.count_games()
    assert failed.value.message.startswith("the game store failed (incident ")
    assert failed.value.metadata["incident_id"] in failed.value.message
    with pytest.raises(StoreUnavailable):
        asyncio.run(store.commit(Batch()))
    store.close()  # nothing left to close: no error


def test_the_child_registers_the_games_registered_here_by_module_and_name() -> None:
    # conftest registers the test-only fourth game: the child imports it the same way
    assert games_to_register() == [("tests.highcard", "ENGINE")]


@pytest.mark.parametrize("server_alive", [True, False], ids=["server alive", "server killed"])
def test_a_lock_held_by_the_store_process_of_a_dead_server_is_waited_for(
    server_alive: bool,
) -> None:
    """Only a store process whose server has died is waited for; a live one is in use."""
    parent = os.getpid() if server_alive else 1  # pid 1 never started it: its server is gone
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", opening.STORE_PROCESS, str(parent)]
    )
    try:
        deadline = time.monotonic() + 20
        while (
            opening.STORE_PROCESS.encode() not in Path(f"/proc/{holder.pid}/cmdline").read_bytes()
        ):
            assert time.monotonic() < deadline  # the interpreter has not started yet
            time.sleep(0.01)
        said = (
            'IO Error: Could not set lock on file "x": Conflicting lock is held in '
            f"{sys.executable} (PID {holder.pid})."
        )
        assert opening._held_by_orphan(said) is not server_alive
        other = f"IO Error: Conflicting lock is held in /usr/bin/duckdb (PID {os.getpid()})."
        assert not opening._held_by_orphan(other)  # another program: the file is in use
    finally:
        holder.kill()
        holder.wait()
    assert opening._held_by_orphan(said)  # ended since: try again


def test_the_child_signs_the_receipts_of_what_it_commits_with_the_servers_own_key_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SIGNING_KEY_ENV, "5e" * 32)  # the child reads it as the server does
    path = str(tmp_path / "games.duckdb")
    notary = server_notary(path)
    built = build(players=2, seed_byte=7, stop_after=5)
    store = ProcessStore(path)
    try:
        first = asyncio.run(store.commit(games_batch([built])))
        assert first.signed is None and first.first == 0  # not asked: unsigned
        assert not store.sign_receipts("77" * 32)  # another key than the child can read
        assert store.sign_receipts(notary.public_key)
        more = build(players=2, seed_byte=8, stop_after=5)
        written = asyncio.run(store.commit(games_batch([more])))
        assert written.first == len(built.rows)  # the next leaf after the first game's
        signed = written.signed
        assert signed is not None and signed.public_key == notary.public_key
        assert set(signed.signatures) == {(r.game_id, r.seq) for r in more.rows}
        for row in more.rows:
            receipt = Receipt.of(
                row, signed.signed_at, signed.public_key, signed.signatures[row.game_id, row.seq]
            )
            assert signed_by(receipt, notary.public_key)
        forged = Receipt.of(
            replace(more.rows[1], hash="cd" * 32),
            signed.signed_at,
            signed.public_key,
            signed.signatures[more.rows[1].game_id, more.rows[1].seq],
        )
        assert not signed_by(forged)  # each signature is over its own row
    finally:
        store.close()
