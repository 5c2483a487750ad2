"""The seat's page over plain HTTP (no browser): one-time links, the session cookie, the
Content-Security-Policy, CSRF and cross-site refusals, a move through the same checks as
gRPC's SubmitCommand; the moves as choices (``presentation/seat_moves.py``);
``feastlog new --links --qr`` (the links kept in the store, across restarts and nodes:
``test_seat_links_kept.py``)."""

from __future__ import annotations

import html
import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.presentation.seat_moves import move_options
from feastlog.replay.games import fold
from feastlog.replay.games.fold import wrap_command
from feastlog.service.app.offline import OfflineFile
from feastlog.service.app.seatlinks import digest
from feastlog.service.store.port import open_store
from feastlog.service.web.seat import csrf_token
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import seat_link_service_pb2 as slpb
from feastlog.v1 import seat_link_service_pb2_grpc as slpb_grpc
from tests.recordutil import build, store_games
from tests.serverutil import bearer, create, error_info, stub
from tests.webutil import WebServer, request

NAMES = ["Ann", "Brian", "Celia"]


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    server = WebServer(tmp_path_factory.mktemp("seat") / "games.duckdb")
    yield server
    server.stop()


def send(
    web: WebServer, path: str, body: bytes, headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    """A POST with a raw body; the status and the JSON answer."""
    connection = http.client.HTTPConnection("127.0.0.1", web.http_port, timeout=20)
    try:
        connection.request("POST", path, body=body, headers=headers)
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


def seat_link(web: WebServer, game_id: str, seat: int, token: str | None = None) -> Any:
    """``SeatLinkService.CreateSeatLink`` with the organiser key (or a seat's token)."""
    channel = grpc.insecure_channel(web.address)
    try:
        request = slpb.CreateSeatLinkRequest(game_id=game_id, seat=seat)
        service = slpb_grpc.SeatLinkServiceStub(channel)
        return service.CreateSeatLink(request, metadata=bearer(token or web.key))
    finally:
        channel.close()


def take(web: WebServer, path: str) -> str:
    """Take a link's code as its page's button does: the session cookie (name=value)."""
    code = parse_qs(urlparse(path).query)["code"][0]
    taken = request(web, "POST", urlparse(path).path, {"code": code})
    assert taken.status == 303, taken.body
    return taken.headers["set-cookie"].split(";")[0]


def test_a_link_opens_its_seat_once_into_a_locked_down_page(web: WebServer) -> None:
    game = create(stub(web.address), web.key, "bon-appetit", NAMES, seed=bytes([90]) * 32)
    made = seat_link(web, game.game_id, 1)
    assert made.url == web.url + made.path and made.code in made.path
    opened = request(web, "GET", made.path)  # a link preview opens this: it takes nothing
    assert opened.status == 200 and "Brian" in opened.body and "set-cookie" not in opened.headers
    assert opened.headers["referrer-policy"] == "same-origin"
    code = parse_qs(urlparse(made.path).query)["code"][0]
    taken = request(web, "POST", urlparse(made.path).path, {"code": code})
    assert taken.status == 303 and taken.headers["location"] == f"/games/{game.game_id}/seat"
    cookie = taken.headers["set-cookie"]
    for part in ("HttpOnly", "SameSite=Strict", f"Path=/games/{game.game_id}/seat"):
        assert part in cookie
    assert "Secure" not in cookie  # plain HTTP here; under TLS the cookie is Secure
    jar = cookie.split(";")[0]
    assert jar.startswith("feastlog_token=ss_") and code not in jar
    again = request(web, "POST", urlparse(made.path).path, {"code": code})
    assert again.status == 410 and "already been used" in again.body
    assert "set-cookie" not in again.headers
    assert request(web, "GET", made.path).status == 410
    page = request(web, "GET", f"/games/{game.game_id}/seat", cookie=jar)
    assert page.status == 200
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy and "sha256-" not in policy
    # frame-ancestors in the header, where browsers take it; not in the page's meta tag,
    # where they ignore it with a console error
    assert "frame-ancestors 'none'" in policy
    meta_policy = r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">'
    (meta,) = [html.unescape(m) for m in re.findall(meta_policy, page.body)]
    assert "frame-ancestors" not in meta and "script-src 'self'" in meta
    scripts = re.findall(r"<script([^>]*)>", page.body)
    assert scripts and all("src=" in s or 'type="application/json"' in s for s in scripts)
    assert "<style" not in page.body
    assert csrf_token(jar.split("=", 1)[1]) in page.body and jar.split("=", 1)[1] not in page.body
    data = json.loads(page.body.split('id="feastlog-data">', 1)[1].split("</script>", 1)[0])
    assert data["viewer"]["id"] == "seat:1"
    for name in ("seat.js", "page.js", "page.css", "seat.css"):
        asset = request(web, "GET", f"/assets/{name}")
        assert asset.status == 200 and asset.headers["x-content-type-options"] == "nosniff"
    assert request(web, "GET", "/assets/other.js").status == 404
    assert request(web, "GET", "/favicon.ico").status == 204  # no icon, and no 404 for it


def test_a_seat_makes_its_own_link_and_no_other(web: WebServer) -> None:
    game = create(stub(web.address), web.key, "picky-eaters", NAMES[:2], seed=bytes([91]) * 32)
    token = game.seat_tokens[0].token
    assert seat_link(web, game.game_id, 0, token).code.startswith("sl_")
    with pytest.raises(grpc.RpcError) as refused:
        seat_link(web, game.game_id, 1, token)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as outside:
        seat_link(web, game.game_id, 5)
    assert outside.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(outside.value).metadata["field"] == "seat"
    first = seat_link(web, game.game_id, 1)
    seat_link(web, game.game_id, 1)  # a new link for the seat replaces the unused one
    assert request(web, "GET", first.path).status == 410


def test_a_move_from_the_page_is_checked_as_grpc_checks_it(web: WebServer) -> None:
    client = stub(web.address)
    game = create(client, web.key, "bon-appetit", NAMES, seed=bytes([92]) * 32)
    jar = take(web, seat_link(web, game.game_id, 0).path)
    base = f"/games/{game.game_id}/seat"
    legal = json.loads(request(web, "GET", f"{base}/legal", cookie=jar).body)
    assert legal["seq"] == 1 and legal["to_act"] == NAMES and legal["options"]
    option = legal["options"][-1]
    assert option["sealed"] and [s["ask"] for s in option["steps"]] == [
        "what you do", "blue gems", "green gems", "red gems", "yellow gems",
    ]  # fmt: skip
    move = {"command_id": "web-1", "expected_seq": 1, "command": option["command"]}
    body = json.dumps(move).encode()
    csrf = {"X-Feastlog-Csrf": csrf_token(jar.split("=", 1)[1])}
    plain = {"Cookie": jar, "Content-Type": "application/json"}

    def seq() -> int:
        return int(client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq)

    status, answer = send(web, f"{base}/move", body, plain)  # no CSRF token
    assert status == 403 and "reload" in answer["error"]["message"] and seq() == 1
    forged = {**plain, **csrf, "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    status, answer = send(web, f"{base}/move", body, forged)
    assert status == 403 and "another site" in answer["error"]["message"] and seq() == 1
    old_browser = {**plain, **csrf, "Origin": "https://evil.example"}  # no fetch metadata
    assert send(web, f"{base}/move", body, old_browser)[0] == 403 and seq() == 1
    status, answer = send(web, f"{base}/move", b"{not json", {**plain, **csrf})
    assert status == 400 and answer["error"]["field"] == "command"
    unsent = json.dumps({**move, "expected_seq": None}).encode()
    status, answer = send(web, f"{base}/move", unsent, {**plain, **csrf})
    assert status == 400 and answer["error"]["field"] == "expected_seq"
    tie = {"bon_appetit": {"tie_break_bid": {"gems": ["BON_APPETIT_GEM_RED"]}}}
    wrong = json.dumps({**move, "command_id": "web-2", "command": tie}).encode()
    status, answer = send(web, f"{base}/move", wrong, {**plain, **csrf})
    assert status == 409 and answer["error"]["reason"] == "RULE_VIOLATION"
    assert answer["error"]["rule_id"].startswith("BA-") and seq() == 1
    unknown = {"bon_appetit": {"bid": {"gems": []}}, "extra": 1}
    extra = json.dumps({**move, "command": unknown}).encode()
    status, answer = send(web, f"{base}/move", extra, {**plain, **csrf})
    assert status == 400 and seq() == 1
    status, answer = send(web, f"{base}/move", body, {**plain, **csrf})
    assert status == 200 and answer == {
        "seq": 2, "replayed": False, "sealed": True, "to_act": ["Brian", "Celia"], "over": False,
    }  # fmt: skip
    assert send(web, f"{base}/move", body, {**plain, **csrf})[1]["replayed"] is True
    stale = json.dumps({**move, "command_id": "web-3"}).encode()  # still at seq 1
    status, answer = send(web, f"{base}/move", stale, {**plain, **csrf})
    assert status == 409 and answer["error"]["reason"] == "STALE_EXPECTED_SEQ"
    assert answer["error"]["last_seq"] == "2" and seq() == 2
    waiting = json.loads(request(web, "GET", f"{base}/legal", cookie=jar).body)
    assert waiting["options"] == [] and waiting["to_act"] == ["Brian", "Celia"]
    assert request(web, "GET", f"{base}/legal").status == 403  # no session: nothing
    forgot = request(web, "POST", f"{base}/forget", {"csrf": csrf["X-Feastlog-Csrf"]}, jar)
    assert forgot.status == 303
    assert request(web, "GET", f"{base}/legal", cookie=jar).status == 401  # session closed


def test_the_organisers_page_makes_every_seats_link_with_its_qr_code(web: WebServer) -> None:
    game = create(stub(web.address), web.key, "menu-masters", NAMES[:2], seed=bytes([94]) * 32)
    base = f"/games/{game.game_id}/seat"
    jar = request(web, "POST", base, {"token": web.key}).headers["set-cookie"].split(";")[0]
    csrf = {"X-Feastlog-Csrf": csrf_token(jar.split("=", 1)[1]), "Cookie": jar}
    status, made = send(web, f"{base}/links", b"", csrf)
    assert status == 200 and [(m["seat"], m["name"]) for m in made["links"]] == [
        (0, "Ann"),
        (1, "Brian"),
    ]
    for made_link in made["links"]:
        assert made_link["url"].startswith(f"http://127.0.0.1:{web.http_port}{base}/link?code=sl_")
        assert made_link["qr"].startswith("data:image/svg+xml")
    assert send(web, f"{base}/links", b"", {"Cookie": jar})[0] == 403  # no CSRF token
    seat = take(web, seat_link(web, game.game_id, 0).path)
    mine = {"X-Feastlog-Csrf": csrf_token(seat.split("=", 1)[1]), "Cookie": seat}
    assert send(web, f"{base}/links", b"", mine)[0] == 403  # a seat makes none from its page


@pytest.mark.parametrize(
    ("kind", "stop_after", "asks"),
    [
        ("bon-appetit", 0, {"what you do", "blue gems", "green gems", "red gems", "yellow gems"}),
        ("menu-masters", 0, {"what you do", "store", "placement"}),
        ("picky-eaters", 0, {"what you do", "card", "recipe", "ingredient 1", "item"}),
    ],
)
def test_each_legal_command_is_a_chain_of_choices_in_words(
    kind: str, stop_after: int, asks: set[str], tmp_path: Path
) -> None:
    built = build(kind, players=2 if kind != "bon-appetit" else 3, seed_byte=93)
    store_games(tmp_path / "g.duckdb", [built])
    game = OfflineFile(str(tmp_path / "g.duckdb")).folded(built.rows[0].game_id)
    table = game.tables[stop_after] if stop_after else game.tables[0]
    for seat in range(len(game.seat_names)):
        legal = fold.legal_commands(game.engine, table, f"seat:{seat}")
        if not legal:
            continue
        commands = [wrap_command(game.engine.spec.command_field, c) for c in legal]
        options = move_options(game.engine, game.pack, commands)
        found = {step["ask"] for o in options for step in o["steps"]}
        assert asks & found, found
        paths = [tuple((s["ask"], s["pick"]) for s in o["steps"]) for o in options]
        assert all(paths) and all(o["command"] for o in options)
        assert all(o["sealed"] == (kind == "bon-appetit") for o in options)
        assert not any("_" in s["ask"] for o in options for s in o["steps"])
        return
    raise AssertionError("no seat could act at the start")


def test_feastlog_new_prints_a_link_and_a_qr_code_per_seat(web: WebServer) -> None:
    args = ["new", "picky-eaters", "--players", "Ann,Brian", "--server", web.address]
    args += ["--organiser-key", web.key, "--links", "--qr"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if " link: " in line]
    assert [line.split(" link: ")[0] for line in lines] == ["seat 0 Ann", "seat 1 Brian"]
    urls = [line.split(" link: ")[1] for line in lines]
    assert all(u.startswith(web.url + "/games/g_") and "code=sl_" in u for u in urls)
    assert "█" in result.output  # the QR codes, drawn in block characters
    path = urlparse(urls[1])
    assert request(web, "GET", f"{path.path}?{path.query}").status == 200
    based = CliRunner().invoke(cli, [*args[:-1], "--link-base", "https://table.example/", "--json"])
    assert based.exit_code == 0, based.output
    made = json.loads(based.output)
    assert made["links"][0]["url"].startswith("https://table.example/games/")
    unpaired = CliRunner().invoke(cli, [*args[:-2], "--qr"])
    assert unpaired.exit_code == 2 and "--links" in unpaired.output


def test_links_with_no_pages_to_link_to_still_show_the_new_games_tokens(tmp_path: Path) -> None:
    db = tmp_path / "games.duckdb"
    args = ["new", "menu-masters", "--players", "Ann,Brian", "--db", str(db), "--links"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "--link-base" in result.output
    assert "seat 1 Brian: seat_" in result.output and "Traceback" not in result.output
    based = CliRunner().invoke(cli, [*args, "--link-base", "http://table.example"])
    assert based.exit_code == 0, based.output
    url = next(line for line in based.output.splitlines() if "seat 0 Ann link: " in line)
    code = parse_qs(urlparse(url.split(" link: ")[1]).query)["code"][0]
    kept = open_store(str(db), read_only=True)  # in the file's store, by its hash alone
    try:
        assert kept.seat_of_code(digest(code)) is not None and kept.seat_of_code(code) is None
    finally:
        kept.close()
    assert not (tmp_path / "games.duckdb.seat-links").exists()  # no file beside it now


def concrete(path: str, game_id: str) -> str:
    """A route's path with its parts filled in (a real game; a tournament that is not)."""
    filled = {"{game_id}": game_id, "{tournament_id}": "t_nowhere", "{name}": "seat.js"}
    for part, value in filled.items():
        path = path.replace(part, value)
    return path


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
        {"Origin": "https://evil.example"},  # an older browser: no fetch metadata
    ],
)
def test_a_cross_site_post_to_any_path_is_refused_never_a_500(
    web: WebServer, headers: dict[str, str]
) -> None:
    """Item 7 of issue 42: a cross-site POST to ``/``, ``/feed/events``, a tournament or a
    path that is none answered 500 (``KeyError: 'game_id'``).  Every route of the pages,
    whatever its methods, is 403 now; a path that is no route, 404; nothing changes."""
    from feastlog.service.web.server import make_app

    game = create(stub(web.address), web.key, "bon-appetit", NAMES, seed=bytes([95]) * 32)
    app = make_app(web.running.app)
    paths = {concrete(r.canonical, game.game_id) for r in app.router.resources()}
    assert {"/", "/feed/events", "/tournaments/t_nowhere", f"/games/{game.game_id}/seat"} <= paths
    paths |= {f"/games/{'g' * 300}/seat/move", f"/games/{'g' * 300}/seat"}  # ids over the bound
    for path in sorted(paths):
        connection = http.client.HTTPConnection("127.0.0.1", web.http_port, timeout=20)
        try:
            connection.request("POST", path, body=b"token=x", headers=headers)
            reply = connection.getresponse()
            body = reply.read().decode()
        finally:
            connection.close()
        assert reply.status == 403, (path, reply.status, body[:200])
        assert "another site" in body
    for path in ("/nowhere", "/games/g_x/seat/nowhere", "/assets/x/y"):
        assert request_with(web, "POST", path, headers) == 404
    assert int(stub(web.address).GetView(pb.GetViewRequest(game_id=game.game_id)).seq) == 1


def request_with(web: WebServer, method: str, path: str, headers: dict[str, str]) -> int:
    """The status of one request with these headers."""
    connection = http.client.HTTPConnection("127.0.0.1", web.http_port, timeout=20)
    try:
        connection.request(method, path, body=b"", headers=headers)
        reply = connection.getresponse()
        reply.read()
        return reply.status
    finally:
        connection.close()


def links_asked_with_host(web: WebServer, game_id: str, host: str) -> list[str]:
    """The organiser's page's links, asked for with this Host header."""
    base = f"/games/{game_id}/seat"
    jar = request(web, "POST", base, {"token": web.key}).headers["set-cookie"].split(";")[0]
    headers = {"X-Feastlog-Csrf": csrf_token(jar.split("=", 1)[1]), "Cookie": jar, "Host": host}
    status, made = send(web, f"{base}/links", b"", headers)
    assert status == 200, made
    return [link["url"] for link in made["links"]]


def test_seat_links_are_made_on_the_link_base_whatever_the_host_header(
    web: WebServer, tmp_path: Path
) -> None:
    """Item 9 of issue 42: the organiser's links were made on the request's Host header,
    which anyone who can reach the page sets (a link to another site, with a live code)."""
    game = create(stub(web.address), web.key, "bon-appetit", NAMES, seed=bytes([96]) * 32)
    forged = links_asked_with_host(web, game.game_id, "evil.example")
    assert forged and all(
        u.startswith(f"{web.url}/games/{game.game_id}/seat/link?code=sl_") for u in forged
    )
    based = WebServer(tmp_path / "based.duckdb", link_base="https://table.example/feast/")
    try:
        game = create(stub(based.address), based.key, "bon-appetit", NAMES, seed=bytes([97]) * 32)
        for host in ("evil.example", f"127.0.0.1:{based.http_port}"):
            urls = links_asked_with_host(based, game.game_id, host)
            assert all(u.startswith("https://table.example/feast/games/g_") for u in urls), urls
        made = seat_link(based, game.game_id, 0)
        assert made.url == "https://table.example/feast" + made.path
    finally:
        based.stop()
