"""Picky Eaters rulesets 2 and 3 and the refusals of well-formed commands, each a scenario
its rule id with the rulebook's sentence; and every legal command, up to the cap."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import LEGAL_CAP, RuleViolation, SetupRefused, capped
from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.replay.games.picky_eaters.state import DISCARD_DOWN, State, StateV2, StateV3
from feastlog.replay.record.rng import Rng
from feastlog.v1 import record_pb2
from tests.replay.test_picky_eaters_helpers import (
    NAMES,
    PACK,
    down,
    draw,
    filler,
    food_locations,
    ing,
    item,
    pass_,
    position,
    prepare,
    take,
)

MOUSSAKA = [ing("eggplant"), ing("beef"), ing("tomato")]
SILVER = "item-fancy-silverware-1"


def refused(state: State, seat: int, command: Any, rule_id: str) -> str:
    """The command is refused citing ``rule_id``; the message."""
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    assert caught.value.rule_id == rule_id, caught.value
    return caught.value.message


@pytest.mark.parametrize("refill", ["when_empty", "on_draw", None])
def test_PE_DECK_REFILL_the_food_deck_is_refilled_as_soon_as_it_is_empty(refill):
    """PE-DECK-REFILL. "If the Food Deck is ever empty, shuffle the discard pile to form a new
    Food Deck." Ruleset 2 reads it as printed (deck_refill=when_empty): the card that
    empties the deck refills it at once. PE-I7 (deck_refill=on_draw, ruleset 1's only
    reading, ``None`` here) waits until a card must be drawn."""
    last = ing("rice")
    state = position(
        hands=[[ing("corn"), ing("potato"), "recipe-moussaka", *MOUSSAKA]],
        deck=[last],
        discard=[ing("lentils"), ing("corn", 2)],
        deck_refill=refill,
    )
    assert state.refill == (refill or "on_draw")
    cards = food_locations(state)
    state, facts = fold.play(ENGINE, state, 0, draw(ing("corn"), ing("potato")))
    assert last in state.players[0].hand
    reshuffles = [f for f in facts if f["type"] == "deck_reshuffled"]
    if refill == "when_empty":
        assert reshuffles == [{"type": "deck_reshuffled", "cards": 4}]
        assert state.discard == () and sorted(state.food_deck) == sorted(
            [ing("lentils"), ing("corn", 2), ing("corn"), ing("potato")]
        )
    else:
        assert reshuffles == [] and state.food_deck == ()
        assert len(state.discard) == 4
    assert food_locations(state) == cards
    # deck and discard pile both empty: the ingredients a Recipe discards form a new deck
    state = position(
        hands=[["recipe-moussaka", *MOUSSAKA]], deck=[], discard=[], deck_refill=refill
    )
    cards = food_locations(state)
    state, facts = fold.play(ENGINE, state, 0, prepare("recipe-moussaka", MOUSSAKA))
    if refill == "when_empty":
        assert sorted(state.food_deck) == sorted(MOUSSAKA) and state.discard == ()
        assert facts[-1] == {"type": "deck_reshuffled", "cards": 3}
    else:
        assert state.food_deck == () and sorted(state.discard) == sorted(MOUSSAKA)
    assert food_locations(state) == cards


def test_ruleset_2_adds_the_option_and_a_ruleset_1_genesis_folds_as_recorded():
    """A recorded game always folds under the ruleset version it was recorded with."""
    assert ENGINE.spec.ruleset_version == "3"
    assert ENGINE.spec.rulesets["3"] == ENGINE.spec.rulesets["2"]
    assert ENGINE.spec.rulesets["2"]["deck_refill"] == "when_empty"
    assert "deck_refill" not in ENGINE.spec.rulesets["1"]
    seats = [record_pb2.SeatInfo(name=n) for n in NAMES[:3]]
    for version, shape, refill in (
        ("1", State, "on_draw"),
        ("2", StateV2, "when_empty"),
        ("3", StateV3, "when_empty"),
    ):
        genesis = record_pb2.Genesis(game_kind="picky-eaters", ruleset_version=version, seats=seats)
        table, _ = fold.start(genesis, bytes(32), PACK)
        assert type(table.game) is shape and table.game.refill == refill
        assert table.game.version == int(version)
    chosen, _ = ENGINE.setup(NAMES[:2], {"deck_refill": "on_draw"}, PACK, Rng(bytes(32)), "2")
    assert chosen.refill == "on_draw"
    # PE-OPTIONS: an option the ruleset does not have, a value the option does not take
    with pytest.raises(SetupRefused) as caught:
        ENGINE.setup(NAMES[:2], {"deck_refill": "on_draw"}, PACK, Rng(bytes(32)), "1")
    assert caught.value.rule_id == "PE-OPTIONS" and "no option 'deck_refill'" in str(caught.value)
    with pytest.raises(SetupRefused) as caught:
        ENGINE.setup(NAMES[:2], {"deck_refill": "sometimes"}, PACK, Rng(bytes(32)), "2")
    assert caught.value.rule_id == "PE-OPTIONS" and caught.value.field == "options"


@pytest.mark.parametrize("ruleset", [2, 3])
def test_PE_GAME_END_nothing_is_reshuffled_once_the_game_is_over(ruleset: int) -> None:
    """PE-GAME-END. "The game ends once all players have passed in the fifth round." The
    last pass discards the Market's leftovers; with the Food deck and the discard pile
    empty before it, ruleset 2 then refilled the deck from them (PE-DECK-REFILL) after
    the game was over.  From ruleset 3 the game's end is its last step: no reshuffle, the
    leftovers stay in the discard pile, the reshuffle stream is not drawn from."""
    market = [ing("corn"), ing("rice")]
    state = position(
        passed=[1],
        round_=5,
        deck=[],
        discard=[],
        market=market,
        guests=tuple(sorted(PACK.guest_of))[:5],
        recipes={0: ["recipe-tacos"]},
        ruleset=ruleset,
    )
    after, facts = fold.play(ENGINE, state, 0, pass_())
    kinds = [f["type"] for f in facts]
    assert after.phase == "over" and "game_over" in kinds
    if ruleset == 2:  # as its games were recorded
        assert kinds[-2:] == ["game_over", "deck_reshuffled"]
        assert sorted(after.food_deck) == sorted(market) and after.discard == ()
    else:
        assert kinds[-1] == "game_over" and "deck_reshuffled" not in kinds
        assert after.food_deck == () and sorted(after.discard) == sorted(market)
        assert after.rng == state.rng
    assert food_locations(after) == food_locations(state)


def test_PE_ITEM_SILVERWARE_fancy_silverware_cannot_be_replaced():
    """PE-ITEM-SILVERWARE. "Fancy Silverware: +1 point for each of your Recipes. This card
    permanently takes up a Recipe slot." Naming it as the Recipe to replace breaks that
    rule (it was a malformed command before)."""
    state = position(
        hands=[["recipe-moussaka", *MOUSSAKA]],
        recipes={0: ["recipe-pizza"]},
        silverware={0: [SILVER]},
    )
    message = refused(
        state, 0, prepare("recipe-moussaka", MOUSSAKA, replaces=SILVER), "PE-ITEM-SILVERWARE"
    )
    assert message == (
        "Fancy Silverware permanently takes up a Recipe slot: Ann cannot replace it with a Recipe"
    )


def test_PE_I9_a_card_cannot_also_stand_in_for_an_ingredient():
    """PE-I9. "When preparing a Recipe, you may discard any 3 cards in your hand in place of
    any 1 Ingredient." The 3 are other cards than the Recipe and the ingredients used."""
    spare = filler(2)
    state = position(hands=[["recipe-moussaka", *MOUSSAKA[:2], *spare]])
    reused = prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", [MOUSSAKA[0], *spare])])
    assert "is used twice" in refused(state, 0, reused, "PE-I9")
    twice = prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", [spare[0], spare[0], spare[1]])])
    refused(state, 0, twice, "PE-I9")
    recipe = prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", ["recipe-moussaka", *spare])])
    refused(state, 0, recipe, "PE-I9")


def test_PE_DISCARD_DRAW_a_card_named_twice_is_not_two_cards():
    """PE-DISCARD-DRAW. "Discard 2 cards from your hand to draw 1 face-down card from the
    Food Deck.\""""
    state = position(hands=[filler(4)])
    message = refused(state, 0, draw(filler(1)[0], filler(1)[0]), "PE-DISCARD-DRAW")
    assert "named twice: discard 2 different cards" in message


def test_PE_ITEM_PLAY_an_ingredient_is_not_an_item():
    """PE-ITEM-PLAY. "Play an Item: Play an Item card from your hand.\""""
    state = position(hands=[[ing("corn"), "recipe-sushi"]], recipes={0: ["recipe-pizza"]})
    message = refused(state, 0, item(ing("corn"), "recipe-pizza"), "PE-ITEM-PLAY")
    assert message == "corn (ingredient-corn-1) is not an Item card: only Items are played"
    refused(state, 0, item("recipe-sushi"), "PE-ITEM-PLAY")


def test_PE_PASS_a_player_who_has_passed_takes_no_more_actions():
    """PE-PASS. "Pass: Announce you are done taking actions. Once you pass, you may no longer
    take actions for that round." That, not the turn order, is why Bob is refused."""
    state = position(n=3, hands=[[], [ing("corn")], []], market=[ing("rice")])
    state, _ = fold.play(ENGINE, state, 0, pass_())
    state, _ = fold.play(ENGINE, state, 1, pass_())
    assert state.turn == 2
    message = refused(state, 1, take(ing("rice")), "PE-PASS")
    assert message == "Bob has passed and takes no more actions this round"
    refused(state, 0, pass_(), "PE-PASS")


def _key(command) -> tuple:
    """A preparation, whatever the order of the cards it names."""
    prep = command.prepare_recipe
    subs = tuple((s.ingredient, tuple(sorted(s.cards))) for s in prep.substitutions)
    return prep.recipe, tuple(sorted(prep.ingredients)), subs, prep.replaces


def test_legal_commands_give_every_way_to_prepare_checked_against_brute_force():
    """Every preparation of every Recipe in hand: each set of ingredient cards, each 3-for-1,
    each Recipe it may replace — against every combination of cards the rules accept."""
    hand = ["recipe-moussaka", "recipe-dal", *MOUSSAKA, ing("tomato", 2), *filler(2)]
    state = position(hands=[hand], recipes={0: ["recipe-pizza"], 1: ["recipe-sushi"]})
    legal = ENGINE.legal_commands(state, 0)
    for command in legal:
        fold.play(ENGINE, state, 0, command)
    offered = {_key(c) for c in legal if c.WhichOneof("action") == "prepare_recipe"}
    accepted = set()
    names = sorted({i.name for i in PACK.ingredients})
    for recipe in ("recipe-moussaka", "recipe-dal"):
        rest = [c for c in hand if c != recipe]
        for size in range(5):
            for used in combinations(rest, size):
                others = [c for c in rest if c not in used]
                ways: list[list[tuple[str, tuple[str, ...]]]] = [[]] + [
                    [(name, three)] for name in names for three in combinations(others, 3)
                ]
                for subs in ways:
                    for replaces in ("", "recipe-pizza", "recipe-sushi"):
                        command = prepare(recipe, list(used), subs, replaces)
                        try:
                            fold.play(ENGINE, state, 0, command)
                        except RuleViolation:
                            continue
                        accepted.add(_key(command))
    assert offered == accepted and len(offered) > 20
    kinds = {c.WhichOneof("action") for c in legal}
    assert kinds == {"pass_round", "prepare_recipe", "discard_to_draw"}
    assert sum(c.WhichOneof("action") == "discard_to_draw" for c in legal) == 8 * 7 // 2


def test_legal_commands_stop_at_the_cap_and_say_the_list_is_partial():
    """16 cards after the deal, 6 to discard: 8008 ways; the list holds LEGAL_CAP of them."""
    hand = filler(16)
    state = position(hands=[hand], phase=DISCARD_DOWN)
    found = ENGINE.legal_commands(state, 0)
    assert len(found) == LEGAL_CAP + 1
    listed, partial = capped(found)
    assert partial and len(listed) == LEGAL_CAP
    for command in listed[:: LEGAL_CAP // 10]:
        fold.play(ENGINE, state, 0, command)
    small = position(hands=[filler(12)], phase=DISCARD_DOWN)
    every = ENGINE.legal_commands(small, 0)
    assert capped(every) == (every, False) and len(every) == 12 * 11 // 2
    assert {tuple(c.discard_down.cards) for c in every} == set(
        combinations(small.players[0].hand, 2)
    )
    assert down(*filler(2)) in every
