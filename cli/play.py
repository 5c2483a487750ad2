"""``feastlog play``: a seat at the table from a terminal, through a running server."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import click
import grpc
from google.protobuf import json_format

from feastlog.cli.client import as_dict, bearer, open_blocking_channel
from feastlog.replay import games
from feastlog.replay.narrative import row_lines
from feastlog.replay.record import Row
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2


def command_text(command: record_pb2.Command) -> str:
    """A command as one line of JSON (the form ``whatif`` and clients use too)."""
    return json.dumps(json_format.MessageToDict(command, preserving_proto_field_name=True))


class Seat:
    """One seat's connection: its token, the game, and what it has been told so far."""

    def __init__(self, address: str, game_id: str, token: str) -> None:
        self.stub = pb_grpc.GameServiceStub(open_blocking_channel(address))
        self.game_id, self.meta = game_id, bearer(token)
        self.seen = 0
        self.engine: Any = None
        self.names: list[str] = []

    def view(self) -> tuple[int, dict[str, Any], str]:
        """The table as this seat sees it now: seq, view, and who it is."""
        reply = self.stub.GetView(pb.GetViewRequest(game_id=self.game_id), metadata=self.meta)
        return reply.seq, as_dict(reply.view), reply.viewer

    def news(self, upto: int) -> list[str]:
        """What happened since this seat last looked, in plain words."""
        lines: list[str] = []
        request = pb.WatchGameRequest(game_id=self.game_id, from_seq=self.seen + 1)
        stream = self.stub.WatchGame(request, metadata=self.meta)
        for reply in stream:
            event = reply.event
            if event.kind == "genesis":
                self.engine = games.engine(event.genesis.game_kind)
                self.names = [s.name for s in event.genesis.seats]
            row = Row(
                self.game_id,
                event.seq,
                event.kind,
                event.actor,
                "",
                b"",
                event.recorded_at,
                "",
                event.hash,
                event.state_hash,
            )
            lines += row_lines(self.engine, row, [as_dict(f) for f in event.facts], self.names)
            self.seen = event.seq
            if event.seq >= upto:
                stream.cancel()
                break
        return lines

    def choices(self) -> list[record_pb2.Command]:
        """The commands this seat may send now."""
        reply = self.stub.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=self.game_id), metadata=self.meta
        )
        if reply.partial:
            click.echo(
                f"(the first {len(reply.commands)} legal moves of more; or type one as JSON)"
            )
        return list(reply.commands)

    def send(self, command: record_pb2.Command, seq: int) -> pb.SubmitCommandResponse:
        """Submit a command, guarded by the seq it was chosen at."""
        request = pb.SubmitCommandRequest(
            game_id=self.game_id, command_id=uuid.uuid4().hex, command=command, expected_seq=seq
        )
        reply: pb.SubmitCommandResponse = self.stub.SubmitCommand(request, metadata=self.meta)
        return reply


def describe(view: dict[str, Any], me: int) -> list[str]:
    """The table and this seat's own place at it, as two lines of JSON."""
    places: list[dict[str, Any]] = next(
        (
            v
            for v in view.values()
            if isinstance(v, list)
            and v
            and isinstance(v[0], dict)
            and "seat" in v[0]
            and "name" in v[0]
        ),
        [],
    )
    mine: dict[str, Any] = next((p for p in places if p.get("seat") == me), {})
    table = {k: v for k, v in view.items() if v is not places and k not in ("pack", "options")}
    return [
        f"table: {json.dumps(table, sort_keys=True)}",
        f"you: {json.dumps(mine, sort_keys=True)}",
    ]


def pick(choices: list[record_pb2.Command], ask: Callable[[str], str]) -> record_pb2.Command:
    """Ask the player for a number from the list, or a command as JSON."""
    while True:
        answer = ask("your move (number, or a command as JSON)").strip()
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        try:
            return json_format.Parse(answer, record_pb2.Command())
        except json_format.ParseError:
            click.echo(f"  choose 1 to {len(choices)}, or type a command as JSON")


@click.command("play")
@click.argument("game_id")
@click.option("--token", required=True, envvar="FEASTLOG_SEAT_TOKEN", help="Your seat token.")
@click.option("--server", default="127.0.0.1:50051", show_default=True)
@click.option("--once", is_flag=True, help="Make one move (or none if it is not your turn).")
def play_command(game_id: str, token: str, server: str, once: bool) -> None:
    """Play your seat from the terminal: what happened, your hand, your legal moves."""
    seat = Seat(server, game_id, token)
    waited = False
    while True:
        seq, view, viewer = seat.view()
        for line in seat.news(seq):
            click.echo(line)
        if view.get("over"):
            click.echo(f"game over; scores {view.get('scores')}, winners {view.get('winners')}")
            return
        me = int(viewer.removeprefix("seat:"))
        if me not in view.get("to_act", []):
            if once:
                click.echo("not your turn")
                return
            if not waited:
                click.echo("waiting for the others…")
                waited = True
            time.sleep(0.5)
            continue
        waited = False
        for line in describe(view, me):
            click.echo(line)
        choices = seat.choices()
        for number, command in enumerate(choices, start=1):
            click.echo(f"  {number}. {command_text(command)}")
        try:
            done = seat.send(pick(choices, lambda text: click.prompt(text, type=str)), seq)
        except grpc.RpcError as refused:
            click.echo(f"refused: {refused.details()}")
            continue
        click.echo(f"recorded at seq {done.seq}")
        if once:
            return
