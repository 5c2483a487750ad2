"""The store's copy of a DuckDB file (``service/store/duckdb/backup.py``): held to what its
source's last commit recorded before it takes its name, deleted when it falls short, and
made without letting go of the lock the process holds on its source."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.service.store.duckdb import Store, backup, mark
from feastlog.service.store.errors import DamagedLog

NO_ENV = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": "", "FEASTLOG_CA": ""}


@pytest.fixture
def played(tmp_path: Path) -> str:
    db = str(tmp_path / "hall.duckdb")
    args = ["demo", "bon-appetit", "--players", "2", "--seed", "07" * 32, "--db", db]
    done = CliRunner(env=NO_ENV).invoke(cli, args)
    assert done.exit_code == 0, done.output
    return db


def test_a_copy_short_of_its_sources_mark_is_deleted_not_named(played: str, tmp_path: Path) -> None:
    out = tmp_path / "copy.duckdb"
    copied = backup.copy_files(played, backup.partial_of(out))
    assert copied.recorded is not None
    claimed = dataclasses.replace(copied.recorded, rows=copied.recorded.rows + 1)
    with pytest.raises(DamagedLog, match="falls short of what its last commit recorded"):
        backup.seal(dataclasses.replace(copied, recorded=claimed), out)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("copy")) == []


def test_a_copy_made_by_the_writing_process_keeps_its_lock(played: str, tmp_path: Path) -> None:
    store = Store(played)  # this process writes the file, as a server's store does
    try:
        copied = store.backup_copy(str(backup.partial_of(tmp_path / "copy.duckdb")))
        # another process still cannot open it: closing a descriptor of the file would
        # have released DuckDB's lock on it
        probe = (
            "import duckdb,sys\n"
            "try: duckdb.connect(sys.argv[1], read_only=True)\n"
            "except duckdb.Error: sys.exit(3)\n"
        )
        opened = subprocess.run([sys.executable, "-c", probe, played], timeout=60)
        assert opened.returncode == 3
    finally:
        store.close()
    sealed = backup.seal(copied, tmp_path / "copy.duckdb")
    assert sealed.held.rows == mark.read(played).tally.rows  # type: ignore[union-attr]
