"""The replay page without a browser: its data, size, sources, the CLI and the web server.

What the page draws is checked in a real browser in test_page_browser.py.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.presentation.page import apply_patch, csp_hash, page_html, view_patch
from feastlog.presentation.page_cards import faces_for, strings_in
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.record import visibility
from feastlog.replay.record.export import export_record, to_text
from feastlog.replay.record.history import refold
from feastlog.service.app.auth import ORGANISER
from feastlog.service.app.clock import ManualClock, utc_now
from feastlog.service.app.live import live_from_folded
from feastlog.service.app.logtree import HEAD_INTERVAL
from feastlog.service.app.offline import OfflineFile, answer
from feastlog.service.store import Batch, Rejection
from feastlog.service.store.duckdb import Store
from feastlog.service.web.seat import csrf_token
from feastlog.v1 import game_service_pb2 as pb
from tests.recordutil import Built, build, store_games
from tests.serverutil import create, play_to_end, stub, view_of
from tests.webutil import WebServer, request

DATA = re.compile(r'<script type="application/json" id="feastlog-data">(.*?)</script>', re.S)
SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def data_of(page: str) -> dict[str, Any]:
    """The data a page carries."""
    found = DATA.search(page)
    assert found, "the page carries no data"
    loaded: dict[str, Any] = json.loads(found.group(1))
    return loaded


def views_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step's view, rebuilt from the page's data as its script does."""
    views: list[dict[str, Any]] = []
    for step in data["steps"]:
        views.append(step["view"] if "view" in step else apply_patch(views[-1], step["patch"]))
    return views


def game_of(built: Built) -> Any:
    """A built record folded as the service holds it."""
    folded = refold(built.rows, built.seed, built.pack_bytes)
    return live_from_folded(folded, built.seed, built.names)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Built]]:
    """A file with a finished game of each kind, and a running Picky Eaters game."""
    path = tmp_path_factory.mktemp("page") / "games.duckdb"
    built = {
        "bon-appetit": build("bon-appetit", players=3, seed_byte=31),
        "menu-masters": build("menu-masters", players=2, seed_byte=32),
        "picky-eaters": build("picky-eaters", players=3, seed_byte=33),
        "running": build("picky-eaters", players=3, seed_byte=34, stop_after=25),
    }
    store_games(path, list(built.values()))
    return path, built


def test_patches_rebuild_every_view_of_every_kind(stored: tuple[Path, dict[str, Built]]) -> None:
    _, built = stored
    for record in built.values():
        game = game_of(record)
        data = data_of(page_html(game, ARBITER))
        expected = [visibility.seen(game, s, ARBITER).view for s in range(1, game.last_seq + 1)]
        assert views_of(data) == expected
        assert data["cards"] == faces_for(game.genesis.game_kind, game.pack, expected)
        assert data["cards"], "every kind names some card by id or name"
        assert [s["seq"] for s in data["steps"]] == list(range(1, game.last_seq + 1))
        assert "view" in data["steps"][0] and all("patch" in s for s in data["steps"][1:])
    assert view_patch({"a": [1, 2], "b": 1}, {"a": [1, 3]}) == [[["a", 1], 3], [["b"]]]
    assert apply_patch({"a": [1]}, [[["a"], [1, 2]], [[], {"c": 1}]]) == {"c": 1}


def test_a_300_row_game_is_a_page_under_one_megabyte() -> None:
    game = game_of(build("menu-masters", players=4, seed_byte=200, stop_after=299))
    assert game.last_seq >= 300
    for viewer in (ARBITER, SPECTATOR, Viewer.of_seat(1)):
        size = len(page_html(game, viewer).encode("utf-8"))
        assert size < 1_000_000, f"{viewer}: {size} bytes"


def test_the_page_needs_nothing_from_the_network(stored: tuple[Path, dict[str, Built]]) -> None:
    _, built = stored
    page = page_html(game_of(built["bon-appetit"]), ARBITER)
    script = SCRIPT.search(page)
    assert script is not None
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    rules = policy.group(1).replace("&#x27;", "'")
    assert f"script-src {csp_hash(script.group(1))};" in rules
    assert "default-src 'none'" in rules and "connect-src 'none'" in rules
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=", page)
    assert set(re.findall(r"https?://[^\s\"')]+", page)) <= {"http://www.w3.org/2000/svg"}


def test_a_finished_game_replayed_as_a_seat_shows_what_it_saw_then(
    stored: tuple[Path, dict[str, Built]],
) -> None:
    _, built = stored
    game = game_of(built["bon-appetit"])
    seat = Viewer.of_seat(1)
    running = [s for s in game_seqs(game) if not game.engine.is_over(game.tables[s - 1].game)]
    assert len(running) == game.last_seq - 2  # all but the last move and the seed reveal
    for seq in running:
        step = visibility.seen(game, seq, seat)
        assert step.view == game.engine.view(game.tables[seq - 1].game, seat)
        for other in (0, 2):
            shown = step.view["seats"][other]
            assert "hand" not in shown and "sealed_bid" not in shown, f"seq {seq}"
        assert all(f.get("private_to") in (None, 1) for f in step.facts)
    reveal = visibility.seen(game, game.last_seq, seat)
    assert reveal.row.kind == "seed_reveal" and all("hand" in s for s in reveal.view["seats"])
    data = data_of(page_html(game, seat))
    for seq, view in enumerate(views_of(data)[:-1], start=1):
        assert view == visibility.seen(game, seq, seat).view


def test_a_seat_page_names_no_card_of_another_hand(stored: tuple[Path, dict[str, Built]]) -> None:
    _, built = stored
    game = game_of(built["running"])
    seat = Viewer.of_seat(1)
    page = page_html(game, seat)
    seen = {
        s
        for q in range(1, game.last_seq + 1)
        for s in strings_in(visibility.seen(game, q, seat).view)
    }
    hidden = {
        card
        for q in range(1, game.last_seq + 1)
        for player in visibility.seen(game, q, ARBITER).view["players"]
        if player["seat"] != 1
        for card in player["hand"]
    } - seen
    assert hidden, "the other seats should hold cards seat 1 never saw"
    assert not [card for card in hidden if card in page]
    assert set(data_of(page)["cards"]) <= seen


def run(*args: str) -> tuple[int, str]:
    """Invoke the CLI."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_replay_html_offline_from_a_file_and_from_an_export(
    stored: tuple[Path, dict[str, Built]], tmp_path: Path
) -> None:
    path, built = stored
    record = built["picky-eaters"]
    game_id = record.rows[0].game_id
    out = tmp_path / "pe.html"
    code, said = run("replay", game_id, "--db", str(path), "--as", "seat:2", "--html", str(out))
    assert code == 0, said
    assert f"wrote {out}" in said and "#seq=N" in said
    data = data_of(out.read_text())
    assert data["viewer"] == {"id": "seat:2", "label": "Celia (seat 2)"}
    game = OfflineFile(str(path)).folded(game_id)
    assert views_of(data) == [
        visibility.seen(game, s, Viewer.of_seat(2)).view for s in game_seqs(game)
    ]
    assert data["result"]["winners"] and len(data["result"]["points"]) == 3
    export = tmp_path / "pe.json"
    export.write_text(to_text(export_record(record.rows, record.pack_bytes)))
    again = tmp_path / "pe-export.html"
    code, said = run("replay", str(export), "--as", "seat:2", "--html", str(again))
    assert code == 0, said
    assert views_of(data_of(again.read_text())) == views_of(data)


def game_seqs(game: Any) -> range:
    """Every seq of a game."""
    return range(1, game.last_seq + 1)


def test_replay_html_refuses_what_it_cannot_draw(
    stored: tuple[Path, dict[str, Built]], tmp_path: Path
) -> None:
    path, built = stored
    out = tmp_path / "x.html"
    code, said = run("replay", "g_nothing", "--db", str(path), "--html", str(out))
    assert code == 4 and "there is no game 'g_nothing'" in said and "Traceback" not in said
    running = built["running"]
    export = tmp_path / "running.json"
    export.write_text(to_text(export_record(running.rows, running.pack_bytes)))
    code, said = run("replay", str(export), "--html", str(out))
    assert code == 4 and "still running" in said and not out.exists()
    game_id = running.rows[0].game_id
    code, said = run("replay", game_id, "--db", str(path), "--as", "seat:x", "--html", str(out))
    assert code == 2 and "unknown viewer" in said


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    clock = ManualClock(utc_now())  # the heads' interval: a test moves it on
    server = WebServer(tmp_path_factory.mktemp("web") / "games.duckdb", clock=clock)
    yield server
    server.stop()


def test_replay_html_through_a_server_running_and_finished(web: WebServer, tmp_path: Path) -> None:
    client = stub(web.address)
    game = create(client, web.key, "bon-appetit", ["Ann", "Brian", "Celia"], seed=bytes([41]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    play_to_end(client, game.game_id, tokens, seed=41, stop_after=7)
    out = tmp_path / "live.html"
    key = ("--organiser-key", web.key)
    args = ("replay", game.game_id, "--server", web.address, *key, "--as", "seat:1")
    code, said = run(*args, "--html", str(out))
    assert code == 0, said
    data = data_of(out.read_text())
    live = web.call(web.running.app.live.get(game.game_id))
    expected = [visibility.seen(live, s, Viewer.of_seat(1)).view for s in game_seqs(live)]
    assert views_of(data) == expected and data["result"] is None
    assert all("hand" not in s for v in expected for s in v["seats"][::2])
    play_to_end(client, game.game_id, tokens, seed=41)
    code, said = run(*args, "--html", str(out))
    assert code == 0, said
    done = data_of(out.read_text())
    assert done["result"]["winners"] and views_of(done)[: len(expected)] == expected


def test_the_web_pages_take_a_seat_token_only_through_the_form(web: WebServer) -> None:
    client = stub(web.address)
    game = create(client, web.key, "picky-eaters", ["Ann", "Brian"], seed=bytes([42]) * 32)
    other = create(client, web.key, "picky-eaters", ["Cy", "Di"], seed=bytes([43]) * 32)
    token = game.seat_tokens[1].token
    base = f"/games/{game.game_id}"
    spectator = request(web, "GET", base)
    assert spectator.status == 200 and data_of(spectator.body)["viewer"]["id"] == "spectator"
    assert data_of(spectator.body)["live"]["events"] == f"{base}/events"
    assert spectator.headers["cache-control"] == "no-store"
    assert request(web, "GET", "/games/g_unknown").status == 404
    form = request(web, "GET", f"{base}/seat")
    assert form.status == 200 and 'name="token"' in form.body and 'type="password"' in form.body
    wrong = request(web, "POST", f"{base}/seat", {"token": "seat_guess"})
    assert wrong.status == 401 and "not known" in wrong.body and "set-cookie" not in wrong.headers
    elsewhere = request(web, "POST", f"{base}/seat", {"token": other.seat_tokens[0].token})
    assert elsewhere.status == 403 and "another game" in elsewhere.body
    taken = request(web, "POST", f"{base}/seat", {"token": token})
    assert taken.status == 303 and taken.headers["location"] == f"{base}/seat"
    cookie = taken.headers["set-cookie"]
    for part in ("HttpOnly", "SameSite=Strict", f"Path={base}/seat"):
        assert part in cookie
    jar = cookie.split(";")[0]
    mine = request(web, "GET", f"{base}/seat", cookie=jar)
    assert mine.status == 200 and token not in mine.body
    data = data_of(mine.body)
    assert data["viewer"]["id"] == "seat:1" and data["live"]["events"] == f"{base}/seat/events"
    hands = [p["hand"] for p in views_of(data)[-1]["players"]]
    assert hands[0] is None and hands[1] is not None
    unasked = request(web, "POST", f"{base}/seat/forget", cookie=jar)  # no CSRF token
    assert unasked.status == 403 and "set-cookie" not in unasked.headers
    csrf = {"csrf": csrf_token(jar.split("=", 1)[1])}
    forgot = request(web, "POST", f"{base}/seat/forget", csrf, cookie=jar)
    assert forgot.status == 303 and "Max-Age=0" in forgot.headers["set-cookie"]


def test_the_event_stream_resumes_after_a_seq_and_ends_with_the_result(web: WebServer) -> None:
    client = stub(web.address)
    game = create(client, web.key, "menu-masters", ["Ann", "Brian"], seed=bytes([44]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    play_to_end(client, game.game_id, tokens, seed=44, stop_after=5)
    base = f"/games/{game.game_id}"
    first = request(web, "GET", f"{base}/events?after=3", until="id: 5")
    events = parse_events(first.body)
    assert [e["id"] for e in events[:2]] == ["4", "5"]
    assert "view" in events[0]["data"] and "patch" in events[1]["data"]
    named = set(strings_in(events[0]["data"]["view"]))
    assert events[0]["data"]["cards"] and set(events[0]["data"]["cards"]) <= named
    assert not set(events[1]["data"]["cards"]) & set(events[0]["data"]["cards"])
    assert first.headers["content-type"].startswith("text/event-stream")
    play_to_end(client, game.game_id, tokens, seed=44)
    last = view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))
    assert last["over"]
    done = request(web, "GET", f"{base}/events?after=1")
    events = parse_events(done.body)
    assert events[-1]["event"] == "end" and events[-1]["data"]["winners"] == last["winners"]
    assert events[-2]["data"]["kind"] == "seed_reveal"
    unknown = request(web, "GET", "/games/g_unknown/events")
    assert unknown.status == 404
    board = json.loads(request(web, "GET", "/board.json").body)
    listed = {g["id"]: g for g in board["games"]}
    assert listed[game.game_id]["over"] is True
    clock = web.running.app.clock  # the board shows the latest signed tree head, signed
    assert isinstance(clock, ManualClock)  # every HEAD_INTERVAL on the server's clock
    clock.advance(HEAD_INTERVAL)
    deadline = time.monotonic() + 5
    while "tree_head" not in board and time.monotonic() < deadline:
        time.sleep(0.02)
        board = json.loads(request(web, "GET", "/board.json").body)
    assert board["tree_head"]["size"] > 0
    assert len(board["tree_head"]["signature"]) == 128


def parse_events(body: str) -> list[dict[str, Any]]:
    """Server-sent events as dicts: id, event, data (JSON)."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            if name in ("id", "event", "data"):
                fields[name] = value
        if "data" in fields:
            fields["data"] = json.loads(fields["data"])
            events.append(fields)
    return events


def test_a_refusal_shows_on_the_arbiters_and_its_seats_page_only(
    stored: tuple[Path, dict[str, Built]],
) -> None:
    path, built = stored
    game_id = built["bon-appetit"].rows[0].game_id
    refusal = Rejection(
        game_id, 4, "seat:0", "c-x", b"", "FAILED_PRECONDITION", "RULE_VIOLATION",
        "BA-BID-SIZE", "Ann bids more gems than the rules allow", "2026-01-01T00:02:00Z",
    )  # fmt: skip
    store = Store(str(path))
    try:
        store.write(Batch(rejections=[refusal]))
    finally:
        store.close()
    source = OfflineFile(str(path))
    game = source.folded(game_id)
    rejections = answer(source.replays.rejections(ORGANISER, game_id))
    shown = {
        str(v): data_of(page_html(game, v, rejections))["rejections"]
        for v in (ARBITER, SPECTATOR, Viewer.of_seat(0), Viewer.of_seat(1))
    }
    expected = [
        {"after_seq": 4, "actor": "seat:0", "rule_id": "BA-BID-SIZE", "message": refusal.message}
    ]
    assert shown == {"arbiter": expected, "spectator": [], "seat:0": expected, "seat:1": []}


def test_serve_says_so_when_the_http_port_is_taken(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = str(taken.getsockname()[1])
        args = ["serve", "--db", str(tmp_path / "x.duckdb"), "--port", "0", "--http", port]
        done = subprocess.run(
            [sys.executable, "-c", "from feastlog.cli.main import main; main()", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "FEASTLOG_ORGANISER_KEY": "org_" + "t" * 40},
        )
    finally:
        taken.close()
    assert done.returncode == 3  # like a taken gRPC port
    assert done.stderr.splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: the port is taken (another feastlog "
        "server?): stop it, or pick another --http"
    ]
    assert done.stdout == ""  # nothing said the server was listening
    assert not (tmp_path / "x.duckdb").exists()
