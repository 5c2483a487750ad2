"""``feastlog standings``: a tournament's table, through the file's server or from the file."""

from __future__ import annotations

from typing import Any

import click

from feastlog.cli.client import connected
from feastlog.cli.output import echo_json, echo_lines
from feastlog.cli.target import connection_options, target_of


@click.command("standings")
@click.argument("tournament_id")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def standings_command(tournament_id: str, as_json: bool, **connection: Any) -> None:
    """A tournament's standings: games, wins (shared victories split) and points per player."""
    with connected(target_of(connection)) as client:
        found = client.standings(tournament_id)
    if as_json:
        echo_json(found)
        return
    click.echo(
        f"tournament {tournament_id}: {found['games_finished']} games finished, "
        f"{found['games_running']} still running"
    )
    click.echo(f"{'#':>3}  {'player':<16} {'games':>5} {'wins':>7} {'points':>7}")
    echo_lines(
        f"{place:>3}  {line['name']:<16} {line['games']:>5} {line['wins_exact']:>7} "
        f"{line['points']:>7}"
        for place, line in enumerate(found["standings"], start=1)
    )
