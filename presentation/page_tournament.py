"""A tournament's page (``serve --http``: ``/tournaments/{id}``): the current round's tables
with their players by seat, each game's page and state, the clock, and the standings.

Pure HTML from a tournament's state (everything in it is public); the page reloads itself
every few seconds, and each table links to its game's live page.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from feastlog.presentation.page_board import page
from feastlog.replay.tournament.standings import Line, exact
from feastlog.replay.tournament.state import Tournament

REFRESH_SECONDS = 5


def _text(value: object) -> str:
    return html.escape(str(value))


def render_tournament(
    state: Tournament,
    lines: Sequence[Line],
    heads: Mapping[str, tuple[int, bool]],
    clock_started: str,
) -> str:
    """The page: ``heads`` is each published game's (last seq, over); ``clock_started`` the
    time the current round's clock started ('' before)."""
    current = state.current
    parts = []
    if current is None:
        parts.append('<p class="quiet">No round is paired yet.</p>')
    else:
        status = (
            "complete" if current.complete else "published" if current.published else "proposed"
        )
        clock = (
            f"clock: {current.minutes} minutes from {_text(clock_started)}"
            + (", time called" if current.called else "")
            if current.minutes
            else "clock not started"
        )
        parts.append(
            f"<h2>Round {current.number} of {state.format.rounds} ({status}; {clock})</h2>"
        )
        parts.append(
            '<table class="tables"><tr><th>table</th><th>seats</th><th>game</th><th>state</th></tr>'
        )
        for t, players in enumerate(current.tables, start=1):
            seats = ", ".join(f"{s}: {_text(name)}" for s, name in enumerate(players))
            game, shown = "", "proposed"
            if current.published:
                game_id = current.game_ids[t - 1]
                game = f'<a href="/games/{_text(game_id)}">{_text(game_id)}</a>'
                result = current.results[t - 1]
                last_seq, over = heads.get(game_id, (0, False))
                if result is not None:
                    points = ", ".join(str(p) for p in result.points)
                    shown = f"ended{' (closed at time)' if result.closed else ''}: points {points}"
                else:
                    shown = f"{'over' if over else 'running'}, seq {last_seq}"
                minutes = current.minutes_for(t)
                if current.minutes and minutes != current.minutes:
                    shown += f"; {minutes} minutes"
            parts.append(
                f"<tr><td>{t}</td><td>{seats}</td><td>{game}</td><td>{_text(shown)}</td></tr>"
            )
        parts.append("</table>")
        if current.byes:
            parts.append(f"<p>Byes: {_text(', '.join(current.byes))}</p>")
    parts.append("<h2>Standings</h2>")
    parts.append(
        '<table class="standings"><tr><th>#</th><th>player</th><th>points</th>'
        + "".join(f"<th>{_text(t)}</th>" for t in state.format.tiebreaks)
        + "<th>played</th></tr>"
    )
    for place, line in enumerate(lines, start=1):
        marks = " (DQ)" if line.disqualified else " (dropped)" if line.dropped else ""
        tiebreaks = "".join(
            f"<td>{_text(exact(line.tiebreak(t)))}</td>" for t in state.format.tiebreaks
        )
        parts.append(
            f"<tr><td>{place}</td><td>{_text(line.name)}{marks}</td>"
            f"<td>{_text(exact(line.match_points))}</td>{tiebreaks}<td>{line.played}</td></tr>"
        )
    parts.append("</table>")
    title = f"Tournament {state.tournament_id}"
    running = "ended" if state.ended else "running"
    sub = f"{state.format.game_kind}; {running}; refreshed every {REFRESH_SECONDS} s"
    return page(title, sub, "\n".join(parts), refresh=REFRESH_SECONDS)
