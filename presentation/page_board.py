"""The server's other pages: the tournament board, the seat-token form, plain messages.

Pure HTML strings, sharing the replay page's stylesheet; the board's rows come from the
server as JSON (``board.json``) and its small script (``presentation/page/board.js``) draws them.
"""

from __future__ import annotations

import html

from feastlog.presentation.page import HEAD, asset, csp_hash

_SHELL = (
    HEAD
    + """<header class="top"><div class="heading"><h1>{title}</h1><p class="sub">{sub}</p></div>
<div class="tools">{tools}</div></header>
<main class="board">
{body}
</main>
{script}
</body>
</html>
"""
)


def page(title: str, sub: str, body: str, refresh: int = 0) -> str:
    """A page of its own (no script): ``refresh`` seconds, if any, between reloads."""
    made = _page(title, sub, body)
    if not refresh:
        return made
    return made.replace("<head>", f'<head>\n<meta http-equiv="refresh" content="{refresh}">', 1)


def _page(title: str, sub: str, body: str, script: str = "", tools: str = "") -> str:
    """A page with the shared header and stylesheet; ``script`` is inlined, if any."""
    script_src = csp_hash(script) if script else "'none'"
    connect = "'self'" if script else "'none'"
    policy = (
        f"default-src 'none'; script-src {script_src}; style-src {csp_hash(asset('page.css'))}; "
        f"connect-src {connect}; form-action 'self'; base-uri 'none'"
    )
    return _SHELL.format(
        policy=html.escape(policy),
        title=html.escape(title),
        sub=html.escape(sub),
        css=asset("page.css"),
        body=body,
        tools=tools,
        script=f"<script>{script}</script>" if script else "",
    )


def render_board(tournament: str = "") -> str:
    """The tournament board: every table, running ones first, refreshed every few seconds."""
    title = f"Tournament {tournament}" if tournament else "feastlog tables"
    body = (
        '<p class="quiet" id="updated">loading…</p>\n'
        '<div id="board" data-tournament="' + html.escape(tournament) + '"></div>'
    )
    sub = "live: each table's page follows its game as the moves land"
    return _page(title, sub, body, asset("board.js"))


def render_token_form(game_id: str, title: str, error: str = "") -> str:
    """The form that opens a seat's own page: the token goes in a cookie, never in the URL."""
    quoted = html.escape(game_id)
    problem = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    body = f"""{problem}
<form method="post" action="/games/{quoted}/seat">
 <label for="token">Your seat token</label>
 <input type="password" id="token" name="token" autocomplete="off" required>
 <button type="submit">Open my seat</button>
</form>
<p class="quiet">The token you were handed for this game (seat_…) shows your own hand as well
as the table; the organiser key shows the arbiter's view.  It is kept in a cookie for this
game's pages only.  <a href="/games/{quoted}">Watch as a spectator</a> ·
<a href="/">all tables</a></p>"""
    return _page(f"{title} — {game_id}", "your seat", body)


def render_message(title: str, message: str) -> str:
    """A plain page saying what went wrong (an unknown game, a game not started yet)."""
    body = f'<p class="error">{html.escape(message)}</p>\n<p><a href="/">all tables</a></p>'
    return _page(title, "", body)
