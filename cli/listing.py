"""``feastlog games``: the game list, newest first, through the file's server or from the file.

An organiser finding a table's game id, an arbiter the game a dispute is about: the same
list as ListGames (filtered by kind and tournament, paged underneath), one game a line;
given a game id, that game's line alone (GetGame).
"""

from __future__ import annotations

from typing import Any

import click

from feastlog.cli.game_commands import GameKind
from feastlog.cli.output import echo_json, echo_lines, number_option
from feastlog.cli.session import connected
from feastlog.cli.target import connection_options, target_of
from feastlog.client import calls, data


def state_of(game: dict[str, Any]) -> str:
    """Where a game stands, in a word."""
    if game["waiting_for_entropy"]:
        return "waiting"
    return "over" if game["over"] else "running"


def game_line(game: dict[str, Any]) -> str:
    """One game: id, kind, state, last seq, when it was made, tournament, players."""
    tournament = game["tournament_id"] or "-"
    return (
        f"{game['game_id']:<20} {game['game_kind']:<13} {state_of(game):<8} "
        f"{game['last_seq']:>5}  {game['created_at'][:19]:<19}  {tournament:<16} "
        + ", ".join(game["players"])
    )


@click.command("games")
@click.argument("game_id", required=False, default="")
@click.option("--kind", type=GameKind(), help="Only games of this kind.")
@click.option("--tournament", default="", help="Only the games of this tournament.")
@number_option(
    "--limit", default=50, low=0, help="At most this many games, newest first (0: every game)."
)
@click.option("--json", "as_json", is_flag=True)
@connection_options
def games_command(
    game_id: str, kind: str | None, tournament: str, limit: int, as_json: bool, **connection: Any
) -> None:
    """The games, newest first (--kind, --tournament): id, state, last seq, players.

    Each line: the game id, its kind, running, over or waiting (for seat entropy), its
    last seq, when it was created (UTC), its tournament and its players.  With GAME_ID,
    that game's line alone.
    """
    if game_id and (kind or tournament):
        raise click.UsageError("GAME_ID names one game: --kind and --tournament filter the list")
    with connected(target_of(connection)) as client:
        if game_id:
            found = [data.game(client.rpc.run(calls.get_game(game_id)))]
        else:
            found = [data.game(g) for g in client.rpc.games(kind or "", tournament, limit)]
    if as_json:
        echo_json(found)
        return
    if not found:
        click.echo(
            "no games"
            + (" of that kind" if kind else "")
            + (" in that tournament" if tournament else "")
        )
        return
    click.echo(
        f"{'game':<20} {'kind':<13} {'state':<8} {'seq':>5}  {'created (UTC)':<19}  "
        f"{'tournament':<16} players"
    )
    echo_lines(game_line(g) for g in found)
    if limit and len(found) == limit and not game_id:
        click.echo(f"(the newest {limit}: --limit 0 lists every game)")
