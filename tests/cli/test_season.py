"""A season in one file: paginated listing, audit --all over workers, export --all, import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.service.app import bulk
from feastlog.service.app.season import audit_all
from feastlog.service.bench.data import build, build_store, store_games
from feastlog.service.store import StoredGame
from feastlog.service.store.duckdb import Store
from feastlog.v1 import game_service_pb2 as pb
from tests.serverutil import ThreadedServer, create, error_info, stub

GAMES = 24


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file of finished games of every kind, one running, one tampered with."""
    path = tmp_path_factory.mktemp("season") / "season.duckdb"
    kinds = ("bon-appetit", "menu-masters", "picky-eaters")
    built = [
        build(kinds[i % 3], players=2 + i % 2, seed_byte=i + 1, game_id=f"g_season{i:04d}")
        for i in range(GAMES)
    ]
    built.append(build("bon-appetit", 3, seed_byte=99, stop_after=6, game_id="g_running"))
    store_games(path, built)
    store = Store(str(path))
    try:  # an edited row in one finished game
        store.con.execute(
            "UPDATE events SET recorded_at = '2026-01-02T00:00:00Z' "
            "WHERE game_id = 'g_season0005' AND seq = 7"
        )
    finally:
        store.close()
    return path


def run(*args: str) -> tuple[int, str]:
    """Invoke the CLI; stdout only."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout


def test_audit_all_over_several_workers_reports_exactly_what_one_worker_does(
    season: Path,
) -> None:
    code_one, one = run("audit", "--all", "--db", str(season), "--json", "--workers", "1")
    code_many, many = run("audit", "--all", "--db", str(season), "--json", "--workers", "3")
    assert code_one == code_many == 1  # the tampered game fails
    assert one == many
    reports = json.loads(one)["reports"]
    assert len(reports) == GAMES + 1
    bad = [r for r in reports if not r["ok"]]
    assert [(r["game_id"], r["first_bad_seq"]) for r in bad] == [("g_season0005", 7)]
    assert [r["game_id"] for r in reports][:3] == ["g_season0000", "g_season0001", "g_season0002"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_sampled_audit_verifies_every_kth_game_and_reads_the_same_rows(
    season: Path, workers: int
) -> None:
    reports, speed = audit_all(str(season), workers, every=5)
    sampled = ["g_season0004", "g_season0009", "g_season0014", "g_season0019", "g_running"]
    assert [r["game_id"] for r in reports] == sampled  # places 5, 10, ... of the game list
    assert speed.rows == speed.read_rows == sum(r["rows"] for r in reports)
    assert all(r["ok"] for r in reports)


def test_a_store_built_by_worker_processes_is_the_one_built_here(tmp_path: Path) -> None:
    made = [build(players=2 + i, seed_byte=i + 1) for i in range(3)]
    found = []
    for workers in (1, 2):
        path = tmp_path / f"built{workers}.duckdb"
        build_store(path, 23, made, workers)
        store = Store(str(path), read_only=True)
        try:
            events = store.con.execute(
                "SELECT game_id, seq, hash FROM events ORDER BY game_id, seq"
            ).fetchall()
            listed = store.con.execute("SELECT game_id, n FROM games ORDER BY n").fetchall()
            outcomes = store.con.execute("SELECT * FROM outcome_seats ORDER BY ALL").fetchall()
        finally:
            store.close()
        found.append((events, listed, outcomes))
    assert found[0] == found[1]
    events, listed, outcomes = found[0]
    assert len(listed) == 23 and len({e[2] for e in events}) == len(events)
    assert outcomes


def test_audit_all_says_how_fast_beside_a_plain_read(season: Path) -> None:
    result = CliRunner().invoke(cli, ["audit", "--all", "--db", str(season), "--workers", "2"])
    assert result.exit_code == 1
    assert "rows/s with 2 workers" in result.output and "one scan with protobuf" in result.output
    assert f"{GAMES + 1} games, {GAMES} verified, 1 failed" in result.output


def test_import_refuses_a_tampered_record_and_is_idempotent(season: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "season.jsonl"
    code, out = run("export", "--all", "--db", str(season), "-o", str(bundle), "--workers", "2")
    assert code == 0 and f"{GAMES + 1} games, {GAMES} complete" in out, out
    lines = bundle.read_text().splitlines()
    finished = [line for line in lines if '"server_seed": null' not in line]
    good = [line for line in finished if '"g_season0005"' not in line]
    target = tmp_path / "merged.duckdb"
    # the whole bundle: one tampered record and one running game, so nothing goes in
    code, _ = run("import", str(bundle), "--db", str(target))
    assert code == 1
    assert not target.exists() or Store(str(target), read_only=True).count_games() == (0, 0)
    part1, part2 = tmp_path / "table1.jsonl", tmp_path / "table2.jsonl"
    part1.write_text("\n".join(good[:10]) + "\n")
    part2.write_text("\n".join(good[8:]) + "\n")
    code, out = run("import", str(part1), str(part2), "--db", str(target), "--workers", "2")
    assert code == 0, out
    assert f"imported {len(good)} games" in out and "2 already there" in out
    code, again = run("import", str(part1), str(part2), "--db", str(target))
    assert code == 0 and "imported 0 games" in again and f"{len(good) + 2} already" in again
    code, audit = run("audit", "--all", "--db", str(target), "--json")
    reports = json.loads(audit)["reports"]
    assert code == 0 and len(reports) == len(good) and all(r["ok"] for r in reports)
    code, stats = run("stats", "--db", str(target), "--json")
    assert sum(k["games"] for k in json.loads(stats)) == len(good)
    tampered = tmp_path / "tampered.json"
    record = json.loads(good[0])
    record["rows"][3]["actor"] = "seat:0" if record["rows"][3]["actor"] != "seat:0" else "seat:1"
    tampered.write_text(json.dumps(record))
    result = CliRunner().invoke(cli, ["import", str(tampered), "--db", str(target)])
    assert result.exit_code == 1 and "FAILED at seq 4" in result.output


def test_pages_cover_every_game_exactly_once_while_games_are_created(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "list.duckdb")
    try:
        client = stub(server.address)
        before = [
            create(client, server.key, "bon-appetit", ["Ann", "Brian"]).game_id for _ in range(23)
        ]
        stop = threading.Event()
        made: list[str] = []

        def keep_creating() -> None:
            while not stop.is_set():
                made.append(create(client, server.key, "menu-masters", ["Ann", "Bo"]).game_id)

        creator = threading.Thread(target=keep_creating)
        creator.start()
        seen: list[str] = []
        token = ""
        try:
            while True:
                page = client.ListGames(pb.ListGamesRequest(page_size=4, page_token=token))
                assert len(page.games) <= 4
                seen += [g.game_id for g in page.games]
                token = page.next_page_token
                if not token:
                    break
        finally:
            stop.set()
            creator.join()
        assert len(seen) == len(set(seen))  # never twice
        assert set(before) <= set(seen)  # every game there when paging began
        assert made and set(seen) - set(before) <= set(made)
        kind_only = client.ListGames(pb.ListGamesRequest(game_kind="bon-appetit", page_size=500))
        assert [g.game_id for g in kind_only.games] == before[::-1]  # newest first
        assert not kind_only.next_page_token
        with pytest.raises(grpc.RpcError) as bad:
            client.ListGames(pb.ListGamesRequest(page_token="not-a-token"))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_info(bad.value).metadata["field"] == "page_token"
        # a negative page size is named as the field it came in: an older client's limit
        for request, field in (
            (pb.ListGamesRequest(limit=-1), "limit"),
            (pb.ListGamesRequest(page_size=-1), "page_size"),
            (pb.ListGamesRequest(page_size=-1, limit=5), "page_size"),
        ):
            with pytest.raises(grpc.RpcError) as bad:
                client.ListGames(request)
            assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert error_info(bad.value).metadata["field"] == field
        assert len(client.ListGames(pb.ListGamesRequest(limit=2)).games) == 2
    finally:
        server.stop()


def test_workers_are_never_more_than_the_games_nor_four_a_core() -> None:
    """`audit --all --workers 24` on a file of one game started 24 processes (15 s against
    0.9), `--workers 1000` ran the load average to 86."""
    cores = bulk.default_workers()
    assert bulk.workers_for(24, 1) == 1
    assert bulk.workers_for(1000, 10**6) == 4 * cores
    assert bulk.workers_for(None, 10**6) == cores  # the default: every core
    assert bulk.workers_for(3, 10) == 3 and bulk.workers_for(None, 0) == 1


def test_workers_are_forked_only_from_a_process_that_runs_one_thread() -> None:
    """A fork copies the imported project (a worker starts in milliseconds, not the 0.7 s
    of CPU a spawned one spends importing and opening DuckDB again), but it is safe only
    with no other thread running: an open DuckDB connection runs several."""
    script = (
        "from feastlog.service.app import bulk\n"
        "from feastlog.service.store.duckdb import Store\n"
        "import sys\n"
        "print(bulk.worker_context().get_start_method())\n"
        "store = Store(sys.argv[1])\n"
        "print(bulk.worker_context().get_start_method())\n"
        "store.close()\n"
        "print(bulk.worker_context().get_start_method())\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        found = subprocess.run(
            [sys.executable, "-c", script, str(Path(folder) / "f.duckdb")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    assert found == ["fork", "spawn", "fork"]


class _Unasked:
    """A pool result that must not be polled: each share's DONE says it is done."""

    def ready(self) -> bool:
        raise AssertionError("polled for a result whose share had said it was done")


def test_workers_progress_is_followed_until_each_says_done_without_polling() -> None:
    """Polling the results every 0.2 s, then waiting 0.1 s for progress still on its way,
    cost 0.3 s an audit: a third of a 300-game file's with two workers."""
    import queue

    progress: queue.Queue[int | None] = queue.Queue()
    for said in (25, 3, bulk.DONE, 25, 25, 7, bulk.DONE):
        progress.put(said)
    told: list[int] = []
    bulk._follow([_Unasked(), _Unasked()], progress, told.append)
    assert told == [25, 3, 25, 25, 7] and progress.empty()


def test_every_game_of_a_share_is_told_and_the_share_says_done(season: Path) -> None:
    import queue

    progress: queue.Queue[int | None] = queue.Queue()
    bulk._hear(progress)
    try:
        done = bulk._share(str(season), bulk_rows, ((1, 2), None), "")
    finally:
        bulk._hear(None)
    said = [progress.get_nowait() for _ in range(progress.qsize())]
    assert said[-1] is bulk.DONE  # places 1, 3, ... 25 of the game list:
    assert sum(s for s in said[:-1] if s) == len(done) == 13


def bulk_rows(stored: StoredGame) -> int:
    """A worker's work in a test: the game's rows."""
    return len(stored.rows)


def place_and_process(stored: StoredGame) -> tuple[str, int]:
    """A worker's work in a test: the game, and the process that did it."""
    return stored.rows[0].game_id, os.getpid()


@pytest.mark.parametrize("workers", [2, 3])
def test_this_process_works_a_share_while_the_others_work_theirs(
    season: Path, workers: int
) -> None:
    """A worker of its own cost a start, its copies of what it touched and its results
    sent back, while this process waited: this process is worker 0, and takes the first
    run of games."""
    alone = [g for g, _ in bulk.over_games(str(season), place_and_process)]
    told: list[int] = []
    found = list(bulk.over_games(str(season), place_and_process, workers, advance=told.append))
    assert [g for g, _ in found] == alone  # the order of the game list, as one worker
    by = [pid for _, pid in found]
    runs = [pid for i, pid in enumerate(by) if i == 0 or by[i - 1] != pid]
    assert runs[0] == os.getpid() and len(runs) == len(set(runs)) == workers
    assert sum(told) == len(alone)


def test_the_workers_shares_are_runs_of_games_of_about_as_many_rows(season: Path) -> None:
    """Dealt k modulo n, games of different lengths gave one of two workers a tenth more
    rows than the other (a 300-row game more)."""
    store = Store(str(season), read_only=True)
    try:
        whole = [(n, len(g.rows)) for n, g in store.scan_numbered()]
        for workers in (2, 3, 5):
            shares = [
                [(n, len(g.rows)) for n, g in store.scan_numbered(share=(k, workers))]
                for k in range(workers)
            ]
            assert [game for share in shares for game in share] == whole  # each game once
            rows = [sum(r for _, r in share) for share in shares]
            assert max(rows) - min(rows) <= 2 * max(r for _, r in whole)
        sampled = [n for n, _ in store.scan_numbered((0, 5))]
        halves = [[n for n, _ in store.scan_numbered((0, 5), share=(k, 2))] for k in range(2)]
        assert halves[0] + halves[1] == sampled and all(halves)
    finally:
        store.close()
