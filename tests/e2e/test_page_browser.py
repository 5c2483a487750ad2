"""The replay page in a real headless Chromium: every seq of a game of each kind drawn as
the replay API says its viewer saw it, nothing of another seat's hand on a seat's page,
links and keys, the timeline's marks, and live pages following a game played over gRPC.

One browser for the module (tests/conftest.py); screenshots go to build/screenshots/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.presentation.narrative import row_lines
from feastlog.presentation.page_cards import strings_in
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.record import visibility
from feastlog.service.app.offline import OfflineFile
from feastlog.service.store import Batch, Rejection
from feastlog.service.store.duckdb import Store
from feastlog.v1 import game_service_pb2 as pb
from tests.pagecheck import READ, READ_EVERY_STEP, table_problems
from tests.recordutil import Built, build, store_games
from tests.serverutil import bearer, create, play_to_end, stub
from tests.webutil import WebServer

pytestmark = pytest.mark.xdist_group("browser")  # one worker, one browser

KINDS = ("bon-appetit", "menu-masters", "picky-eaters")
PRIVATE = {"bon-appetit": ("hand", "sealed_bid"), "menu-masters": ("menus",)}
BEHIND_THE_SCREEN = ("deck", "set_aside", "bag", "menu_deck", "food_deck", "guest_deck")


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Built]]:
    """A finished game of each kind (Bon Appetit! with a ruling and a refusal), and running
    games of Bon Appetit! and Picky Eaters, in one DuckDB file."""
    from feastlog.v1 import record_pb2

    note = record_pb2.ArbiterCommand(reason="table 4", note=record_pb2.Note(text="clock stopped"))
    built = {
        "bon-appetit": build("bon-appetit", players=3, seed_byte=51, rulings={9: note}),
        "menu-masters": build("menu-masters", players=2, seed_byte=52),
        "picky-eaters": build("picky-eaters", players=3, seed_byte=53),
        "running-bon-appetit": build("bon-appetit", players=3, seed_byte=54, stop_after=13),
        "running-picky-eaters": build("picky-eaters", players=3, seed_byte=55, stop_after=30),
    }
    path = tmp_path_factory.mktemp("pages") / "games.duckdb"
    store_games(path, list(built.values()))
    refusal = Rejection(
        built["bon-appetit"].rows[0].game_id, 5, "seat:0", "c-refused", b"",
        "FAILED_PRECONDITION", "RULE_VIOLATION", "BA-BID-SIZE",
        "Ann bids more gems than the rules allow", "2026-01-01T00:02:00Z",
    )  # fmt: skip
    store = Store(str(path))
    try:
        store.write(Batch(rejections=[refusal]))
    finally:
        store.close()
    return path, built


def page_file(path: Path, built: Built, viewer: Viewer, folder: Path) -> Path:
    """``feastlog replay GAME --db FILE --as VIEWER --html OUT``: the page's file."""
    game_id = built.rows[0].game_id
    out = folder / f"{game_id}-{str(viewer).replace(':', '')}.html"
    args = ["replay", game_id, "--db", str(path), "--as", str(viewer), "--html", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def page(browser: Any) -> Iterator[Any]:
    """One tab for the static pages; it fails the test on any script error or request out."""
    tab = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("request", lambda r: errors.append(r.url) if not r.url.startswith("file:") else None)
    tab.errors = errors
    yield tab
    tab.close()


def check_steps(game: Any, viewer: Viewer, read: list[dict[str, Any]], every: int = 1) -> None:
    """Each read of the page matches the replay API's state and narration at its seq."""
    seqs = [*range(1, game.last_seq + 1, every), game.last_seq]
    assert [r["seq"] for r in read] == sorted(set(seqs))
    names = list(game.seat_names)
    for got in read:
        step = visibility.seen(game, got["seq"], viewer)
        problems = table_problems(step.view, got["bound"])
        assert not problems, f"{viewer} at seq {got['seq']}: {problems[:8]}"
        assert got["lines"] == row_lines(game.engine, step.row, step.facts, names)


@pytest.mark.parametrize("kind", KINDS)
def test_every_seq_shows_the_replay_state_for_its_viewer(
    records: tuple[Path, dict[str, Built]],
    page: Any,
    kind: str,
    tmp_path: Path,
    screenshots: Path,
) -> None:
    path, built = records
    game = OfflineFile(str(path)).folded(built[kind].rows[0].game_id)
    # seat 1's page is read at every seq; the arbiter's (every card drawn, decks and all)
    # is stepped through every seq and read at every third, to keep the run short
    for viewer, every in ((Viewer.of_seat(1), 1), (ARBITER, 3)):
        page.goto(page_file(path, built[kind], viewer, tmp_path).as_uri())
        check_steps(game, viewer, page.evaluate(READ_EVERY_STEP, every), every)
        page.evaluate(f"window.feastlog.go({game.last_seq * 3 // 5})")
        page.screenshot(path=screenshots / f"{kind}-{viewer.role}.png", full_page=True)
    assert page.errors == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_seat_page_never_holds_another_hand_or_a_sealed_bid(
    records: tuple[Path, dict[str, Built]], page: Any, kind: str, tmp_path: Path
) -> None:
    path, built = records
    record = built[f"running-{kind}"] if f"running-{kind}" in built else built[kind]
    game = OfflineFile(str(path)).folded(record.rows[0].game_id)
    out = page_file(path, record, Viewer.of_seat(1), tmp_path)
    page.goto(out.as_uri())
    seqs = [
        s for s in range(1, game.last_seq + 1) if not game.engine.is_over(game.tables[s - 1].game)
    ]
    views = page.evaluate("(seqs) => seqs.map((s) => window.feastlog.view(s))", seqs)
    others_had: set[str] = set()
    seen: set[str] = set()
    for seq, view in zip(seqs, views, strict=True):
        assert not [k for k in BEHIND_THE_SCREEN if k in view], f"seq {seq}"
        seats = view.get("seats") or view.get("chefs") or view.get("players")
        for seat in seats:
            if seat["seat"] == 1:
                continue
            assert not [k for k in PRIVATE.get(kind, ()) if k in seat], f"seq {seq}"
            assert seat.get("hand") is None, f"seq {seq}"
        seen |= set(strings_in(view))
        arbiter = visibility.seen(game, seq, ARBITER).view
        if kind == "picky-eaters":
            others_had |= {c for p in arbiter["players"] if p["seat"] != 1 for c in p["hand"]}
    if kind == "bon-appetit":
        # someone else's sealed bid was on the table while seat 1 looked
        sealed = [
            s
            for s in seqs
            for other in visibility.seen(game, s, ARBITER).view["seats"]
            if other["seat"] != 1 and other.get("sealed_bid")
        ]
        assert sealed
    html = out.read_text()
    assert not [card for card in others_had - seen if card in html]
    assert page.errors == []


def test_links_to_a_seq_keys_and_the_slider(
    records: tuple[Path, dict[str, Built]], page: Any, tmp_path: Path
) -> None:
    path, built = records
    record = built["menu-masters"]
    game = OfflineFile(str(path)).folded(record.rows[0].game_id)
    out = page_file(path, record, ARBITER, tmp_path)
    page.goto(out.as_uri() + "#seq=40")
    got = page.evaluate(READ)
    assert got["seq"] == 40 and not table_problems(
        visibility.seen(game, 40, ARBITER).view, got["bound"]
    )
    shown = lambda: page.evaluate("Number(document.body.dataset.seq)")  # noqa: E731
    for key, seq in (("ArrowLeft", 39), ("ArrowRight", 40), ("End", game.last_seq), ("Home", 1)):
        page.keyboard.press(key)
        assert shown() == seq, key
    page.evaluate("location.hash = '#seq=12'")
    page.wait_for_selector("body[data-seq='12']")
    assert page.evaluate("location.hash") == "#seq=12"
    page.locator("#next").click()
    assert shown() == 13 and page.evaluate("location.hash") == "#seq=13"
    page.locator("#slider").fill(str(game.last_seq // 2))
    assert shown() == game.last_seq // 2 + 1  # the slider counts steps from 0
    assert page.errors == []


def test_rulings_and_refusals_are_marked_on_the_timeline(
    records: tuple[Path, dict[str, Built]], page: Any, tmp_path: Path, screenshots: Path
) -> None:
    path, built = records
    record = built["bon-appetit"]
    ruling = next(r.seq for r in record.rows if r.actor == "arbiter")
    marks = """[...document.querySelectorAll('#marks [data-mark]')].map(
        (m) => [m.dataset.mark, Number(m.dataset.seq)])"""
    expected = {
        ARBITER: [["ruling", ruling], ["rejection", 5]],
        Viewer.of_seat(0): [["ruling", ruling], ["rejection", 5]],
        Viewer.of_seat(1): [["ruling", ruling]],
        SPECTATOR: [["ruling", ruling]],
    }
    for viewer, found in expected.items():
        page.goto(page_file(path, record, viewer, tmp_path).as_uri())
        assert page.evaluate(marks) == found, str(viewer)
    page.goto(page_file(path, record, Viewer.of_seat(0), tmp_path).as_uri())
    page.locator("[data-mark=rejection]").click()
    assert page.evaluate("document.body.dataset.seq") == "5"
    refused = page.locator("#now li.refused").inner_text()
    assert "BA-BID-SIZE" in refused and "Ann" in refused
    page.locator("[data-mark=ruling]").click()
    assert "clock stopped" in page.locator("#now").inner_text()
    page.screenshot(path=screenshots / "bon-appetit-seat0-timeline.png")
    assert page.errors == []


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    server = WebServer(tmp_path_factory.mktemp("live") / "games.duckdb")
    yield server
    server.stop()


def seat_page(browser: Any, web: WebServer, game_id: str, token: str) -> tuple[Any, Any]:
    """A fresh browser context (its own cookies) on a seat's page, through the token form."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    tab.goto(f"{web.url}/games/{game_id}/seat")
    tab.locator("#token").fill(token)
    tab.locator("button[type=submit]").click()
    tab.wait_for_selector("#table .status")
    assert tab.url.split("#")[0] == f"{web.url}/games/{game_id}/seat"
    assert token not in tab.url and token not in tab.content()
    return context, tab


def wait_for_seq(tab: Any, seq: int) -> None:
    """Until the live page shows ``seq``."""
    tab.wait_for_selector(f"body[data-seq='{seq}']", timeout=15000)


def test_live_pages_follow_a_game_played_over_grpc(
    browser: Any, web: WebServer, screenshots: Path
) -> None:
    client = stub(web.address)
    game = create(client, web.key, "bon-appetit", ["Ann", "Brian", "Celia"], seed=bytes([61]) * 32)
    game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
    watcher = browser.new_context(viewport={"width": 1400, "height": 1000})
    spectator = watcher.new_page()
    errors: list[str] = []
    spectator.on("pageerror", lambda error: errors.append(str(error)))
    spectator.goto(f"{web.url}/games/{game_id}")
    board = watcher.new_page()
    board.goto(f"{web.url}/")
    board.wait_for_selector(f"[data-game='{game_id}'][data-state=running]")
    seat_context, seat = seat_page(browser, web, game_id, tokens[1])
    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone = phone_context.new_page()
    phone.goto(f"{web.url}/games/{game_id}")
    for rounds in range(3):
        play_to_end(client, game_id, tokens, seed=61 + rounds, stop_after=4)
        now = client.GetView(pb.GetViewRequest(game_id=game_id)).seq
        for tab, viewer in ((spectator, SPECTATOR), (seat, Viewer.of_seat(1))):
            wait_for_seq(tab, now)
            live = web.call(web.running.app.live.get(game_id))
            got = tab.evaluate(READ)
            assert not table_problems(visibility.seen(live, now, viewer).view, got["bound"])
    assert spectator.locator("#live").inner_text() == "live"
    spectator.screenshot(path=screenshots / "live-spectator.png", full_page=True)
    seat.screenshot(path=screenshots / "live-seat1.png", full_page=True)
    phone.evaluate("document.body.classList.add('large')")
    phone.screenshot(path=screenshots / "live-phone-large-type.png", full_page=True)
    board.screenshot(path=screenshots / "board.png", full_page=True)
    play_to_end(client, game_id, tokens, seed=70)
    last = client.GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(web.key)).seq
    for tab in (spectator, seat):
        wait_for_seq(tab, last)
        tab.wait_for_selector("#live[data-state=finished]")
        assert tab.locator("#result").is_visible()
    live = web.call(web.running.app.live.get(game_id))
    running = [s for s in range(1, last + 1) if not live.engine.is_over(live.tables[s - 1].game)]
    views = seat.evaluate("(seqs) => seqs.map((s) => window.feastlog.view(s))", running)
    assert views == [visibility.seen(live, s, Viewer.of_seat(1)).view for s in running]
    assert all(
        "hand" not in v["seats"][o] and "sealed_bid" not in v["seats"][o]
        for v in views
        for o in (0, 2)
    )
    # the dishes named after the page opened came with their faces on the stream
    for step in (1, last // 2, last):
        seat.evaluate(f"window.feastlog.go({step})")
        assert seat.locator("#table .card.dish").count() > 0
        assert seat.locator("#table .card.dish:not(:has(.band))").count() == 0
    board.wait_for_selector(f"[data-game='{game_id}'][data-state=over]", timeout=10000)
    seat.screenshot(path=screenshots / "live-seat1-finished.png", full_page=True)
    assert seat.evaluate("document.cookie") == ""  # the token's cookie is HttpOnly
    seat.locator("form.leave button").click()
    seat.wait_for_selector("body[data-seq] a[href$='/seat']")  # the spectator's page again
    assert seat.url.split("#")[0] == f"{web.url}/games/{game_id}"
    seat.goto(f"{web.url}/games/{game_id}/seat")
    assert seat.locator("#token").is_visible()
    assert errors == []
    for context in (watcher, seat_context, phone_context):
        context.close()
