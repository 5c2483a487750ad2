"""Start-up: owner-only files whatever the umask, organiser-key refusals, and every way
``feastlog serve`` can fail to start: exit code 3 and one line on stderr, no traceback."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.service.app.auth import (
    KEY_ENV,
    KEY_FILE,
    KEY_MIN_LENGTH,
    OrganiserKeyError,
    find_organiser_key,
    organiser_key,
)
from feastlog.service.files import write_new_private_file
from feastlog.service.grpc.server import SERVER_OPTIONS, CannotListen, check_port_free, listen
from feastlog.service.store.duckdb import Store
from feastlog.v1 import game_service_pb2 as pb
from tests.serverutil import ProcessServer, create, play_to_end, stub

SERVE = [sys.executable, "-c", "from feastlog.cli.main import main; main()", "serve"]
KEY = "org_" + "k" * 40
GOOD_KEY = "a" * KEY_MIN_LENGTH


def env_without_key(key: str | None = None) -> dict[str, str]:
    """The environment for a server: no organiser key unless ``key`` is given."""
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    if key is not None:
        env[KEY_ENV] = key
    return env


def serve_refused(*args: str, key: str | None = None) -> str:
    """Run ``feastlog serve`` expecting a refusal: exit code 3, one stderr line; that line."""
    done = subprocess.run(
        [*SERVE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_without_key(key),
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: ")
    assert "listening" not in done.stdout
    return lines[0]


def mode(path: Path) -> int:
    """Permission bits."""
    return stat.S_IMODE(path.stat().st_mode)


# --- owner-only files -------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask 022", "umask 000"])
def test_a_new_store_its_wal_its_key_and_its_folders_are_owner_only_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    db = tmp_path / "made" / "by" / "feastlog" / "games.duckdb"
    proc = subprocess.Popen(
        [*SERVE, "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_without_key(),
        umask=umask,  # the server's umask, set in the child (no Python runs between fork and exec)
    )
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().split()[-1]
        key_file = db.parent / KEY_FILE
        key = key_file.read_text().strip()
        client = stub(address)
        game = create(client, key, "bon-appetit", ["Ann", "Brian"])
        play_to_end(client, game.game_id, [t.token for t in game.seat_tokens], seed=1, stop_after=4)
        wal = Path(f"{db}.wal")
        assert wal.exists()  # the commands are in the write-ahead log, not yet checkpointed
        assert mode(db) == mode(wal) == mode(key_file) == 0o600
        for folder in (tmp_path / "made", tmp_path / "made" / "by", db.parent):
            assert mode(folder) == 0o700
        assert len(key) >= KEY_MIN_LENGTH
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert mode(db) == 0o600


SPILL = """
import json, os, sys
from pathlib import Path
from feastlog.service.store.duckdb import Store
store = Store(sys.argv[1])
store.con.execute("SET memory_limit = '8MB'; SET threads = 1; SET enable_progress_bar = false")
store.con.execute("CREATE TEMP TABLE big AS SELECT range AS x, md5(range::VARCHAR) AS y "
                  "FROM range(300000)")
spilled = [p for p, _ in store.con.execute("SELECT * FROM duckdb_temporary_files()").fetchall()]
folder = Path(sys.argv[1] + ".tmp")
modes = {str(p): oct(os.stat(p).st_mode & 0o777) for p in [folder, *spilled]}
second = Store(sys.argv[1] + "-2")
store.close()
umask_one_open = os.umask(0o077)
os.umask(umask_one_open)
second.close()
print(json.dumps({"modes": modes, "one_open": oct(umask_one_open), "after": oct(os.umask(0))}))
"""


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask 022", "umask 000"])
def test_what_duckdb_spills_to_disk_is_owner_only_and_the_umask_comes_back_after_the_last_store(
    tmp_path: Path, umask: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SPILL, str(tmp_path / "spill.duckdb")],
        capture_output=True,
        text=True,
        timeout=120,
        umask=umask,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    modes = found["modes"]
    assert len(modes) >= 2, modes  # the spill folder and at least one spill file
    assert modes.pop(str(tmp_path / "spill.duckdb.tmp")) == "0o700"
    assert set(modes.values()) == {"0o600"}
    assert found["one_open"] == "0o77"  # while any store is open for writing
    assert found["after"] == oct(umask)  # restored when the last one closes


def test_an_existing_store_that_others_can_read_is_tightened_when_the_server_opens_it(
    tmp_path: Path,
) -> None:
    db = crashed(tmp_path)  # a WAL still to replay, as after kill -9
    wal = Path(f"{db}.wal")
    spill = Path(f"{db}.tmp")
    spill.mkdir()
    for path, bits in ((db, 0o644), (wal, 0o644), (spill, 0o755)):
        os.chmod(path, bits)  # as an older feastlog left them under umask 022
    server = ProcessServer(db, KEY)
    try:
        assert mode(db) == mode(wal) == 0o600  # the WAL is still there, replayed
        assert mode(spill) == 0o700
    finally:
        err = server.terminate()
    for path, was, now in ((db, "0644", "0600"), (wal, "0644", "0600"), (spill, "0755", "0700")):
        assert f"{path} was readable by others (mode {was}): made it {now}" in err
    assert "Traceback" not in err


# --- the organiser key --------------------------------------------------------------------


def test_the_key_file_is_made_once_owner_only_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    db = str(tmp_path / "new" / "games.duckdb")
    key, source = organiser_key(db)
    assert source == str(tmp_path / "new" / KEY_FILE)
    assert len(key) >= KEY_MIN_LENGTH
    assert organiser_key(db) == (key, source)
    assert mode(tmp_path / "new") == 0o700
    assert mode(tmp_path / "new" / KEY_FILE) == 0o600
    assert os.listdir(tmp_path / "new") == [KEY_FILE]


def test_writing_a_key_file_never_replaces_one_another_server_made_first(tmp_path: Path) -> None:
    path = tmp_path / KEY_FILE
    write_new_private_file(path, "first\n")
    write_new_private_file(path, "second\n")
    assert path.read_text() == "first\n"
    assert os.listdir(tmp_path) == [KEY_FILE]


KEY_FILES: dict[str, tuple[bytes, int, str]] = {
    # case: (content, mode, what the refusal says)
    "empty": (b"", 0o600, "is empty"),
    "blank": (b"  \n", 0o600, "is empty"),
    "short": (b"abcdefgh\n", 0o600, "holds a key of 8 characters"),
    "world-writable": (b"abcdefgh", 0o666, "can be reached by other users (mode 0666)"),
    "group-readable": (GOOD_KEY.encode(), 0o640, "can be reached by other users (mode 0640)"),
    "world-readable": (GOOD_KEY.encode(), 0o604, "can be reached by other users (mode 0604)"),
    "spaces": (b"a b " * 10, 0o600, "holds characters a bearer token cannot carry"),
    "not text": (b"a" * 40 + b"\xff\xfe", 0o600, "holds characters a bearer token cannot carry"),
}


@pytest.mark.parametrize("case", sorted(KEY_FILES))
def test_the_server_and_clients_refuse_an_unusable_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    content, bits, says = KEY_FILES[case]
    path = tmp_path / KEY_FILE
    path.write_bytes(content)
    os.chmod(path, bits)
    with pytest.raises(OrganiserKeyError, match=re.escape(f"{path} {says}")) as refused:
        organiser_key(str(tmp_path / "games.duckdb"))
    assert "\n" not in str(refused.value)
    assert "delete it and start the server again" in str(refused.value)
    with pytest.raises(OrganiserKeyError, match=re.escape(says)):
        find_organiser_key(None, str(tmp_path))
    assert path.read_bytes() == content  # refused, never rewritten behind the user's back


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_key_file_owned_by_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    path = tmp_path / KEY_FILE
    path.write_text(GOOD_KEY)
    os.chmod(path, 0o600)
    os.chown(path, 65534, 65534)
    with pytest.raises(OrganiserKeyError, match="belongs to another user"):
        organiser_key(str(tmp_path / "games.duckdb"))


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (os.mkdir, "cannot read the organiser key file"),
        (os.mkfifo, "is not a file"),  # refused at once: never waited on
    ],
    ids=["a folder", "a FIFO"],
)
def test_a_key_file_that_is_not_a_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], None], says: str
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    make(tmp_path / KEY_FILE)
    with pytest.raises(OrganiserKeyError, match=says):
        organiser_key(str(tmp_path / "games.duckdb"))


@pytest.mark.parametrize("value", ["   ", "short", "x" * (KEY_MIN_LENGTH - 1), "é" * 40])
def test_a_short_or_unusable_key_in_the_environment_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(KEY_ENV, value)
    with pytest.raises(OrganiserKeyError, match=rf"\${KEY_ENV}") as refused:
        organiser_key(str(tmp_path / "games.duckdb"))
    assert "unset it to use the key file" in str(refused.value)
    assert not (tmp_path / KEY_FILE).exists()


def test_a_key_of_exactly_the_minimum_length_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, f" {GOOD_KEY}\n")
    assert organiser_key(str(tmp_path / "games.duckdb")) == (GOOD_KEY, f"${KEY_ENV}")


def test_a_client_with_no_key_file_has_no_key_and_an_explicit_key_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert find_organiser_key(None, str(tmp_path)) is None
    (tmp_path / KEY_FILE).write_bytes(b"")  # unusable, but never read when a key is given
    assert find_organiser_key("org_given", str(tmp_path)) == "org_given"


def test_feastlog_new_says_in_one_line_why_the_key_file_here_is_unusable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from feastlog.service import announce

    monkeypatch.chdir(tmp_path)
    (tmp_path / KEY_FILE).write_bytes(b"")
    os.chmod(tmp_path / KEY_FILE, 0o600)
    # a server announced beside ./feastlog.duckdb: the key file here would go to it
    fingerprint = announce.key_fingerprint("x" * 32)
    announce.write(
        "feastlog.duckdb", announce.Announcement("127.0.0.1:9", os.getpid(), fingerprint)
    )
    result = CliRunner(env={KEY_ENV: ""}).invoke(
        cli, ["new", "bon-appetit", "--players", "Ann,Brian"]
    )
    assert result.exit_code == 3
    assert result.output.strip().splitlines() == [
        f"Error: the organiser key file {KEY_FILE} is empty: delete it and start the "
        "server again to make a new one"
    ]


def test_feastlog_serve_refuses_an_empty_key_file_in_one_line(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).write_bytes(b"")
    os.chmod(tmp_path / KEY_FILE, 0o600)
    line = serve_refused("--db", str(tmp_path / "games.duckdb"), "--port", "0")
    assert f"{tmp_path / KEY_FILE} is empty" in line


def test_feastlog_serve_refuses_a_world_writable_8_character_key_file_in_one_line(
    tmp_path: Path,
) -> None:
    (tmp_path / KEY_FILE).write_text("abcdefgh")
    os.chmod(tmp_path / KEY_FILE, 0o666)
    line = serve_refused("--db", str(tmp_path / "games.duckdb"), "--port", "0")
    assert "can be reached by other users (mode 0666)" in line


def test_feastlog_serve_refuses_a_short_key_in_the_environment_in_one_line(
    tmp_path: Path,
) -> None:
    line = serve_refused("--db", str(tmp_path / "games.duckdb"), "--port", "0", key="org_short")
    assert f"${KEY_ENV} holds a key of 9 characters" in line


# --- a store that cannot be opened --------------------------------------------------------


def store_file(tmp_path: Path) -> Path:
    """A real, empty feastlog store."""
    db = tmp_path / "games.duckdb"
    Store(str(db)).close()
    return db


def truncated(tmp_path: Path) -> Path:
    db = store_file(tmp_path)
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    return db


def corrupt(tmp_path: Path) -> Path:
    db = store_file(tmp_path)
    data = bytearray(db.read_bytes())
    data[12288:] = bytes(b ^ 0x55 for b in data[12288:])  # every block past the headers
    db.write_bytes(bytes(data))
    return db


def crashed(tmp_path: Path) -> Path:
    """A copy of a store and its write-ahead log taken mid-work, as a crash leaves them."""
    live = tmp_path / "live" / "games.duckdb"
    store = Store(str(live))
    store.con.execute("INSERT INTO seeds VALUES ('g_1', '\\x00'::BLOB)")
    db = tmp_path / "games.duckdb"
    shutil.copy(live, db)
    shutil.copy(f"{live}.wal", f"{db}.wal")
    store.close()
    shutil.rmtree(live.parent)
    return db


def corrupt_wal(tmp_path: Path) -> Path:
    """A crash's store and WAL, with one WAL entry damaged."""
    db = crashed(tmp_path)
    wal = bytearray(Path(f"{db}.wal").read_bytes())
    wal[60:90] = bytes(b ^ 0x55 for b in wal[60:90])
    Path(f"{db}.wal").write_bytes(bytes(wal))
    return db


def zero_length(tmp_path: Path) -> Path:
    db = tmp_path / "games.duckdb"
    db.write_bytes(b"")
    return db


def not_a_database(tmp_path: Path) -> Path:
    db = tmp_path / "games.duckdb"
    db.write_text("Ann,Brian,Celia\n")
    return db


def a_json_file(tmp_path: Path) -> Path:
    """A file DuckDB reads as data: given it, DuckDB opened an in-memory database, and a
    server took games on it that were gone when it stopped."""
    db = tmp_path / "games.json"
    db.write_text('{"a": 1}\n')
    return db


def a_csv_file(tmp_path: Path) -> Path:
    db = tmp_path / "games.csv"
    db.write_text("Ann,Brian,Celia\n")
    return db


def a_folder(tmp_path: Path) -> Path:
    db = tmp_path / "games.duckdb"
    db.mkdir()
    return db


def read_only(tmp_path: Path) -> Path:
    db = store_file(tmp_path)
    os.chmod(db, 0o444)
    return db


def under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "notes").write_text("not a folder")
    return tmp_path / "notes" / "games.duckdb"


UNUSABLE: dict[str, tuple[Callable[[Path], Path], str]] = {
    "truncated": (truncated, "is truncated"),
    "corrupt": (corrupt, "is corrupt"),
    "corrupt WAL": (corrupt_wal, "the write-ahead log"),
    "zero-length": (zero_length, "is empty (0 bytes)"),
    "not a database": (not_a_database, "is not a DuckDB database file"),
    "a JSON file": (a_json_file, "is not a DuckDB database file"),
    "a CSV file": (a_csv_file, "is not a DuckDB database file"),
    "a folder": (a_folder, "is a folder, not a database file"),
    "read-only": (read_only, "is read-only (mode 0444)"),
    "under a file": (under_a_file, "is a file, not a folder"),
}


@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_feastlog_serve_refuses_a_store_it_cannot_use_in_one_line_with_exit_code_3(
    tmp_path: Path, case: str
) -> None:
    make, says = UNUSABLE[case]
    db = make(tmp_path)
    before = sorted(p.name for p in db.parent.iterdir()) if db.parent.is_dir() else []
    line = serve_refused("--db", str(db), "--port", "0", key=KEY)
    assert says in line
    assert str(db) in line or str(db.parent) in line
    if db.parent.is_dir():  # nothing made or removed beside it
        assert sorted(p.name for p in db.parent.iterdir()) == before


@pytest.mark.parametrize("make", [a_json_file, a_csv_file])
def test_a_file_duckdb_reads_as_data_is_no_store_for_any_command(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    """`new` and `games` on a .json or .csv file: DuckDB opened an in-memory
    database for them, so `new` printed a game id for a game stored nowhere (and made the
    file owner-only).  Each is refused in one line, exit 3, the file left as it was."""
    db = make(tmp_path)
    before = (db.read_bytes(), db.stat().st_mode)
    runner = CliRunner()
    commands = [
        ["new", "bon-appetit", "--players", "Ann,Bob", "--db", str(db)],
        ["games", "--db", str(db)],
    ]
    for args in commands:
        result = runner.invoke(cli, args, env={"FEASTLOG_ORGANISER_KEY": KEY})
        assert result.exit_code == 3, (args, result.output)
        assert result.stderr.strip() == (
            f"Error: {db} is not a DuckDB database file: move it away to start a new store "
            "there, or pass --db with the right file"
        ), args
    assert (db.read_bytes(), db.stat().st_mode) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [db.name]  # no key, no log made


def test_offline_replay_of_a_damaged_file_is_one_line_too(tmp_path: Path) -> None:
    # read-only, a file is only damaged where a read lands: a corrupt catalogue is read at once
    # (a truncated empty store may lose only unused blocks, which a reader never touches)
    db = corrupt(tmp_path)
    result = CliRunner().invoke(cli, ["replay", "g_x", "--db", str(db)])
    assert result.exit_code == 3
    assert result.output.strip().splitlines() == [
        f"Error: {db} is corrupt (a checksum does not match): restore it from a "
        "backup, or pass --db with another file"
    ]


# --- the port ------------------------------------------------------------------------------


@pytest.fixture
def running(tmp_path: Path) -> Iterator[ProcessServer]:
    server = ProcessServer(tmp_path / "first.duckdb", KEY)
    yield server
    server.terminate()


def test_a_second_server_on_a_taken_port_is_refused_and_the_first_goes_on(
    tmp_path: Path, running: ProcessServer
) -> None:
    port = running.address.rsplit(":", 1)[1]
    line = serve_refused("--db", str(tmp_path / "second.duckdb"), "--port", port, key=KEY)
    assert line == (
        f"Error: cannot listen on 127.0.0.1:{port}: the port is taken (another feastlog "
        "server?): stop it, or pick another --port"
    )
    assert not (tmp_path / "second.duckdb").exists()  # refused before any file was made
    # The first server still answers, on new connections too.
    games = [len(stub(running.address).ListGames(pb.ListGamesRequest()).games) for _ in range(5)]
    assert games == [0] * 5


def test_grpc_itself_refuses_a_port_another_server_shares_with_so_reuseport() -> None:
    async def bind_twice() -> None:
        other = grpc.aio.server()  # gRPC's defaults: SO_REUSEPORT on
        port = other.add_insecure_port("127.0.0.1:0")
        await other.start()
        try:
            with pytest.raises(CannotListen, match="the port is taken"):
                listen(grpc.aio.server(options=SERVER_OPTIONS), f"127.0.0.1:{port}")
        finally:
            await other.stop(None)

    asyncio.run(bind_twice())


def test_a_listener_that_shares_its_port_still_makes_the_port_taken() -> None:
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        with pytest.raises(CannotListen, match="the port is taken"):
            check_port_free(f"127.0.0.1:{port}")


def test_a_taken_http_port_is_refused_before_anything_is_announced(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = tmp_path / "pages.duckdb"
        line = serve_refused("--db", str(db), "--port", "0", "--http", str(port), key=KEY)
    assert line == (
        f"Error: cannot listen on 127.0.0.1:{port}: the port is taken (another feastlog "
        "server?): stop it, or pick another --http"
    )
    assert list(tmp_path.iterdir()) == []  # no database, no announcement


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("192.0.2.1", "that is not an address of this machine: pick another --host"),
        ("::ffff:192.0.2.1", "that is not an address of this machine: pick another --host"),
        ("no-such-host.invalid", "unknown host"),
    ],
)
def test_a_host_that_is_not_this_machines_is_refused_before_any_file_is_made(
    tmp_path: Path, host: str, why: str
) -> None:
    # port 0 (any free port) too: only the host is wrong, and gRPC logs nothing of its own
    for port in ("0", "50051"):
        line = serve_refused(
            "--db", str(tmp_path / "s.duckdb"), "--host", host, "--port", port, key=KEY
        )
        assert line.startswith("Error: cannot listen on ") and why in line, line
        assert f":{port}: " in line
        assert list(tmp_path.iterdir()) == []


def test_an_address_of_another_machine_is_refused_in_one_line() -> None:
    with pytest.raises(CannotListen, match="not an address of this machine"):
        check_port_free("192.0.2.1:50051")  # TEST-NET-1: never this machine's


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["serve", "--db", str(tmp_path / "g.duckdb"), "--port", "70000"]
    )
    assert result.exit_code == 2
    assert "70000" in result.output
    assert not (tmp_path / "g.duckdb").exists()


def test_feastlog_serve_refuses_a_store_in_memory(tmp_path: Path) -> None:
    """`--db memory:` names the in-memory store the use cases' tests run on: a server on
    it made a DuckDB file named `memory:` (and offline commands read an empty store)."""
    done = subprocess.run(
        [*SERVE, "--db", "memory:", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env_without_key(KEY),
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "listening" not in done.stdout
    assert "a store in one process's memory" in done.stderr
    assert list(tmp_path.iterdir()) == []  # no file, no key, no log made
