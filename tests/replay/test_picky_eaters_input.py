"""Picky Eaters bad input: malformed commands, refused moves leave the state as it was."""

from __future__ import annotations

import re

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import MalformedCommand, RuleViolation
from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.replay.record.canonical import canonical_bytes
from feastlog.v1 import picky_eaters_pb2 as pb
from tests.replay.test_picky_eaters_helpers import (
    Command,
    draw,
    filler,
    ing,
    item,
    pass_,
    position,
    prepare,
    take,
)

MOUSSAKA = [ing("eggplant"), ing("beef"), ing("tomato")]


def start():
    """Ann holds moussaka and its ingredients, Bob has sushi in play."""
    return position(
        hands=[["recipe-moussaka", *MOUSSAKA, "item-extra-seasoning-1"], filler(2)],
        recipes={1: ["recipe-sushi"]},
        market=[ing("corn")],
    )


@pytest.mark.parametrize(
    ("command", "field"),
    [
        (Command(), "action"),
        (take("ingredient-unicorn-1"), "take_from_market.card"),
        (take(""), "take_from_market.card"),
        (prepare("recipe-unicorn"), "prepare_recipe.recipe"),
        (prepare("recipe-moussaka", ["ingredient-unicorn-1"]), "prepare_recipe.ingredients[0]"),
        (
            prepare("recipe-moussaka", MOUSSAKA[:2], [("saffron", filler(3))]),
            "prepare_recipe.substitutions[0].ingredient",
        ),
        (
            prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", ["nonsense", *filler(2)])]),
            "prepare_recipe.substitutions[0].cards[0]",
        ),
        (
            prepare("recipe-moussaka", MOUSSAKA, replaces="recipe-unicorn"),
            "prepare_recipe.replaces",
        ),
        (item("item-unicorn-1"), "play_item.item"),
        (item("item-extra-seasoning-1", "recipe-unicorn"), "play_item.recipe"),
        (draw("nonsense", ing("corn")), "discard_to_draw.cards[0]"),
        (
            Command(discard_down=pb.PickyEatersDiscardDown(cards=["guest-billie"])),
            "discard_down.cards[0]",
        ),
    ],
)
def test_malformed_commands_name_the_field(command, field):
    """Malformed means only: an empty oneof, or an id or ingredient the pack does not know."""
    state = start()
    with pytest.raises(MalformedCommand) as caught:
        fold.play(ENGINE, state, 0, command)
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("seat", "command", "rule_id"),
    [
        (1, pass_(), "PE-TURN-ORDER"),
        (0, take(ing("rice")), "PE-TAKE-MARKET"),
        (0, prepare("recipe-moussaka", MOUSSAKA[:2]), "PE-PREPARE-INGREDIENTS"),
        (0, prepare("recipe-pizza", []), "PE-HAND-CARDS"),
        (0, item("item-extra-seasoning-1", "recipe-moussaka"), "PE-ITEM-PLAY"),
        (0, draw(MOUSSAKA[0]), "PE-DISCARD-DRAW"),
        (0, Command(discard_down=pb.PickyEatersDiscardDown(cards=[ing("beef")])), "PE-HAND-LIMIT"),
        # well-formed commands naming the wrong kind of card, or a card twice: each a rule
        (0, prepare(ing("eggplant")), "PE-PREPARE-INGREDIENTS"),
        (0, prepare("recipe-moussaka", ["recipe-pizza"]), "PE-PREPARE-INGREDIENTS"),
        (0, prepare("recipe-moussaka", [MOUSSAKA[0], MOUSSAKA[0]]), "PE-PREPARE-INGREDIENTS"),
        (
            0,
            prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", [MOUSSAKA[0], *filler(2)])]),
            "PE-I9",
        ),
        (0, prepare("recipe-moussaka", MOUSSAKA, replaces=ing("corn")), "PE-REPLACE"),
        (0, item("recipe-pizza"), "PE-ITEM-PLAY"),
        (0, item("item-extra-seasoning-1", ing("corn")), "PE-ITEM-PLAY"),
        (0, draw(ing("corn"), ing("corn")), "PE-DISCARD-DRAW"),
    ],
)
def test_refused_moves_cite_their_rule_and_change_nothing(seat, command, rule_id):
    """Every kind of illegal move is refused with its rule id; the state is untouched."""
    state = start()
    before = canonical_bytes(state)
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    assert caught.value.rule_id == rule_id
    assert canonical_bytes(state) == before


def test_checks_list_rule_ids_of_the_catalogue_in_order():
    """checks() names catalogue ids, after the fold's: game over, then the seat to act."""
    for command in (take(ing("corn")), prepare("recipe-moussaka"), item("x"), draw(), pass_()):
        ids = fold.checked_rules(ENGINE, fold.wrap_command("picky_eaters", command))
        assert ids[:5] == [
            "FL-GAME-CLOSED",
            "PE-GAME-END",
            "FL-ARBITER-ONLY",
            "PE-PASS",
            "PE-TURN-ORDER",
        ]
        assert ENGINE.checks(command)[:2] == ("PE-HAND-LIMIT-DEAL", "PE-HAND-LIMIT")
        assert set(ENGINE.checks(command)) <= set(ENGINE.spec.rules)
    assert ENGINE.checks(Command()) == ()


def test_every_command_is_public_and_legal_commands_are_accepted():
    """Commands are public; each legal command of a position is accepted by apply."""
    state = start()
    commands = ENGINE.legal_commands(state, 0)
    kinds = {c.WhichOneof("action") for c in commands}
    assert kinds == {
        "pass_round",
        "take_from_market",
        "prepare_recipe",
        "play_item",
        "discard_to_draw",
    }
    for command in commands:
        assert ENGINE.command_public(command)
        fold.play(ENGINE, state, 0, command)
    assert ENGINE.legal_commands(state, 1) == []


def test_catalogue_shape():
    """Every rule has its section and text; the readings are PE-I<n> (that every id is cited
    by a test is a contract of every game, tests/contract/)."""
    for rule in ENGINE.spec.rules.values():
        assert rule.section and rule.text
        assert rule.interpretation == bool(re.fullmatch(r"PE-I\d+", rule.id))
