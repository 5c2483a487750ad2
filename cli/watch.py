"""``feastlog watch``: follow a game live from a terminal, in plain words, through a server.

A spectator's screen beside a tournament table, or a seat's own: the story so far, then
each row as it is recorded, until the seed is revealed at the game's end.  By default it
asks as a spectator (no credentials, even beside the organiser's key file), so a screen
the players can see shows only what the table shows; ``--token`` watches as that seat,
``--arbiter`` with the organiser's or an arbiter's key.
"""

from __future__ import annotations

import time
from typing import Any

import click

from feastlog.cli.errors import UNREACHABLE, CliError, unreachable, usage
from feastlog.cli.narrate import Narrator, Seen
from feastlog.cli.output import echo_lines, number_option
from feastlog.cli.session import Session, connected
from feastlog.cli.target import connection_options, target_of, token_option
from feastlog.client.data import as_dict
from feastlog.replay.record.rows import GENESIS, SEED_REVEAL
from feastlog.service.app.errors import WaitingForEntropy

WAIT_SECONDS = 1.0  # between looks at a game that waits for seat entropy


@click.command("watch")
@click.argument("game_id")
@token_option("Watch as this seat (its token): what only it is told, too.")
@click.option(
    "--arbiter", is_flag=True, help="Watch with the organiser's or an arbiter's key: everything."
)
@number_option(
    "--from",
    "from_seq",
    default=1,
    help="Tell the story from this seq on (the rows before it are read, not shown).",
)
@connection_options
def watch_command(
    game_id: str, token: str | None, arbiter: bool, from_seq: int, **connection: Any
) -> None:
    """Follow a game live in plain words, as a spectator (or --token, --arbiter), to its end."""
    if token and arbiter:
        raise usage("watch as a seat (--token) or as the arbiter (--arbiter), not both")
    if connection.get("organiser_key") and not arbiter and not token:
        click.echo(
            "watching as a spectator: the organiser key is sent only with --arbiter", err=True
        )
    with connected(target_of(connection)) as client:
        if client.local:
            raise unreachable(
                f"watch needs a running server: no server holds {client.where} "
                "(start feastlog serve beside it, or pass --server; "
                "feastlog replay reads the file)"
            )
        try:
            told = False
            while not follow(client, game_id, token, arbiter, from_seq):
                if not told:  # a game made with --seat-entropy: nothing to tell yet
                    click.echo("waiting for every seat's entropy: the story starts with the deal")
                    told = True
                time.sleep(WAIT_SECONDS)
            click.echo("the game is over")
        except KeyboardInterrupt:
            click.echo("\nstopped watching (the game goes on)")


def follow(client: Session, game_id: str, token: str | None, arbiter: bool, from_seq: int) -> bool:
    """Tell the game's rows as they come, to its end (True); False while it has not begun
    (it waits for seat entropy)."""
    narrator: Narrator | None = None
    try:
        for event in client.watch(game_id, token=token, arbiter=arbiter):
            if event.kind == GENESIS:
                narrator = Narrator(event.genesis)
                if from_seq <= 1:
                    echo_lines(narrator.opening())
            if narrator is not None and event.seq >= from_seq:
                facts = [as_dict(f) for f in event.facts]
                seen = Seen(event.seq, event.kind, event.actor, facts, {})
                echo_lines(f"[{event.seq}] {line}" for line in narrator.row(seen))
            if event.kind == SEED_REVEAL:
                return True
    except CliError as refused:
        if refused.reason == WaitingForEntropy.reason:
            return False
        raise
    raise CliError("the server ended the stream before the game's end", UNREACHABLE)
