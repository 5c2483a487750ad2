"""Seeded random legal playouts of Picky Eaters through the fold, for 2 to 6 players,
under every ruleset version this build folds.

Every game ends after round 5 with a game_over fact; every card is accounted for at every
row.  That a record refolds to every state hash is a contract of every game
(tests/contract/).
"""

from __future__ import annotations

import random

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.replay.games.picky_eaters.spec import ROUNDS
from feastlog.v1 import record_pb2
from tests.replay.test_picky_eaters_helpers import PACK, assert_conserved

GAMES_PER_COUNT = 20  # per ruleset version
PROGRESS = ("prepare_recipe", "play_item")


def genesis(n: int, seed: int, ruleset: str = ENGINE.spec.ruleset_version) -> record_pb2.Genesis:
    """A genesis row for ``n`` players under ``ruleset``; the first seat drawn at random."""
    return record_pb2.Genesis(
        game_kind="picky-eaters",
        ruleset_version=ruleset,
        seats=[record_pb2.SeatInfo(name=f"P{k}") for k in range(n)],
        options={"first_seat": "random", "hot_plate_blocks_items": "on" if seed % 2 else "off"},
    )


def choose(commands: list, chooser: random.Random):
    """A random legal command, biased toward preparing, playing items and passing."""
    progress = [c for c in commands if c.WhichOneof("action") in PROGRESS]
    if progress and chooser.random() < 0.7:
        return chooser.choice(progress)
    passes = [c for c in commands if c.WhichOneof("action") == "pass_round"]
    if passes and chooser.random() < 0.3:
        return passes[0]
    return chooser.choice(commands)


def play(
    n: int, seed: int, ruleset: str = ENGINE.spec.ruleset_version
) -> tuple[list[tuple[str, record_pb2.Command]], list[str], list]:
    """Play one game; return the commands, the state hash after each row and all facts
    (the table at the end last)."""
    server_seed = bytes([seed % 256, n]) * 16
    table, facts = fold.start(genesis(n, seed, ruleset), server_seed, PACK)
    assert table.game.refill == ("on_draw" if ruleset == "1" else "when_empty")
    chooser = random.Random(seed * 10 + n)
    rows: list[tuple[str, record_pb2.Command]] = []
    hashes = [fold.state_hash(table)]
    all_facts = list(facts)
    while not fold.is_over(ENGINE, table):
        seats = sorted(ENGINE.to_act(table.game))
        assert seats, "nobody to act in an unfinished game"
        seat = chooser.choice(seats)
        commands = ENGINE.legal_commands(table.game, seat)
        assert commands, f"seat {seat} has no legal command"
        actor = f"seat:{seat}"
        command = record_pb2.Command(picky_eaters=choose(commands, chooser))
        table, facts = fold.step(ENGINE, table, actor, command)
        assert_conserved(table.game)
        rows.append((actor, command))
        hashes.append(fold.state_hash(table))
        all_facts += facts
        assert len(rows) < 2000
    return rows, hashes, all_facts


@pytest.mark.parametrize("ruleset", sorted(ENGINE.spec.rulesets))
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_random_playouts_end_after_round_five_and_conserve_cards(n, ruleset):
    """Seeded games per player count: every card accounted for, the end after round 5."""
    prepared = 0
    for seed in range(GAMES_PER_COUNT):
        rows, _, facts = play(n, seed, ruleset)
        table, _ = fold.start(genesis(n, seed, ruleset), bytes([seed % 256, n]) * 16, PACK)
        for actor, command in rows:
            table, _ = fold.step(ENGINE, table, actor, command)
        assert table.game.round == ROUNDS and ENGINE.is_over(table.game)
        assert facts[-1]["type"] == "game_over"
        assert sum(f["type"] == "round_started" for f in facts) == ROUNDS
        assert sum(f["type"] == "guest_revealed" for f in facts) == ROUNDS
        private = {f["type"] for f in facts if "private_to" in f}
        assert private <= {"cards_dealt", "card_drawn"}
        assert all(ENGINE.narrate(f, [f"P{k}" for k in range(n)]) for f in facts)
        prepared += sum(f["type"] == "recipe_prepared" for f in facts)
        outcome = fold.outcome(ENGINE, table)
        assert outcome is not None and len(outcome.winners) == 1
    assert prepared > 0
