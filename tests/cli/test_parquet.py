"""A season for analysts: ``export --all --format parquet`` of 1,000 games, read by DuckDB
and by pyarrow; docs/data.md's columns and its three questions, their answers held to
``feastlog stats`` and the outcomes projection; nothing hidden of a running or held-back
game in any file."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq  # type: ignore[import-untyped]  # no stubs
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay.games.engine import evolve
from feastlog.replay.record.history import genesis_of, record_version
from feastlog.replay.record.rows import seal
from feastlog.service.bench.data import Built, build, build_store, store_games
from feastlog.service.store import Batch, Rejection
from feastlog.service.store.duckdb import Store
from feastlog.service.store.duckdb.parquet import TABLES, kind_tables, table_names
from tests.serverutil import ThreadedServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "data.md"
GAMES = 1000
PLAYERS = {"bon-appetit": (2, 3, 4), "menu-masters": (2, 3), "picky-eaters": (2, 3, 4)}
# Templates a player count (Bon Appetit!'s games are short, and its dishes wanted).
TEMPLATES = {"bon-appetit": 3, "menu-masters": 1, "picky-eaters": 1}
SHIPPED = {n for n, (t, _) in kind_tables().items() if t in ("outcome_bids", "outcome_purchases",
           "outcome_menus", "outcome_recipes")}  # fmt: skip


def q(sql: str) -> list[tuple[Any, ...]]:
    """The rows of a query over the files (a connection of its own)."""
    con = duckdb.connect()
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def supplied(built: Built, game_id: str) -> Built:
    """A built record as a game whose seed was supplied (a duplicate table): its genesis
    says so and the chain is sealed again."""
    genesis = genesis_of(built.rows[0])
    genesis.seed_supplied, genesis.game_id = True, game_id
    version = record_version(genesis)
    rows, prev = [], built.rows[0].prev_hash
    for row in built.rows:
        body = genesis.SerializeToString(deterministic=True) if row.seq == 1 else row.body
        rows.append(seal(evolve(row, game_id=game_id, body=body), prev, version, built.seed))
        prev = rows[-1].hash
    return replace(built, rows=rows)


def refused(game_id: str, actor: str, rule: str) -> Rejection:
    """A refused command as the store keeps it."""
    return Rejection(
        game_id, 3, actor, "c9", b"\x01", "FAILED_PRECONDITION", "RULE_VIOLATION", rule,
        f"refused: {rule}", "2026-03-02T00:00:00Z",
    )  # fmt: skip


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """1,000 finished games of every kind and player count, a running game, a finished
    table held back by its running twin, refusals; exported to Parquet."""
    folder = tmp_path_factory.mktemp("parquet")
    path = folder / "season.duckdb"
    made = [
        build(kind, players, seed_byte=10 * players + i, game_id=f"g_t_{kind}_{players}_{i}")
        for kind, counts in PLAYERS.items()
        for players in counts
        for i in range(TEMPLATES[kind])
    ]
    build_store(path, GAMES, made)
    running = build("bon-appetit", 3, seed_byte=99, stop_after=7, game_id="g_running")
    held = supplied(build("picky-eaters", 2, seed_byte=77), "g_held")
    twin = supplied(build("picky-eaters", 2, seed_byte=77, stop_after=5), "g_twin")
    store_games(path, [running, held, twin])
    public = f"g_{3:016x}"
    store = Store(str(path))
    try:
        store.write(
            Batch(
                rejections=[
                    refused(public, "seat:1", "BA-BID-OWN"),
                    refused(public, "seat:0 of game g_running", "BA-BID-SIZE"),
                    refused("g_running", "seat:2", "BA-BID-VALUE"),
                    refused("g_held", "seat:0", "PE-I1"),
                ]
            )
        )
    finally:
        store.close()
    out = folder / "season"
    args = ["export", "--all", "--format", "parquet", "-o", str(out), "--db", str(path)]
    result = CliRunner().invoke(cli, [*args, "--workers", "2"])
    assert result.exit_code == 0, result.output
    secrets = {
        "running": running.seed.hex(),
        "held": held.seed.hex(),
        "running_bodies": [r.body.hex() for r in running.rows[1:]],
        "line": result.stdout,
    }
    return path, out, secrets


def test_every_table_is_read_by_duckdb_and_by_pyarrow_alike(
    season: tuple[Path, Path, dict[str, Any]],
) -> None:
    _, out, said = season
    assert sorted(p.stem for p in out.glob("*.parquet")) == sorted(table_names())
    assert said["line"].startswith(f"wrote {out}: {GAMES + 3} games, {GAMES} public, 2 running")
    for name in table_names():
        file = out / f"{name}.parquet"
        arrow = pq.read_table(file)
        described = q(f"DESCRIBE SELECT * FROM '{file}'")
        assert [(arrow.num_rows,)] == q(f"SELECT count(*) FROM '{file}'"), name
        assert arrow.column_names == [d[0] for d in described], name
    games = pq.read_table(out / "games.parquet").to_pylist()
    assert len(games) == GAMES + 3
    assert {g["status"] for g in games} == {"finished", "running", "held"}
    rows = q(f"SELECT count(*), count(DISTINCT game_id) FROM '{out}/rows.parquet'")
    assert rows == [(sum(g["rows"] for g in games), GAMES + 3)]


def documented() -> dict[str, str]:
    """docs/data.md's columns, table by table: ``name`` -> the text that documents them."""
    text = DOC.read_text()
    found = {}
    for name in TABLES:
        section = text.split(f"### {name}.parquet", 1)[1].split("\n### ", 1)[0]
        found[name] = section
    for name in SHIPPED:
        bullet = re.search(rf"^- `{name}\.parquet`.*?(?=^- |^#)", text, re.M | re.S)
        assert bullet, f"docs/data.md says nothing of {name}.parquet"
        found[name] = " ".join(bullet.group(0).split())
    return found


def test_docs_data_md_documents_every_column_with_its_type(
    season: tuple[Path, Path, dict[str, Any]],
) -> None:
    _, out, _ = season
    docs = documented()
    assert len(SHIPPED) == 4
    for name in [*TABLES, *SHIPPED]:
        described = q(f"DESCRIBE SELECT * FROM '{out}/{name}.parquet'")
        if name in TABLES:
            rows = re.findall(r"^\| `(\w+)` \| ([A-Z\[\]]+) \|", docs[name], re.M)
            assert rows == [(c, t) for c, t, *_ in described], name
        else:
            missing = [c for c, t, *_ in described if f"`{c}` {t}" not in docs[name]]
            assert missing == [], name


def questions() -> dict[str, str]:
    """The SQL of docs/data.md's three questions, by heading."""
    text = DOC.read_text().split("## Three questions", 1)[1]
    found = re.findall(r"^### (.+?)\n.*?```sql\n(.*?)```", text, re.M | re.S)
    assert len(found) == 3
    return dict(found)


def answer(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    """A question run as docs/data.md says: from the export's folder."""
    con = duckdb.connect()
    try:
        con.execute(f"SET file_search_path = '{folder}'")
        return con.execute(sql).fetchall()
    finally:
        con.close()


def on_projection(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """A question asked of the file's own outcomes projection instead of the export."""
    for file, table in (
        ("'bids.parquet'", "outcome_bids"),
        ("'outcomes.parquet'", "outcome_seats"),
        ("'games.parquet'", "outcome_games"),
    ):
        sql = sql.replace(file, table)
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_win_rate_by_seat_agrees_with_feastlog_stats(
    season: tuple[Path, Path, dict[str, Any]],
) -> None:
    path, out, _ = season
    rates = answer(out, questions()["Win rate by seat position"])
    result = CliRunner().invoke(cli, ["stats", "--json", "--db", str(path)])
    assert result.exit_code == 0, result.output
    stats = {k["game_kind"]: k for k in json.loads(result.stdout)}
    assert sorted(stats) == ["bon-appetit", "menu-masters", "picky-eaters"]
    for kind, found in stats.items():
        mine = [r for r in rates if r[0] == kind]
        assert [r[1] for r in mine] == list(range(len(found["win_rate_by_seat"])))
        assert [float(r[3]) for r in mine] == pytest.approx(found["win_rate_by_seat"])
        assert mine[0][2] == found["games"]  # every scored game has a seat 0
    assert sum(k["games"] for k in stats.values()) == GAMES + 1  # the held table's result


def test_the_strongest_dish_agrees_with_the_projection(
    season: tuple[Path, Path, dict[str, Any]],
) -> None:
    path, out, _ = season
    sql = questions()["The strongest dish in Bon Appetit!"]
    dishes = answer(out, sql)
    assert len(dishes) >= 5 and all(taken >= 20 for _, taken, _, _ in dishes)
    assert dishes == on_projection(path, sql)


def test_the_average_game_length_agrees_with_the_projection(
    season: tuple[Path, Path, dict[str, Any]],
) -> None:
    path, out, _ = season
    lengths = answer(out, questions()["The average game length by player count"])
    assert [(k, p) for k, p, *_ in lengths] == [
        (k, p) for k, counts in PLAYERS.items() for p in counts
    ]
    projected = on_projection(
        path,
        "SELECT game_kind, seats, count(*), avg(rows) FROM 'games.parquet' WHERE scored "
        "GROUP BY ALL ORDER BY ALL",
    )
    assert [(k, p, n, r) for k, p, n, _, r in lengths] == projected
    # a public game's moves are its seats' commands (a held-back game's are not there)
    unlike = answer(
        out,
        "SELECT g.game_id FROM 'games.parquet' g LEFT JOIN (SELECT game_id, count(seat) AS n "
        "FROM 'commands.parquet' GROUP BY ALL) c USING (game_id) "
        "WHERE g.public AND g.moves IS DISTINCT FROM c.n",
    )
    assert unlike == []


def test_a_running_or_held_back_game_gives_only_what_is_public(
    season: tuple[Path, Path, dict[str, Any]],
) -> None:
    _, out, said = season
    games = {g["game_id"]: g for g in pq.read_table(out / "games.parquet").to_pylist()}
    running, held, twin = games["g_running"], games["g_held"], games["g_twin"]
    assert (running["status"], held["status"], twin["status"]) == ("running", "held", "running")
    assert running["server_seed"] is None and held["server_seed"] is None
    assert running["rows"] == 8 and running["winners"] is None and running["players"]
    assert held["scored"] and held["winners"] and not held["public"]
    for name in ("commands", "refusals", *kind_tables()):
        ids = q(f"SELECT DISTINCT game_id FROM '{out}/{name}.parquet'")
        assert not {"g_running", "g_held", "g_twin"} & {i for (i,) in ids}, name
    outcomes = q(f"SELECT DISTINCT game_id FROM '{out}/outcomes.parquet'")
    assert ("g_held",) in outcomes and ("g_running",) not in outcomes
    refusals = pq.read_table(out / "refusals.parquet").to_pylist()
    assert [(r["game_id"], r["actor"], r["rule_id"]) for r in refusals] == [
        (f"g_{3:016x}", "seat:1", "BA-BID-OWN")
    ]
    everything = "".join(
        str(pq.read_table(out / f"{name}.parquet").to_pylist()) for name in table_names()
    )
    assert said["running"] not in everything and said["held"] not in everything
    assert not [b for b in said["running_bodies"] if b in everything]
    seen = {r[0] for r in q(f"SELECT game_id FROM '{out}/rows.parquet'")}
    assert {"g_running", "g_held", "g_twin"} <= seen  # each row's public columns


def test_parquet_without_all_is_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["export", "g_x", "--format", "parquet", "-o", str(tmp_path / "x")]
    )
    assert result.exit_code == 2
    assert result.output == "Error: --format parquet writes every game's tables: give --all\n"


def test_a_file_its_server_holds_is_exported_from_the_servers_copy(tmp_path: Path) -> None:
    path = tmp_path / "served.duckdb"
    made = [build("bon-appetit", 3, seed_byte=50 + i, game_id=f"g_served_{i}") for i in range(12)]
    store_games(path, made)
    server = ThreadedServer(path)  # it holds the file, announced beside it
    try:
        out = tmp_path / "season"
        result = CliRunner().invoke(
            cli, ["export", "--all", "--format", "parquet", "-o", str(out), "--db", str(path)]
        )
        assert result.exit_code == 0, result.output
        assert f"wrote {out}: 12 games, 12 public" in result.output
        with duckdb.connect() as db:
            games = db.execute(f"SELECT count(*) FROM '{out / 'games.parquet'}'").fetchall()
        assert games == [(12,)]
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".feastlog-")] == []
    finally:
        server.stop()


def test_through_a_server_or_on_no_file_it_is_refused_in_one_line(tmp_path: Path) -> None:
    args = ["export", "--all", "--format", "parquet", "-o", str(tmp_path / "out")]
    served = CliRunner().invoke(cli, [*args, "--server", "127.0.0.1:9"])
    assert served.exit_code == 2
    assert served.output == (
        "Error: --format parquet reads a file: give --db FILE (its server, if one holds it, "
        "makes a copy beside it to read), not --server\n"
    )
    missing = CliRunner().invoke(cli, [*args, "--db", str(tmp_path / "none.duckdb")])
    assert missing.exit_code == 3 and len(missing.output.splitlines()) == 1, missing.output
    assert not (tmp_path / "out").exists()


def test_a_folder_it_cannot_make_is_refused_in_one_line(
    season: tuple[Path, Path, dict[str, Any]], tmp_path: Path
) -> None:
    path, _, _ = season
    (tmp_path / "a file").write_text("")
    args = ["export", "--all", "--format", "parquet", "--db", str(path)]
    done = CliRunner().invoke(cli, [*args, "-o", str(tmp_path / "a file"), "--workers", "1"])
    assert done.exit_code == 3
    assert done.stderr.splitlines()[-1] == f"Error: cannot write {tmp_path / 'a file'}: File exists"


def test_a_tournament_gives_its_games_round_and_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "cup.duckdb"
    server = ThreadedServer(path, announce=False)
    try:

        def run(*args: str) -> str:
            done = CliRunner().invoke(
                cli, [*args, "--server", server.address, "--organiser-key", server.key]
            )
            assert done.exit_code == 0, done.output
            return done.output

        players = [a for n in ("Ann", "Bo", "Cy", "Di", "Ed", "Flo") for a in ("--player", n)]
        formats = ["--format", "rounds=1", "--format", "table_sizes=3"]
        said = run("tournament", "create", *formats, *players)
        found = re.search(r"tournament (t_[0-9a-f]{16})", said)
        assert found, said
        tid = found[1]
        run("tournament", "pair", tid)
        run("tournament", "publish", tid)
        run("tournament", "start", tid, "--minutes", "30")
        run("tournament", "call", tid)  # both tables closed as they stand
        run("tournament", "end", tid)
    finally:
        server.stop()
    out = tmp_path / "cup"
    done = CliRunner().invoke(
        cli, ["export", "--all", "--format", "parquet", "-o", str(out), "--db", str(path)]
    )
    assert done.exit_code == 0, done.output
    games = pq.read_table(out / "games.parquet").to_pylist()
    tables = sorted((g["round"], g["table_number"]) for g in games if g["tournament_id"] == tid)
    assert tables == [(1, 1), (1, 2)]
    record = [g for g in games if g["game_kind"] == "tournament"]
    assert [(g["game_id"], g["status"], g["round"]) for g in record] == [(tid, "finished", None)]
    actions = q(f"SELECT action FROM '{out}/commands.parquet' WHERE game_id = '{tid}'")
    assert ("publish",) in actions and ("end",) in actions
    outcomes = q(f"SELECT count(*) FROM '{out}/outcomes.parquet' WHERE tournament_id = '{tid}'")
    assert outcomes == [(6,)]
