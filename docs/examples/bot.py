"""A bot that plays every seat of a new game of any kind to its end, through a server.

python docs/examples/bot.py 127.0.0.1:50051 ORGANISER_KEY picky-eaters
"""

import random
import sys

from feastlog.client import Client, FeastlogError


def play(server: str, key: str, kind: str, seed: int = 1) -> list[int]:
    """Create a game, play random legal moves for every seat, return the final scores."""
    rng = random.Random(seed)
    with Client(server, organiser_key=key) as organiser:
        game = organiser.create_game(kind, ["Ann", "Brian"])
    seats = [Client(server, token=token) for token in game.tokens]
    try:
        while not (view := seats[0].view(game.game_id)).over:
            for seat in view.to_act:
                legal = seats[seat].legal(game.game_id)
                try:
                    move = rng.choice(legal.commands)
                    seats[seat].submit(game.game_id, move, expected_seq=legal.seq)
                except FeastlogError as refused:  # another seat moved first: look again
                    if refused.reason != "STALE_EXPECTED_SEQ":
                        raise
        return list(view.table["scores"])
    finally:
        for seat_client in seats:
            seat_client.close()


if __name__ == "__main__":
    print(play(sys.argv[1], sys.argv[2], sys.argv[3]))
