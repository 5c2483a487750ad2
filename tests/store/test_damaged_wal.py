"""A damaged write-ahead log never loses acknowledged games without a word.

A real server takes games, is killed with -9 (its commits are in the log alone), and the
log is damaged every way a disk or a hand can: its header overwritten, the whole file
random, truncated at several points, bytes flipped at several offsets, its tail zeroed,
deleted.  Then every way of opening the file (a server, an offline read, an offline
write) either finds every acknowledged game, or refuses with the files byte for byte as
they were; ``feastlog recover`` keeps the damaged log aside and says what was lost.

What DuckDB does on its own (``service/store/duckdb/mark.py``): it refuses a log in which an
entry's checksum fails, and replays nothing, or a prefix, of a log whose header is
damaged or that is cut short, without a word; the commit mark catches those.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.service.store import CannotOpenStore
from feastlog.service.store.duckdb import Store
from feastlog.service.store.duckdb.mark import mark_path, read, recover, wal_path
from tests.serverutil import ProcessServer, create, play_to_end, stub

KEY = "org_" + "w" * 40
SERVE = [sys.executable, "-c", "from feastlog.cli.main import main; main()", "serve"]


def files_of(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` and the sha256 of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A store whose acknowledged games are in its log alone: a server killed with -9.

    Three games made, one of them played to its end; the game ids."""
    folder = tmp_path_factory.mktemp("crashed")
    db = folder / "f.duckdb"
    server = ProcessServer(db, KEY)
    client = stub(server.address)
    games = [create(client, KEY, "picky-eaters", ["Ann", "Dev"]) for _ in range(2)]
    played = create(client, KEY, "bon-appetit", ["Ann", "Brian", "Celia"])
    play_to_end(client, played.game_id, [s.token for s in played.seat_tokens], seed=3)
    server.kill()
    Path(f"{db}.server").unlink(missing_ok=True)
    assert wal_path(db).stat().st_size > 10_000  # the games are in the log, not the file
    return db, [g.game_id for g in [*games, played]]


def _overwrite(at: int, count: int) -> Callable[[bytearray], None]:
    def damage(log: bytearray) -> None:
        log[at : at + count] = os.urandom(count)

    return damage


def _cut(fraction: float) -> Callable[[bytearray], None]:
    def damage(log: bytearray) -> None:
        del log[int(len(log) * fraction) :]

    return damage


def _flip(fraction: float) -> Callable[[bytearray], None]:
    def damage(log: bytearray) -> None:
        at = min(int(len(log) * fraction), len(log) - 1)
        log[at] ^= 0x5A

    return damage


def _random(log: bytearray) -> None:
    log[:] = os.urandom(len(log))


def _zero_tail(log: bytearray) -> None:
    half = len(log) // 2
    log[half:] = bytes(len(log) - half)


DAMAGES: dict[str, Callable[[bytearray], None]] = {
    "header overwritten": _overwrite(0, 32),
    "whole file random": _random,
    "zero-filled tail": _zero_tail,
    **{f"truncated at {f:.2%}": _cut(f) for f in (0.0, 0.0002, 0.001, 0.25, 0.5, 0.9, 0.999)},
    **{f"byte flipped at {f:.2%}": _flip(f) for f in (0.0, 0.0004, 0.001, 0.3, 0.6, 0.99, 1.0)},
}


def test_each_damage_has_a_name_of_its_own() -> None:
    """Three, 7 cuts and 7 flips: a name shared by two (a percentage rounded alike) would
    drop one of them without a word."""
    assert len(DAMAGES) == 17


def damaged_copy(crashed: tuple[Path, list[str]], folder: Path, damage: str) -> Path:
    """A copy of the crashed store, its log damaged."""
    db, _ = crashed
    shutil.copytree(db.parent, folder, dirs_exist_ok=True)
    log = wal_path(folder / db.name)
    data = bytearray(log.read_bytes())
    DAMAGES[damage](data)
    log.write_bytes(bytes(data))
    return folder / db.name


def holds_every_game(db: Path, game_ids: list[str], read_only: bool) -> bool:
    """Open ``db`` and whether every game is there (CannotOpenStore passes through)."""
    store = Store(str(db), read_only=read_only)
    try:
        return all(store.load(g) is not None for g in game_ids)
    finally:
        store.close()


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_every_open_of_a_damaged_log_finds_every_game_or_refuses_touching_nothing(
    crashed: tuple[Path, list[str]], tmp_path: Path, damage: str
) -> None:
    db = damaged_copy(crashed, tmp_path, damage)
    before = files_of(tmp_path)
    for read_only in (True, False):  # an offline read, then a server's (or a write's) open
        try:
            assert holds_every_game(db, crashed[1], read_only), (damage, read_only)
        except CannotOpenStore as refused:
            assert files_of(tmp_path) == before, (damage, read_only)
            assert "recover --db" in refused.message
            assert "\n" not in refused.message


def test_the_undamaged_crash_opens_with_every_game(
    crashed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    shutil.copytree(crashed[0].parent, tmp_path, dirs_exist_ok=True)
    assert holds_every_game(tmp_path / crashed[0].name, crashed[1], read_only=True)
    assert holds_every_game(tmp_path / crashed[0].name, crashed[1], read_only=False)


def test_a_log_that_vanished_after_the_last_commit_is_refused(
    crashed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    shutil.copytree(crashed[0].parent, tmp_path, dirs_exist_ok=True)
    db = tmp_path / crashed[0].name
    wal_path(db).unlink()
    before = files_of(tmp_path)
    with pytest.raises(CannotOpenStore, match="which the last commit left behind, is gone"):
        Store(str(db))
    assert files_of(tmp_path) == before


def test_a_file_edited_and_checkpointed_outside_feastlog_still_opens(tmp_path: Path) -> None:
    """The mark guards against a lost log, not against the file's own later history: a row
    deleted by hand is for the audit to find (the chain), not a refusal to open."""
    db = tmp_path / "f.duckdb"
    store = Store(str(db))
    store.con.execute(
        "INSERT INTO rejections VALUES ('g_1', 0, 'seat:0', 'c', ''::BLOB, "
        "'FAILED_PRECONDITION', 'RULE', 'X-1', 'm', 't')"
    )
    store.close()  # (a write outside Store.write: the mark knows nothing of it)
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM rejections")
    con.close()
    Store(str(db), read_only=True).close()


def test_a_file_whose_mark_predates_it_opens_and_a_damaged_header_without_one_is_refused(
    crashed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    db = damaged_copy(crashed, tmp_path, "header overwritten")
    mark_path(db).unlink()  # a file last served by a feastlog before the mark
    before = files_of(tmp_path)
    with pytest.raises(CannotOpenStore, match="lost DuckDB's header"):
        Store(str(db))
    assert files_of(tmp_path) == before


def test_a_damaged_mark_is_refused_and_recover_keeps_a_whole_log(
    crashed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    shutil.copytree(crashed[0].parent, tmp_path, dirs_exist_ok=True)
    db = tmp_path / crashed[0].name
    mark_path(db).write_bytes(b"{not a mark")
    with pytest.raises(CannotOpenStore, match=r"is damaged, so .* cannot be checked"):
        Store(str(db))
    done = recover(str(db))
    assert done.needed and done.recorded is None
    assert holds_every_game(db, crashed[1], read_only=True)  # DuckDB replayed the log whole


@pytest.mark.parametrize(
    "damage", ["byte flipped at 60.00%", "truncated at 50.00%", "header overwritten"]
)
def test_recover_keeps_the_log_aside_replays_what_it_can_and_says_what_is_lost(
    crashed: tuple[Path, list[str]], tmp_path: Path, damage: str
) -> None:
    db = damaged_copy(crashed, tmp_path, damage)
    damaged = wal_path(db).read_bytes()
    recorded = read(db)
    assert recorded is not None
    done = recover(str(db))
    assert done.needed
    aside = [Path(p) for p in done.kept_aside]
    assert [p.name.split(".damaged-")[0] for p in aside] == ["f.duckdb.wal", "f.duckdb.commits"]
    assert aside[0].read_bytes() == damaged  # the evidence, whole
    assert all(p.stat().st_mode & 0o077 == 0 for p in aside)
    store = Store(str(db))  # opens now, against a new mark
    try:
        games, _ = store.count_games()
        assert games == done.held.games
    finally:
        store.close()
    assert done.lost() == {
        what: getattr(recorded.tally, what) - getattr(done.held, what)
        for what in ("games", "rows", "refusals", "entropy")
        if getattr(recorded.tally, what) > getattr(done.held, what)
    }
    assert done.lost(), "each of these damages loses commits"
    if damage != "header overwritten":  # a prefix of the log is replayed
        assert done.held.rows > 0


def test_recover_leaves_a_whole_file_untouched(
    crashed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    shutil.copytree(crashed[0].parent, tmp_path, dirs_exist_ok=True)
    before = files_of(tmp_path)
    result = CliRunner().invoke(cli, ["recover", "--db", str(tmp_path / "f.duckdb")])
    assert result.exit_code == 0, result.output
    assert "opens whole" in result.output and "nothing was changed" in result.output
    assert files_of(tmp_path) == before


def test_the_issue_as_a_user_runs_it(crashed: tuple[Path, list[str]], tmp_path: Path) -> None:
    """serve, games made, kill -9, the log's header overwritten: serve refuses (exit 3, one
    line, nothing changed), so do offline commands; recover says what was lost; then the
    server starts on what is left."""
    db = damaged_copy(crashed, tmp_path, "header overwritten")
    before = files_of(tmp_path)
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": KEY}
    done = subprocess.run(
        [*SERVE, "--db", str(db), "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "listening" not in done.stdout
    [line] = done.stderr.splitlines()
    assert line.startswith(f"Error: {db}.wal is damaged") and "0 of 3 games" in line
    assert files_of(tmp_path) == before
    runner = CliRunner()
    games = runner.invoke(cli, ["games", "--db", str(db)])
    assert games.exit_code == 3 and "recover --db" in games.output
    assert files_of(tmp_path) == before
    recovered = runner.invoke(cli, ["recover", "--db", str(db), "--json"])
    assert recovered.exit_code == 0, recovered.output
    said = json.loads(recovered.output)
    assert said["recovered"] and said["lost"]["games"] == 3 and said["holds"]["games"] == 0
    server = ProcessServer(db, KEY)
    try:
        client = stub(server.address)
        create(client, KEY, "picky-eaters", ["Ann", "Dev"])
    finally:
        server.terminate()


def test_a_clean_stop_after_a_restart_checkpoints_the_log(
    crashed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """kill -9, a start that replays the log and writes nothing, SIGTERM: the log is folded
    into the file (it stayed beside it, un-checkpointed)."""
    shutil.copytree(crashed[0].parent, tmp_path, dirs_exist_ok=True)
    db = tmp_path / crashed[0].name
    server = ProcessServer(db, KEY)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=30) == 0
    assert not wal_path(db).exists() or wal_path(db).stat().st_size == 0
    assert holds_every_game(db, crashed[1], read_only=True)
