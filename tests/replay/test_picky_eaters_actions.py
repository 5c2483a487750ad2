"""Picky Eaters scenario tests: the five actions, the hand limit, slots and items."""

from __future__ import annotations

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.replay.games.picky_eaters.state import PLAY
from tests.replay.test_picky_eaters_helpers import (
    assert_conserved,
    down,
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
SEASONING, SEASONING2 = "item-extra-seasoning-1", "item-extra-seasoning-2"
HERBS = "item-sprinkle-of-herbs-1"
SILVER = "item-fancy-silverware-1"
HOT = "item-hot-plate-1"


def refused(state, seat, command, rule_id):
    """Assert the command is refused with ``rule_id`` and return the message."""
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    assert caught.value.rule_id == rule_id, caught.value
    return caught.value.message


def test_PE_TAKE_MARKET_take_one_card_and_the_turn_passes():
    """Taking a Market card puts it in hand; the next player acts."""
    state = position(market=[ing("corn"), ing("rice")])
    state, facts = fold.play(ENGINE, state, 0, take(ing("corn")))
    assert state.players[0].hand == (ing("corn"),)
    assert state.market == (ing("rice"),) and state.turn == 1
    assert facts[0]["type"] == "took_from_market"
    assert_conserved(state)


def test_PE_TAKE_MARKET_PE_MARKET_NO_REFILL_taken_card_is_gone_until_next_round():
    """ "Take 1 card from the Market. Do NOT replace or refill it." and "The Market only gets
    refilled at the beginning of each round.": a card taken is gone; an empty Market stays
    empty."""
    state = position(market=[ing("corn"), ing("rice")])
    state, _ = fold.play(ENGINE, state, 0, take(ing("corn")))
    assert state.market == (ing("rice"),)
    message = refused(state, 1, take(ing("corn")), "PE-TAKE-MARKET")
    assert "not in the Market" in message
    state, _ = fold.play(ENGINE, state, 1, take(ing("rice")))
    assert state.market == ()
    message = refused(state, 0, take(ing("corn")), "PE-MARKET-NO-REFILL")
    assert "refilled only at the beginning of the next round" in message


def test_PE_PREPARE_INGREDIENTS_discards_ingredients_and_places_recipe():
    """Moussaka with eggplant, beef, tomato: ingredients discarded, Recipe in a slot."""
    state = position(hands=[["recipe-moussaka", *MOUSSAKA, ing("corn")]])
    state, facts = fold.play(ENGINE, state, 0, prepare("recipe-moussaka", MOUSSAKA))
    assert state.players[0].hand == (ing("corn"),)
    assert [r.card for r in state.players[0].recipes] == ["recipe-moussaka"]
    assert sorted(state.discard) == sorted(MOUSSAKA)
    assert facts[0]["discarded"] == MOUSSAKA and facts[0]["slots_used"] == 1
    assert_conserved(state)


def test_PE_PREPARE_INGREDIENTS_missing_or_wrong_ingredient_is_refused():
    """Without tomato there is no moussaka; corn is not in it either."""
    state = position(hands=[["recipe-moussaka", *MOUSSAKA[:2], ing("corn")]])
    message = refused(state, 0, prepare("recipe-moussaka", MOUSSAKA[:2]), "PE-PREPARE-INGREDIENTS")
    assert "missing tomato" in message
    message = refused(
        state, 0, prepare("recipe-moussaka", [*MOUSSAKA[:2], ing("corn")]), "PE-PREPARE-INGREDIENTS"
    )
    assert "corn" in message


def test_PE_HAND_CARDS_cards_must_be_in_your_own_hand():
    """Ann cannot prepare with Bob's tomato, nor a Recipe she does not hold."""
    state = position(hands=[["recipe-moussaka", *MOUSSAKA[:2]], [MOUSSAKA[2]]])
    message = refused(state, 0, prepare("recipe-moussaka", MOUSSAKA), "PE-HAND-CARDS")
    assert message == "Ann has no tomato (ingredient-tomato-1) in hand"
    refused(state, 0, prepare("recipe-pizza", []), "PE-HAND-CARDS")
    refused(state, 0, draw(ing("tomato"), ing("beef")), "PE-HAND-CARDS")


def test_PE_SUBSTITUTE_three_cards_stand_in_for_one_ingredient():
    """Ann has no tomato: three other cards stand in for it."""
    spare = filler(3)
    state = position(hands=[["recipe-moussaka", *MOUSSAKA[:2], *spare]])
    state, facts = fold.play(
        ENGINE, state, 0, prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", spare)])
    )
    assert state.players[0].hand == ()
    assert facts[0]["substitution"] == {"ingredient": "tomato", "cards": spare}
    assert sorted(state.discard) == sorted([*MOUSSAKA[:2], *spare])
    assert "standing in for tomato" in (ENGINE.narrate(facts[0], ["Ann", "Bob"]) or "")


def test_PE_SUBSTITUTE_needs_exactly_three_cards_for_an_ingredient_of_the_recipe():
    """Two cards are not enough; corn is not in moussaka."""
    spare = filler(3)
    state = position(hands=[["recipe-moussaka", *MOUSSAKA[:2], *spare]])
    refused(
        state, 0, prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", spare[:2])]), "PE-SUBSTITUTE"
    )
    message = refused(
        state, 0, prepare("recipe-moussaka", MOUSSAKA[:2], [("corn", spare)]), "PE-SUBSTITUTE"
    )
    assert message == "moussaka does not call for corn"


def test_PE_SUBSTITUTE_ONCE_two_substitutions_on_one_recipe_are_refused():
    """Six cards standing in for beef and tomato: only one 3-for-1 per Recipe."""
    spare = filler(6)
    state = position(hands=[["recipe-moussaka", MOUSSAKA[0], *spare]])
    message = refused(
        state,
        0,
        prepare("recipe-moussaka", [MOUSSAKA[0]], [("beef", spare[:3]), ("tomato", spare[3:])]),
        "PE-SUBSTITUTE-ONCE",
    )
    assert "only once" in message


def test_PE_I9_substitute_cards_may_be_recipes_or_items():
    """Any 3 cards: a Recipe, an Item and an ingredient stand in for tomato."""
    spare = ["recipe-pizza", SEASONING, ing("corn")]
    state = position(hands=[["recipe-moussaka", *MOUSSAKA[:2], *spare]])
    state, _ = fold.play(
        ENGINE, state, 0, prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", spare)])
    )
    assert "recipe-pizza" in state.discard


def test_PE_REPLACE_replaced_recipe_and_its_items_are_discarded():
    """Ann replaces her pizza (with herbs on it) by moussaka."""
    state = position(
        hands=[["recipe-moussaka", *MOUSSAKA]], recipes={0: [("recipe-pizza", [HERBS])]}
    )
    state, facts = fold.play(
        ENGINE, state, 0, prepare("recipe-moussaka", MOUSSAKA, replaces="recipe-pizza")
    )
    assert [r.card for r in state.players[0].recipes] == ["recipe-moussaka"]
    assert {"recipe-pizza", HERBS} <= set(state.discard)
    assert facts[0]["replaced"] == "recipe-pizza" and facts[0]["replaced_items"] == [HERBS]
    assert_conserved(state)


def test_PE_REPLACE_only_your_own_recipe_in_play():
    """Ann cannot replace Bob's pizza."""
    state = position(hands=[["recipe-moussaka", *MOUSSAKA]], recipes={1: ["recipe-pizza"]})
    message = refused(
        state, 0, prepare("recipe-moussaka", MOUSSAKA, replaces="recipe-pizza"), "PE-REPLACE"
    )
    assert message == "Ann has no pizza in play to replace"


def test_PE_REPLACE_HOT_PLATE_recipe_with_hot_plate_cannot_be_replaced():
    """Pizza under a Hot Plate stays."""
    state = position(hands=[["recipe-moussaka", *MOUSSAKA]], recipes={0: [("recipe-pizza", [HOT])]})
    refused(
        state,
        0,
        prepare("recipe-moussaka", MOUSSAKA, replaces="recipe-pizza"),
        "PE-REPLACE-HOT-PLATE",
    )


FIVE = ["recipe-pizza", "recipe-sushi", "recipe-dal", "recipe-naan", "recipe-pho"]


def test_PE_SLOTS_no_sixth_recipe_without_replacing():
    """Five Recipes fill the slots; a sixth needs a replacement."""
    state = position(hands=[["recipe-moussaka", *MOUSSAKA, SILVER]], recipes={0: FIVE})
    refused(state, 0, prepare("recipe-moussaka", MOUSSAKA), "PE-SLOTS")
    refused(state, 0, item(SILVER), "PE-SLOTS")
    state, _ = fold.play(
        ENGINE, state, 0, prepare("recipe-moussaka", MOUSSAKA, replaces="recipe-dal")
    )
    assert state.players[0].slots_used == 5


def test_PE_ITEM_SILVERWARE_takes_a_slot_for_good_and_not_a_recipe():
    """Fancy Silverware goes in front of Ann; with 4 Recipes it fills the fifth slot."""
    state = position(hands=[[SILVER, "recipe-moussaka", *MOUSSAKA]], recipes={0: FIVE[:4]})
    refused(state, 0, item(SILVER, "recipe-pizza"), "PE-ITEM-SILVERWARE")
    state, facts = fold.play(ENGINE, state, 0, item(SILVER))
    assert state.players[0].silverware == (SILVER,) and state.players[0].slots_used == 5
    assert facts[0]["recipe"] is None
    state = position(
        hands=[["recipe-moussaka", *MOUSSAKA]], recipes={0: FIVE[:4]}, silverware={0: [SILVER]}
    )
    refused(state, 0, prepare("recipe-moussaka", MOUSSAKA), "PE-SLOTS")


def test_PE_ITEM_PLAY_item_needs_a_recipe_in_play():
    """Herbs on nothing, or on a Recipe nobody has prepared, are refused."""
    state = position(hands=[[HERBS]], recipes={0: ["recipe-pizza"]})
    message = refused(state, 0, item(HERBS), "PE-ITEM-PLAY")
    assert message == "Sprinkle of Herbs must go on a Recipe in play: name the Recipe it goes on"
    message = refused(state, 0, item(HERBS, "recipe-sushi"), "PE-ITEM-PLAY")
    assert message == "Sprinkle of Herbs must go on a Recipe in play; sushi is not in play"
    state, _ = fold.play(ENGINE, state, 0, item(HERBS, "recipe-pizza"))
    assert state.players[0].recipes[0].items == (HERBS,)


def test_PE_ITEM_EXTRA_SEASONING_goes_on_an_opponents_recipe_only():
    """Ann cannot season her own pizza."""
    state = position(hands=[[SEASONING]], recipes={0: ["recipe-pizza"], 1: ["recipe-sushi"]})
    refused(state, 0, item(SEASONING, "recipe-pizza"), "PE-ITEM-EXTRA-SEASONING")
    state, _ = fold.play(ENGINE, state, 0, item(SEASONING, "recipe-sushi"))
    assert state.players[1].recipes[0].items == (SEASONING,)


def test_PE_ITEM_HERBS_goes_on_your_own_recipe_only():
    """Ann cannot sprinkle herbs on Bob's sushi."""
    state = position(hands=[[HERBS]], recipes={1: ["recipe-sushi"]})
    refused(state, 0, item(HERBS, "recipe-sushi"), "PE-ITEM-HERBS")


def test_PE_ITEM_UNIQUE_no_two_of_the_same_item_on_a_recipe():
    """Bob's sushi already has Extra Seasoning: a second copy is refused."""
    state = position(hands=[[SEASONING2]], recipes={1: [("recipe-sushi", [SEASONING])]})
    message = refused(state, 0, item(SEASONING2, "recipe-sushi"), "PE-ITEM-UNIQUE")
    assert message == "sushi already has an Extra Seasoning on it"


def test_PE_I2_hot_plate_on_own_recipe_and_option_blocks_opponent_items():
    """Hot Plate goes on Ann's own Recipe; with the option, it takes no opponent's Item."""
    state = position(hands=[[HOT]], recipes={0: ["recipe-pizza"], 1: ["recipe-sushi"]})
    refused(state, 0, item(HOT, "recipe-sushi"), "PE-I2")
    fold.play(ENGINE, state, 0, item(HOT, "recipe-pizza"))
    plated = position(hands=[[SEASONING]], recipes={1: [("recipe-sushi", [HOT])]})
    fold.play(ENGINE, plated, 0, item(SEASONING, "recipe-sushi"))
    blocked = position(hands=[[SEASONING]], recipes={1: [("recipe-sushi", [HOT])]}, blocks=True)
    refused(blocked, 0, item(SEASONING, "recipe-sushi"), "PE-I2")


def test_PE_DISCARD_DRAW_discard_two_draw_one_privately():
    """Ann discards 2 and draws the top card; others learn only the count."""
    state = position(hands=[[ing("corn"), ing("rice"), ing("fish")]], deck=None)
    top = state.food_deck[0]
    state, facts = fold.play(ENGINE, state, 0, draw(ing("corn"), ing("rice")))
    assert state.players[0].hand == tuple(sorted([ing("fish"), top]))
    assert [f["type"] for f in facts] == ["discarded_to_draw", "drew", "card_drawn"]
    assert facts[2]["private_to"] == 0 and "card" not in facts[1]
    refused(position(hands=[[ing("corn")] * 1]), 0, draw(ing("corn")), "PE-DISCARD-DRAW")


def test_PE_DECK_REFILL_PE_I7_empty_deck_is_reshuffled_from_the_discard_pile():
    """With no Food deck left, the discard pile (with the 2 just discarded) is shuffled
    when a card must be drawn (PE-I7: ruleset 1's reading, ruleset 2's option on_draw)."""
    hand = [ing("corn"), ing("rice")]
    state = position(hands=[hand], deck=[], discard=[ing("fish"), ing("beef")])
    rest = [c for c in state.pack.food_cards if c not in {*hand, ing("fish"), ing("beef")}]
    discard = [ing("fish"), ing("beef"), *rest]
    state = position(hands=[hand], deck=[], discard=discard, deck_refill="on_draw")
    state, facts = fold.play(ENGINE, state, 0, draw(*hand))
    assert facts[1]["type"] == "deck_reshuffled"
    assert len(state.players[0].hand) == 1
    assert_conserved(state)
    assert state.rng.position("picky-eaters/reshuffle") > 0


def test_PE_PASS_passed_players_are_skipped():
    """Bob has passed: after Ann, Cy acts, then Ann again."""
    state = position(n=3, passed=[1], market=[ing("corn"), ing("rice")])
    state, _ = fold.play(ENGINE, state, 0, take(ing("corn")))
    assert state.turn == 2
    state, facts = fold.play(ENGINE, state, 2, pass_())
    assert facts[0] == {"type": "passed", "seat": 2, "round": 1}
    assert state.turn == 0 and ENGINE.to_act(state) == frozenset({0})


def test_PE_HAND_LIMIT_PE_I6_eleventh_card_is_discarded_before_play_goes_on():
    """Ann takes an 11th card: she must discard 1 before Bob acts."""
    hand = filler(10)
    state = position(hands=[hand], market=[ing("rice")])
    state, facts = fold.play(ENGINE, state, 0, take(ing("rice")))
    assert facts[0]["must_discard"] == 1
    assert state.turn == 0 and ENGINE.to_act(state) == frozenset({0})
    message = refused(state, 0, pass_(), "PE-HAND-LIMIT")
    assert message == "Ann must first discard 1 card to get down to 10"
    refused(state, 1, pass_(), "PE-TURN-ORDER")
    message = refused(state, 0, down(hand[0], hand[1]), "PE-HAND-LIMIT")
    assert message == "Ann must discard exactly 1 card, not 2"
    legal = ENGINE.legal_commands(state, 0)  # every card of the 11 is a way to discard down
    assert [c.WhichOneof("action") for c in legal] == ["discard_down"] * 11
    assert sorted(c.discard_down.cards[0] for c in legal) == sorted([*hand, ing("rice")])
    state, facts = fold.play(ENGINE, state, 0, down(ing("rice")))
    assert len(state.players[0].hand) == 10 and state.turn == 1
    assert facts[0] == {"type": "discarded_down", "seat": 0, "cards": [ing("rice")]}


def test_PE_HAND_LIMIT_discard_down_only_when_over_ten():
    """With 10 cards there is nothing to discard down."""
    state = position(hands=[filler(10)])
    message = refused(state, 0, down(filler(1)[0]), "PE-HAND-LIMIT")
    assert message == "Ann holds 10 cards: nothing to discard down"


def test_PE_TURN_ORDER_only_the_player_in_turn_acts():
    """Bob cannot act on Ann's turn."""
    state = position(market=[ing("corn")])
    message = refused(state, 1, take(ing("corn")), "PE-TURN-ORDER")
    assert message == "it is not Bob's turn; waiting for Ann"
    assert state.phase == PLAY
