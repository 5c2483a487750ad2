"""A seat played from a browser: the seat's page takes moves, and one-time seat links.

    GET  /games/{id}/seat              the seat's page (or the token form)
    GET  /games/{id}/seat/legal        what the seat may send now, as the page offers it
    POST /games/{id}/seat/move         one command (JSON), through ``Games.submit``
    GET  /games/{id}/seat/link?code=   the page a seat's link opens; POST takes the code
    POST /games/{id}/seat/links        the organiser's page: a new link (and QR code) per seat
    GET  /assets/{name}                the seat page's scripts and styles

A move goes through the guard's input policy (``check_fields``) and the application's
submit use case, as a gRPC ``SubmitCommand`` would, with the ``expected_seq`` the page
saw: a page that is behind is refused (``STALE_EXPECTED_SEQ``) and changes nothing.

Safe by default: the seat's session is an HttpOnly, SameSite=Strict cookie (Secure under
TLS); every POST must come from the server's own pages (``Origin`` and ``Sec-Fetch-Site``,
checked for every POST by ``same_site_only``) and a POST that acts for a seat must carry
the page's CSRF token, derived from the cookie; the seat's page sets a
Content-Security-Policy allowing only the server's own scripts and styles.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from aiohttp import web
from google.protobuf import json_format

from feastlog.presentation.page import Live, asset
from feastlog.presentation.page_board import render_message
from feastlog.presentation.page_seat import (
    ASSETS,
    SEAT_POLICY,
    linked_seat_page,
    qr_data_uri,
    render_link_page,
    render_link_refused,
)
from feastlog.presentation.seat_moves import move_options
from feastlog.replay.games import engine as engine_of
from feastlog.service.app.auth import Caller
from feastlog.service.app.bounds import checked
from feastlog.service.app.errors import KNOWN, BadRequest, PermissionDenied, refusal_of
from feastlog.service.app.seatlinks import link_path
from feastlog.service.grpc.guard import check_fields
from feastlog.service.web.server import (
    APP,
    COOKIE,
    game_id_of,
    html_response,
    seat_caller,
    token_form,
)
from feastlog.v1 import game_service_pb2 as pb

CSRF_HEADER = "X-Feastlog-Csrf"
MOST_MOVE_BYTES = 64 * 1024  # a move's JSON; the gRPC request's bound is larger
# The service's refusals as HTTP statuses, by their canonical code (service/app/errors.py).
HTTP_OF_CODE = {
    "INVALID_ARGUMENT": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "FAILED_PRECONDITION": 409,
    "RESOURCE_EXHAUSTED": 429,
    "UNAVAILABLE": 503,
}


def csrf_token(cookie: str) -> str:
    """The CSRF token of a seat's cookie: known to its page, guessable by no other site."""
    return hashlib.sha256(b"feastlog seat csrf\x00" + cookie.encode("utf-8")).hexdigest()[:32]


def cross_site(request: web.Request) -> bool:
    """Whether a request comes from another site's page (a browser says so: the fetch
    metadata every current browser sends, else the ``Origin`` of older ones)."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = request.headers.get("Origin")
    return origin is not None and origin != f"{request.scheme}://{request.host}"


@web.middleware
async def same_site_only(request: web.Request, handler: Any) -> web.StreamResponse:
    """Refuse every POST sent from another site's page, before it reaches anything: 403
    on every path the pages serve (whatever its methods), 404 on one they do not."""
    if request.method == "POST" and cross_site(request):
        if isinstance(request.match_info.http_exception, web.HTTPNotFound):
            raise request.match_info.http_exception  # no such page, from any site
        message = "refused: this request came from another site's page, not from feastlog's"
        if request.path.endswith(("/move", "/links")):  # the seat page's JSON calls
            return refusal_json(PermissionDenied(message))
        game_id = request.match_info.get("game_id", "")
        if not game_id or not _plain_id(game_id):
            return html_response(render_message("feastlog", message), 403)
        return html_response(render_link_refused(game_id, message), 403)
    response: web.StreamResponse = await handler(request)
    return response


def _plain_id(game_id: str) -> bool:
    """Whether a game id in a path keeps the input policy (a refusal page may name it)."""
    try:
        checked("game_id", game_id)
    except BadRequest:
        return False
    return True


def check_csrf(request: web.Request, sent: str) -> None:
    """Refuse a seat's POST that does not carry its page's CSRF token."""
    cookie = request.cookies.get(COOKIE, "")
    if not cookie or not hmac.compare_digest(sent, csrf_token(cookie)):
        raise PermissionDenied("refused: reload your seat's page (its form token is missing)")


def refusal_json(error: Exception) -> web.Response:
    """A refusal as the page shows it: the message, the rule broken, the field, the seq."""
    code, reason, message, metadata = refusal_of(error)
    body = {"error": {"reason": reason, "message": message, **metadata}}
    return web.json_response(body, status=HTTP_OF_CODE.get(code.value, 400), headers=NO_STORE)


NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


async def the_seat(request: web.Request) -> Caller:
    """The caller of a seat's request, held to this game; Unauthenticated without one."""
    caller = await seat_caller(request)
    if caller is None:
        raise PermissionDenied("open your seat first: its link, or its token on the seat page")
    caller.viewer(game_id_of(request))  # another game's seat is refused
    return caller


async def seat_page(request: web.Request) -> web.Response:
    """The seat's (or arbiter's) own page, moves included, or the token form."""
    game_id = game_id_of(request)
    try:
        caller = await seat_caller(request)
        if caller is not None:
            caller.viewer(game_id)  # a token of another game is refused here
    except KNOWN as error:
        return await token_form(request, refusal_of(error).message, 403)
    if caller is None:
        return await token_form(request)
    live = Live(f"/games/{game_id}/seat/events", seat=f"/games/{game_id}/seat")
    page = await request.app[APP].replays.page(caller, game_id, live=live)
    response = html_response(linked_seat_page(page, csrf_token(request.cookies[COOKIE])))
    response.headers["Content-Security-Policy"] = SEAT_POLICY
    response.headers["Referrer-Policy"] = "same-origin"
    return response


async def seat_legal(request: web.Request) -> web.Response:
    """What the seat may send now, each command with the choices that make it."""
    try:
        return web.json_response(await _legal(request), headers=NO_STORE)
    except KNOWN as error:
        return refusal_json(error)


async def _legal(request: web.Request) -> dict[str, Any]:
    """The legal commands now, the seq they hold at, and who is still to act."""
    app, game_id, caller = request.app[APP], game_id_of(request), await the_seat(request)
    now = await app.replays.view(caller, game_id)
    legal = await app.replays.legal(caller, game_id)
    game = await app.live.get(game_id)  # its genesis and pack (``view`` found it)
    engine = engine_of(now.game_kind)
    names = [s.name for s in game.genesis.seats]
    fresh = legal.seq == now.seq  # a move landing in between: the page asks again
    return {
        "seq": legal.seq if fresh else now.seq,
        "over": bool(now.view.get("over")),
        "to_act": [names[s] for s in now.view.get("to_act") or []],
        "options": move_options(engine, game.pack, legal.commands) if fresh else [],
        "partial": legal.partial,
        "stale": not fresh,
    }


async def seat_move(request: web.Request) -> web.Response:
    """One command from the seat's page: checked as gRPC's, recorded or refused."""
    try:
        return web.json_response(await _move(request), headers=NO_STORE)
    except KNOWN as error:
        return refusal_json(error)


async def _move(request: web.Request) -> dict[str, Any]:
    """The command taken from the page's JSON, sent through the submit use case."""
    app, game_id, caller = request.app[APP], game_id_of(request), await the_seat(request)
    check_csrf(request, request.headers.get(CSRF_HEADER, ""))
    submitted = _request_of(game_id, await request.content.read(MOST_MOVE_BYTES + 1))
    if not submitted.HasField("expected_seq"):
        said = "a move from the page names the seq it was chosen at"
        raise BadRequest(said, field="expected_seq")
    check_fields(submitted)
    done = await app.games.submit(
        caller, game_id, submitted.command_id, submitted.expected_seq, submitted.command
    )
    now = await app.replays.view(caller, game_id)
    names = [s.name for s in (await app.live.get(game_id)).genesis.seats]
    engine = engine_of(now.game_kind)
    inner = getattr(submitted.command, engine.spec.command_field)
    return {
        "seq": done.row.seq,
        "replayed": done.replayed,
        "sealed": not engine.command_public(inner),
        "to_act": [names[s] for s in now.view.get("to_act") or []],
        "over": bool(now.view.get("over")),
    }


def _request_of(game_id: str, body: bytes) -> pb.SubmitCommandRequest:
    """The page's JSON as a SubmitCommandRequest (protobuf's JSON mapping), or BadRequest."""
    if len(body) > MOST_MOVE_BYTES:
        raise BadRequest(f"a move is at most {MOST_MOVE_BYTES // 1024} KiB", field="command")
    try:
        sent = json.loads(body)
        if not isinstance(sent, dict):
            raise ValueError("not an object")
        return json_format.ParseDict({**sent, "game_id": game_id}, pb.SubmitCommandRequest())
    except (ValueError, json_format.ParseError) as bad:
        said = f"the move is not a command this server reads: {bad}"
        raise BadRequest(said, field="command") from bad


async def seat_links_made(request: web.Request) -> web.Response:
    """The organiser's page: a new one-time link for every seat, with its QR code."""
    try:
        return web.json_response(await _links(request), headers=NO_STORE)
    except KNOWN as error:
        return refusal_json(error)


async def _links(request: web.Request) -> dict[str, Any]:
    """Every seat's new link, on the server's link base (``serve --link-base``, else the
    address the pages are served on): never on the request's Host header, which anyone
    who can reach the page may set, to send the players to another site."""
    app, game_id = request.app[APP], game_id_of(request)
    caller = await the_seat(request)
    check_csrf(request, request.headers.get(CSRF_HEADER, ""))
    caller.require_organiser()
    names = [s.name for s in (await app.live.get(game_id)).genesis.seats]
    links = []
    for seat, name in enumerate(names):
        code = await app.games.seat_link(caller, game_id, seat)
        url = app.seat_links.pages_url + link_path(game_id, code)
        links.append({"seat": seat, "name": name, "url": url, "qr": qr_data_uri(url)})
    return {"links": links}


async def link_page(request: web.Request) -> web.Response:
    """The page a seat's link opens: it names the seat; its button takes the code."""
    game_id = game_id_of(request)
    code = request.query.get("code", "")
    found = await request.app[APP].seat_links.seat_of_code(code)
    if found is None or found.game_id != game_id:
        return _link_refused(game_id)
    now = await request.app[APP].replays.view(Caller("anonymous"), game_id)
    names = [s.name for s in (await request.app[APP].live.get(game_id)).genesis.seats]
    title = engine_of(now.game_kind).spec.title
    page = render_link_page(game_id, title, names[found.seat], found.seat, code)
    response = html_response(page)
    response.headers["Content-Security-Policy"] = SEAT_POLICY
    response.headers["Referrer-Policy"] = "same-origin"
    return response


def _link_refused(game_id: str) -> web.Response:
    """A link spent, replaced or never made: it opens nothing."""
    message = (
        "This seat link has already been used (or a newer one replaced it): it opens "
        "nothing now. Ask the organiser for a new link, or open the seat with its token."
    )
    return html_response(render_link_refused(game_id, message), 410)


async def take_link(request: web.Request) -> web.StreamResponse:
    """Exchange a one-time code for the seat's session cookie; the code is then spent."""
    game_id = game_id_of(request)
    code = str((await request.post()).get("code", ""))
    # spent in the store in one step: of two browsers (or nodes) taking it, one gets it
    session = await request.app[APP].seat_links.redeem(code, game_id)
    if session is None:
        return _link_refused(game_id)
    response = web.HTTPSeeOther(f"/games/{game_id}/seat")
    response.set_cookie(
        COOKIE,
        session,
        path=f"/games/{game_id}/seat",
        httponly=True,
        samesite="Strict",
        secure=request.secure,
    )
    raise response


async def forget(request: web.Request) -> web.StreamResponse:
    """Drop the seat's cookie (and its session): back to the spectator's page."""
    game_id = game_id_of(request)
    cookie = request.cookies.get(COOKIE, "")
    sent = str((await request.post()).get("csrf", ""))
    if cookie:
        check_csrf(request, sent)
        await request.app[APP].seat_links.close(cookie)
    response = web.HTTPSeeOther(f"/games/{game_id}")
    response.del_cookie(COOKIE, path=f"/games/{game_id}/seat")
    raise response


async def asset_file(request: web.Request) -> web.Response:
    """One of the seat page's scripts or styles."""
    name = request.match_info["name"]
    if name not in ASSETS:
        raise web.HTTPNotFound(text="no such file")
    return web.Response(
        text=asset(name),
        content_type=ASSETS[name],
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


def add_routes(app: web.Application) -> None:
    """The seat's routes on the web application (``server.make_app``)."""
    app.router.add_get("/games/{game_id}/seat", seat_page)
    app.router.add_get("/games/{game_id}/seat/legal", seat_legal)
    app.router.add_post("/games/{game_id}/seat/move", seat_move)
    app.router.add_post("/games/{game_id}/seat/links", seat_links_made)
    app.router.add_get("/games/{game_id}/seat/link", link_page)
    app.router.add_post("/games/{game_id}/seat/link", take_link)
    app.router.add_post("/games/{game_id}/seat/forget", forget)
    app.router.add_get("/assets/{name}", asset_file)
