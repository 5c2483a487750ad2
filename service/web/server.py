"""``feastlog serve --http``: live replay pages, a seat's own page, a tournament board.

aiohttp runs on the gRPC server's event loop and calls the same application
(``service.app.application.Application``).  A game's page is the replay page
(presentation/page.py) of the rows so far, as its viewer sees them (``Replays.page``);
its script then follows the
game through server-sent events fed by the game's watch stream (``Games.watch``),
so every step it receives was redacted by the same policy as a gRPC watcher's.  Who the
viewer is comes from the same credentials as gRPC: nobody (a spectator), or a seat token
or the organiser key given in a form and kept in a cookie scoped to that game's seat
pages; a token never appears in a URL or a page.

    GET  /                           the board (``?tournament=ID`` for one tournament)
    GET  /board.json                 the board's rows
    GET  /feed/events                every game's rows, server-sent events (``WatchAll``'s)
    GET  /games/{id}                 the spectator's page;  /games/{id}/events its stream
    GET  /games/{id}/seat            a seat's (or the arbiter's) page, or the token form
    POST /games/{id}/seat            take the token from the form; /seat/forget drops it
    GET  /games/{id}/seat/events     that viewer's stream
    GET  /tournaments/{id}           a tournament's round (tables, seats, clock) and standings
    the seat's moves and one-time links: ``service/web/seat.py``
"""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import grpc
from aiohttp import web
from aiohttp_sse import EventSourceResponse, sse_response

from feastlog.presentation.page import Live, json_for_script, new_faces, scores_in, step_entry
from feastlog.presentation.page_board import render_board, render_message, render_token_form
from feastlog.presentation.page_tournament import render_tournament
from feastlog.replay.games import engine as engine_of
from feastlog.replay.games.text import plain_number
from feastlog.replay.tournament.export import decoded_row
from feastlog.service.app import streams
from feastlog.service.app.application import Application
from feastlog.service.app.auth import Caller
from feastlog.service.app.bounds import checked
from feastlog.service.app.errors import KNOWN, HeadNotFound, Unauthenticated
from feastlog.service.app.reads import MAX_PAGE_SIZE
from feastlog.service.app.seatlinks import SESSION_PREFIX
from feastlog.service.grpc.server import Running
from feastlog.service.grpc.status import describe

COOKIE = "feastlog_token"
RETRY_MS = 1000  # how soon a browser whose stream dropped tries again (its default: ~3 s)
APP = web.AppKey("app", Application)

# The service's errors as HTTP statuses (by their gRPC codes: service/grpc/status.py).
HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
}


def html_response(text: str, status: int = 200) -> web.Response:
    """An HTML page that no cache keeps (it may hold a seat's hand)."""
    return web.Response(
        text=text,
        status=status,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"},
    )


@web.middleware
async def service_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """The service's refusals as a page with the right status; anything else stays a 500."""
    try:
        response: web.StreamResponse = await handler(request)
        return response
    except KNOWN as error:
        code, _, message, _ = describe(error)
        return html_response(render_message("feastlog", message), HTTP_STATUS.get(code, 400))


def game_id_of(request: web.Request) -> str:
    """The game id in the path, held to the input policy as a request's (BadRequest)."""
    return checked("game_id", request.match_info["game_id"])


async def seat_caller(request: web.Request) -> Caller | None:
    """The caller named by the cookie's token (None when there is none); a session a
    seat link opened is looked up in the store (on its read thread), on any node."""
    token = request.cookies.get(COOKIE)
    if not token:
        return None
    if token.startswith(SESSION_PREFIX):  # a session a seat link opened
        found = await request.app[APP].seat_links.seat_of_session(token)
        if found is None:
            raise Unauthenticated("this browser's seat session has ended: open a new seat link")
        return Caller("seat", found.game_id, found.seat)
    return request.app[APP].credentials.caller((("authorization", f"Bearer {token}"),))


async def board_page(request: web.Request) -> web.Response:
    """The tournament board."""
    return html_response(render_board(request.query.get("tournament", "")))


async def board_json(request: web.Request) -> web.Response:
    """Every table: running ones with their seq, round and scores as a spectator sees them."""
    app = request.app[APP]
    rows = []
    # the newest tables, one page of the game list (running tables are the newest)
    tournament_id = checked("tournament_id", request.query.get("tournament", ""))
    listed = await app.replays.games(
        Caller("anonymous"), page_size=MAX_PAGE_SIZE, tournament_id=tournament_id
    )
    for summary in listed.games:
        row: dict[str, Any] = {
            "id": summary.game_id,
            "kind": summary.game_kind,
            "title": engine_of(summary.game_kind).spec.title,
            "players": summary.players,
            "seq": summary.last_seq,
            "over": summary.over,
            "waiting": summary.waiting_for_entropy,
            "tournament": summary.tournament_id,
        }
        if not summary.over and not summary.waiting_for_entropy:
            now = await app.replays.view(Caller("anonymous"), summary.game_id)
            view, names = now.view, summary.players
            row |= {"seq": now.seq, "round": view.get("round"), "phase": view.get("phase")}
            row |= {"scores": scores_in(view), "to_act": [names[s] for s in view["to_act"]]}
        elif summary.over:
            row |= await ended(app, summary.game_id)
        rows.append(row)
    answer: dict[str, Any] = {"games": rows}
    try:  # the server's latest signed tree head, with how many witnesses co-signed it
        head, cosignatures = await app.proving.tree_head(Caller("anonymous"), 0)
        answer["tree_head"] = {**vars(head), "witnesses": len(cosignatures)}
    except HeadNotFound:
        pass  # nothing recorded yet
    return web.json_response(answer, headers={"Cache-Control": "no-store"})


async def ended(app: Any, game_id: str) -> dict[str, Any]:
    """How a game ended, as the board shows it: voided, closed by the arbiter, or finished
    with its final scores (rulings applied) and winners."""
    last = await app.replays.state_at(Caller("anonymous"), game_id)
    rulings, view = last.rulings, last.steps[-1].view
    if rulings.get("voided"):
        return {"ending": "void"}
    if rulings.get("closed"):
        return {"ending": "closed"}
    scores = list(view.get("scores") or scores_in(view))
    adjustments = rulings.get("adjustments") or []
    scores = [p + (adjustments[i] if i < len(adjustments) else 0) for i, p in enumerate(scores)]
    return {"ending": "finished", "scores": scores, "winners": list(view.get("winners") or [])}


async def game_page(request: web.Request, caller: Caller, events: str) -> web.Response:
    """A game's page as ``caller`` sees it, following the game at ``events``."""
    game_id = game_id_of(request)
    live = Live(events, seat=f"/games/{game_id}/seat")
    return html_response(await request.app[APP].replays.page(caller, game_id, live=live))


async def spectator_page(request: web.Request) -> web.Response:
    """The spectator's page."""
    return await game_page(request, Caller("anonymous"), f"/games/{game_id_of(request)}/events")


async def token_form(request: web.Request, error: str = "", status: int = 200) -> web.Response:
    """The form asking for a seat token (or the organiser key)."""
    game_id = game_id_of(request)
    now = await request.app[APP].replays.view(Caller("anonymous"), game_id)
    title = engine_of(now.game_kind).spec.title
    return html_response(render_token_form(game_id, title, error), status)


async def take_token(request: web.Request) -> web.StreamResponse:
    """Check the token from the form; keep it in a cookie for this game's seat pages."""
    game_id = game_id_of(request)
    token = str((await request.post()).get("token", "")).strip()
    try:
        if not token:
            raise Unauthenticated("enter the token you were given for this seat")
        caller = request.app[APP].credentials.caller((("authorization", f"Bearer {token}"),))
        caller.viewer(game_id)
    except KNOWN as error:
        code, _, message, _ = describe(error)
        return await token_form(request, message, HTTP_STATUS.get(code, 400))
    await request.app[APP].replays.view(Caller("anonymous"), game_id)  # NOT_FOUND before any cookie
    response = web.HTTPSeeOther(f"/games/{game_id}/seat")
    response.set_cookie(
        COOKIE,
        token,
        path=f"/games/{game_id}/seat",
        httponly=True,
        samesite="Strict",
        secure=request.secure,
    )
    raise response


async def follow(request: web.Request, caller: Caller) -> web.StreamResponse:
    """Server-sent events: each new row as ``caller`` sees it, then the result at the end.

    Resumes after ``Last-Event-ID`` (the browser sends it when it reconnects) or ``?after=``.
    The first event carries its whole view, the rest patches on the one before; each
    brings the faces of the cards it names for the first time on this stream.
    """
    after = plain_number(request.headers.get("Last-Event-ID") or request.query.get("after") or "0")
    if after is None:
        raise web.HTTPBadRequest(text="after is a seq: ASCII digits, 0 or more")
    watching = await request.app[APP].games.watch(caller, game_id_of(request), after + 1)
    kind = watching.genesis.game_kind
    names = [s.name for s in watching.genesis.seats]
    async with event_stream(request) as stream, streams.closing(watching.steps):
        before: dict[str, Any] | None = None
        known: set[str] = set()
        async for step in watching.steps:
            entry = step_entry(engine_of(kind), names, step, before)
            entry["cards"] = new_faces(kind, watching.pack, step.view, known)
            before = step.view
            seq = str(step.row.seq)
            await stream.send(json_for_script(entry), id=seq, event="step", retry=RETRY_MS)
        result = watching.result()
        if result is not None:
            await stream.send(json.dumps(result), event="end")
    return stream


@contextlib.asynccontextmanager
async def event_stream(request: web.Request) -> AsyncIterator[EventSourceResponse]:
    """A server-sent-events response held to the streams' bounds (``service.app.streams``).

    An event its reader has not taken within ``SEND_SECONDS`` closes the connection (the
    reader does not read: aiohttp_sse aborts it); a comment every ``HEARTBEAT_SECONDS``
    finds a reader that has gone on a quiet stream (and the runner's handler cancellation
    one that closed its connection).  A refusal met once the stream has begun (a
    credential revoked) is sent as a ``refused`` event, and the stream ends.
    """
    async with sse_response(
        request,
        headers={"Cache-Control": "no-store"},
        send_timeout=streams.SEND_SECONDS,
        ping_interval=streams.HEARTBEAT_SECONDS,
    ) as stream:
        try:
            yield stream
        except KNOWN as error:
            _, reason, message, _ = describe(error)
            with contextlib.suppress(OSError, RuntimeError, TimeoutError):
                refused = json.dumps({"reason": reason, "message": message})
                await stream.send(refused, event="refused")
        except (ConnectionResetError, TimeoutError):
            pass  # the reader went, or fell behind (its connection is closed)


async def no_icon(request: web.Request) -> web.Response:
    """No favicon, said as such (204, kept a day) rather than a 404 in every console."""
    return web.Response(status=204, headers={"Cache-Control": "public, max-age=86400"})


async def spectator_events(request: web.Request) -> web.StreamResponse:
    """The spectator's stream."""
    return await follow(request, Caller("anonymous"))


async def seat_events(request: web.Request) -> web.StreamResponse:
    """The stream of the seat (or arbiter) whose token is in the cookie."""
    caller = await seat_caller(request)
    if caller is None:
        raise web.HTTPUnauthorized(text="open /games/{id}/seat and enter your token first")
    return await follow(request, caller)


async def feed_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events of every game (``service.app.feed``, what ``WatchAll`` sends a
    spectator): ``?kind=``, ``?tournament=``; each event's id is its row's position in the
    log, which a browser sends back as ``Last-Event-ID`` when it reconnects (or
    ``?position=``): the feed resumes after it.
    """
    kind = checked("game_kind", request.query.get("kind", ""))
    tournament_id = checked("tournament_id", request.query.get("tournament", ""))
    given = request.headers.get("Last-Event-ID") or request.query.get("position", "")
    # a bad position or kind is refused here, before the stream's 200
    feed = await request.app[APP].feed.event_feed(Caller("anonymous"), kind, tournament_id, given)
    async with event_stream(request) as stream, streams.closing(feed):
        async for row in feed:
            step = row.step
            data = {
                "position": row.position,
                "game_id": row.game_id,
                "seq": step.row.seq,
                "kind": step.row.kind,
                "actor": step.row.actor,
                "recorded_at": step.row.recorded_at,
                "hash": step.row.hash,
                "facts": list(step.facts),
                "view": step.view,
            }
            await stream.send(json_for_script(data), id=str(row.position), event="row")
    return stream


def make_app(application: Application) -> web.Application:
    """The web application over a server's games."""
    from feastlog.service.web import seat  # the seat's page and moves (it imports this module)

    app = web.Application(middlewares=[seat.same_site_only, service_errors])
    app[APP] = application
    app.router.add_get("/", board_page)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_get("/board.json", board_json)
    app.router.add_get("/feed/events", feed_events)
    app.router.add_get("/games/{game_id}", spectator_page)
    app.router.add_get("/games/{game_id}/events", spectator_events)
    app.router.add_post("/games/{game_id}/seat", take_token)
    app.router.add_get("/games/{game_id}/seat/events", seat_events)
    app.router.add_get("/tournaments/{tournament_id}", tournament_page)
    seat.add_routes(app)
    return app


async def tournament_page(request: web.Request) -> web.Response:
    """A tournament's page: its current round (tables, seats, games, clock), its standings."""
    application = request.app[APP]
    tid = checked("tournament_id", request.match_info["tournament_id"])
    snap = await application.tournaments.snapshot(tid)
    current = snap.state.current
    heads = {}
    for game_id in current.game_ids if current is not None else ():
        heads[game_id] = await application.live.head(game_id)
    started = next(
        (r.recorded_at for r in reversed(snap.rows) if decoded_row(r)[0] == "start_clock"), ""
    )
    return html_response(render_tournament(snap.state, snap.standings, heads, started))


async def serve_http(
    running: Running,
    host: str,
    port: int,
    ssl_context: ssl.SSLContext | None = None,
    link_base: str = "",
) -> int:
    """Serve the pages beside a running gRPC server (port 0 picks one); returns the port.

    With ``ssl_context`` the pages are served over HTTPS only. Seat links are made on
    ``link_base`` (the pages' public address), by default the address they are served on:
    never on what a request says it asked for (its Host header). Raises OSError when the
    port cannot be had; ``running.stop()`` stops the pages first.
    """
    # open event streams are cut after a second at shutdown rather than drained
    # a handler whose client closed its connection is cancelled then (an event stream's
    # tasks with it), not at its next write
    app = make_app(running.app)
    if running.metrics is not None:  # the server's metrics beside the pages
        app.router.add_get("/metrics", running.metrics.page)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    running.http = runner
    bound: int = runner.addresses[0][1]
    shown = host if ":" not in host else f"[{host}]"
    served = f"http{'s' if ssl_context else ''}://{shown}:{bound}"
    running.app.seat_links.pages_url = link_base.rstrip("/") or served
    return bound
