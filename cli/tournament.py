"""``feastlog standings``: a tournament's table, through a server or from a file."""

from __future__ import annotations

import json
from pathlib import Path

import click

from feastlog.cli.audit_commands import offline, rpc, source_options
from feastlog.service.offline import OfflineFile, answer
from feastlog.service.servicers.convert import standing_message
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc


async def _from_file(path: str, tournament_id: str) -> pb.GetStandingsResponse:
    """The same standings the server gives, computed on a file no server holds."""
    found = await OfflineFile(path).standings(tournament_id)
    return pb.GetStandingsResponse(
        standings=[standing_message(line) for line in found.lines],
        games_finished=found.finished,
        games_running=found.running,
    )


@click.command("standings")
@click.argument("tournament_id")
@click.option("--json", "as_json", is_flag=True)
@source_options
def standings_command(
    tournament_id: str, as_json: bool, server: str | None, db_path: str, organiser_key: str | None
) -> None:
    """A tournament's standings: games, wins (shared victories split) and points per player."""
    if server:
        request = pb.GetStandingsRequest(tournament_id=tournament_id)
        reply: pb.GetStandingsResponse = rpc(
            server,
            organiser_key,
            lambda channel, meta: pb_grpc.TournamentServiceStub(channel).GetStandings(
                request, metadata=meta
            ),
        )
    else:
        if not Path(db_path).exists():
            raise click.ClickException(f"no database at {db_path}")
        reply = offline(lambda: answer(_from_file(db_path, tournament_id)))
    if as_json:
        rows = [
            {"name": s.name, "games": s.games, "wins": s.wins_exact, "points": s.points}
            for s in reply.standings
        ]
        click.echo(
            json.dumps(
                {
                    "standings": rows,
                    "games_finished": reply.games_finished,
                    "games_running": reply.games_running,
                },
                indent=1,
            )
        )
        return
    click.echo(
        f"tournament {tournament_id}: {reply.games_finished} games finished, "
        f"{reply.games_running} still running"
    )
    click.echo(f"{'#':>3}  {'player':<16} {'games':>5} {'wins':>7} {'points':>7}")
    for place, line in enumerate(reply.standings, start=1):
        click.echo(
            f"{place:>3}  {line.name:<16} {line.games:>5} {line.wins_exact:>7} {line.points:>7}"
        )
