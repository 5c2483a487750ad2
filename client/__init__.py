"""feastlog's Python client library: ``Client`` (blocking) and ``AsyncClient`` (asyncio).

    from feastlog.client import Client, FeastlogError

    with Client("127.0.0.1:50051", organiser_key=KEY) as organiser:
        game = organiser.create_game("bon-appetit", ["Ann", "Brian"])
    with Client("127.0.0.1:50051", token=game.tokens[0]) as ann:
        view = ann.view(game.game_id)          # a View: seq, viewer, table, typed
        legal = ann.legal(game.game_id)        # a Legal: seq, commands, partial
        ann.submit(game.game_id, legal.commands[0], expected_seq=legal.seq)
        turn = ann.my_turn(game.game_id)       # a Turn (legal, view) once Ann may act

The server is found as the CLI finds it (``server``, else the one announced beside
``db``; TLS with ``ca``); calls that could not reach it are retried, commands with their
command_id; every failure is one ``FeastlogError`` (status, reason, rule_id, field,
message).  Any other RPC: ``Client.run(calls.…)`` (``feastlog.client.calls``).
"""

from feastlog.client.aio import AsyncClient
from feastlog.client.calls import Created, Legal, Recorded, Turn, View
from feastlog.client.errors import FeastlogError
from feastlog.client.locate import Where, locate
from feastlog.client.sync import SPECTATOR, Client

__all__ = [
    "SPECTATOR",
    "AsyncClient",
    "Client",
    "Created",
    "FeastlogError",
    "Legal",
    "Recorded",
    "Turn",
    "View",
    "Where",
    "locate",
]
