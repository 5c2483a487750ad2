"""``feastlog standings``: a tournament's table, through the file's server or from the file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from google.protobuf.message import Message

from feastlog.cli.output import echo_json, echo_lines, repeated_option
from feastlog.cli.session import connected
from feastlog.cli.target import connection_options, target_of
from feastlog.client import data
from feastlog.client.sync import Client
from feastlog.replay.tournament.spec import EXTENSION_MINUTES, ROUND_MINUTES


@click.command("standings")
@click.argument("tournament_id")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def standings_command(tournament_id: str, as_json: bool, **connection: Any) -> None:
    """A tournament's standings: games, wins (shared victories split) and points per player."""
    with connected(target_of(connection)) as client:
        found = data.standings(client.rpc.standings(tournament_id))
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


# A tournament run on the record (docs/tournament.md): every command goes to the server
# holding the file (or one started here on it for the command), as the organiser or a
# named arbiter (--organiser-key).


@click.group("tournament")
def tournament_group() -> None:
    """Run a tournament on the record: create, register, drop, pair, publish, start,
    extend, call, penalty, standings, export, watch."""


def _writes(
    connection: dict[str, Any], call: Callable[[Client], Message], creates: bool = False
) -> dict[str, Any]:
    """One tournament call through the client library; its reply as plain data."""
    with connected(target_of(connection), writes=True, creates=creates) as client:
        return data.message(call(client.rpc))


# what every change of the proposed round, the clock or a player's standing records
reason_option = click.option("--reason", required=True, help="Why: recorded in the stream.")


def _format_options(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--format")
        out[key] = value
    return out


def _said(found: dict[str, Any], as_json: bool, line: str) -> None:
    if as_json:
        echo_json(found)
    else:
        echo_lines([line])


@tournament_group.command("create")
@repeated_option(
    "--format",
    "options",
    metavar="KEY=VALUE",
    help="A format option (docs/tournament.md); repeatable.",
)
@repeated_option("--player", "players", help="A player to register; repeatable.")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def create_command(
    options: tuple[str, ...], players: tuple[str, ...], as_json: bool, **connection: Any
) -> None:
    """Create a tournament: its format fixed in its genesis, its seed committed."""
    found = _writes(
        connection,
        lambda c: c.create_tournament(_format_options(options), players),
        creates=True,
    )
    state = found["tournament"]
    _said(
        found,
        as_json,
        f"tournament {state['tournament_id']}: {len(state['players'])} players, "
        f"{state['format']['rounds']} rounds of {state['format']['game_kind']}",
    )


@tournament_group.command("register")
@click.argument("tournament_id")
@click.argument("name")
@connection_options
def register_command(tournament_id: str, name: str, **connection: Any) -> None:
    """Register a player (before round 1, or between rounds with late entry)."""
    found = _writes(connection, lambda c: c.register_player(tournament_id, name))
    players = found["tournament"]["players"]
    dropped = sum(1 for p in players if p.get("dropped"))
    also = f" ({dropped} dropped)" if dropped else ""
    echo_lines([f"{name} registered: {len(players) - dropped} players{also}"])


@tournament_group.command("drop")
@click.argument("tournament_id")
@click.argument("name")
@reason_option
@connection_options
def drop_command(tournament_id: str, name: str, reason: str, **connection: Any) -> None:
    """Drop a player: not paired from the next round on."""
    _writes(connection, lambda c: c.drop_player(tournament_id, name, reason))
    echo_lines([f"{name} dropped"])


def _round_lines(state: dict[str, Any]) -> list[str]:
    if not state["rounds"]:
        return ["no round paired yet"]
    current = state["rounds"][-1]
    status = (
        "complete" if current["complete"] else "published" if current["published"] else "proposed"
    )
    lines = [
        f"round {current['round']} ({status}; {current['method']}"
        + (
            f", {current['solver']}, objective {current['objective']} {current['status']}"
            if current["solver"]
            else ""
        )
        + ")"
    ]
    for table in current["tables"]:
        result = f"  points {table['points']} places {table['places']}" if table["finished"] else ""
        game = f" {table['game_id']}" if table["game_id"] else ""
        lines.append(f"  table {table['table']}{game}: {', '.join(table['players'])}{result}")
    if current["byes"]:
        lines.append(f"  byes: {', '.join(current['byes'])}")
    return lines


@tournament_group.command("pair")
@click.argument("tournament_id")
@repeated_option(
    "--table", "tables", metavar="A,B,C", help="Fixed pods only: a table's players in seat order."
)
@repeated_option("--bye", "byes", help="Fixed pods only: a player with a bye.")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def pair_command(
    tournament_id: str,
    tables: tuple[str, ...],
    byes: tuple[str, ...],
    as_json: bool,
    **connection: Any,
) -> None:
    """Propose the next round (Swiss: derived from the seed, standings and history)."""
    pods = [[p.strip() for p in t.split(",")] for t in tables]
    found = _writes(connection, lambda c: c.pair_round(tournament_id, pods, byes))
    if as_json:
        echo_json(found)
        return
    echo_lines(_round_lines(found["tournament"]))


@tournament_group.command("swap")
@click.argument("tournament_id")
@click.argument("first")
@click.argument("second")
@reason_option
@connection_options
def swap_command(
    tournament_id: str, first: str, second: str, reason: str, **connection: Any
) -> None:
    """Exchange two players of the proposed round."""
    found = _writes(connection, lambda c: c.swap_players(tournament_id, first, second, reason))
    echo_lines(_round_lines(found["tournament"]))


@tournament_group.command("fix")
@click.argument("tournament_id")
@click.argument("name")
@click.argument("table", type=click.IntRange(1, 10_000))
@click.argument("seat", type=click.IntRange(0, 16))
@reason_option
@connection_options
def fix_command(
    tournament_id: str, name: str, table: int, seat: int, reason: str, **connection: Any
) -> None:
    """Put a player at a table (from 1) and seat (from 0) of the proposed round."""
    found = _writes(connection, lambda c: c.fix_table(tournament_id, name, table, seat, reason))
    echo_lines(_round_lines(found["tournament"]))


@tournament_group.command("publish")
@click.argument("tournament_id")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def publish_command(tournament_id: str, as_json: bool, **connection: Any) -> None:
    """Publish the proposed round: every table's game in one commit, the seat tokens."""
    found = _writes(connection, lambda c: c.publish_round(tournament_id))
    if as_json:
        echo_json(found)
        return
    echo_lines(_round_lines(found["tournament"]))
    if found.get("replayed"):
        echo_lines(["  (published already: the same seat tokens as its first answer)"])
    echo_lines(
        f"  table {s['table']} seat {s['seat']} {s['name']}: {s['seat_token']}"
        for s in found["seats"]
    )


@tournament_group.command("start")
@click.argument("tournament_id")
@click.option(
    "--minutes",
    type=click.IntRange(0, ROUND_MINUTES[1]),
    default=0,
    help="Default: the format's round_minutes.",
)
@connection_options
def start_command(tournament_id: str, minutes: int, **connection: Any) -> None:
    """Start the round clock."""
    found = _writes(connection, lambda c: c.start_clock(tournament_id, minutes))
    current = found["tournament"]["rounds"][-1]
    echo_lines([f"round {current['round']}: clock started, {current['minutes']} minutes"])


@tournament_group.command("extend")
@click.argument("tournament_id")
@click.option("--minutes", type=click.IntRange(*EXTENSION_MINUTES), required=True)
@click.option(
    "--table", type=click.IntRange(0, 10_000), default=0, help="One table (default 0: every table)."
)
@reason_option
@connection_options
def extend_command(
    tournament_id: str, minutes: int, table: int, reason: str, **connection: Any
) -> None:
    """Give one table, or every table, more time."""
    _writes(connection, lambda c: c.extend_clock(tournament_id, minutes, reason, table))
    echo_lines([f"{'table ' + str(table) if table else 'every table'}: {minutes} more minutes"])


@tournament_group.command("call")
@click.argument("tournament_id")
@connection_options
def call_command(tournament_id: str, **connection: Any) -> None:
    """Call time: unfinished tables are ruled on as the format's at_time says."""
    found = _writes(connection, lambda c: c.call_time(tournament_id))
    echo_lines(_round_lines(found["tournament"]))


@tournament_group.command("penalty")
@click.argument("tournament_id")
@click.argument("name")
@click.argument("penalty", type=click.Choice(["warning", "game_loss", "disqualification"]))
@click.option(
    "--round", "round_", type=click.IntRange(0, 100), default=0, help="Default: the current round."
)
@reason_option
@connection_options
def penalty_command(
    tournament_id: str, name: str, penalty: str, round_: int, reason: str, **connection: Any
) -> None:
    """Record a penalty against a player (a named arbiter's, or the organiser's)."""
    _writes(connection, lambda c: c.add_penalty(tournament_id, name, penalty, reason, round_))
    echo_lines([f"{name}: {penalty.replace('_', ' ')} recorded"])


@tournament_group.command("end")
@click.argument("tournament_id")
@connection_options
def end_command(tournament_id: str, **connection: Any) -> None:
    """End the tournament: its seed is revealed, so anyone can re-derive every pairing."""
    _writes(connection, lambda c: c.end_tournament(tournament_id))
    echo_lines([f"tournament {tournament_id} ended; its seed is revealed"])


def standings_lines(state: dict[str, Any]) -> list[str]:
    """The standings table of a tournament's state."""
    tiebreaks = state["format"]["tiebreaks"]
    head = f"{'#':>3}  {'player':<16} {'points':>7} {'game pts':>8} {'opp avg':>8} {'wins':>5}"
    lines = [f"{head} {'played':>6}  (tiebreaks: {tiebreaks})"]
    for s in state["standings"]:
        mark = " DQ" if s["disqualified"] else " dropped" if s["dropped"] else ""
        lines.append(
            f"{s['place']:>3}  {s['name']:<16} {s['match_points']:>7} {s['game_points']:>8} "
            f"{s['opponents_average']:>8} {s['wins']:>5} {s['played']:>6}{mark}"
        )
    return lines


@tournament_group.command("standings")
@click.argument("tournament_id")
@click.option(
    "--at",
    "at_seq",
    type=click.IntRange(0),
    default=0,
    help="As at this seq of the stream (default: now).",
)
@click.option("--json", "as_json", is_flag=True)
@connection_options
def tournament_standings_command(
    tournament_id: str, at_seq: int, as_json: bool, **connection: Any
) -> None:
    """The standings with every tiebreak, at any seq of the tournament."""
    found = _writes(connection, lambda c: c.get_tournament(tournament_id, at_seq))
    state = found["tournament"]
    if as_json:
        echo_json(state)
        return
    echo_lines([f"tournament {tournament_id} at seq {state['seq']} of {state['last_seq']}"])
    echo_lines(standings_lines(state))
    echo_lines(_round_lines(state))


@tournament_group.command("export")
@click.argument("tournament_id")
@click.option("-o", "--output", required=True, help="The file to write.")
@connection_options
def export_command(tournament_id: str, output: str, **connection: Any) -> None:
    """The tournament's record with every ended game's, for `feastlog verify`."""
    found = _writes(connection, lambda c: c.export_tournament(tournament_id))
    with open(output, "w", encoding="utf-8") as out:
        out.write(found["document"])
    echo_lines([f"wrote {output}"])


@tournament_group.command("watch")
@click.argument("tournament_id")
@click.option("--from", "from_seq", type=click.IntRange(1), default=1)
@connection_options
def watch_command(tournament_id: str, from_seq: int, **connection: Any) -> None:
    """The tournament's rows as they are recorded (publishing, results, clock, penalties)."""
    with connected(target_of(connection), writes=True, creates=False) as client:
        for reply in client.rpc.watch_tournament(tournament_id, from_seq):
            row = data.message(reply, defaults=False)
            action, actor = row.get("action", ""), row.get("actor", "")
            echo_lines(
                [f"{row['seq']:>5} {row['kind']:<11} {action:<12} {actor} {row['recorded_at']}"]
            )
