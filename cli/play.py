"""``feastlog play``: a seat at the table from a terminal, through a running server."""

from __future__ import annotations

import select
import sys
import time
from collections.abc import Callable
from typing import Any

import click
from google.protobuf import json_format

from feastlog.cli.client import Client, connected
from feastlog.cli.errors import CliError, unreachable, usage
from feastlog.cli.narrate import Narrator, Seen, command_words, view_lines
from feastlog.cli.output import echo_lines
from feastlog.cli.target import connection_options, header_safe, target_of
from feastlog.cli.wire import as_dict
from feastlog.replay.text import plain_number
from feastlog.v1 import record_pb2

WAIT_SECONDS = 0.5


class Seat:
    """One seat at a game: its token, and what it has been told so far."""

    def __init__(self, client: Client, game_id: str, token: str) -> None:
        self.client, self.game_id, self.token = client, game_id, token
        self.seen = 0
        self.narrator: Narrator | None = None

    def news(self, upto: int) -> list[str]:
        """What happened since this seat last looked, in plain words."""
        lines: list[str] = []
        if upto <= self.seen:
            return lines
        for event in self.client.watch(self.game_id, self.seen + 1, self.token, to_seq=upto):
            if event.kind == "genesis":
                self.narrator = Narrator(event.genesis)
            if self.narrator is not None:
                facts = [as_dict(f) for f in event.facts]
                lines += self.narrator.row(Seen(event.seq, event.kind, event.actor, facts, {}))
            self.seen = event.seq
        return lines


class NoMoreInput(Exception):
    """Standard input ended: the player has nothing more to say."""


def ask(text: str) -> str:
    """One answer from the player; NoMoreInput at the end of input."""
    try:
        answer: str = click.prompt(text, type=str)
    except click.exceptions.Abort as ended:
        raise NoMoreInput from ended
    return answer


def call_of(text: str) -> record_pb2.Command | None:
    """``call SEQ CLAIM`` (or ``hold SEQ CLAIM``, holding the game) as a call to the
    arbiter; None for any other answer."""
    word, _, rest = text.partition(" ")
    seq_text, _, claim = rest.strip().partition(" ")
    seq = plain_number(seq_text)
    if word not in ("call", "hold") or seq is None or not claim.strip():
        return None
    made = record_pb2.SeatCall(about_seq=seq, claim=claim.strip(), hold=word == "hold")
    return record_pb2.Command(call=made)


def pick(choices: list[record_pb2.Command], answer: Callable[[str], str]) -> record_pb2.Command:
    """Ask the player for a number from the list, a command as JSON, or a call to the
    arbiter (``call SEQ CLAIM``; ``hold SEQ CLAIM`` holds the game until it is answered)."""
    while True:
        text = answer("your move (number, a command as JSON, or call SEQ CLAIM)").strip()
        number = plain_number(text)  # ASCII digits: "٣" is another script's 3, not a choice
        if number is not None and 1 <= number <= len(choices):
            return choices[number - 1]
        called = call_of(text)
        if called is not None:
            return called
        try:
            return json_format.Parse(text, record_pb2.Command())
        except json_format.ParseError:
            click.echo(f"  choose 1 to {len(choices)}, type a command as JSON, or call SEQ CLAIM")


def input_ended() -> bool:
    """Whether piped standard input has ended (a terminal never has)."""
    try:
        if sys.stdin.isatty():
            return False
        ready, _, _ = select.select([sys.stdin], [], [], 0)
        if not ready:
            return False
        reader: Any = sys.stdin.buffer
        return bool(reader.peek(1) == b"")
    except (AttributeError, ValueError, OSError):  # not a real file (tests): never ends
        return False


@click.command("play")
@click.argument("game_id")
@click.option(
    "--token",
    required=True,
    envvar="FEASTLOG_SEAT_TOKEN",
    callback=header_safe,
    help="Your seat token.",
)
@click.option("--once", is_flag=True, help="Make one move (or none if it is not your turn).")
@click.option(
    "--receipts",
    "receipts_file",
    metavar="FILE",
    help="Keep the server's signed receipt of each of your moves in FILE (JSON lines, "
    "appended), with what you sent: feastlog verify --receipts holds the record to them.",
)
@connection_options
def play_command(
    game_id: str, token: str, once: bool, receipts_file: str | None, **connection: Any
) -> None:
    """Play your seat from the terminal: what happened, your hand, your legal moves.

    After a refused move it shows the table again and asks again; when piped input ends,
    it stops (exit 0).
    """
    with connected(target_of(connection)) as client:
        client.receipts_file = receipts_file
        if client.local:
            raise unreachable(
                f"play needs a running server: no server holds {client.where} "
                "(start feastlog serve beside it, or pass --server)"
            )
        try:
            play(Seat(client, game_id, token), once)
        except NoMoreInput:
            click.echo("\nno more input: stopping (your seat keeps its place)")


def play(seat: Seat, once: bool) -> None:
    """The loop: news, the table, the moves, the player's choice; again until the end."""
    waited = False
    while True:
        seq, viewer, view = seat.client.view(seat.game_id, seat.token)
        echo_lines(seat.news(seq))
        if view.get("over"):
            click.echo(f"game over; scores {view.get('scores')}, winners {view.get('winners')}")
            return
        if not viewer.startswith("seat:"):
            raise usage(f"--token is not a seat's token here (it acts as {viewer})")
        me = int(viewer.removeprefix("seat:"))
        if me not in view.get("to_act", []):
            if once:
                click.echo("not your turn")
                return
            if not waited:
                click.echo("waiting for the others…")
                waited = True
            if input_ended():
                raise NoMoreInput
            time.sleep(WAIT_SECONDS)
            continue
        waited = False
        legal_seq, choices, partial = seat.client.legal(seat.game_id, seat.token)
        if legal_seq != seq:
            continue  # someone moved meanwhile: show the table as it is now
        echo_lines(view_lines(view, me))
        if not choices:  # held for the arbiter: a call may still be made
            click.echo("no move is taken now (the game is held for the arbiter's answer)")
        if partial:
            click.echo(f"(the first {len(choices)} legal moves of more; or type one as JSON)")
        for number, command in enumerate(choices, start=1):
            click.echo(f"  {number}. {command_words(command)}")
        try:
            done = seat.client.submit(seat.game_id, seat.token, pick(choices, ask), seq)
        except CliError as refused:
            if refused.exit_code not in (2, 4):
                raise
            click.echo(f"refused: {refused.message}; the table now:")
            continue
        click.echo(f"recorded at seq {done}")
        if not choices:
            time.sleep(WAIT_SECONDS)
        if once:
            return
