"""``feastlog call``, ``calls`` and ``case``: at the table, through a running server.

A seat calls the arbiter about a row (``call``, with its seat token; ``--hold`` stops
every seat's moves until the arbiter answers); the arbiters read their queue (``calls``,
``--watch`` to follow it); anyone writes the case file of a call as they may see it
(``case``: JSON, or ``--html`` for people), which ``feastlog verify`` checks offline.
Rulings answer calls: ``feastlog rule GAME note --call ID --verdict upheld|denied``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from feastlog.cli.errors import cannot_write, usage
from feastlog.cli.output import Bounded, echo_json
from feastlog.cli.session import command_from_json, connected
from feastlog.cli.target import connection_options, target_of, token_option
from feastlog.client import data
from feastlog.presentation.case import page

SEQ = Bounded(1)


def call_line(found: dict[str, Any]) -> str:
    """A call in one line: game, id, seat, what it is about, its state."""
    state = found["state"]
    if state != "open":
        state += f" at seq {found['answered_seq']} by {found['ruled_by']}: {found['reason']}"
    hold = " (holding the game)" if found["hold"] and found["state"] == "open" else ""
    return (
        f"{found['game_id']} call {found['call']}: seat {found['seat']} about seq "
        f"{found['about_seq']}{hold}: {found['claim']} — {state}"
    )


@click.command("call")
@click.argument("game_id")
@token_option("Your seat token.", seat=True)
@click.option("--seq", "about", type=SEQ, required=True, help="The row the call is about.")
@click.option("--claim", required=True, help="What you claim, in words.")
@click.option("--hold", is_flag=True, help="Hold the game: no moves until the arbiter answers.")
@click.option("--alternative", default="", help="The command that should have been (JSON).")
@connection_options
def call_command(
    game_id: str,
    token: str,
    about: int,
    claim: str,
    hold: bool,
    alternative: str,
    **connection: Any,
) -> None:
    """Call the arbiter about row SEQ of GAME_ID, as your seat; recorded as a row."""
    with connected(target_of(connection), creates=False) as client:
        if client.local:
            raise usage(f"a call goes to a running server: no server holds {client.where}")
        command = None
        if alternative:
            kind = client.replay(game_id, 1, None).genesis.game_kind
            command = command_from_json(alternative, kind)
        call = client.rpc.call_arbiter(client.game(game_id), about, claim, hold, command, token)
    click.echo(f"call {call} recorded{' (the game is held)' if hold else ''}")


@click.command("calls")
@click.argument("game_id", required=False, default="")
@click.option("--tournament", default="", help="Only this tournament's games.")
@click.option("--open", "open_only", is_flag=True, help="Only the calls still open.")
@click.option(
    "--watch", is_flag=True, help="Follow the queue: each call as it is made or answered."
)
@token_option("A seat token (its own game's calls).")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def calls_command(
    game_id: str,
    tournament: str,
    open_only: bool,
    watch: bool,
    token: str | None,
    as_json: bool,
    **connection: Any,
) -> None:
    """The calls to the arbiter: of GAME_ID, or the queue of every running game (arbiters)."""
    with connected(target_of(connection), creates=False) as client:
        if watch:
            for each in client.rpc.watch_calls(tournament):
                click.echo(call_line(data.message(each)))
            return
        listed = client.rpc.calls(game_id, tournament, open_only, token or None)
        found_calls = [data.message(c) for c in listed]
    if as_json:
        echo_json(found_calls)
        return
    for found in found_calls:
        click.echo(call_line(found))
    click.echo(f"{len(found_calls)} call{'' if len(found_calls) == 1 else 's'}")


@click.command("case")
@click.argument("game_id")
@click.argument("call", type=SEQ)
@click.option(
    "-o", "--output", default="", help="Write it to this file (default: standard output)."
)
@click.option("--html", is_flag=True, help="The page for people instead of the JSON bundle.")
@token_option("A seat token: the file as that seat may see it.")
@connection_options
def case_command(
    game_id: str, call: int, output: str, html: bool, token: str | None, **connection: Any
) -> None:
    """The case file of CALL in GAME_ID: one self-verifying bundle (feastlog verify checks it)."""
    with connected(target_of(connection), creates=False) as client:
        text = client.rpc.case_file(client.game(game_id), call, token or None)
    shown = page(text) if html else text
    if not output:
        click.echo(shown)
        return
    try:
        Path(output).write_text(shown + "\n", encoding="utf-8")
    except OSError as failed:
        raise cannot_write(output, failed) from None
    click.echo(f"case file of call {call} written to {output}")


@click.command("clocks")
@click.argument("game_id")
@click.option("--json", "as_json", is_flag=True)
@connection_options
def clocks_command(game_id: str, as_json: bool, **connection: Any) -> None:
    """A clocked game's clocks now: each seat's time left and used, which run."""
    with connected(target_of(connection), creates=False) as client:
        found = data.clocks(client.rpc.clocks(client.game(game_id)))
    if as_json:
        echo_json(found)
        return
    if found is None:
        click.echo(f"{game_id} has no clocks")
        return
    paused = " (paused)" if found["paused"] else ""
    click.echo(f"{found['mode']} clock, time-out: {found['on_timeout']}{paused}")
    for seat in found["seats"]:
        state = "runs" if seat["running"] else "timed out" if seat["timed_out"] else "stopped"
        click.echo(
            f"seat {seat['seat']}: {seat['remaining_ms'] / 1000:.1f} s left, "
            f"{seat['used_ms'] / 1000:.1f} s used, {state}"
        )
