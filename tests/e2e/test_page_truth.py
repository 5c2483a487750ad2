"""The pages tell the truth at a glance, in a real headless Chromium: the replay page of a
record that does not verify says so and why, in the page; the board shows a finished
game's scores and winner, and a voided or closed game as such."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import record_pb2
from tests.serverutil import bearer, create, play_to_end, stub
from tests.webutil import WebServer

pytestmark = pytest.mark.xdist_group("browser")  # one worker, one browser

SEED = "07" * 32
NO_ENV = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": "", "FEASTLOG_CA": ""}


def run(*args: str) -> Any:
    """The CLI, as a user types it."""
    return CliRunner(env=NO_ENV).invoke(cli, list(args))


def test_the_page_of_a_tampered_record_says_it_does_not_verify(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, screenshots: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    made = run("demo", "bon-appetit", "--players", "2", "--seed", SEED)
    assert made.exit_code == 0, made.output
    game_id = made.output.split()[1]
    assert run("export", game_id, "-o", "good.json").exit_code == 0
    record = json.loads(Path("good.json").read_text())
    record["rows"][3]["recorded_at"] = "2026-01-01T00:00:00.000000Z"  # its hash no longer fits
    Path("bad.json").write_text(json.dumps(record))
    good = run("replay", "good.json", "--html", "good.html")
    bad = run("replay", "bad.json", "--html", "bad.html")
    assert good.exit_code == 0 and bad.exit_code == 1, bad.output
    page = browser.new_page()
    page.goto(f"file://{tmp_path / 'bad.html'}")
    banner = page.locator("#unverified")
    assert banner.is_visible()
    text = banner.inner_text()
    assert "does not verify" in text and "FAILED at seq 4" in text and "hash" in text, text
    page.screenshot(path=screenshots / "replay-unverified.png")
    page.goto(f"file://{tmp_path / 'good.html'}")
    page.wait_for_selector("#table")
    assert page.locator("#unverified").count() == 0
    page.close()


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebServer]:
    server = WebServer(tmp_path / "games.duckdb")
    yield server
    server.stop()


def test_the_board_shows_scores_winners_and_void_and_closed_games(
    browser: Any, web: WebServer, screenshots: Path
) -> None:
    client = stub(web.address)
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(web.address))
    players = ["Ann", "Brian"]
    finished = create(client, web.key, "bon-appetit", players, seed=bytes([8]) * 32)
    play_to_end(client, finished.game_id, [t.token for t in finished.seat_tokens], seed=8)
    ended = {}
    for what in ("void_game", "close_game"):
        game = create(client, web.key, "menu-masters", players)
        ruling = record_pb2.ArbiterCommand(reason="table 2 left")
        getattr(ruling, what).SetInParent()
        request = apb.SubmitRulingRequest(game_id=game.game_id, command_id=what, ruling=ruling)
        audit.SubmitRuling(request, metadata=bearer(web.key))
        ended[what] = game.game_id
    page = browser.new_page()
    page.goto(f"{web.url}/")
    card = page.locator(f"[data-game='{finished.game_id}'][data-ending=finished]")
    card.wait_for()
    view = json.loads(page.evaluate("fetch('/board.json').then((r) => r.text())"))
    row = next(g for g in view["games"] if g["id"] == finished.game_id)
    winner = players[row["winners"][0]]
    text = card.inner_text()
    assert f"won by {winner}" in text and f"{winner} ★" in text, text
    assert all(str(points) in text for points in row["scores"])
    void = page.locator(f"[data-game='{ended['void_game']}']")
    assert void.get_attribute("data-ending") == "void" and "void" in void.inner_text()
    closed = page.locator(f"[data-game='{ended['close_game']}']")
    assert closed.get_attribute("data-ending") == "closed"
    assert "closed by the arbiter" in closed.inner_text()
    page.screenshot(path=screenshots / "board-endings.png", full_page=True)
    page.close()
