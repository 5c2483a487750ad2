"""Menu Masters scenario tests, one or more per rule id, from constructed positions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import RuleViolation, SetupRefused
from feastlog.replay.games.menu_masters import ENGINE
from feastlog.replay.games.menu_masters.spec import DECK_LABELS, FIRST_SEAT_LABEL, RULES
from feastlog.replay.games.menu_masters.state import OVER, PLACE, PURCHASE
from feastlog.replay.record.rng import Rng
from tests.replay.test_menu_masters_support import (
    BAKERY,
    BUTCHER,
    MARKET,
    NAMES,
    PACK,
    PRODUCE,
    buy,
    coin,
    community,
    complete,
    completion,
    discard,
    finish,
    give,
    leave,
    line,
    new_game,
    of_type,
    own,
    purchasing,
    run,
    stores_emptied,
    window,
)


def rejected(state, seat, command, rule_id):
    """Assert that the command is refused citing ``rule_id``."""
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    assert caught.value.rule_id == rule_id, caught.value
    assert rule_id in RULES
    return caught.value


# Setup


def test_MM_SETUP_STORES_three_decks_shuffled_separately_three_face_up():
    state = new_game(3)
    assert len(state.stores) == 3
    rng = Rng(b"\x07" * 32)
    for index, label in enumerate(DECK_LABELS):
        store = state.stores[index]
        assert len(store.window) == 3 and len(store.deck) == 29
        ids = [
            c.id for c in PACK.cards if c.deck == ("produce-stand", "butcher-shop", "bakery")[index]
        ]
        shuffled, rng = rng.shuffle(label, ids)
        assert store.window + store.deck == shuffled


def test_MM_SETUP_SUPERMARKET_with_four_chefs_one_card_from_each_deck():
    state = new_game(4)
    assert len(state.stores) == 4
    decks = [PACK.card(c).deck for c in state.stores[MARKET].window]
    assert decks == ["produce-stand", "butcher-shop", "bakery"]
    assert all(len(s.deck) == 28 for s in state.stores[:3])
    assert len(new_game(3).stores) == 3


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_MM_SETUP_COINS_six_coins_four_pawns_bank_two_per_chef_box_the_rest(n):
    state = new_game(n)
    assert all(c.coins == 6 and c.pawns == 4 for c in state.chefs)
    assert state.bank == 2 * n and state.box == 48 - 8 * n


def test_MM_SETUP_MENUS_two_secret_each_three_community():
    state, facts = ENGINE.setup(NAMES[:5], {"first_seat": "0"}, PACK, Rng(b"\x01" * 32))
    assert all(len(c.menus) == 2 for c in state.chefs)
    assert len(state.community) == 3 and len(state.menu_deck) == 28 - 10 - 3
    private = [f for f in of_type(facts, "menus_dealt") if "private_to" in f]
    assert [f["menus"] for f in private] == [list(c.menus) for c in state.chefs]
    assert all(f["private_to"] == f["seat"] for f in private)


def test_MM_SETUP_FIRST_CHEF_option_or_drawn():
    assert new_game(4, first="2").first_chef == 2
    state = new_game(4, first="random")
    expected, _ = Rng(b"\x07" * 32).uniform(FIRST_SEAT_LABEL, 4)
    assert state.first_chef == expected == state.placing
    with pytest.raises(SetupRefused) as caught:
        new_game(4, first="9")
    assert caught.value.rule_id == "MM-OPTIONS" and caught.value.field == "options"


# Whose turn, which step, game over


def test_MM_TURN_ORDER_only_the_chef_placing_may_act():
    state = new_game(3, first="1")
    error = rejected(state, 0, line(PRODUCE), "MM-TURN-ORDER")
    assert "Bob" in error.message


def test_MM_STEP_purchase_in_place_step_and_placing_in_purchase_step():
    state = new_game(3)
    rejected(state, 0, buy(state.stores[0].window[0]), "MM-STEP")
    state, _ = purchasing(state, {PRODUCE: [0]})
    rejected(state, 0, line(BAKERY), "MM-STEP")


def test_MM_GAME_OVER_no_command_after_the_end():
    state = replace(new_game(3), step=OVER, placing=None, end="third_menu")
    rejected(state, 0, line(PRODUCE), "MM-GAME-OVER")
    assert ENGINE.to_act(state) == frozenset()


# Place Pawns


def test_MM_PLACE_ORDER_clockwise_one_pawn_at_a_time_from_first_chef():
    state = new_game(3, first="1")
    order = []
    for _ in range(12):
        (seat,) = ENGINE.to_act(state)
        order.append(seat)
        state, _ = fold.play(ENGINE, state, seat, line(PRODUCE))
    assert order == [1, 2, 0] * 4
    assert state.step == PURCHASE


def test_MM_PLACE_LINE_joins_the_bottom_of_the_stack_and_chefs_may_queue_twice():
    state = new_game(2)
    state, facts = run(state, (0, line(BAKERY)), (1, line(BAKERY)), (0, line(BAKERY)))
    assert state.stores[BAKERY].line == (0, 1, 0)
    assert [f["position"] for f in of_type(facts, "pawn_placed")] == [1, 2, 3]


def test_MM_PLACE_OWN_one_owner_per_store_and_several_stores_allowed():
    state = new_game(3)
    state, _ = run(state, (0, own(PRODUCE)), (1, line(BAKERY)), (2, line(PRODUCE)))
    assert state.stores[PRODUCE].owner == 0
    state, _ = run(state, (0, own(BUTCHER)))
    assert state.stores[BUTCHER].owner == 0
    error = rejected(state, 1, own(PRODUCE), "MM-PLACE-OWN")
    assert "Ann already owns the Produce Stand" in error.message


def test_MM_PLACE_COIN_once_per_round_and_only_while_the_bank_has_coins():
    state = new_game(3)
    state, _ = run(state, (0, coin()))
    assert state.bank == 5 and state.chefs[0].coin_waiting and state.chefs[0].coins == 6
    state, _ = run(state, (1, line(PRODUCE)), (2, line(PRODUCE)))
    rejected(state, 0, coin(), "MM-PLACE-COIN")
    empty = replace(new_game(3), bank=0)
    rejected(empty, 0, coin(), "MM-PLACE-COIN")


def test_MM_I2_no_queue_where_owned_no_ownership_where_queued():
    state = new_game(2)
    state, _ = run(state, (0, own(PRODUCE)), (1, line(BUTCHER)))
    rejected(state, 0, line(PRODUCE), "MM-I2")
    state, _ = run(state, (0, line(BAKERY)), (1, line(PRODUCE)))
    rejected(state, 0, own(BAKERY), "MM-I2")
    assert ENGINE.checks(own(BAKERY)).index("MM-I2") > 0


def test_MM_I1_two_to_six_chefs_supermarket_only_with_four():
    with pytest.raises(RuleViolation) as caught:
        ENGINE.setup(("A",), {}, PACK, Rng(b"\x00" * 32))
    assert caught.value.rule_id == "MM-I1"
    with pytest.raises(RuleViolation):
        ENGINE.setup(tuple("ABCDEFG"), {}, PACK, Rng(b"\x00" * 32))
    rejected(new_game(3), 0, line(MARKET), "MM-I1")
    state, _ = run(new_game(4), (0, line(MARKET)))
    assert state.stores[MARKET].line == (0,)
    # with 6 chefs (as with 3 to 5) coins spent at an unowned store return to the bank
    state = window(new_game(6), PRODUCE, ["produce-01", "produce-02", "produce-03"])
    state, _ = purchasing(state, {PRODUCE: [0]})
    state, facts = run(state, (0, buy("produce-01")), (0, finish()))
    assert of_type(facts, "coins_to_bank") == [
        {"type": "coins_to_bank", "store": "produce-stand", "coins": 1}
    ]
    assert state.bank == 12 + 1


def test_MM_I8_a_chef_owning_every_store_with_no_coin_keeps_the_pawn():
    state = new_game(2)
    state = replace(state, bank=0)
    state, facts = run(
        state, (0, own(PRODUCE)), (1, line(PRODUCE)), (0, own(BUTCHER)), (1, line(BUTCHER))
    )
    state, facts = run(state, (0, own(BAKERY)), (1, line(BAKERY)))
    unplaced = of_type(facts, "pawns_unplaced")
    assert unplaced == [{"type": "pawns_unplaced", "seat": 0, "count": 1}]
    state, facts = run(state, (1, line(BAKERY)))
    assert state.step == PURCHASE


# Purchase Ingredients


def test_MM_PURCHASE_ORDER_produce_then_butcher_then_bakery_then_supermarket():
    state = new_game(4)
    state, _ = purchasing(state, {MARKET: [0], BAKERY: [1], BUTCHER: [2], PRODUCE: [3]})
    order = []
    while state.step == PURCHASE:
        turn = state.turn
        assert turn is not None
        order.append(turn.store)
        state, _ = fold.play(ENGINE, state, turn.seat, leave())
    assert order == [PRODUCE, BUTCHER, BAKERY, MARKET]


def test_MM_PURCHASE_FIFO_top_of_the_stack_buys_first():
    state, _ = purchasing(new_game(3), {PRODUCE: [2, 0, 1]})
    assert ENGINE.to_act(state) == {2}
    state, _ = run(state, (2, leave()))
    assert ENGINE.to_act(state) == {0}
    rejected(state, 1, leave(), "MM-TURN-ORDER")


def test_MM_PURCHASE_ONE_one_card_from_this_store_window_per_turn():
    state = window(new_game(3), PRODUCE, ["produce-01", "produce-08", "produce-15"])
    state, _ = purchasing(state, {PRODUCE: [0, 1]})
    rejected(state, 0, buy("bakery-01"), "MM-PURCHASE-ONE")
    state, _ = run(state, (0, buy("produce-08")))
    error = rejected(state, 0, buy("produce-01"), "MM-PURCHASE-ONE")
    assert "Ann already bought" in error.message


def test_MM_PURCHASE_COST_rulebook_example_zach_pays_four():
    """Four Chef Caps in the Produce Stand stack: Zach pays 4, whoever's caps they are."""
    names = ("Zach", "Bob", "Cat")
    state = window(new_game(3, names=names), PRODUCE, ["produce-01", "produce-08", "produce-15"])
    state, _ = purchasing(state, {PRODUCE: [0, 1, 0, 2]})
    state, facts = run(state, (0, buy("produce-08")), (0, finish()))
    assert of_type(facts, "purchased")[0]["cost"] == 4
    assert state.chefs[0].coins == 2
    state, facts = run(state, (1, buy("produce-01")))
    assert of_type(facts, "purchased")[0]["cost"] == 3 and state.chefs[1].coins == 3


def test_MM_COINS_OWNER_coins_paid_to_the_owner_collected_at_clean_up():
    state = window(new_game(3), BUTCHER, ["butcher-01", "butcher-08", "butcher-15"])
    state, _ = purchasing(state, {BUTCHER: [1, 2]}, owners={BUTCHER: 0})
    state, facts = run(state, (1, buy("butcher-01")))
    bought = of_type(facts, "purchased")[0]
    assert (bought["cost"], bought["paid_to"], bought["coins_to"]) == (2, 0, "owner")
    assert state.stores[BUTCHER].pot == 2 and state.chefs[0].coins == 6
    state, facts = run(state, (1, finish()), (2, buy("butcher-08")), (2, finish()))
    assert of_type(facts, "owner_collected")[0]["coins"] == 3
    assert state.chefs[0].coins == 9 and state.stores[BUTCHER].pot == 0


def test_MM_COINS_NEXT_ROUND_coins_earned_this_round_cannot_be_spent():
    state = window(new_game(3), PRODUCE, ["produce-01", "produce-08", "produce-15"])
    state = give(state, 0, coins=0)
    state, _ = purchasing(state, {PRODUCE: [1, 2], BAKERY: [0]}, owners={PRODUCE: 0})
    state, facts = run(
        state, (1, buy("produce-01")), (1, finish()), (2, buy("produce-08")), (2, finish())
    )
    left = of_type(facts, "left_line")
    assert left == [
        {
            "type": "left_line",
            "seat": 0,
            "store": "bakery",
            "reason": "cannot_pay",
            "cost": 1,
            "coins": 0,
            "nothing_to_do": True,  # an empty basket completes no Menu: the turn passes
        }
    ]
    assert state.chefs[0].coins == 3  # collected at clean-up, for next round


def test_MM_COINS_UNOWNED_two_chefs_coins_carry_over_to_the_next_owner():
    state = window(new_game(2), BAKERY, ["bakery-01", "bakery-08", "bakery-15"])
    state, _ = purchasing(state, {BAKERY: [0, 1]})
    state, facts = run(
        state, (0, buy("bakery-01")), (0, finish()), (1, buy("bakery-08")), (1, finish())
    )
    assert of_type(facts, "coins_stay") == [{"type": "coins_stay", "store": "bakery", "coins": 3}]
    assert state.stores[BAKERY].pot == 3 and state.bank == 4
    # next round nobody owns it: still there; the round after, Bob owns it and collects all
    state, _ = purchasing(state, {BAKERY: [0]})
    state, _ = run(state, (0, buy(state.stores[BAKERY].window[0])), (0, finish()))
    assert state.stores[BAKERY].pot == 4
    state, _ = purchasing(state, {BAKERY: [0]}, owners={BAKERY: 1})
    bob = state.chefs[1].coins
    state, facts = run(state, (0, leave()))
    assert of_type(facts, "owner_collected")[0]["coins"] == 4
    assert state.chefs[1].coins == bob + 4 and state.stores[BAKERY].pot == 0


def test_MM_LEAVE_LINE_without_buying_before_buying_only():
    state, _ = purchasing(new_game(3), {PRODUCE: [0, 1]})
    state, facts = run(state, (0, leave()))
    assert of_type(facts, "left_line")[0]["reason"] == "chose"
    assert state.chefs[0].coins == 6 and ENGINE.to_act(state) == {1}
    state, _ = run(state, (1, buy(state.stores[PRODUCE].window[0])))
    rejected(state, 1, leave(), "MM-LEAVE-LINE")


def test_MM_SOLD_OUT_ruleset_1_after_three_sales_the_rest_of_the_line_leaves():
    state = window(new_game(3, ruleset="1"), PRODUCE, ["produce-01", "produce-08", "produce-15"])
    state, _ = purchasing(state, {PRODUCE: [0, 1, 2, 0, 1], BAKERY: [2]})
    state, facts = run(
        state,
        (0, buy("produce-01")),
        (0, finish()),
        (1, buy("produce-08")),
        (1, finish()),
        (2, buy("produce-15")),
    )
    assert of_type(facts, "sold_out") == [
        {"type": "sold_out", "store": "produce-stand", "left": [0, 1]}
    ]
    state, _ = run(state, (2, finish()))
    assert state.turn is not None and state.turn.store == BAKERY


def test_MM_I3_ruleset_1_a_chef_who_cannot_pay_leaves_and_cost_is_the_stack_now():
    state = give(new_game(3, ruleset="1"), 1, coins=2)
    state, facts = purchasing(state, {PRODUCE: [1, 0, 2]})
    assert of_type(facts, "left_line")[0] | {} == {
        "type": "left_line",
        "seat": 1,
        "store": "produce-stand",
        "reason": "cannot_pay",
        "cost": 3,
        "coins": 2,
    }
    assert of_type(facts, "turn_started")[0] == {
        "type": "turn_started",
        "seat": 0,
        "store": "produce-stand",
        "cost": 2,
    }


def test_MM_I9_an_exhausted_deck_leaves_the_window_short_and_an_empty_window_is_sold_out():
    state = window(new_game(3, ruleset="1"), PRODUCE, ["produce-01"])
    state = replace(state, stores=(replace(state.stores[0], deck=()), *state.stores[1:]))
    state, _ = purchasing(state, {PRODUCE: [0, 1]})
    state, facts = run(state, (0, buy("produce-01")))
    assert of_type(facts, "sold_out")[0]["left"] == [1]
    state, facts = run(state, (0, finish()))
    assert state.stores[PRODUCE].window == () and state.step == PLACE
    state, facts = purchasing(state, {PRODUCE: [2, 0]})
    assert of_type(facts, "sold_out")[0]["left"] == [2, 0]


def test_MM_I9_MM_I3_from_ruleset_2_a_line_at_a_sold_out_store_keeps_a_turn_for_menus():
    """The default ruleset: the Produce Stand's deck is out, so its last card sells out the
    store and its window stays empty after the clean-up; Bob, next in line, cannot buy
    but keeps his turn, since he can complete Tomato Bruschetta (a community Menu); once
    he has, nothing is left to do in it and it passes by itself."""
    state = window(new_game(3), PRODUCE, ["produce-01"])
    assert state.version == 2
    state = replace(state, stores=(replace(state.stores[0], deck=()), *state.stores[1:]))
    state = community(state, ["menu-05", "menu-02", "menu-03"])
    state = give(state, 1, basket=["produce-08", "bakery-01"])
    state, _ = purchasing(state, {PRODUCE: [0, 1]})
    state, facts = run(state, (0, buy("produce-01")))
    assert of_type(facts, "sold_out") == [
        {"type": "sold_out", "store": "produce-stand", "left": [], "in_line": [1]}
    ]
    state, facts = run(state, (0, finish()))
    assert of_type(facts, "turn_started")[0]["cannot_buy"] == "sold_out"
    assert state.turn is not None and state.turn.seat == 1
    bruschetta = completion("menu-05", tomato="produce-08", bread="bakery-01")
    state, facts = run(state, (1, complete(bruschetta)))  # then nothing is left: it passes
    assert of_type(facts, "menu_completed")[0]["seat"] == 1
    assert of_type(facts, "clean_up") and state.step == PLACE
    assert state.stores[PRODUCE].window == ()  # nothing to restock it from


# Basket, discards, Menus


def test_MM_BASKET_SIZE_seventh_card_forces_menu_or_discard():
    basket = ["produce-01", "produce-02", "produce-15", "butcher-15", "bakery-22", "bakery-23"]
    state = give(new_game(3), 0, basket=basket, menus=["menu-05", "menu-02"])
    state = window(
        community(state, ["menu-03", "menu-04", "menu-06"]),
        BAKERY,
        ["bakery-01", "bakery-08", "bakery-15"],
    )
    state, _ = purchasing(state, {BAKERY: [0]})
    state, facts = run(state, (0, buy("bakery-01")))
    assert of_type(facts, "basket_full") == [{"type": "basket_full", "seat": 0, "basket": 7}]
    rejected(state, 0, finish(), "MM-BASKET-SIZE")
    kinds = {c.WhichOneof("action") for c in ENGINE.legal_commands(state, 0)}
    assert kinds == {"discard", "complete_menus"}
    # two broccoli as a Power Food for the tomato of Tomato Bruschetta, with the bread
    menu = completion("menu-05", tomato=("broccoli", "produce-01", "produce-02"), bread="bakery-01")
    state, facts = run(state, (0, complete(menu)))
    assert len(state.chefs[0].basket) == 4
    state, _ = run(state, (0, finish()))
    assert state.step == PLACE


def test_MM_DISCARD_only_with_seven_and_shuffled_back_into_its_deck():
    basket = ["produce-01", "produce-02", "produce-15", "butcher-15", "bakery-22", "bakery-23"]
    state = give(new_game(3), 0, basket=basket, menus=["menu-05", "menu-02"])
    state = window(state, BAKERY, ["bakery-01", "bakery-08", "bakery-15"])
    state, _ = purchasing(state, {BAKERY: [0, 1]})
    rejected(state, 0, discard("produce-01"), "MM-DISCARD")
    state, _ = run(state, (0, buy("bakery-08")))
    rejected(state, 0, discard("bakery-01"), "MM-DISCARD")
    deck, rng = state.stores[BUTCHER].deck, state.rng
    state, facts = run(state, (0, discard("butcher-15")))
    assert of_type(facts, "discarded") == [
        {"type": "discarded", "seat": 0, "card": "butcher-15", "deck": "butcher-shop"}
    ]
    expected, rng = rng.shuffle(DECK_LABELS[1], (*deck, "butcher-15"))
    assert state.stores[BUTCHER].deck == expected and state.rng == rng
    assert "butcher-15" not in state.chefs[0].basket and ENGINE.to_act(state) == {1}


def test_MM_I4_menus_before_or_after_buying_on_the_own_turn_only():
    state = give(new_game(3), 0, basket=["produce-08"], menus=["menu-05", "menu-02"])
    state = give(state, 1, basket=["bakery-02"])
    state = window(state, BAKERY, ["bakery-01", "bakery-08", "bakery-15"])
    state, _ = purchasing(state, {BAKERY: [0, 1]})
    menu = completion("menu-05", tomato="produce-08", bread="bakery-01")
    rejected(state, 1, complete(menu), "MM-TURN-ORDER")
    rejected(state, 0, finish(), "MM-I4")
    state, _ = run(state, (0, buy("bakery-01")))
    state, facts = run(state, (0, complete(menu)), (0, finish()))
    assert of_type(facts, "menu_completed")[0]["stars"] == 1 + 1
    # Bob's turn now: he may complete a Menu before he buys
    assert state.turn is not None and state.turn.seat == 1
    state = give(state, 1, basket=["butcher-01", "bakery-02"], menus=["menu-01"])
    state, _ = run(
        state, (1, complete(completion("menu-01", salmon="butcher-01", bread="bakery-02")))
    )
    assert (
        state.turn is not None and state.turn.bought is False and len(state.chefs[1].completed) == 1
    )


def test_MM_MENU_SOURCE_only_own_secret_or_community_menus():
    state = give(new_game(3), 0, basket=["produce-08", "bakery-01"], menus=["menu-01"])
    state = give(state, 1, menus=["menu-05"])
    state, _ = purchasing(state, {PRODUCE: [0]})
    error = rejected(
        state,
        0,
        complete(completion("menu-05", tomato="produce-08", bread="bakery-01")),
        "MM-MENU-SOURCE",
    )
    assert "Tomato Bruschetta" in error.message


def test_MM_MENU_INGREDIENTS_every_ingredient_once_from_the_basket():
    state = give(new_game(3), 0, basket=["produce-08", "bakery-01"], menus=["menu-05", "menu-11"])
    state, _ = purchasing(state, {PRODUCE: [0]})
    rejected(state, 0, complete(completion("menu-05", tomato="produce-08")), "MM-MENU-INGREDIENTS")
    rejected(
        state,
        0,
        complete(completion("menu-05", tomato="produce-09", bread="bakery-01")),
        "MM-MENU-INGREDIENTS",
    )
    twice = completion("menu-05", tomato="produce-08", bread="bakery-01")
    twice.fulfilments.add(ingredient="bread", card_id="bakery-01")
    rejected(state, 0, complete(twice), "MM-MENU-INGREDIENTS")
    both = [completion("menu-05", tomato="produce-08", bread="bakery-01")] * 2
    error = rejected(state, 0, complete(*both), "MM-MENU-SOURCE")
    # told as it is: the chef's own secret Menu, named twice (it was "neither ...'s secret
    # Menu nor a community Menu", which it is)
    assert error.message == "Tomato Bruschetta is named twice; each Menu is completed once"


def test_MM_MENU_REPLACE_community_menu_replaced_in_place_secret_not():
    state = give(
        new_game(3),
        0,
        basket=["produce-08", "bakery-01", "produce-09", "bakery-02"],
        menus=["menu-01"],
    )
    state = community(state, ["menu-02", "menu-05", "menu-03"])
    top = state.menu_deck[0]
    state, _ = purchasing(state, {PRODUCE: [0]})
    state, facts = run(
        state, (0, complete(completion("menu-05", tomato="produce-08", bread="bakery-01")))
    )
    assert state.community == ("menu-02", top, "menu-03")
    assert of_type(facts, "community_menu_revealed") == [
        {
            "type": "community_menu_revealed",
            "menu": top,
            "name": PACK.menu(top).name,
            "ingredients": list(PACK.menu(top).ingredients),
            "replacing": "menu-05",
        }
    ]
    assert of_type(facts, "menu_completed")[0]["source"] == "community"
    assert state.chefs[0].menus == ("menu-01",)


def test_MM_POWER_FOOD_broccoli_for_tomato_and_salmon_for_steak():
    """Rulebook: 2 broccoli fulfil a tomato; 2 salmon fulfil a steak."""
    basket = ["produce-01", "produce-02", "butcher-01", "butcher-02", "produce-22", "bakery-01"]
    state = give(new_game(3), 0, basket=basket, menus=["menu-05", "menu-02"])
    state, _ = purchasing(state, {PRODUCE: [0]})
    tomato = completion(
        "menu-05", tomato=("broccoli", "produce-01", "produce-02"), bread="bakery-01"
    )
    steak = completion(
        "menu-02", steak=("salmon", "butcher-01", "butcher-02"), lettuce="produce-22"
    )
    state, facts = run(state, (0, complete(tomato, steak)))
    done = of_type(facts, "menu_completed")
    assert done[0]["uses"][0] == {
        "ingredient": "tomato",
        "cards": ["produce-01", "produce-02"],
        "power_food": "broccoli",
        "stars": 1,
    }
    assert done[1]["uses"][0]["power_food"] == "salmon"
    assert state.chefs[0].basket == ()


def test_MM_POWER_FOOD_only_for_the_same_store_and_same_ingredient():
    basket = ["produce-01", "produce-08", "butcher-01", "butcher-02", "bakery-01"]
    state = give(new_game(3), 0, basket=basket, menus=["menu-05"])
    state, _ = purchasing(state, {PRODUCE: [0]})
    salmon_for_tomato = completion(
        "menu-05", tomato=("salmon", "butcher-01", "butcher-02"), bread="bakery-01"
    )
    rejected(state, 0, complete(salmon_for_tomato), "MM-POWER-FOOD")
    mixed = completion(
        "menu-05", tomato=("broccoli", "produce-01", "produce-08"), bread="bakery-01"
    )
    rejected(state, 0, complete(mixed), "MM-POWER-FOOD")


def test_MM_SCORE_two_star_plus_three_star_broccoli_scores_three():
    """Rulebook: a 2-star and a 3-star broccoli for another produce ingredient add 3 stars."""
    state = give(
        new_game(3),
        0,
        basket=["produce-03", "produce-06", "bakery-06", "produce-15"],
        menus=["menu-05"],
    )
    state, _ = purchasing(state, {PRODUCE: [0]})
    tomato = completion(
        "menu-05", tomato=("broccoli", "produce-03", "produce-06"), bread="bakery-06"
    )
    state, facts = run(state, (0, complete(tomato)))
    assert of_type(facts, "menu_completed")[0]["stars"] == 3 + 3
    assert state.chefs[0].stars() == 6  # the leftover carrot scores nothing
    assert ENGINE.outcome(state).points[0] == 6


def test_MM_I5_dual_card_fulfils_one_ingredient_with_its_own_stars():
    # butcher-29 shows salmon (1 star) and steak (2 stars); produce-32 tomato(1)/lettuce(2)
    state = give(
        new_game(3), 0, basket=["butcher-29", "produce-32", "produce-29"], menus=["menu-02"]
    )
    state, _ = purchasing(state, {PRODUCE: [0]})
    rejected(
        state, 0, complete(completion("menu-02", steak="produce-32", lettuce="butcher-29")), "MM-I5"
    )
    state, facts = run(
        state, (0, complete(completion("menu-02", steak="butcher-29", lettuce="produce-32")))
    )
    assert of_type(facts, "menu_completed")[0]["stars"] == 2 + 2
    # a dual card and a single card both showing broccoli make a Power Food
    state = give(state, 0, basket=["produce-29", "produce-07", "bakery-01"], menus=["menu-05"])
    power = completion(
        "menu-05", tomato=("broccoli", "produce-29", "produce-07"), bread="bakery-01"
    )
    state, facts = run(state, (0, complete(power)))
    assert of_type(facts, "menu_completed")[0]["uses"][0]["stars"] == 3


# Clean Up


def test_MM_CLEANUP_OWNERS_and_MM_CLEANUP_COIN_collect_at_clean_up():
    state = window(new_game(3), PRODUCE, ["produce-01", "produce-08", "produce-15"])
    state = give(state, 2, coin_waiting=True)
    state = replace(state, bank=5)
    state, facts = purchasing(state, {PRODUCE: [1]}, owners={PRODUCE: 0})
    state, facts = run(state, (1, buy("produce-01")), (1, finish()))
    assert of_type(facts, "owner_collected") == [
        {"type": "owner_collected", "seat": 0, "store": "produce-stand", "coins": 1}
    ]
    assert of_type(facts, "bank_coin_collected") == [{"type": "bank_coin_collected", "seat": 2}]
    assert state.chefs[2].coins == 7 and not state.chefs[2].coin_waiting
    assert [s.owner for s in state.stores] == [None, None, None]


def test_MM_CLEANUP_RESTOCK_windows_and_supermarket_refilled():
    state = new_game(4)
    market = state.stores[MARKET].window
    state, _ = purchasing(state, {PRODUCE: [0], MARKET: [1]})
    bought = state.stores[PRODUCE].window[0]
    state, _ = run(state, (0, buy(bought)), (0, finish()))
    state, facts = run(state, (1, buy(market[1])), (1, finish()))
    restocked = {f["store"]: f["cards"] for f in of_type(facts, "restocked")}
    assert len(state.stores[PRODUCE].window) == 3 and bought not in state.stores[PRODUCE].window
    assert PACK.card(restocked["supermarket"][0]).deck == "butcher-shop"
    decks = sorted(PACK.card(c).deck for c in state.stores[MARKET].window)
    assert decks == ["bakery", "butcher-shop", "produce-stand"]


def test_MM_CLEANUP_FIRST_CHEF_token_passes_clockwise():
    state = new_game(3, first="2")
    state, facts = purchasing(state, {})
    assert of_type(facts, "first_chef_passed") == [{"type": "first_chef_passed", "seat": 0}]
    assert state.first_chef == 0 and state.placing == 0 and state.round == 2


# End and scoring


def test_MM_END_THIRD_MENU_round_finishes_then_scores():
    basket = ["produce-08", "bakery-01", "produce-22", "butcher-08", "butcher-01", "bakery-02"]
    state = give(new_game(3), 0, basket=basket, menus=["menu-05", "menu-02"])
    state = community(state, ["menu-01", "menu-03", "menu-04"])
    state = window(state, BAKERY, ["bakery-03", "bakery-08", "bakery-15"])
    state, _ = purchasing(state, {PRODUCE: [0], BAKERY: [1]})
    three = [
        completion("menu-05", tomato="produce-08", bread="bakery-01"),
        completion("menu-02", steak="butcher-08", lettuce="produce-22"),
        completion("menu-01", salmon="butcher-01", bread="bakery-02"),
    ]
    state, facts = run(state, (0, complete(*three)))
    assert of_type(facts, "last_round") == [{"type": "last_round", "seat": 0, "round": 1}]
    state, _ = run(state, (0, leave()))
    assert state.step == PURCHASE and ENGINE.to_act(state) == {1}  # the round goes on
    state, facts = run(state, (1, buy("bakery-03")), (1, finish()))
    assert state.step == OVER and state.end == "third_menu"
    assert of_type(facts, "game_over")[0]["points"] == [state.chefs[0].stars(), 0, 0]


def test_MM_I6_clean_up_happens_before_scoring():
    basket = ["produce-08", "bakery-01", "produce-22", "butcher-08", "butcher-01", "bakery-02"]
    state = give(new_game(3), 0, basket=basket, menus=["menu-05", "menu-02"], coin_waiting=True)
    state = community(state, ["menu-01", "menu-03", "menu-04"])
    state, _ = purchasing(state, {PRODUCE: [0]}, owners={BAKERY: 1})
    three = [
        completion("menu-05", tomato="produce-08", bread="bakery-01"),
        completion("menu-02", steak="butcher-08", lettuce="produce-22"),
        completion("menu-01", salmon="butcher-01", bread="bakery-02"),
    ]
    state, facts = run(state, (0, complete(*three)), (0, leave()))
    assert of_type(facts, "bank_coin_collected")
    assert of_type(facts, "game_over")[0]["coins"][0] == 7


def test_MM_TIE_most_coins_then_shared_victory():
    state = replace(new_game(3), step=OVER, end="round_limit")
    state = give(give(give(state, 0, coins=3), 1, coins=5), 2, coins=5)
    assert ENGINE.outcome(state).winners == (1, 2)
    assert ENGINE.outcome(give(state, 2, coins=4)).winners == (1,)
    assert ENGINE.outcome(state).tiebreak == (3, 5, 5)


def test_MM_I7_ruleset_1_round_limit_and_no_menus_left_end_the_game():
    state = new_game(2, ruleset="1", round_limit="1")
    state, facts = purchasing(state, {})
    assert state.step == OVER and state.end == "round_limit"
    assert of_type(facts, "game_over")[0]["reason"] == "round_limit"
    state = new_game(2, ruleset="1")
    assert state.round_limit == 30 and ENGINE.spec.rulesets["1"]["round_limit"] == "30"
    chefs = tuple(replace(c, menus=()) for c in state.chefs)
    state = replace(state, chefs=chefs, community=(), menu_deck=())
    state, _ = purchasing(state, {})
    assert state.end == "no_menus_left"
    state = new_game(2, ruleset="1")
    state, _ = purchasing(stores_emptied(state), {})
    assert state.end == "no_ingredients_left"
