"""A seat's own live page, and the page that takes a seat's one-time link.

Pure HTML strings.  The seat's page is the replay page (``presentation/page.py``) with
its style and scripts loaded from the server (``/assets/…``) instead of inlined, so that
its Content-Security-Policy allows the server's own files and nothing inline; it adds
the move panel's script and style (``presentation/page/seat.js``, ``seat.css``) and the
page's CSRF token, which every request that changes something must carry back.
"""

from __future__ import annotations

import html
import re

import segno

from feastlog.presentation.page import asset

# What a seat's page may load: its own server's files, nothing inline, nothing else.  The
# page carries it in a meta tag too (for a copy saved from the browser), but for
# frame-ancestors, which browsers take from the header alone (and refuse in a meta tag
# with a console error): the server sends the whole of it as a header.
META_SEAT_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'"
)
SEAT_POLICY = META_SEAT_POLICY + "; frame-ancestors 'none'"
# The files a seat's page loads from the server (``/assets/NAME``), with their types.
ASSETS = {
    "page.css": "text/css",
    "seat.css": "text/css",
    "page.js": "text/javascript",
    "seat.js": "text/javascript",
}
_META_POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">')


def _swap(text: str, old: str, new: str) -> str:
    """``text`` with its one ``old`` replaced (a page drawn otherwise is a bug here)."""
    if text.count(old) != 1:
        raise ValueError(f"the replay page no longer holds exactly one {old[:40]!r}")
    return text.replace(old, new)


def linked_seat_page(page: str, csrf: str) -> str:
    """A live replay page as a seat's page: assets linked, the move panel, the CSRF token."""
    policy = html.escape(META_SEAT_POLICY)
    head = (
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f'<meta name="feastlog-csrf" content="{html.escape(csrf)}">'
    )
    page, found = _META_POLICY.subn(lambda _: head, page, count=1)
    if found != 1:
        raise ValueError("the replay page no longer holds its Content-Security-Policy")
    page = _swap(
        page,
        f"<style>{asset('page.css')}</style>",
        '<link rel="stylesheet" href="/assets/page.css">\n'
        '<link rel="stylesheet" href="/assets/seat.css">',
    )
    return _swap(
        page,
        f"<script>{asset('page.js')}</script>",
        '<script src="/assets/page.js"></script>\n<script src="/assets/seat.js"></script>',
    )


_LINK_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>{title}</title>
<link rel="stylesheet" href="/assets/page.css">
<link rel="stylesheet" href="/assets/seat.css">
</head>
<body>
<header class="top"><div class="heading"><h1>{title}</h1></div></header>
<main class="board seat-link">
{body}
</main>
</body>
</html>
"""


def render_link_page(game_id: str, title: str, seat_name: str, seat: int, code: str) -> str:
    """The page a seat's link opens: one button takes the seat (a link preview takes nothing)."""
    quoted = html.escape(game_id)
    body = f"""<p>This link opens <strong>{html.escape(seat_name)}</strong>'s seat (seat {seat})
of this game, in this browser only. It works once: after that this browser keeps the seat.</p>
<form method="post" action="/games/{quoted}/seat/link">
 <input type="hidden" name="code" value="{html.escape(code)}">
 <button type="submit" class="take">Take my seat as {html.escape(seat_name)}</button>
</form>
<p class="quiet"><a href="/games/{quoted}">Watch as a spectator instead</a></p>"""
    return _LINK_PAGE.format(title=html.escape(f"{title} — {game_id}"), body=body)


def render_link_refused(game_id: str, message: str) -> str:
    """The page of a link that can no longer be used."""
    quoted = html.escape(game_id)
    body = f"""<p class="error" role="alert">{html.escape(message)}</p>
<p class="quiet"><a href="/games/{quoted}/seat">Open the seat with its token</a> ·
<a href="/games/{quoted}">watch as a spectator</a></p>"""
    return _LINK_PAGE.format(title="feastlog — seat link", body=body)


def qr_data_uri(url: str) -> str:
    """A QR code of ``url`` as an SVG data URI (an image the page's CSP allows)."""
    data: str = segno.make(url, error="m").svg_data_uri(scale=4)
    return data
