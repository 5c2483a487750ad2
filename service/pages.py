"""Replay pages of folded games: the replay code's steps for a viewer, drawn by replay/page.

The views and facts come from ``service.replay_service.steps`` (``step_for``), refusals
through ``visible_rejections``: this module only gathers them.  The same function serves
``feastlog replay --html`` (offline on a file, an exported record, or a finished game
fetched from a server) and the live pages of ``feastlog serve --http``.
"""

from __future__ import annotations

from collections.abc import Sequence

from replay.engine import Viewer
from replay.page import Live, final_result, page_data, render_page
from service.audit_service import visible_rejections
from service.live import LiveGame
from service.replay_service import steps
from service.store import Rejection


def seen_refusals(rejections: Sequence[Rejection], viewer: Viewer) -> list[Rejection]:
    """The refusals a viewer was shown while the game ran (the page shows each seq as then)."""
    return visible_rejections(rejections, viewer, over=False)


def page_html(
    game: LiveGame,
    viewer: Viewer,
    rejections: Sequence[Rejection] = (),
    live: Live | None = None,
) -> str:
    """The replay page of a folded game, every seq as ``viewer`` saw it."""
    seen = steps(game, 1, game.last_seq, viewer)
    data = page_data(
        game.genesis,
        game.engine,
        viewer,
        seen,
        game.pack,
        seen_refusals(rejections, viewer),
        final_result(game.engine, game.table) if game.over else None,
        live,
    )
    return render_page(data)
