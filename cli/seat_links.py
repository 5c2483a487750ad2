"""One-time seat links, printed for the organiser: a URL per seat, and its QR code.

``seat_links`` is what ``feastlog new --links`` prints and what a tournament's publish
can call for each of its games: it asks the server for a link per seat
(``SeatLinkService.CreateSeatLink``) and returns them; ``link_lines`` says them, with a
QR code drawn in the terminal when asked (segno).  A code is shown once and works once.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import segno

from feastlog.cli.errors import USAGE, CliError
from feastlog.cli.session import Session
from feastlog.client import data


def seat_links(
    client: Session, game_id: str, seats: Sequence[int], base: str = ""
) -> list[dict[str, Any]]:
    """A one-time link per seat: ``{seat, code, path, url}``; ``base`` (the pages' public
    address) replaces the one the server knows, which it must then have."""
    links = []
    for seat in seats:
        link = data.seat_link(client.rpc.create_seat_link(game_id, seat))
        if base:
            link["url"] = base.rstrip("/") + link["path"]
        if not link["url"]:
            raise CliError(
                "the server serves no web pages to link to: start it with --http, "
                "or give the pages' address with --link-base",
                USAGE,
            )
        links.append(link)
    return links


def qr_text(url: str) -> str:
    """A QR code of ``url`` drawn with block characters, for a terminal."""
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True)
    return out.getvalue()


def link_lines(
    links: Sequence[dict[str, Any]], names: Sequence[str], qr: bool = False
) -> list[str]:
    """Each seat's link in words (and its QR code, with ``qr``)."""
    lines = []
    for link in links:
        lines.append(f"seat {link['seat']} {names[link['seat']]} link: {link['url']}")
        if qr:
            lines.append(qr_text(link["url"]).rstrip("\n"))
    return lines
