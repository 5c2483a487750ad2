"""Replay pages of folded games: each seq as a viewer saw it, drawn by replay/page.

The views and facts come from the visibility policy (``replay.visibility.seen``), and so
do the refusals the viewer was shown (``refusals_for``): this module only gathers them.
It serves ``Reads.page`` (the live pages of ``feastlog serve --http``, and ``feastlog
replay --html`` offline on a file or an exported record).
"""

from __future__ import annotations

from collections.abc import Sequence

from feastlog.presentation.page import Live, Refusal, final_result, page_data, render_page
from feastlog.replay.engine import Viewer
from feastlog.replay.visibility import refusals_for, seen
from feastlog.service.app.live import LiveGame


def page_html(
    game: LiveGame,
    viewer: Viewer,
    rejections: Sequence[Refusal] = (),
    live: Live | None = None,
    released: bool = True,
) -> str:
    """The replay page of a folded game, every seq as ``viewer`` saw it then
    (``released``: False while the game is held back, ``replay.visibility.Release``)."""
    steps = [seen(game, seq, viewer, released) for seq in range(1, game.last_seq + 1)]
    data = page_data(
        game.genesis,
        game.engine,
        viewer,
        steps,
        game.pack,
        # the page shows each seq as then: the refusals the viewer was shown while it ran
        refusals_for(viewer, rejections, over=False),
        final_result(game.engine, game.table) if game.over else None,
        live,
    )
    return render_page(data)
