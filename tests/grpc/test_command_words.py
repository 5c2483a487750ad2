"""``feastlog play`` lists each legal move in words, for every registered game."""

from __future__ import annotations

import re

import pytest

from feastlog.cli.narrate import command_words
from feastlog.replay import games
from feastlog.replay.games.fold import wrap_command
from feastlog.v1 import record_pb2
from tests.contract.test_games import playout

SHOUTED = re.compile(r"[A-Z]{2,}_[A-Z_]+")  # an enum value's protobuf spelling


@pytest.mark.parametrize("kind", games.kinds())
def test_every_legal_move_reads_as_words(kind: str) -> None:
    engine = games.engine(kind)
    played = playout(kind, engine.spec.ruleset_version, 3)
    said: set[str] = set()
    for table in played.tables[:-1]:
        for seat in sorted(engine.to_act(table.game)):
            for command in engine.legal_commands(table.game, seat):
                words = command_words(wrap_command(engine.spec.command_field, command))
                assert words and not SHOUTED.search(words), words
                assert "{" not in words, words
                said.add(words)
    assert len(said) > 1


def test_a_bid_in_words() -> None:
    from feastlog.v1 import bon_appetit_pb2 as ba

    bid = ba.BonAppetitBid(gems=[ba.BON_APPETIT_GEM_GREEN, ba.BON_APPETIT_GEM_RED])
    command = record_pb2.Command(bon_appetit=ba.BonAppetitCommand(bid=bid))
    assert command_words(command) == "bid: gems green, red"
    empty = record_pb2.Command(bon_appetit=ba.BonAppetitCommand(bid=ba.BonAppetitBid()))
    assert command_words(empty) == "bid"
    assert command_words(record_pb2.Command()) == "(no command)"
