"""A DuckDB file written before record format 2 keeps every game after the upgrade.

The file is written here exactly as earlier builds wrote it: the ``events`` table without
its ``commitment`` column and format-1 rows (whose hash covers the command bytes).  Read
offline it is left as it is; opened by a server it gains the column in place, every row
stays byte for byte, every game verifies, a running format-1 game goes on in format 1,
and a new game on the same file is written in format 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import grpc
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay.record.export import verify_document
from feastlog.service.app.auth import token_sha256
from feastlog.service.store.duckdb import SCHEMA
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests.recordutil import Built, build
from tests.serverutil import ThreadedServer, create, play_to_end, stub, watch_all

COMMITMENT_COLUMN = "    commitment VARCHAR NOT NULL DEFAULT '',\n"
# The events table as earlier builds created it: no commitment column.
FORMAT_1_SCHEMA = SCHEMA.replace(COMMITMENT_COLUMN, "")
ORIGINAL_COLUMNS = (
    "game_id, seq, kind, actor, command_id, body, recorded_at, prev_hash, hash, state_hash"
)


def token(game_id: str, seat: int) -> str:
    """The seat token these tests hand out (only its sha256 is stored)."""
    return f"seat_upgrade-{game_id}-{seat:02d}-padding-padding"


def write_format_1_file(path: Path, games: list[Built]) -> None:
    """Store games as an earlier build did: its schema and its ten-column event rows."""
    assert COMMITMENT_COLUMN in SCHEMA
    con = duckdb.connect(str(path))
    try:
        con.execute(FORMAT_1_SCHEMA)
        for built in games:
            genesis = record_pb2.Genesis.FromString(built.rows[0].body)
            assert genesis.record_version == 0  # format 1 leaves the field out
            sha = genesis.pack_sha256
            con.execute(
                "INSERT INTO packs SELECT ?, ?, ?, ? WHERE NOT EXISTS "
                "(SELECT 1 FROM packs WHERE sha256 = ?)",
                [sha, genesis.game_kind, genesis.pack_id, built.pack_bytes, sha],
            )
            con.execute("INSERT INTO seeds VALUES (?, ?)", [genesis.game_id, built.seed])
            con.executemany(
                "INSERT INTO seats VALUES (?, ?, ?, ?)",
                [
                    [genesis.game_id, i, name, token_sha256(token(genesis.game_id, i))]
                    for i, name in enumerate(built.names)
                ],
            )
            con.executemany(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [list(vars(r).values())[:10] for r in built.rows],
            )
    finally:
        con.close()
    path.chmod(0o600)  # as a server keeps its file: owner-only


def columns(path: Path) -> list[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        found = con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'events'"
        ).fetchall()
        return [c[0] for c in found]
    finally:
        con.close()


def original_rows(path: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            f"SELECT {ORIGINAL_COLUMNS} FROM events ORDER BY game_id, seq"
        ).fetchall()
    finally:
        con.close()


def old_games() -> list[Built]:
    """A finished Bon Appetit! game and a Picky Eaters game still running, in format 1."""
    return [
        build("bon-appetit", 3, 7, game_id="g_oldfinished", version=1),
        build("picky-eaters", 3, 8, game_id="g_oldrunning", stop_after=12, version=1),
    ]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout


def test_a_format_1_file_reads_offline_and_is_not_changed(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    write_format_1_file(path, old_games())
    before = original_rows(path)
    code, out = run("audit", "--all", "--db", str(path), "--json")
    assert code == 0, out
    reports = json.loads(out)["reports"]
    assert [(r["ok"], r["record_version"]) for r in reports] == [(True, 1), (True, 1)]
    out_file = tmp_path / "finished.json"
    code, out = run("export", "g_oldfinished", "--db", str(path), "-o", str(out_file))
    assert code == 0, out
    document = json.loads(out_file.read_text())
    assert document["version"] == 1
    assert all("commitment" not in r for r in document["rows"])
    assert verify_document(out_file.read_text()).ok
    code, out = run("replay", "g_oldfinished", "--db", str(path))
    assert code == 0 and "Ann" in out
    assert "commitment" not in columns(path)  # read-only: nothing migrated
    assert original_rows(path) == before


def test_a_format_1_file_opens_serves_verifies_and_its_games_continue_in_format_1(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.duckdb"
    games = old_games()
    write_format_1_file(path, games)
    before = original_rows(path)
    server = ThreadedServer(path)
    try:
        client = stub(server.address)
        replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
        for built in games:
            game_id = built.rows[0].game_id
            events = watch_all(client, game_id, server.key, len(built.rows))
            assert [e.hash for e in events] == [r.hash for r in built.rows]
            assert all(e.commitment == "" for e in events)
        running, begun = "g_oldrunning", len(games[1].rows)
        assert play_to_end(client, running, [token(running, s) for s in range(3)], seed=8) > 0
        reply = replay.ExportRecord(rpb.ExportRecordRequest(game_id=running))
        document = json.loads(reply.content)
        assert reply.complete and document["version"] == 1
        assert len(document["rows"]) > begun
        assert all("commitment" not in r for r in document["rows"])
        report = verify_document(reply.content.decode())
        assert report.ok and report.record_version == 1, report.summary()
        assert [r["hash"] for r in document["rows"][:begun]] == [r.hash for r in games[1].rows]
        new = create(client, server.key, "bon-appetit", ["Ann", "Brian"], seed=b"\x09" * 32)
        play_to_end(client, new.game_id, [t.token for t in new.seat_tokens], seed=9)
        fresh = replay.ExportRecord(rpb.ExportRecordRequest(game_id=new.game_id))
        assert json.loads(fresh.content)["version"] == 2
        assert verify_document(fresh.content.decode()).ok
    finally:
        server.stop()
    assert "commitment" in columns(path)  # added in place by the server
    after = original_rows(path)
    assert [r for r in after if r in before] == before  # every earlier row, byte for byte
    code, out = run("audit", "--all", "--db", str(path), "--json")
    assert code == 0, out
    assert sorted(r["record_version"] for r in json.loads(out)["reports"]) == [1, 1, 2]
    restarted = ThreadedServer(path)  # and it opens again once migrated
    try:
        view = stub(restarted.address).GetView(pb.GetViewRequest(game_id="g_oldrunning"))
        assert view.seq > begun
    finally:
        restarted.stop()
