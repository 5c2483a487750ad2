"""``feastlog backup`` of a file no server holds and through the server beside it, and
``feastlog restore``'s refusals: a newer file, one as long that ends in another row, a
missing backup, PostgreSQL (docs/serving.md "Backup and restore").  The backup taken
while a real server plays 16 games is ``tests/e2e/test_backup.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from feastlog.cli.main import cli
from feastlog.service.store.duckdb import Store, mark
from tests.pgutil import empty_database
from tests.serverutil import ThreadedServer

NO_ENV = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": "", "FEASTLOG_CA": ""}


def run(*args: str) -> Result:
    """The CLI with no key, server or CA from the environment."""
    return CliRunner(env=NO_ENV).invoke(cli, list(args))


def demo(db: str, seed: str) -> None:
    """A game played to its end in ``db`` (no server holds it)."""
    done = run("demo", "bon-appetit", "--players", "2", "--seed", seed, "--db", db)
    assert done.exit_code == 0, done.output


def files(db: str) -> dict[str, bytes]:
    """The database and its mark, byte for byte."""
    return {p: Path(p).read_bytes() for p in (db, f"{db}.commits") if Path(p).exists()}


def rows_of(db: str) -> int:
    store = Store(db, read_only=True)
    try:
        return mark.held_by(store.con).rows
    finally:
        store.close()


def test_a_file_no_server_holds_is_backed_up_here_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    demo("hall.duckdb", "01" * 32)
    demo("hall.duckdb", "02" * 32)
    before = files("hall.duckdb")
    made = run("backup", "--db", "hall.duckdb", "copy.duckdb", "--json")
    assert made.exit_code == 0, made.output
    reply = json.loads(made.output)
    assert reply["path"] == str(tmp_path / "copy.duckdb")
    assert reply["games"] == 2 and reply["rows"] == rows_of("hall.duckdb")
    assert files("hall.duckdb") == before  # the source untouched
    assert sorted(p.name for p in tmp_path.glob("copy.duckdb*")) == [
        "copy.duckdb",
        "copy.duckdb.commits",
    ]
    kept = mark.read("copy.duckdb")
    assert kept is not None and kept.tally.rows == reply["rows"]
    audited = run("audit", "--all", "--db", "copy.duckdb")
    assert audited.exit_code == 0, audited.output
    text = run("backup", "--db", "hall.duckdb", "second.duckdb")
    assert text.exit_code == 0, text.output
    assert text.output.startswith(f"backed up to {tmp_path / 'second.duckdb'}: 2 games, ")


def test_a_backup_goes_through_the_server_beside_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    demo("hall.duckdb", "03" * 32)
    server = ThreadedServer(tmp_path / "hall.duckdb")
    try:
        made = run("backup", "copy.duckdb", "--db", "hall.duckdb", "--organiser-key", server.key)
        assert made.exit_code == 0, made.output
        assert f"bytes copied by the server at {server.address}; commits waited" in made.output
        assert "1 games" in made.output
        wrong = "org_not-this-servers-key-0123456789abcdef"
        anonymous = run("backup", "other.duckdb", "--db", "hall.duckdb", "--organiser-key", wrong)
        assert anonymous.exit_code == 4, anonymous.output
        assert "UNAUTHENTICATED" in anonymous.output
        assert not (tmp_path / "other.duckdb").exists()
    finally:
        server.stop()
    assert rows_of("copy.duckdb") == rows_of("hall.duckdb")


def test_a_backup_never_overwrites_and_needs_a_duckdb_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    demo("hall.duckdb", "04" * 32)
    Path("notes.duckdb").write_text("mine")
    over = run("backup", "--db", "hall.duckdb", "notes.duckdb")
    assert over.exit_code == 2, over.output
    assert "notes.duckdb exists: a backup never overwrites a file" in over.output
    assert Path("notes.duckdb").read_text() == "mine"
    named = run("backup", "--db", "hall.duckdb", "copy.txt")
    assert named.exit_code == 2, named.output
    assert "a backup's name ends in .duckdb (got 'copy.txt')" in named.output
    over_db = run("backup", "--db", "hall.duckdb", "hall.duckdb")
    assert over_db.exit_code == 2, over_db.output
    nowhere = run("backup", "--db", "missing.duckdb", "copy.duckdb")
    assert nowhere.exit_code == 3, nowhere.output
    pg = run("backup", "--db", "postgresql://u@localhost/feastlog", "copy.duckdb")
    assert pg.exit_code == 2, pg.output
    assert "pg_dump" in pg.output and "docs/scaling.md" in pg.output
    assert not Path("copy.duckdb").exists()


def test_restore_refuses_a_newer_file_and_restores_an_older_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    demo("hall.duckdb", "05" * 32)
    assert run("backup", "--db", "hall.duckdb", "monday.duckdb").exit_code == 0
    demo("hall.duckdb", "06" * 32)  # the hall played on after the backup
    before = files("hall.duckdb")
    newer = run("restore", "monday.duckdb", "--db", "hall.duckdb")
    assert newer.exit_code == 4, newer.output
    (line,) = newer.output.strip().splitlines()
    assert "hall.duckdb holds" in line and "it is newer than the backup" in line
    assert "nothing was changed" in line
    assert files("hall.duckdb") == before

    # a file as long as the backup that ends in another row: not the backup's log
    assert run("new", "bon-appetit", "--players", "A,B", "--db", "one.duckdb").exit_code == 0
    assert run("new", "bon-appetit", "--players", "A,B", "--db", "two.duckdb").exit_code == 0
    assert rows_of("one.duckdb") == rows_of("two.duckdb")
    assert run("backup", "--db", "one.duckdb", "one-copy.duckdb").exit_code == 0
    other = run("restore", "one-copy.duckdb", "--db", "two.duckdb")
    assert other.exit_code == 4, other.output
    assert "holds as many rows as the backup" in other.output

    # an older file (one new game, and a stale log beside it) takes the backup whole
    assert rows_of("two.duckdb") < rows_of("monday.duckdb")
    Path("two.duckdb.wal").write_bytes(b"\x00" * 64)
    restored = run("restore", "monday.duckdb", "--db", "two.duckdb")
    assert restored.exit_code == 0, restored.output
    assert restored.output.startswith("restored monday.duckdb to two.duckdb: 1 games, ")
    assert not Path("two.duckdb.wal").exists()
    assert rows_of("two.duckdb") == rows_of("monday.duckdb")
    assert run("audit", "--all", "--db", "two.duckdb").exit_code == 0
    # a file that is not there yet is made; a backup that is not there is refused
    assert run("restore", "monday.duckdb", "--db", "fresh.duckdb").exit_code == 0
    missing = run("restore", "nothing.duckdb", "--db", "fresh.duckdb")
    assert missing.exit_code == 3, missing.output
    assert "there is no backup at nothing.duckdb" in missing.output
    pg = run("restore", "monday.duckdb", "--db", "postgresql://u@localhost/feastlog")
    assert pg.exit_code == 2, pg.output


def test_a_server_on_postgresql_points_to_its_own_tools(tmp_path: Path) -> None:
    dsn = empty_database("backup-refused")
    server = ThreadedServer(dsn)
    try:
        out = str(tmp_path / "copy.duckdb")
        made = run("backup", out, "--server", server.address, "--organiser-key", server.key)
        assert made.exit_code == 2, made.output
        assert "pg_dump" in made.output and "docs/scaling.md" in made.output
        assert not Path(out).exists()
    finally:
        server.stop()
