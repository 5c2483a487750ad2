"""Whole games played from the seats' own pages in headless Chromium, against a real
``feastlog serve --http`` process: every seat opens its one-time link, chooses each move in
its page (the bots of the test pick which, among the page's own offers) and sends it; one
move refused by the rules, one server crash and restart (the pages say the connection
dropped, then catch up); a link refused on its second use; the leak scanner over every
response and live event each seat's page received; screenshots at 360 px and 1280 px in
``build/screenshots/seat-pages/`` (CI keeps them as artefacts).
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from feastlog.replay import games
from feastlog.replay.games.engine import Viewer
from feastlog.replay.record.export import load_record
from feastlog.replay.record.history import refold
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import seat_link_service_pb2 as slpb
from feastlog.v1 import seat_link_service_pb2_grpc as slpb_grpc
from tests.leakscan import Played, Receipt, Secrets, leaks
from tests.serverutil import bearer, create, play_to_end, stub

pytestmark = pytest.mark.xdist_group("browser")  # one worker, one browser

KEY = "org_seat-pages-browser-test-organiser-key"
NAMES = ["Ann", "Brian", "Celia"]
SEATS = {"bon-appetit": 3, "menu-masters": 2, "picky-eaters": 2}
# a command each game's rules refuse at its start, and the rule they cite
REFUSED = {
    "bon-appetit": {"bon_appetit": {"tie_break_bid": {"gems": ["BON_APPETIT_GEM_RED"]}}},
    "menu-masters": {"menu_masters": {"finish_turn": {}}},
    "picky-eaters": {"picky_eaters": {"discard_down": {"cards": ["ingredient-rice-1"]}}},
}
RECONNECT_AFTER = 5  # moves into the game, the server is killed and started again
MOST_MOVES = 2000
# Menu Masters runs to some 250 moves, about two minutes through three pages on CI's two
# cores: by default its pages make the first PAGE_MOVES and the seats' bots (over gRPC,
# tests/serverutil.py) the rest, the pages following to the end;
# FEASTLOG_SEAT_WHOLE_GAMES=1 plays every move of every game through the pages.
WHOLE = bool(os.environ.get("FEASTLOG_SEAT_WHOLE_GAMES"))
PAGE_MOVES = {"menu-masters": 40}
WIDTHS = (360, 1280)
# seat 0's page is a phone's, the others a desktop's; the screenshots go here (CI keeps them)
SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots" / "seat-pages"
# what each page received, kept by the page itself (CSP does not apply to this script)
CAPTURE = """
window.__steps = [];
document.addEventListener("feastlog:step", (e) => window.__steps.push(JSON.stringify(e.detail)));
"""
CLICK_STEPS = """(steps) => {
  for (const s of steps) {
    const b = [...document.querySelectorAll("#seat-question button.seat-choice")]
      .find((b) => b.dataset.ask === s.ask && b.dataset.pick === s.pick);
    if (b) b.click();
  }
  return !document.getElementById("seat-send").disabled;
}"""


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Served:
    """``feastlog serve --http`` in its own process, on the same two ports at each start."""

    def __init__(self, db: Path) -> None:
        self.db, self.port, self.http = db, free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.http}"
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None
        self.start()

    def start(self) -> None:
        """Start the server and wait until its pages are served."""
        code = "from feastlog.cli.main import main; main()"
        args = ["serve", "--db", str(self.db), "--port", str(self.port), "--http", str(self.http)]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "FEASTLOG_ORGANISER_KEY": KEY},
        )
        assert self.proc.stdout is not None
        said = ""
        while "web pages on" not in said:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the server did not start: {said}{self.proc.stderr}")
            said += line

    def kill(self) -> None:
        """kill -9: nothing drained, nothing said goodbye."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """A clean stop."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=20)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the module's games."""
    server = Served(tmp_path_factory.mktemp("seats") / "games.duckdb")
    yield server
    server.stop()


def link(server: Served, game_id: str, seat: int) -> str:
    """A one-time link for a seat, as the organiser asks for it."""
    channel = grpc.insecure_channel(server.address)
    try:
        request = slpb.CreateSeatLinkRequest(game_id=game_id, seat=seat)
        reply = slpb_grpc.SeatLinkServiceStub(channel).CreateSeatLink(request, metadata=bearer(KEY))
        assert reply.url == server.url + reply.path and reply.code.startswith("sl_")
        return str(reply.url)
    finally:
        channel.close()


def links_from_the_organisers_page(
    server: Served, browser: Any, game_id: str, folder: Path, kind: str
) -> list[str]:
    """The organiser opens the game's seat page with the key and makes every seat's link:
    the URLs shown beside their QR codes (drawn under the page's CSP)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server.url}/games/{game_id}/seat")
        page.fill("#token", KEY)
        page.click("button[type=submit]")
        page.click("#seat-links-make")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#seat-links img')].filter((i) => "
            "i.complete && i.naturalWidth > 0).length > 1"
        )
        urls: list[str] = page.eval_on_selector_all(
            "#seat-links .seat-url", "(els) => els.map((e) => e.textContent)"
        )
        page.screenshot(path=folder / f"{kind}-organiser.png", full_page=True)
        assert errors == [] and all("/seat/link?code=sl_" in u for u in urls)
        return urls
    finally:
        context.close()


def server_seq(server: Served, game_id: str) -> int:
    """The game's last seq, as the server has it."""
    channel = grpc.insecure_channel(server.address)
    try:
        seq: int = stub_on(channel).GetView(pb.GetViewRequest(game_id=game_id)).seq
        return seq
    finally:
        channel.close()


def stub_on(channel: grpc.Channel) -> Any:
    """A GameService stub on a channel."""
    from feastlog.v1 import game_service_pb2_grpc as pb_grpc

    return pb_grpc.GameServiceStub(channel)


class Seat:
    """One seat's browser (its own cookies) and page, and everything the page received."""

    def __init__(self, browser: Any, seat: int, width: int) -> None:
        self.seat, self.width = seat, width
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.page.add_init_script(CAPTURE)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.received: list[tuple[str, str]] = []  # (url, body) of every page and JSON reply
        self.moves: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (sent, answer)
        self.page.on("response", self._response)

    def _response(self, response: Any) -> None:
        if response.url.endswith("/seat/events") or "/seat/events?" in response.url:
            return  # the stream: its events are kept by the page (CAPTURE)
        if "/assets/" in response.url or 300 <= response.status < 400:
            return  # the server's own files; a redirect has no body
        body = response.text()
        self.received.append((response.url, body))
        if response.url.endswith("/seat/move") and response.request.post_data:
            self.moves.append((json.loads(response.request.post_data), json.loads(body)))

    def take(self, url: str) -> None:
        """Open the seat's link and take the seat."""
        self.page.goto(url)
        self.page.click("button.take")
        self.page.wait_for_url("**/seat*")
        self.wait_ready(0)

    def wait_ready(self, seq: int) -> None:
        """Until the page's moves are those of ``seq`` or later, and nothing is on its way."""
        self.page.wait_for_function(
            "(seq) => window.feastlogSeat && feastlogSeat.ready() && feastlogSeat.seq() >= seq",
            arg=seq,
            timeout=20_000,
            polling=20,
        )

    def state(self) -> dict[str, Any]:
        """The page's seat panel: its offers, whether the game is over, what it last sent."""
        found: dict[str, Any] = self.page.evaluate(
            "() => ({options: feastlogSeat.options(), over: feastlogSeat.over(),"
            " seq: feastlogSeat.seq()})"
        )
        return found

    def play(self, option: dict[str, Any], mouse: bool = False) -> int:
        """Choose ``option`` in the page, step by step, and send it: each button clicked in
        the page (``mouse``: Send clicked as a person would, which Playwright takes a
        quarter of a second to do); the seq it was recorded at."""
        before = len(self.page.evaluate("() => feastlogSeat.replies()"))
        assert self.page.evaluate(CLICK_STEPS, option["steps"]), option
        if mouse:
            self.page.click("#seat-send")
        else:
            self.page.dispatch_event("#seat-send", "click")
        self.page.wait_for_function(
            "(n) => feastlogSeat.replies().length > n", arg=before, polling=20
        )
        reply = self.page.evaluate("() => feastlogSeat.replies().slice(-1)[0]")
        assert "error" not in reply, reply
        seq: int = reply["seq"]
        return seq

    def controls_labelled(self) -> None:
        """Every control of the seat's panel is a button (reachable by Tab, pressed by
        Enter or Space) with a name a screen reader says."""
        found = self.page.evaluate(
            """() => [...document.querySelectorAll("#seat-moves *")]
              .filter((e) => e.matches("button, input, select, a, [tabindex], [onclick]"))
              .map((e) => [e.tagName, e.getAttribute("aria-label") || e.textContent.trim()])"""
        )
        assert found and all(tag == "BUTTON" and name for tag, name in found), found

    def steps(self) -> list[str]:
        """The live events the page received, as JSON."""
        found: list[str] = self.page.evaluate("() => window.__steps")
        return found


def play_through_pages(
    server: Served, seats: list[Seat], game_id: str, rng: random.Random, kind: str
) -> int:
    """Every seat plays from its page until the game ends (or, unless WHOLE, the kind's
    PAGE_MOVES have been made); returns the moves made."""
    seq, moves = server_seq(server, game_id), 0
    most = MOST_MOVES if WHOLE else PAGE_MOVES.get(kind, MOST_MOVES)
    while moves < most:
        moved = False
        for seat in seats:
            seat.wait_ready(seq)
            now = seat.state()
            if now["over"]:
                return moves
            if not now["options"]:
                continue
            if moves < len(seats):
                seat.controls_labelled()
            if moves == RECONNECT_AFTER + 1:  # mid-game, a seat choosing its move
                shoot_choosing(seat, kind)
            seq = seat.play(rng.choice(now["options"]), mouse=moves < len(seats))
            moves, moved = moves + 1, True
            if moves == RECONNECT_AFTER:
                reconnect(server, seats, game_id, kind)
        assert moved, f"nobody could move at seq {seq}"
    if most < MOST_MOVES:
        return moves
    raise AssertionError(f"the game did not end in {MOST_MOVES} moves")


def reconnect(server: Served, seats: list[Seat], game_id: str, kind: str) -> None:
    """Kill the server; every page says it lost the connection; start it; they catch up.
    A code made before the crash still works once after it."""
    spare = link(server, game_id, 0)
    server.kill()
    for seat in seats:
        seat.page.wait_for_selector("#seat-connection", state="visible", timeout=15_000)
        assert "Connection lost" in seat.page.inner_text("#seat-connection")
        assert seat.page.is_disabled("#seat-send")
    server.start()
    for seat in seats:
        seat.page.wait_for_selector("#seat-connection", state="hidden", timeout=15_000)
    assert seats[0].page.context.browser is not None
    again = seats[0].page.context.browser.new_context()
    try:
        tab = again.new_page()
        tab.goto(spare)
        tab.click("button.take")
        tab.wait_for_url("**/seat*")
        tab.wait_for_function("() => window.feastlogSeat && feastlogSeat.ready()")
        assert (
            tab.evaluate(
                "() => JSON.parse(document.getElementById('feastlog-data').textContent).viewer.id"
            )
            == "seat:0"
        )
    finally:
        again.close()


def refuse_one(server: Served, seats: list[Seat], game_id: str, kind: str) -> None:
    """A move the rules refuse: its words and rule beside the controls, nothing changed."""
    seat = next(s for s in seats if s.state()["options"])
    before = server_seq(server, game_id)
    reply = seat.page.evaluate("(c) => feastlogSeat.send(c)", REFUSED[kind])
    error = reply["error"]
    assert error["reason"] == "RULE_VIOLATION" and error["rule_id"], error
    shown = seat.page.inner_text("#seat-error")
    assert error["rule_id"] in shown and error["message"] in shown
    assert server_seq(server, game_id) == before
    assert seat.state()["seq"] == before


def shoot_choosing(seat: Seat, kind: str) -> None:
    """The screen of a seat to act, at each width, its first choice made."""
    folder = SHOTS
    seat.page.evaluate(
        "() => { const b = document.querySelector('#seat-question button.seat-choice');"
        " if (b) b.click(); }"
    )
    for width in WIDTHS:
        seat.page.set_viewport_size({"width": width, "height": 900})
        seat.page.screenshot(path=folder / f"{kind}-choosing-{width}px.png")
    seat.page.set_viewport_size({"width": seat.width, "height": 900})
    seat.page.click("#seat-reset")


def shoot(seats: list[Seat], kind: str, folder: Path) -> None:
    """Seat 0's page at each width; at 360 px nothing is wider than the screen."""
    page = seats[0].page
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert width > 400 or wide <= width + 1, f"{kind} at {width} px is {wide} px wide"
        page.screenshot(path=folder / f"{kind}-{width}px.png", full_page=True)
    page.set_viewport_size({"width": seats[0].width, "height": 900})


def played_from_pages(server: Served, kind: str, game_id: str, seats: list[Seat]) -> Played:
    """The game as the leak scanner sees it: the public record, and each page's receipts."""
    channel = grpc.insecure_channel(server.address)
    try:
        export = rpb_grpc.ReplayServiceStub(channel).ExportRecord(
            rpb.ExportRecordRequest(game_id=game_id), metadata=bearer(KEY)
        )
    finally:
        channel.close()
    record = load_record(export.content.decode())
    assert record.server_seed is not None
    folded = refold(record.rows, record.server_seed, record.pack_bytes)
    reveal = next(r.seq for r in folded.rows if r.kind == "seed_reveal")
    # the move that ends a game and the seed reveal are one commit: whatever a page got of
    # that last move, it got once the whole record was public
    last_hidden = reveal - 2
    receipts: list[Receipt] = []
    command_ids: dict[int, str] = {}
    sent: dict[Viewer, list[record_pb2.Command]] = {}
    for seat in seats:
        viewer = Viewer.of_seat(seat.seat)
        seq = 1
        for url, body in seat.received:
            seq = receipt_seq(url, body, seq)
            receipts.append(Receipt(viewer, seq, url.rsplit("/", 1)[-1], body))
        for text in seat.steps():
            receipts.append(Receipt(viewer, json.loads(text)["seq"], "events", text))
        for asked, answer in seat.moves:
            command = json_format.ParseDict(asked["command"], record_pb2.Command())
            sent.setdefault(viewer, []).append(command)
            if "seq" in answer:
                command_ids[answer["seq"]] = asked["command_id"]
    kept = [r for r in receipts if r.seq <= last_hidden]
    assert len(kept) > 10 * len(seats)
    return Played(
        kind, game_id, len(seats), record.server_seed, folded, command_ids, sent, kept, last_hidden
    )


def receipt_seq(url: str, body: str, before: int) -> int:
    """The seq a page or reply shows the game at (its data's last step, its ``seq``)."""
    if body.lstrip().startswith("<!doctype"):
        marker = '<script type="application/json" id="feastlog-data">'
        if marker not in body:
            return before
        data = json.loads(body.split(marker, 1)[1].split("</script>", 1)[0])
        return int(data["steps"][-1]["seq"]) if data["steps"] else before
    try:
        found = json.loads(body).get("seq")
    except (ValueError, AttributeError):
        return before
    return int(found) if isinstance(found, int) else before


@pytest.mark.parametrize("kind", list(SEATS))
def test_a_whole_game_is_played_from_the_seats_pages(
    served: Served, browser: Any, kind: str, screenshots: Path
) -> None:
    players = NAMES[: SEATS[kind]]
    game = create(stub(served.address), KEY, kind, players, seed=bytes([70 + len(kind)]) * 32)
    folder = screenshots / "seat-pages"
    folder.mkdir(exist_ok=True)
    assert folder == SHOTS
    seats = [Seat(browser, s, WIDTHS[0] if s == 0 else WIDTHS[1]) for s in range(len(players))]
    try:
        urls = links_from_the_organisers_page(served, browser, game.game_id, folder, kind)
        assert len(urls) == len(seats)
        for seat, url in zip(seats, urls, strict=True):
            seat.take(url)
        # the link was spent: a second browser that has it gets nothing
        other = browser.new_context()
        try:
            tab = other.new_page()
            again = tab.goto(urls[0])
            assert again is not None and again.status == 410
            assert "already been used" in tab.inner_text("body")
            assert not [c for c in other.cookies() if c["name"] == "feastlog_token"]
        finally:
            other.close()
        refuse_one(served, seats, game.game_id, kind)
        moves = play_through_pages(served, seats, game.game_id, random.Random(len(kind)), kind)
        assert moves > RECONNECT_AFTER
        tokens = [t.token for t in game.seat_tokens]
        rest = play_to_end(stub(served.address), game.game_id, tokens, seed=len(kind))
        assert rest == 0 or (not WHOLE and kind in PAGE_MOVES)
        for seat in seats:  # the pages followed the bots' moves to the end
            seat.page.wait_for_function("() => feastlogSeat.over()", polling=50)
            assert "over" in seat.page.inner_text("#seat-status")
        shoot(seats, kind, folder)
        played = played_from_pages(served, kind, game.game_id, seats)
        found = leaks(Secrets(played))
        assert found == [], "\n".join(found)
        assert all(s.errors == [] for s in seats), [s.errors for s in seats]
        assert games.engine(kind).spec.kind == kind
    finally:
        for seat in seats:
            seat.context.close()
