"""The outcomes projection, rebuilt from the log, for every game kind."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from cli.main import cli
from service.projection import rebuild, stats
from service.store import Store
from tests.serverutil import ThreadedServer, create, play_to_end, stub

PLAYERS = {
    "bon-appetit": ["Ann", "Brian", "Celia"],
    "menu-masters": ["Ann", "Brian"],
    "picky-eaters": ["Ann", "Brian", "Celia", "Dev"],
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("proj") / "games.duckdb"
    server = ThreadedServer(db)
    try:
        client = stub(server.address)
        for i, (kind, names) in enumerate(PLAYERS.items()):
            for k in range(2):
                game = create(client, server.key, kind, names, seed=bytes([i * 2 + k + 1]) * 32)
                play_to_end(client, game.game_id, [t.token for t in game.seat_tokens], seed=k)
        create(client, server.key, "bon-appetit", ["Ann", "Brian"])  # running: left out
    finally:
        server.stop()
    return db


def test_projection_holds_every_finished_game_and_its_figures(finished: Path) -> None:
    store = Store(str(finished), read_only=True)
    games = [store.load(g) for g in store.game_ids()]
    store.close()
    con = duckdb.connect()
    assert rebuild(con, [g for g in games if g is not None]) == 6
    kinds = dict(con.execute("SELECT game_kind, count(*) FROM outcome_games GROUP BY 1").fetchall())
    assert kinds == {"bon-appetit": 2, "menu-masters": 2, "picky-eaters": 2}
    # final results agree with the seats table
    bad = con.execute(
        "SELECT count(*) FROM outcome_games g WHERE len(g.winners) = 0 OR EXISTS ("
        "SELECT 1 FROM outcome_seats s WHERE s.game_id = g.game_id AND s.won <> "
        "list_contains(g.winners, s.seat))"
    ).fetchone()
    assert bad == (0,)
    bids = con.execute("SELECT count(*), sum(CASE WHEN won THEN 1 ELSE 0 END) FROM outcome_bids")
    total_bids, won_bids = bids.fetchone()  # type: ignore[misc]
    assert total_bids > 0 and 0 < won_bids <= 24
    paid = con.execute("SELECT count(*), min(cost) FROM outcome_purchases").fetchone()
    assert paid is not None and paid[0] > 0 and paid[1] >= 1
    menus = con.execute("SELECT count(*), min(stars) FROM outcome_menus").fetchone()
    assert menus is not None and menus[0] > 0 and menus[1] > 0
    recipes = con.execute("SELECT count(*), sum(points) FROM outcome_recipes").fetchone()
    scored = con.execute(
        "SELECT sum(points) FROM outcome_seats WHERE game_kind = 'picky-eaters'"
    ).fetchone()
    assert recipes is not None and recipes[0] > 0
    assert scored is not None and scored[0] >= recipes[1]  # plus Fancy Silverware points
    figures = {s.game_kind: s for s in stats(con)}
    assert set(figures) == set(PLAYERS)
    for kind, names in PLAYERS.items():
        assert figures[kind].games == 2
        assert len(figures[kind].win_rate_by_seat) == len(names)
        assert figures[kind].value is not None


def test_stats_command_reports_every_kind(finished: Path) -> None:
    result = CliRunner().invoke(cli, ["stats", "--db", str(finished), "--json"])
    assert result.exit_code == 0, result.output
    text = json.dumps(json.loads(result.output))
    assert all(kind in text for kind in PLAYERS)
