"""Bon Appetit!: seeded random legal playouts through the fold, for 2, 3 and 4 players.

Every game ends after exactly 12 rounds; gems are conserved at every step (bag + hands +
bids sealed or on the table + the 4 Gem Card markers = 20, or 12 + 4 = 16 with 2 players).
That a record refolds to every state hash is a contract of every game (tests/contract/).
"""

from __future__ import annotations

import random

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.bon_appetit import ENGINE
from feastlog.replay.games.bon_appetit.state import State, gem_count
from feastlog.v1 import bon_appetit_pb2 as pb
from feastlog.v1 import record_pb2

GAMES_PER_COUNT = 100
PACK = ENGINE.load_pack(ENGINE.default_pack_bytes())
NAMES = ("Ann", "Brian", "Celia", "Dan")
OPTION_SETS: tuple[dict[str, str], ...] = (
    {},
    {"gem_ability": "per_gem", "tie_break_value": "cumulative", "max_bid": "four"},
)


def _genesis(n: int, options: dict[str, str]) -> record_pb2.Genesis:
    """A genesis row for ``n`` seats."""
    seats = [record_pb2.SeatInfo(name=name) for name in NAMES[:n]]
    return record_pb2.Genesis(game_kind="bon-appetit", seats=seats, options=options)


def _playout(n: int, index: int) -> None:
    """One random legal game, checked at every step."""
    chooser = random.Random(index * 10 + n)
    genesis = _genesis(n, OPTION_SETS[index % len(OPTION_SETS)])
    seed = bytes([index % 256, n]) * 16
    table, _ = fold.start(genesis, seed, PACK)
    total = 16 if n == 2 else 20
    moves = 0
    while not fold.is_over(ENGINE, table):
        game: State = table.game
        assert gem_count(game) == total
        seat = chooser.choice(sorted(ENGINE.to_act(game)))
        legal = ENGINE.legal_commands(game, seat)
        assert legal, f"seat {seat} is to act but has no legal command"
        choice = chooser.choice(legal)
        assert isinstance(choice, pb.BonAppetitCommand)
        command = record_pb2.Command(bon_appetit=choice)
        table, _ = fold.step(ENGINE, table, f"seat:{seat}", command)
        moves += 1
        assert moves < 400
    assert gem_count(table.game) == total
    assert table.game.round == 12 and table.game.over
    assert len(table.game.removed) + sum(len(p.dishes) for p in table.game.players) == 12
    result = fold.outcome(ENGINE, table)
    assert result is not None and result.winners


@pytest.mark.parametrize("n", [2, 3, 4])
def test_random_playouts_end_after_twelve_rounds_and_conserve_gems(n: int) -> None:
    for index in range(GAMES_PER_COUNT):
        _playout(n, index)
