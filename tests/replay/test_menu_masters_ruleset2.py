"""Menu Masters ruleset 2: the points of the rulebook ruleset 1 read otherwise, each a
scenario citing its rule id with the rulebook's sentence; and the deal re-derived from
the engine's documented order alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations, product

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import LEGAL_CAP, SPECTATOR, RuleViolation, capped
from feastlog.replay.games.menu_masters import ENGINE
from feastlog.replay.games.menu_masters.menus import (
    card_refusal,
    ingredients_refusal,
    power_food_refusal,
    use_of,
)
from feastlog.replay.games.menu_masters.pack import MenuCard
from feastlog.replay.games.menu_masters.spec import DECK_LABELS, FIRST_SEAT_LABEL, MENU_LABEL
from feastlog.replay.games.menu_masters.state import OVER, PLACE, State, StateV2, StateV3, Use
from feastlog.replay.record.rng import Rng
from feastlog.v1 import menu_masters_pb2 as pb
from feastlog.v1 import record_pb2
from tests.replay.test_menu_masters_support import (
    BAKERY,
    NAMES,
    PACK,
    PRODUCE,
    buy,
    community,
    complete,
    completion,
    discard,
    finish,
    give,
    leave,
    new_game,
    of_type,
    purchasing,
    run,
    stores_emptied,
    window,
)

BRUSCHETTA = completion("menu-05", tomato="produce-08", bread="bakery-01")


def _refused(state: State, seat: int, command: pb.MenuMastersCommand, rule_id: str) -> str:
    try:
        fold.play(ENGINE, state, seat, command)
    except RuleViolation as refused:
        assert refused.rule_id == rule_id, refused
        return refused.message
    raise AssertionError(f"{command} was accepted")


def test_MM_I3_a_chef_who_cannot_pay_has_the_turn_completes_a_menu_then_leaves():
    """MM-I3. "Chefs may complete 1 or more Menu cards on their turn." and "Chefs may choose
    to remove their Chef Cap from a store without purchasing an ingredient on their turn."
    The chef at the top of the line has a turn whether or not they can pay."""
    state = give(new_game(3), 1, basket=["produce-08", "bakery-01"], menus=["menu-05"], coins=1)
    state, facts = purchasing(state, {PRODUCE: [1, 0]})
    assert of_type(facts, "turn_started") == [
        {
            "type": "turn_started",
            "seat": 1,
            "store": "produce-stand",
            "cost": 2,
            "cannot_buy": "cannot_pay",
        }
    ]
    assert ENGINE.to_act(state) == {1}
    assert ENGINE.view(state, SPECTATOR)["turn"]["cannot_buy"] == "cannot_pay"
    legal = ENGINE.legal_commands(state, 1)
    assert {c.WhichOneof("action") for c in legal} == {"complete_menus", "leave_line"}
    message = _refused(state, 1, buy(state.stores[PRODUCE].window[0]), "MM-PURCHASE-COST")
    assert message == "Bob has 1 coin and cannot pay 2: complete Menus, then leave the line"
    waiting = give(state, 1, coin_waiting=True)  # MM-COINS-NEXT-ROUND: not spendable yet
    message = _refused(waiting, 1, buy(state.stores[PRODUCE].window[0]), "MM-PURCHASE-COST")
    assert message == (
        "Bob has 1 coin and cannot pay 2 (the bank coin can be spent from the next round): "
        "complete Menus, then leave the line"
    )
    state, facts = run(state, (1, complete(BRUSCHETTA)))
    assert of_type(facts, "menu_completed")[0]["name"] == "Tomato Bruschetta"
    # nothing else is possible in the turn now (empty basket): it passes by itself
    assert of_type(facts, "left_line") == [
        {
            "type": "left_line",
            "seat": 1,
            "store": "produce-stand",
            "reason": "cannot_pay",
            "cost": 2,
            "coins": 1,
            "nothing_to_do": True,
        }
    ]
    assert state.turn is not None and state.turn.seat == 0  # Ann now pays 1
    assert ENGINE.narrate(of_type(facts, "left_line")[0], NAMES) == (
        "Bob cannot pay 2, with nothing else to do, and leaves the Produce Stand line."
    )


def test_MM_I3_ruleset_1_removed_that_chef_without_a_turn():
    """MM-I3, ruleset 1 (kept for its recorded games): the same chef left at once."""
    state = give(
        new_game(3, ruleset="1"), 1, basket=["produce-08", "bakery-01"], menus=["menu-05"], coins=1
    )
    state, facts = purchasing(state, {PRODUCE: [1, 0]})
    assert of_type(facts, "left_line")[0]["reason"] == "cannot_pay"
    assert state.turn is not None and state.turn.seat == 0 and not state.chefs[1].completed


def test_MM_I3_MM_SOLD_OUT_the_rest_of_a_sold_out_line_still_has_its_turns():
    """MM-SOLD-OUT, MM-I3. "If all 3 ingredients from a single store are sold, that store is
    sold out, and the remaining chefs in line may not buy any ingredients from that store
    this round." They may not buy; they still have their turn for Menus."""
    state = window(new_game(3), PRODUCE, ["produce-01", "produce-09", "produce-15"])
    state = give(state, 2, basket=["produce-08", "bakery-01"], menus=["menu-05"])
    state, _ = purchasing(state, {PRODUCE: [0, 1, 0, 2]})
    state, facts = run(
        state,
        (0, buy("produce-01")),
        (0, finish()),
        (1, buy("produce-09")),
        (1, finish()),
        (0, buy("produce-15")),
    )
    sold = of_type(facts, "sold_out")
    assert sold == [{"type": "sold_out", "store": "produce-stand", "left": [], "in_line": [2]}]
    assert ENGINE.narrate(sold[0], NAMES) == (
        "The Produce Stand is sold out; Cat stays in line but may not buy there."
    )
    state, facts = run(state, (0, finish()))
    assert of_type(facts, "turn_started")[0]["cannot_buy"] == "sold_out"
    _refused(state, 2, buy("produce-01"), "MM-SOLD-OUT")
    state, facts = run(state, (2, complete(BRUSCHETTA)))
    assert len(state.chefs[2].completed) == 1 and of_type(facts, "left_line")[0]["nothing_to_do"]


def test_MM_I3_a_turn_with_nothing_possible_passes_by_itself_judged_publicly():
    """MM-I3: "a turn in which nothing is possible may pass by itself". Judged from what
    everyone sees (the basket, the community row, whether the chef holds secret Menus), so
    passing by itself reveals nothing about a chef's secret Menus."""
    base = give(new_game(3), 1, basket=["produce-08", "bakery-01"], coins=0)
    base = community(base, ["menu-02", "menu-03", "menu-06"])  # none needs tomato and bread
    outcomes = []
    for secret in (["menu-05"], ["menu-07"]):  # the Bruschetta is hers, or somewhere unseen
        state = give(base, 1, menus=secret)
        state, facts = purchasing(state, {PRODUCE: [1]})
        outcomes.append(state.turn is not None and state.turn.seat == 1)
    assert outcomes == [True, True]  # the same either way: Bruschetta might be hers
    empty = give(base, 1, basket=[], menus=["menu-05"])
    state, facts = purchasing(empty, {PRODUCE: [1]})
    assert of_type(facts, "left_line")[0]["nothing_to_do"] and state.step == PLACE
    no_secret = give(base, 1, menus=[])
    state, facts = purchasing(no_secret, {PRODUCE: [1]})
    assert of_type(facts, "left_line")[0]["nothing_to_do"]  # no Menu she could hold fits


def test_MM_I7_round_limit_is_off_and_the_game_ends_when_no_menu_can_be_completed():
    """MM-I7. "When a chef completes 3 Menu cards, all chefs finish the current round and then
    tally their scores." The rulebook ends the game only so; round_limit is an organiser's
    option, off by default; the game also ends once no Menu can be completed any more."""
    assert ENGINE.spec.option_defaults["round_limit"] == "off"
    state = replace(new_game(2), round=30)
    assert state.round_limit == 0
    state, _ = purchasing(state, {})
    assert state.step == PLACE and state.round == 31
    limited, facts = purchasing(replace(new_game(2, round_limit="3"), round=3), {})
    assert limited.step == OVER and of_type(facts, "game_over")[0]["reason"] == "round_limit"
    # every store empty: a chef can still complete a Menu from their own basket, so play on
    holding = give(stores_emptied(new_game(2)), 0, basket=["produce-08", "bakery-01"])
    holding = give(holding, 0, menus=["menu-05"])
    state, _ = purchasing(holding, {})
    assert state.step == PLACE
    # a basket that fits no Menu left, and nothing left to buy: the game ends
    state, facts = purchasing(give(holding, 0, menus=["menu-02"]), {})
    over = of_type(facts, "game_over")[0]
    assert state.step == OVER and over["reason"] == "no_menu_possible"
    assert "no Menu can be completed any more with the cards left" in str(
        ENGINE.narrate(over, NAMES)
    )


def hidden_bruschetta(ruleset: str) -> tuple[State, State]:
    """Two tables a spectator cannot tell apart, every store empty: Tomato Bruschetta
    (menu-05, which Ann's tomato and bread would complete) is in Bob's secret hand, or in
    the Menu deck.  No community Menu fits any basket."""
    base = new_game(2, ruleset=ruleset)
    base = stores_emptied(base)
    base = community(base, ["menu-02", "menu-03", "menu-06"])
    base = give(base, 0, basket=["produce-08", "bakery-01"], menus=["menu-01", "menu-04"])
    in_hand = give(base, 1, menus=["menu-05", "menu-07"])
    in_deck = give(base, 1, menus=["menu-07", "menu-08"])
    in_deck = replace(
        in_deck, menu_deck=("menu-05", *(m for m in in_deck.menu_deck if m != "menu-05"))
    )
    assert ENGINE.view(in_hand, SPECTATOR) == ENGINE.view(in_deck, SPECTATOR)
    return in_hand, in_deck


def test_MM_I7_ruleset_3_whether_play_goes_on_never_depends_on_where_a_hidden_menu_is():
    """MM-I7 (ruleset 3): the end of a table whose stores are all empty is judged from
    public information, so it is the same whichever hidden place Bruschetta is in; and
    once a whole round has passed with every store empty and no Menu completed, the game
    ends (Ann could complete Bruschetta only if it were hers, and it is not)."""
    in_hand, in_deck = hidden_bruschetta("3")
    after_hand, _ = purchasing(in_hand, {})
    after_deck, _ = purchasing(in_deck, {})
    assert after_hand.step == after_deck.step == PLACE  # Ann might hold a Menu she can make
    assert after_hand.end == after_deck.end == ""
    over_hand, facts_hand = purchasing(after_hand, {})
    over_deck, facts_deck = purchasing(after_deck, {})
    assert over_hand.step == over_deck.step == OVER
    for facts in (facts_hand, facts_deck):
        over = of_type(facts, "game_over")[0]
        assert over["reason"] == "stalled"
        assert "a whole round passed with every store empty and no Menu completed" in str(
            ENGINE.narrate(over, NAMES)
        )


def test_MM_I7_ruleset_3_a_menu_completed_with_every_store_empty_keeps_the_game_going():
    """A round with every store empty in which a Menu is completed is not a stalled one;
    the next round in which none is ends the game."""
    state = stores_emptied(new_game(2, ruleset="3"))
    state = community(state, ["menu-05", "menu-08", "menu-02"])  # Bruschetta, Salmon & Greens
    basket = ["produce-08", "bakery-01", "produce-01", "butcher-01"]
    state = give(state, 0, basket=basket, menus=["menu-01"])
    state, _ = purchasing(state, {})  # the first clean-up with every store empty
    assert isinstance(state, StateV3)
    assert state.step == PLACE and state.completed_when_empty == 0
    state, _ = purchasing(state, {PRODUCE: [0]})  # Ann queues at the empty Produce Stand
    assert state.turn is not None and state.turn.seat == 0
    state, facts = run(state, (0, complete(BRUSCHETTA)), (0, leave()))
    assert of_type(facts, "menu_completed") and state.step == PLACE  # played on
    assert isinstance(state, StateV3) and state.completed_when_empty == 1
    state, facts = purchasing(state, {})  # Ann keeps Salmon and Greens for later: too late
    assert state.step == OVER and of_type(facts, "game_over")[0]["reason"] == "stalled"


def test_MM_I7_ruleset_2_keeps_its_released_reading_for_its_records():
    """Ruleset 2 judged a table with every store empty from the chefs' secret Menus: its
    records fold as they were played (ruleset 3 is what new games follow)."""
    in_hand, in_deck = hidden_bruschetta("2")
    assert purchasing(in_hand, {})[0].end == "no_menu_possible"
    assert purchasing(in_deck, {})[0].end == ""


def test_MM_narration_agrees_in_number():
    """ "Brian leave the line" and "1 coin stay on" no more."""
    leave_one = {"type": "sold_out", "store": "bakery", "left": [1]}
    leave_two = {"type": "sold_out", "store": "bakery", "left": [1, 2]}
    assert ENGINE.narrate(leave_one, NAMES) == "The Bakery is sold out; Bob leaves the line."
    assert ENGINE.narrate(leave_two, NAMES) == "The Bakery is sold out; Bob and Cat leave the line."
    stay = {"type": "coins_stay", "store": "bakery", "coins": 1}
    assert ENGINE.narrate(stay, NAMES) == "1 coin stays on the Bakery board for its next owner."
    stay = {"type": "coins_stay", "store": "bakery", "coins": 3}
    assert ENGINE.narrate(stay, NAMES) == "3 coins stay on the Bakery board for its next owner."
    back = {"type": "coins_to_bank", "store": "bakery", "coins": 1}
    assert ENGINE.narrate(back, NAMES) == "1 coin from the unowned Bakery goes back to the bank."
    caps = {"type": "pawns_unplaced", "seat": 0, "count": 1}
    assert ENGINE.narrate(caps, NAMES) == (
        "Ann has nowhere to place 1 Chef Cap and keeps it off the board."
    )


def chained_menus(ruleset: str) -> tuple[State, pb.MenuMastersCommand, pb.MenuMastersCommand]:
    """Ann on her purchase turn, able to complete the community Tomato Bruschetta and the
    Salmon Toast on top of the face-down Menu deck that replaces it; the two completions."""
    basket = ["produce-08", "bakery-01", "butcher-01", "bakery-02"]
    state = give(new_game(3, ruleset=ruleset), 0, basket=basket, menus=["menu-12"])
    state = community(state, ["menu-02", "menu-05", "menu-03"])
    state = replace(state, menu_deck=("menu-01", *(m for m in state.menu_deck if m != "menu-01")))
    state, _ = purchasing(state, {PRODUCE: [0]})
    return (
        state,
        complete(completion("menu-05", tomato="produce-08", bread="bakery-01")),
        complete(completion("menu-01", salmon="butcher-01", bread="bakery-02")),
    )


def test_MM_MENU_SOURCE_ruleset_4_a_command_names_only_menus_the_chef_sees():
    """MM-MENU-SOURCE (ruleset 4). "If a chef completes a face up community Menu, it is
    immediately replaced with another Menu card from the deck" and "Place the Menu deck
    facedown": the replacement is revealed by the completion, so the command that makes it
    cannot already name it.  Before, a guess named after a community Menu was refused
    under one rule when it was the deck's top and under another when it was not, so a
    chef could read the face-down deck by guessing; now every guess gets the same answer,
    and the revealed Menu is completed by the next command (the turn goes on)."""
    state, bruschetta, salmon_toast = chained_menus("4")
    assert state.menu_deck[0] == "menu-01" and state.version == 4
    both = complete(*bruschetta.complete_menus.menus, *salmon_toast.complete_menus.menus)
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 0, both)
    assert caught.value.rule_id == "MM-MENU-SOURCE" and "Salmon Toast" in caught.value.message
    # a bogus completion then any guess: one rule, whichever Menu is on top of the deck
    empty = give(state, 0, basket=[])
    seen = set(empty.community) | set(empty.chefs[0].menus)
    answers = set()
    for menu in (m.id for m in PACK.menus if m.id not in seen):
        guess = complete(
            completion("menu-05", tomato="produce-08"), completion(menu, salmon="butcher-01")
        )
        with pytest.raises(RuleViolation) as caught:
            fold.play(ENGINE, empty, 0, guess)
        answers.add((caught.value.rule_id, caught.value.message.replace(PACK.menu(menu).name, "X")))
    assert answers == {("MM-MENU-SOURCE", "X is neither Ann's secret Menu nor a community Menu")}
    # one command, then the next: both Menus completed on the same turn
    state, facts = run(state, (0, bruschetta))
    assert state.community == ("menu-02", "menu-01", "menu-03")
    state, facts = run(state, (0, salmon_toast))
    assert [f["menu"] for f in of_type(facts, "menu_completed")] == ["menu-01"]
    assert state.turn is not None and state.turn.seat == 0


def test_MM_MENU_SOURCE_ruleset_3_still_folds_a_chained_completion_as_recorded():
    """MM-MENU-SOURCE (rulesets 1 to 3, kept for their records): one command could
    complete a community Menu and the Menu that replaced it."""
    state, bruschetta, salmon_toast = chained_menus("3")
    both = complete(*bruschetta.complete_menus.menus, *salmon_toast.complete_menus.menus)
    state, facts = run(state, (0, both))
    assert [f["menu"] for f in of_type(facts, "menu_completed")] == ["menu-05", "menu-01"]


@pytest.mark.parametrize("ruleset", ["1", "2", "3"])
def test_MM_MENU_SOURCE_rulesets_1_to_3_a_refused_guess_tells_nothing_of_the_deck(
    ruleset: str,
) -> None:
    """MM-MENU-SOURCE (rulesets 1 to 3, in games still running under them): a command
    naming a Menu its chef does not see is still taken when legal in all (the chained
    completion), but refused, it is refused under this rule in a wrong guess's words
    whichever Menu is on the deck's top (it was MM-MENU-INGREDIENTS when the guess was
    the top: a free read of the face-down deck)."""
    state, _, _ = chained_menus(ruleset)
    top = state.menu_deck[0]
    empty = give(state, 0, basket=[])
    seen = set(empty.community) | set(empty.chefs[0].menus)
    answers = {}
    for menu in (m.id for m in PACK.menus if m.id not in seen):
        guess = complete(
            completion("menu-05", tomato="produce-08"), completion(menu, salmon="butcher-01")
        )
        with pytest.raises(RuleViolation) as caught:
            fold.play(ENGINE, empty, 0, guess)
        answers[menu] = (
            caught.value.rule_id,
            caught.value.message.replace(PACK.menu(menu).name, "X"),
        )
    assert top in answers and len(answers) > 5
    assert set(answers.values()) == {
        ("MM-MENU-SOURCE", "X is neither Ann's secret Menu nor a community Menu")
    }
    # a guess first, the visible Menu second: the guess is named either way
    for menu in (top, next(m for m in answers if m != top)):
        guess = complete(
            completion(menu, salmon="butcher-01"), completion("menu-05", tomato="produce-08")
        )
        with pytest.raises(RuleViolation) as caught:
            fold.play(ENGINE, empty, 0, guess)
        assert caught.value.rule_id == "MM-MENU-SOURCE"
        assert caught.value.message.startswith(PACK.menu(menu).name)


def test_a_ruleset_1_genesis_folds_with_ruleset_1_state_and_options():
    """A recorded game folds under the ruleset version it was recorded with."""
    seats = [record_pb2.SeatInfo(name=n) for n in NAMES[:3]]
    old = record_pb2.Genesis(game_kind="menu-masters", ruleset_version="1", seats=seats)
    new = record_pb2.Genesis(game_kind="menu-masters", ruleset_version="2", seats=seats)
    third = record_pb2.Genesis(game_kind="menu-masters", ruleset_version="3", seats=seats)
    newest = record_pb2.Genesis(game_kind="menu-masters", ruleset_version="4", seats=seats)
    one, _ = fold.start(old, bytes(32), PACK)
    two, _ = fold.start(new, bytes(32), PACK)
    three, _ = fold.start(third, bytes(32), PACK)
    four, _ = fold.start(newest, bytes(32), PACK)
    assert type(one.game) is State and one.game.round_limit == 30 and one.game.version == 1
    assert type(two.game) is StateV2 and two.game.round_limit == 0 and two.game.version == 2
    assert type(three.game) is StateV3 and three.game.version == 3
    assert type(four.game) is StateV3 and four.game.version == 4
    assert three.game.completed_when_empty == -1
    assert ENGINE.spec.ruleset_version == "4"
    hashes = {fold.state_hash(f) for f in (one, two, three, four)}
    assert len(hashes) == 4  # the version enters the hash
    unknown = record_pb2.Genesis(game_kind="menu-masters", ruleset_version="9", seats=seats)
    try:
        fold.start(unknown, bytes(32), PACK)
    except ValueError as refused:
        assert "ruleset '9' is not one this build folds (1, 2, 3, 4)" in str(refused)
    else:
        raise AssertionError("an unknown ruleset version folded")


def test_the_deal_and_a_discard_follow_the_documented_order():
    """The module docstring's text alone re-derives the deal and a discard's reshuffle."""
    seed = bytes(range(32))
    state, _ = ENGINE.setup(NAMES[:4], {"first_seat": "random"}, PACK, Rng(seed))
    rng = Rng(seed)
    decks = []
    for deck, label in zip(("produce-stand", "butcher-shop", "bakery"), DECK_LABELS, strict=True):
        shuffled, rng = rng.shuffle(label, [c.id for c in PACK.cards if c.deck == deck])
        decks.append(list(shuffled))
    windows = [d[:3] for d in decks]
    decks = [d[3:] for d in decks]
    supermarket = [d.pop(0) for d in decks]  # the top card of each deck, in store order
    first, rng = rng.uniform(FIRST_SEAT_LABEL, 4)
    menus, rng = rng.shuffle(MENU_LABEL, [m.id for m in PACK.menus])
    hands: list[list[str]] = [[] for _ in range(4)]
    for k in range(8):  # one at a time clockwise from the First Chef, twice round
        hands[(first + k) % 4].append(menus[k])
    assert [list(s.window) for s in state.stores] == [*windows, supermarket]
    assert [list(s.deck) for s in state.stores[:3]] == decks
    assert state.first_chef == first and [list(c.menus) for c in state.chefs] == hands
    assert state.community == tuple(menus[8:11]) and state.menu_deck == tuple(menus[11:])
    # a discard goes to the bottom of its deck, and that whole deck is shuffled with its label
    basket = ["produce-01", "produce-02", "produce-15", "butcher-15", "bakery-22", "bakery-23"]
    state = give(replace(state, first_chef=0), 0, basket=basket)
    state = window(state, BAKERY, ["bakery-01", "bakery-08", "bakery-15"])
    state, _ = purchasing(state, {BAKERY: [0]})
    state, _ = run(state, (0, buy("bakery-01")))
    before, rng = list(state.stores[1].deck), state.rng
    state, _ = run(state, (0, discard("butcher-15")))
    expected, _ = rng.shuffle(DECK_LABELS[1], [*before, "butcher-15"])
    assert state.stores[1].deck == expected


def _accepted(
    basket: Sequence[str], menu: MenuCard, completion: pb.MenuMastersMenuCompletion
) -> tuple[Use, ...] | None:
    """The Uses of a completion the Menu rules accept (MM-I5, MM-POWER-FOOD,
    MM-MENU-INGREDIENTS), or None."""
    ways = completion.fulfilments
    if any(card_refusal(PACK, f) or power_food_refusal(PACK, f, "Ann") for f in ways):
        return None
    uses = tuple(use_of(PACK, f) for f in ways)
    return None if ingredients_refusal(basket, menu, uses, "Ann") else uses


def _every_way(basket: Sequence[str], menu_id: str) -> set[tuple]:
    """Brute force: every fulfilment of a Menu from the basket that the rules accept."""
    menu = PACK.menu(menu_id)
    slots = []
    for ingredient in menu.ingredients:
        options = [pb.MenuMastersFulfilment(ingredient=ingredient, card_id=card) for card in basket]
        for pair in combinations(basket, 2):
            for made_of in PACK.card(pair[0]).ingredients:
                power = pb.MenuMastersPowerFood(ingredient=made_of, card_ids=list(pair))
                options.append(pb.MenuMastersFulfilment(ingredient=ingredient, power_food=power))
        slots.append(options)
    found = set()
    for chosen in product(*slots):
        attempt = pb.MenuMastersMenuCompletion(menu_id=menu_id, fulfilments=list(chosen))
        uses = _accepted(basket, menu, attempt)
        if uses is not None:
            found.add(_key(uses))
    return found


def _disjoint(cards: list[str]) -> bool:
    """Whether no card is used twice."""
    return len(cards) == len(set(cards))


def _key(uses: Sequence[Use]) -> tuple:
    """A way to fulfil a Menu, whatever the order of its fulfilments."""
    return tuple(sorted((u.ingredient, u.cards, u.power_food) for u in uses))


def test_legal_commands_list_every_way_to_complete_every_set_of_menus():
    """ListLegalCommands is every legal command: each Menu every way, and Menus together
    (every pair of ways that use different cards), checked against brute force."""
    basket = ["produce-08", "produce-01", "bakery-01", "bakery-02", "butcher-01", "butcher-02"]
    state = give(new_game(3), 0, basket=basket, menus=["menu-05", "menu-07"])
    state = community(state, ["menu-01", "menu-02", "menu-08"])
    state, _ = purchasing(state, {PRODUCE: [0]})
    legal = ENGINE.legal_commands(state, 0)
    for command in legal:
        fold.play(ENGINE, state, 0, command)  # every one of them is accepted
    found: dict[tuple[str, ...], set[tuple]] = {}
    for command in legal:
        if command.WhichOneof("action") != "complete_menus":
            continue
        assert isinstance(command, pb.MenuMastersCommand)
        menus = command.complete_menus.menus
        ways = []
        for m in menus:
            uses = _accepted(basket, PACK.menu(m.menu_id), m)
            assert uses is not None
            ways.append(_key(uses))
        found.setdefault(tuple(m.menu_id for m in menus), set()).add(tuple(ways))
    visible = ["menu-05", "menu-07", "menu-01", "menu-02", "menu-08"]
    every = {m: _every_way(basket, m) for m in visible}
    expected: dict[tuple[str, ...], set[tuple]] = {}
    for size in range(1, len(visible) + 1):
        for group in combinations(visible, size):
            together = {
                ways
                for ways in product(*(every[m] for m in group))
                if _disjoint([c for way in ways for use in way for c in use[1]])
            }
            if together:
                expected[group] = together
    assert {("menu-05",), ("menu-07",), ("menu-01",), ("menu-08",)} <= set(expected)
    assert any(len(group) == 3 for group in expected)
    assert found == expected
    assert capped(legal) == (legal, False) and len(legal) <= LEGAL_CAP
