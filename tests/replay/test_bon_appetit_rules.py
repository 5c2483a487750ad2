"""Bon Appetit!: one scenario test (or more) per rule id, from constructed positions.

The helpers at the top (``position``, ``bid``, ``tie``, ``play``) are shared with the other
``test_bon_appetit_*`` files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.bon_appetit import ENGINE
from feastlog.replay.games.bon_appetit.flow import start_round, starting_bag
from feastlog.replay.games.bon_appetit.moves import to_act
from feastlog.replay.games.bon_appetit.pack import COLOURS, default_pack_bytes, load_pack
from feastlog.replay.games.bon_appetit.state import Auction, Player, State, bid_value, gem_count
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Fact, RuleViolation, Viewer
from feastlog.replay.record.rng import Rng
from feastlog.v1 import bon_appetit_pb2 as pb

PACK = load_pack(default_pack_bytes())
DISH = {d.name: d for d in PACK.dishes}
LETTER = {"b": "blue", "g": "green", "r": "red", "y": "yellow"}
ENUM = {
    "b": pb.BON_APPETIT_GEM_BLUE,
    "g": pb.BON_APPETIT_GEM_GREEN,
    "r": pb.BON_APPETIT_GEM_RED,
    "y": pb.BON_APPETIT_GEM_YELLOW,
}
NAMES = ("Ann", "Brian", "Celia", "Dan")
SEED = bytes(range(32))
DEFAULT_VALUES = {"blue": 1, "green": 2, "red": 3, "yellow": 4}


def gems(text: str) -> tuple[str, ...]:
    """Colours from letters: "bby" -> blue, blue, yellow."""
    return tuple(sorted(LETTER[c] for c in text))


def position(
    hands: Sequence[str],
    *,
    values: Mapping[str, int] = DEFAULT_VALUES,
    dish: str = "Fugu Platter",
    owned: Sequence[Sequence[str]] = (),
    menu: Sequence[str] = ("Wagyu Steak", "Sake Flight"),
    deck: Sequence[str] = ("Creme Brulee",),
    bag: str | None = None,
    round_no: int = 5,
    first_seat: int = 0,
    last_winner: int | None = None,
    **options: str,
) -> State:
    """A constructed position: the bidding for ``dish`` has just begun."""
    n = len(hands)
    owned = list(owned) + [()] * (n - len(owned))
    if bag is None:
        left = list(starting_bag(n))
        for hand in hands:
            for gem in gems(hand):
                left.remove(gem)
        bag_gems = tuple(left)
    else:
        bag_gems = gems(bag)
    players = tuple(
        Player(NAMES[i], gems(h), tuple(DISH[d] for d in owned[i])) for i, h in enumerate(hands)
    )
    return State(
        players=players,
        gem_ability=options.get("gem_ability", "per_bid"),
        tie_break_value=options.get("tie_break_value", "alone"),
        max_bid=options.get("max_bid", "rulebook"),
        gem_values=tuple(values[c] for c in COLOURS),
        bag=bag_gems,
        deck=tuple(DISH[d] for d in deck),
        menu_row=tuple(DISH[d] for d in menu),
        set_aside=(),
        removed=(),
        round=round_no,
        first_seat=first_seat,
        last_winner=last_winner,
        auction=Auction(DISH[dish], 0, tuple(range(n)), table=((),) * n),
        over=False,
        rng=Rng(SEED),
    )


def bid(text: str) -> pb.BonAppetitCommand:
    """An initial bid from letters."""
    return pb.BonAppetitCommand(bid=pb.BonAppetitBid(gems=[ENUM[c] for c in text]))


def tie(text: str) -> pb.BonAppetitCommand:
    """A tie-break bid from letters."""
    return pb.BonAppetitCommand(
        tie_break_bid=pb.BonAppetitTieBreakBid(gems=[ENUM[c] for c in text])
    )


def play(state: State, *moves: tuple[int, pb.BonAppetitCommand]) -> tuple[State, list[Fact]]:
    """Apply the moves in order; all facts together."""
    facts: list[Fact] = []
    for seat, command in moves:
        state, more = fold.play(ENGINE, state, seat, command)
        facts += more
    return state, facts


def of(facts: list[Fact], kind: str) -> list[Fact]:
    """The facts of one type."""
    return [f for f in facts if f["type"] == kind]


def violation(state: State, seat: int, command: pb.BonAppetitCommand) -> str:
    """The rule id a rejected command cites."""
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    return caught.value.rule_id


def hand(state: State, seat: int) -> str:
    """A hand as sorted letters."""
    return "".join(sorted(g[0] for g in state.players[seat].hand))


# --- the rulebook's worked examples ---------------------------------------------------


def test_BA_BID_VALUE_BA_HIGHEST_WINS_worked_example_round_one() -> None:
    """Rulebook example: blue 2, yellow 1; Ann 2 blue = 4 beats Brian blue+yellow = 3."""
    values = {"blue": 2, "green": 3, "red": 4, "yellow": 1}
    state = position(
        ["bbr", "byg", "g"], values=values, dish="Fresh Matsutake Mashrooms", round_no=1
    )
    state, facts = play(state, (0, bid("bb")), (1, bid("by")), (2, bid("")))
    reveal = of(facts, "bids_revealed")[0]
    assert [b["total"] for b in reveal["bids"]] == [4, 3, 0]
    assert reveal["bids"][0]["gem_values"] == {"blue": 2}
    won = of(facts, "dish_won")[0]
    assert won["seat"] == 0 and won["dish"]["name"] == "Fresh Matsutake Mashrooms"
    assert [d.name for d in state.players[0].dishes] == ["Fresh Matsutake Mashrooms"]
    change = of(facts, "gem_values_changed")[0]
    assert change["after"] == {"blue": 1, "green": 4, "red": 4, "yellow": 2}
    assert hand(state, 1) == "bgy"  # Brian keeps his gems
    assert of(facts, "cleanup")[0]["drawn"] == [2]  # Celia bid 0 and draws


def test_BA_GEM_ABILITY_BA_DISH_ABILITY_worked_example_fugu_platter() -> None:
    """Rulebook example: Ann bbgg = 6 +2 green = 8; Celia rrr = 6 +1 Side Dish = 7."""
    values = {"blue": 1, "green": 2, "red": 2, "yellow": 4}
    owned = [["Matcha Garden Tea"], [], ["Pickled Vegetable Medley"]]
    state = position(["bbgg", "y", "rrr"], values=values, owned=owned, max_bid="four")
    state, facts = play(state, (0, bid("bbgg")), (1, bid("")), (2, bid("rrr")))
    ann, brian, celia = of(facts, "bids_revealed")[0]["bids"]
    assert (ann["base"], ann["total"]) == (6, 8)
    assert ann["gem_abilities"] == [{"dish": "Matcha Garden Tea", "colour": "green", "bonus": 2}]
    assert (celia["base"], celia["total"]) == (6, 7)
    assert celia["dish_abilities"] == [
        {"dish": "Pickled Vegetable Medley", "for": "Side Dish", "bonus": 1}
    ]
    assert brian["total"] == 0
    assert of(facts, "dish_won")[0]["seat"] == 0


def test_BA_I13_fugu_example_four_gems_break_the_printed_three_gem_rule() -> None:
    """By default the example's 4-gem bid is refused with 3 players; its value is still 8."""
    values = {"blue": 1, "green": 2, "red": 2, "yellow": 4}
    state = position(["bbgg", "y", "rrr"], values=values, owned=[["Matcha Garden Tea"]])
    assert violation(state, 0, bid("bbgg")) == "BA-BID-SIZE"
    assert bid_value(state, 0, gems("bbgg"), DISH["Fugu Platter"])["total"] == 8


# --- setup ------------------------------------------------------------------------------


def _setup(n: int, **options: str) -> tuple[State, list[Fact]]:
    """A real setup with the fixed seed."""
    return ENGINE.setup(NAMES[:n], {"first_seat": "random", **options}, PACK, Rng(SEED))


def _replayed_setup(n: int) -> dict[str, Any]:
    """The setup re-derived here from the RNG spec alone."""
    rng = Rng(SEED)
    markers: tuple[str, ...] = COLOURS
    order = []
    for _ in COLOURS:
        colour, markers, rng = rng.draw("bon-appetit/gem-card", markers)
        order.append(colour)
    deck, rng = rng.shuffle("bon-appetit/dish-deck", PACK.dishes)
    bag = starting_bag(n)
    hands = []
    for _ in range(n):
        drawn = []
        for _ in range(4 if n == 4 else 5):
            gem, bag, rng = rng.draw("bon-appetit/bag", bag)
            drawn.append(gem)
        hands.append(tuple(sorted(drawn)))
    first, rng = rng.uniform("bon-appetit/first-seat", n)
    return {"order": order, "deck": deck, "bag": bag, "hands": hands, "first": first}


def test_BA_SETUP_GEM_CARD_marker_gems_drawn_in_order_are_worth_1_to_4() -> None:
    state, facts = _setup(3)
    order = _replayed_setup(3)["order"]
    assert of(facts, "gem_card_set")[0]["order"] == order
    assert [state.gem_values[COLOURS.index(c)] for c in order] == [1, 2, 3, 4]


def test_BA_SETUP_DISHES_one_removed_unseen_three_face_up_nine_in_deck() -> None:
    state, facts = _setup(3)
    deck = _replayed_setup(3)["deck"]
    assert state.set_aside == deck[:1]
    assert of(facts, "dishes_prepared")[0] == {
        "type": "dishes_prepared",
        "menu_row": [d.name for d in reversed(deck[1:4])],
        "deck_count": 9,
        "removed_unseen": 1,
    }
    # round 1 has begun: the first dish laid is up, the next deck card entered the row
    assert state.auction is not None and state.auction.dish == deck[1]
    assert state.menu_row == (deck[4], deck[3], deck[2]) and state.deck == deck[5:]
    assert view_of(state, SPECTATOR)["removed_unseen"] == 1
    assert "set_aside" not in view_of(state, SPECTATOR)


def test_BA_I11_first_dish_laid_lies_rightmost() -> None:
    _, facts = _setup(2)
    deck = _replayed_setup(2)["deck"]
    assert of(facts, "dishes_prepared")[0]["menu_row"][-1] == deck[1].name
    assert of(facts, "round_started")[0]["dish"]["name"] == deck[1].name


@pytest.mark.parametrize(("n", "bag_left"), [(2, 2), (3, 1), (4, 0)])
def test_BA_SETUP_BAG_sixteen_gems_or_twelve_with_two_players(n: int, bag_left: int) -> None:
    state, facts = _setup(n)
    assert of(facts, "bag_filled")[0]["count"] == (12 if n == 2 else 16)
    assert len(state.bag) == bag_left
    everything = list(state.bag) + [g for p in state.players for g in p.hand]
    per_colour = 3 if n == 2 else 4
    assert sorted(everything) == sorted(c for c in COLOURS for _ in range(per_colour))
    assert gem_count(state) == (16 if n == 2 else 20)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_BA_SETUP_HANDS_five_gems_each_four_with_four_players_seat_by_seat(n: int) -> None:
    state, facts = _setup(n)
    replayed = _replayed_setup(n)
    assert [p.hand for p in state.players] == replayed["hands"]
    assert state.bag == replayed["bag"]
    public = [f for f in of(facts, "drew") if f["reason"] == "setup"]
    assert [f["seat"] for f in public] == [s for s in range(n) for _ in range(4 if n == 4 else 5)]


def test_BA_SETUP_FIRST_random_or_given_starting_player() -> None:
    state, facts = _setup(3)
    assert state.first_seat == _replayed_setup(3)["first"]
    assert of(facts, "first_player")[0]["seat"] == state.first_seat
    given, _ = ENGINE.setup(NAMES[:3], {"first_seat": "2"}, PACK, Rng(SEED))
    assert given.first_seat == 2


def test_BA_SEATS_two_to_four_players() -> None:
    for n in (1, 5):
        with pytest.raises(RuleViolation) as caught:
            ENGINE.setup(("A", "B", "C", "D", "E")[:n], {}, PACK, Rng(SEED))
        assert caught.value.rule_id == "BA-SEATS"


@pytest.mark.parametrize(
    "options",
    [{"first_seat": "3"}, {"gem_ability": "twice"}, {"colour": "blue"}, {"max_bid": "9"}],
)
def test_BA_OPTIONS_unknown_options_and_values_are_refused(options: dict[str, str]) -> None:
    with pytest.raises(RuleViolation) as caught:
        ENGINE.setup(NAMES[:3], options, PACK, Rng(SEED))
    assert caught.value.rule_id == "BA-OPTIONS"


def view_of(state: State, viewer: Viewer) -> dict[str, Any]:
    """The engine's view."""
    return ENGINE.view(state, viewer)


def test_BA_HIDDEN_GEMS_hands_secret_counts_public() -> None:
    state, facts = _setup(3)
    seen = view_of(state, Viewer.of_seat(1))
    assert "hand" in seen["seats"][1] and "hand" not in seen["seats"][0]
    assert seen["seats"][0]["gem_count"] == 5
    assert "hand" not in view_of(state, SPECTATOR)["seats"][1]
    assert "hand" in view_of(state, ARBITER)["seats"][1]
    private = of(facts, "gems_drawn")
    assert private and all(f["private_to"] == f["seat"] for f in private)
    assert all("gems" not in f for f in of(facts, "drew"))


# --- the round ------------------------------------------------------------------------


def test_BA_ROUNDS_all_zero_game_lasts_exactly_twelve_rounds() -> None:
    state, facts = _setup(3)
    while not state.over:
        for seat in sorted(to_act(state)):
            state, more = fold.play(ENGINE, state, seat, bid(""))
            facts += more
    assert [f["round"] for f in of(facts, "round_started")] == list(range(1, 13))
    assert len(of(facts, "dish_removed")) == 12 and of(facts, "game_over")


def test_BA_PHASES_bid_kind_must_fit_the_phase() -> None:
    state = position(["bg", "bg", "y"])
    assert violation(state, 0, tie("b")) == "BA-PHASES"
    state, _ = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    assert state.auction is not None and state.auction.tie_round == 1
    assert violation(state, 0, bid("g")) == "BA-PHASES"


def test_BA_NEW_DISH_rightmost_to_middle_slide_and_refill() -> None:
    state = replace(position(["b", "g"]), auction=None)
    state, facts = start_round(state)
    assert state.auction is not None and state.auction.dish.name == "Sake Flight"
    assert [d.name for d in state.menu_row] == ["Creme Brulee", "Wagyu Steak"]
    assert state.deck == () and of(facts, "round_started")[0]["deck_left"] == 0
    state, _ = start_round(replace(state, auction=None))
    assert [d.name for d in state.menu_row] == ["Creme Brulee"]  # no refill: deck empty


def test_BA_TURN_each_bidder_seals_once_and_only_the_tied_bid_again() -> None:
    state = position(["bg", "bg", "y"])
    state, _ = play(state, (0, bid("b")))
    assert violation(state, 0, bid("g")) == "BA-TURN"
    state, _ = play(state, (1, bid("b")), (2, bid("")))
    assert violation(state, 2, tie("y")) == "BA-TURN"
    assert to_act(state) == frozenset({0, 1})


def test_BA_GEM_ABILITY_only_for_the_owner_of_the_dish_under_the_default_rules() -> None:
    """Ann owns Matcha Garden Tea (green gems +2); Brian bids the same green gem and gets
    no bonus, so Ann's equal gem wins."""
    values = {"blue": 1, "green": 2, "red": 3, "yellow": 4}
    state = position(["g", "g", "y"], values=values, owned=[["Matcha Garden Tea"], [], []])
    state, facts = play(state, (0, bid("g")), (1, bid("g")), (2, bid("")))
    ann, brian, _ = of(facts, "bids_revealed")[0]["bids"]
    assert (ann["base"], ann["total"]) == (2, 4)
    assert ann["gem_abilities"] == [{"dish": "Matcha Garden Tea", "colour": "green", "bonus": 2}]
    assert (brian["base"], brian["total"]) == (2, 2) and not brian["gem_abilities"]
    assert of(facts, "dish_won")[0]["seat"] == 0


def refusal(state: State, seat: int, command: pb.BonAppetitCommand) -> tuple[str, str]:
    """The rule id and the message of a rejected command."""
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    return caught.value.rule_id, caught.value.message


def test_BA_TURN_refusals_say_why_the_seat_may_not_bid() -> None:
    """A seat whose 0 was sealed for it (BA-I9) is told so, not that it sealed a bid; the
    tied are named as a list."""
    state, _ = start_round(replace(position(["b", "", "y"]), auction=None))
    dish = state.auction.dish.name if state.auction else ""
    assert refusal(state, 1, bid("")) == (
        "BA-TURN",
        f"Brian has no gems to bid: a bid of 0 was sealed for the {dish}",
    )
    state, _ = play(state, (0, bid("b")))
    assert refusal(state, 0, bid("")) == ("BA-TURN", f"Ann has already sealed a bid for the {dish}")
    four = position(["bg", "bg", "bg", "y"])
    four, _ = play(four, (0, bid("b")), (1, bid("b")), (2, bid("b")), (3, bid("")))
    assert four.auction is not None and four.auction.bidders == (0, 1, 2)
    assert refusal(four, 3, tie("y")) == (
        "BA-TURN",
        f"Dan is not tied for the {four.auction.dish.name}; only Ann, Brian and Celia bid again",
    )


def test_BA_BID_SIZE_three_gems_or_four_with_two_players() -> None:
    assert violation(position(["bbgg", "r", "y"]), 0, bid("bbgg")) == "BA-BID-SIZE"
    two = position(["bbggr", "y"])
    assert violation(two, 0, bid("bbggr")) == "BA-BID-SIZE"
    state, _ = fold.play(ENGINE, two, 0, bid("bbgg"))
    assert state.auction is not None and state.auction.sealed == ((0, gems("bbgg")),)


def test_BA_BID_COLOURS_two_players_at_most_three_colours() -> None:
    two = position(["bgry", "y"])
    assert violation(two, 0, bid("bgry")) == "BA-BID-COLOURS"
    fold.play(ENGINE, two, 0, bid("bgr"))


def test_BA_BID_OWN_only_gems_from_your_hand() -> None:
    state = position(["bg", "r", "y"])
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 0, bid("r"))
    assert caught.value.rule_id == "BA-BID-OWN"
    assert caught.value.message == "Ann has no red gem to bid"
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 0, bid("bb"))
    assert caught.value.message == "Ann has only 1 blue gem to bid, not 2"
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, position(["bbg", "r", "y"]), 0, bid("bbb"))
    assert caught.value.message == "Ann has only 2 blue gems to bid, not 3"


def test_BA_REVEAL_bids_stay_sealed_until_all_are_in() -> None:
    state = position(["bg", "r", "y"])
    state, facts = play(state, (0, bid("b")), (1, bid("r")))
    assert not of(facts, "bids_revealed")
    assert not ENGINE.command_public(bid("b")) and not ENGINE.command_public(tie("b"))
    mine = view_of(state, Viewer.of_seat(0))["seats"]
    assert mine[0]["sealed_bid"] == ["blue"] and "sealed_bid" not in mine[1]
    assert [s["has_bid"] for s in mine] == [True, True, False]
    state, facts = play(state, (2, bid("y")))
    assert len(of(facts, "bids_revealed")[0]["bids"]) == 3


def test_BA_ZERO_LOSES_a_bid_of_zero_never_wins() -> None:
    state = position(["b", "gg", "y"], values={"blue": 1, "green": 1, "red": 1, "yellow": 1})
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("y")))
    assert of(facts, "dish_won")[0]["seat"] == 2


def test_BA_ALL_ZERO_dish_removed_and_BA_I6_values_unchanged() -> None:
    state = position(["b", "g", "y"])
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("")))
    removed = of(facts, "dish_removed")[0]
    assert removed["reason"] == "all_zero" and removed["dish"]["name"] == "Fugu Platter"
    assert [d.name for d in state.removed] == ["Fugu Platter"]
    assert not of(facts, "gem_values_changed") and state.gem_values == (1, 2, 3, 4)


def test_BA_TIE_tied_bid_again_highest_second_bid_wins() -> None:
    state = position(["bgy", "bgg", "r"])
    state, facts = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    assert of(facts, "tie_break_started")[0]["seats"] == [0, 1]
    assert hand(state, 0) == "gy" and state.auction is not None
    assert state.auction.table[0] == ("blue",)  # the first bid stays on the table
    state, facts = play(state, (1, tie("g")), (0, tie("y")))
    assert of(facts, "dish_won")[0]["seat"] == 0


def test_BA_TIE_UNRESOLVED_no_gem_added_removes_the_dish() -> None:
    state = position(["bg", "bg", "r"])
    state, facts = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")), (0, tie("")))
    state, facts = play(state, (1, tie("")))
    assert of(facts, "dish_removed")[0]["reason"] == "tie_unresolved"
    assert hand(state, 0) == "bg" and hand(state, 1) == "bg"


def test_BA_TIE_UNRESOLVED_tied_with_no_gems_left_is_automatic() -> None:
    state = position(["b", "b", "r"])
    state, facts = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    assert not of(facts, "tie_break_started")
    assert of(facts, "dish_removed")[0]["why"] == "the tied players have no gems left"


def test_BA_DISH_ABILITY_needs_at_least_one_gem() -> None:
    state = position(["", "y", "r"], owned=[["Pickled Vegetable Medley"]])
    value = bid_value(state, 0, (), DISH["Fugu Platter"])
    assert value["total"] == 0 and value["dish_abilities"] == []


def test_BA_LOSERS_KEEP_their_gems() -> None:
    state = position(["bg", "rr", "y"])
    state, _ = play(state, (0, bid("bg")), (1, bid("rr")), (2, bid("y")))
    assert hand(state, 0) == "bg" and hand(state, 2) == "y" and hand(state, 1) == ""


def test_BA_VALUE_DOWN_paid_colours_down_minimum_one() -> None:
    state = position(["bb", "r", "y"], values={"blue": 1, "green": 2, "red": 1, "yellow": 1})
    state, facts = play(state, (0, bid("bb")), (1, bid("")), (2, bid("")))
    assert of(facts, "gem_values_changed")[0]["after"]["blue"] == 1


def test_BA_VALUE_UP_other_colours_up_maximum_four() -> None:
    state = position(["bb", "r", "y"], values={"blue": 3, "green": 4, "red": 3, "yellow": 1})
    state, facts = play(state, (0, bid("bb")), (1, bid("")), (2, bid("")))
    change = of(facts, "gem_values_changed")[0]
    assert change["before"] == {"blue": 3, "green": 4, "red": 3, "yellow": 1}
    assert change["after"] == {"blue": 2, "green": 4, "red": 4, "yellow": 2}


def test_BA_PAY_TO_BAG_winner_returns_paid_gems_to_the_bag() -> None:
    values = {"blue": 3, "green": 2, "red": 3, "yellow": 4}
    state = position(["bbg", "r", "y"], bag="", values=values)
    state, facts = play(state, (0, bid("bb")), (1, bid("r")), (2, bid("")))
    assert of(facts, "dish_won")[0]["paid"] == ["blue", "blue"]
    assert of(facts, "dish_won")[0]["bag_count"] == 2
    assert state.bag == gems("b") and hand(state, 2) == "by"  # then Celia drew one of them


def test_BA_CLEANUP_DRAW_clockwise_from_left_of_winner_while_bag_lasts() -> None:
    state = position(["b", "g", "y", "r"], bag="y")
    state, facts = play(state, (0, bid("")), (1, bid("g")), (2, bid("")), (3, bid("")))
    cleanup = of(facts, "cleanup")[0]
    assert cleanup["order"] == [2, 3, 0, 1] and cleanup["eligible"] == [2, 3, 0]
    # the bag held 1 gem, Brian's payment made 2: Celia and Dan draw, Ann misses out
    assert cleanup["drawn"] == [2, 3] and cleanup["missed"] == [0]
    assert [f["seat"] for f in of(facts, "drew")] == [2, 3]
    assert len(state.players[2].hand) == 2


def test_BA_I10_left_of_the_last_seat_is_seat_zero() -> None:
    state = position(["b", "g", "y"], bag="rr")
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("y")))
    assert of(facts, "cleanup")[0]["order"] == [0, 1, 2]


def test_BA_CLEANUP_INITIAL_ONLY_tie_break_zero_earns_no_draw() -> None:
    state = position(["bg", "bg", "r"], bag="yyy")
    state, facts = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    state, facts = play(state, (0, tie("")), (1, tie("g")))
    assert of(facts, "cleanup")[0]["eligible"] == [2]
    assert hand(state, 0) == "bg" and len(state.players[2].hand) == 2


def test_BA_CLEANUP_LAST_no_draws_after_the_last_dish_and_BA_END() -> None:
    state = position(["b", "g", "y"], menu=(), deck=(), round_no=12)
    state, facts = play(state, (0, bid("b")), (1, bid("")), (2, bid("")))
    assert not of(facts, "cleanup") and not of(facts, "drew") and state.over
    assert to_act(state) == frozenset() and ENGINE.legal_commands(state, 1) == []
    assert violation(state, 1, bid("")) == "BA-END"


def test_BA_END_game_over_fact_and_view() -> None:
    state = position(["b", "g", "y"], menu=(), deck=(), round_no=12)
    state, facts = play(state, (0, bid("b")), (1, bid("")), (2, bid("")))
    over = of(facts, "game_over")[0]
    assert over["points"] == [5, 0, 0] and over["winners"] == [0]
    seen = view_of(state, SPECTATOR)
    assert seen["over"] and seen["scores"] == [5, 0, 0] and seen["winners"] == [0]


def test_BA_SCORE_points_of_dishes_won() -> None:
    owned = [["Wagyu Steak"], ["Sake Flight", "Creme Brulee"]]
    state = position(["b", "g", "y"], owned=owned, menu=(), deck=(), round_no=12)
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("y")))
    assert of(facts, "game_over")[0]["points"] == [6, 7, 5]
    assert ENGINE.outcome(state).winners == (1,)


def test_BA_TIEBREAK_GEMS_and_BA_I7_most_valuable_gems_left() -> None:
    """Tied on 6 points: Brian's red (3) beats Ann's two blue (1 + 1) at current values."""
    owned = [["Wagyu Steak"], ["Creme Brulee", "Ruby Grapefruit Spritz"]]
    state = position(["bb", "r", "g"], owned=owned, menu=(), deck=(), round_no=12)
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("")))
    over = of(facts, "game_over")[0]
    assert over["points"] == [6, 6, 0] and over["tiebreak"] == [2, 3, 2]
    assert over["winners"] == [1] and over["decided_by"] == "gems"
    assert ENGINE.outcome(state).tiebreak == (2, 3, 2)


def test_BA_SHARED_VICTORY_still_tied_share() -> None:
    owned = [["Wagyu Steak"], ["Creme Brulee", "Ruby Grapefruit Spritz"]]
    state = position(["bbb", "r", "g"], owned=owned, menu=(), deck=(), round_no=12)
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("")))
    over = of(facts, "game_over")[0]
    assert over["winners"] == [0, 1] and over["decided_by"] == "shared"


# --- interpretations ------------------------------------------------------------------


def test_BA_I1_tie_break_bid_compared_alone_and_rounds_repeat() -> None:
    state = position(["bgy", "bgy", "r"], values={"blue": 2, "green": 1, "red": 1, "yellow": 4})
    state, facts = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    state, facts = play(state, (0, tie("g")), (1, tie("g")))
    assert of(facts, "tie_break_started")[0]["tie_round"] == 2
    assert of(facts, "bids_revealed")[0]["bids"][0]["total"] == 1  # the new bid alone
    state, facts = play(state, (0, tie("")), (1, tie("y")))
    assert of(facts, "dish_won")[0]["seat"] == 1
    assert of(facts, "dish_won")[0]["paid"] == ["blue", "green", "yellow"]


def test_BA_I1_option_cumulative_values_all_gems_on_the_table() -> None:
    values = {"blue": 2, "green": 1, "red": 1, "yellow": 4}
    state = position(["bbg", "by", "r"], values=values, tie_break_value="cumulative")
    state, _ = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    state, facts = play(state, (0, tie("b")), (1, tie("")))
    totals = [b["total"] for b in of(facts, "bids_revealed")[0]["bids"]]
    assert totals == [4, 2]  # Ann: blue + blue; Brian: his blue still counts
    assert of(facts, "dish_won")[0]["seat"] == 0


def test_BA_I2_winner_pays_first_and_tie_break_gems() -> None:
    state = position(["bgy", "bg", "r"])
    state, _ = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    state, facts = play(state, (0, tie("y")), (1, tie("g")))
    assert of(facts, "dish_won")[0]["paid"] == ["blue", "yellow"]
    assert of(facts, "gem_values_changed")[0]["paid_colours"] == ["blue", "yellow"]
    assert hand(state, 0) == "g" and hand(state, 1) == "bg"


def test_BA_I3_gem_ability_once_per_bid_or_per_gem_option() -> None:
    owned = [["Matcha Garden Tea"]]
    per_bid = position(["ggg", "r"], owned=owned)
    per_gem = position(["ggg", "r"], owned=owned, gem_ability="per_gem")
    assert bid_value(per_bid, 0, gems("ggg"), DISH["Fugu Platter"])["total"] == 6 + 2
    assert bid_value(per_gem, 0, gems("ggg"), DISH["Fugu Platter"])["total"] == 6 + 6


def test_BA_I4_dish_ability_counts_in_tie_break_bids() -> None:
    state = position(["bbg", "bbg", "r"], owned=[[], ["Sake Flight"]])
    values = {"blue": 1, "green": 2, "red": 3, "yellow": 4}
    state = replace(state, gem_values=tuple(values[c] for c in COLOURS))
    state, facts = play(state, (0, bid("bg")), (1, bid("b")), (2, bid("")))
    assert [b["total"] for b in of(facts, "bids_revealed")[0]["bids"]][:2] == [3, 3]
    state, facts = play(state, (0, tie("b")), (1, tie("b")))
    brian = of(facts, "bids_revealed")[0]["bids"][1]
    assert brian["dish_abilities"][0]["dish"] == "Sake Flight" and brian["total"] == 3
    assert of(facts, "dish_won")[0]["seat"] == 1


def test_BA_I5_no_winner_yet_draws_start_with_starting_player() -> None:
    state = position(["b", "g", "y"], first_seat=2, bag="rrr")
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("")))
    assert of(facts, "cleanup")[0]["order"] == [2, 0, 1]
    later = position(["b", "g", "y"], first_seat=2, last_winner=0, bag="rrr")
    later, facts = play(later, (0, bid("")), (1, bid("")), (2, bid("")))
    assert of(facts, "cleanup")[0]["order"] == [1, 2, 0]


def test_BA_I6_unresolved_tie_leaves_gem_values() -> None:
    state = position(["b", "b", "r"])
    state, facts = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    assert state.gem_values == (1, 2, 3, 4) and not of(facts, "gem_values_changed")


def test_BA_I8_sealed_gems_still_count_in_the_public_hand_size() -> None:
    state = position(["bgy", "r", "y"])
    state, _ = fold.play(ENGINE, state, 0, bid("bg"))
    assert view_of(state, Viewer.of_seat(1))["seats"][0]["gem_count"] == 3
    assert view_of(state, SPECTATOR)["seats"][0]["gem_count"] == 3


def test_BA_I9_seat_without_gems_bids_zero_automatically() -> None:
    state = replace(position(["b", "", "y"]), auction=None)
    state, facts = start_round(state)
    assert to_act(state) == frozenset({0, 2}) and ENGINE.legal_commands(state, 1) == []
    assert of(facts, "bid_sealed") == [
        {"type": "bid_sealed", "round": 6, "seat": 1, "tie_round": 0, "automatic": True}
    ]
    state, facts = play(state, (0, bid("b")), (2, bid("")))
    assert of(facts, "dish_won")[0]["seat"] == 0


def test_BA_I12_abilities_add_up_and_the_dish_on_offer_does_not_help() -> None:
    owned = [["Matcha Garden Tea", "Pickled Vegetable Medley", "Sake Flight"]]
    state = position(["gg", "r"], owned=owned)
    value = bid_value(state, 0, gems("g"), DISH["Fugu Platter"])
    assert value["total"] == 2 + 2 + 1 + 2
    alone = position(["gg", "r"], dish="Matcha Garden Tea")
    assert bid_value(alone, 0, gems("g"), DISH["Matcha Garden Tea"])["total"] == 2


def test_legal_commands_are_all_accepted() -> None:
    for state in (position(["bbgy", "rry", "g"]), position(["bgry", "bbgg"])):
        for command in ENGINE.legal_commands(state, 0):
            fold.play(ENGINE, state, 0, command)
        assert len(ENGINE.legal_commands(state, 0)) == len(
            set(c.SerializeToString(deterministic=True) for c in ENGINE.legal_commands(state, 0))
        )


def test_narration_tells_the_round() -> None:
    """The worked example narrated: the dish, each bid's breakdown, winner, values, draws."""
    values = {"blue": 2, "green": 3, "red": 4, "yellow": 1}
    state = replace(
        position(["bbr", "byg", "g"], values=values, dish="Wagyu Steak", round_no=0),
        auction=None,
        menu_row=(DISH["Creme Brulee"], DISH["Fresh Matsutake Mashrooms"]),
    )
    state, facts = start_round(state)
    state, more = play(state, (0, bid("bb")), (1, bid("by")), (2, bid("")))
    lines = [ENGINE.narrate(f, NAMES[:3]) for f in facts + more]
    text = [line for line in lines if line]
    assert text[0].startswith("Round 1: the Fresh Matsutake Mashrooms (Side Dish, 3 points")
    assert "Bids revealed: Ann 2 blue = 4 -> 4; Brian 1 blue and 1 yellow = 3 -> 3; " in text[4]
    assert "Celia 0 (no gems)" in text[4]
    assert "Ann wins the Fresh Matsutake Mashrooms, paying 2 blue." in text
    assert (
        "Gem values now: blue 1, green 4, red 4, yellow 2 (were blue 2, green 3, red 4, "
        "yellow 1)." in text
    )
    assert "Celia draws a gem from the bag." in text


def test_golden_setup_for_a_fixed_seed() -> None:
    """Pinned outputs of the RNG labels for seed 00 01 .. 1f, 3 players (ruleset 1)."""
    state, facts = _setup(3)
    assert of(facts, "gem_card_set")[0]["order"] == ["green", "blue", "red", "yellow"]
    assert of(facts, "dishes_prepared")[0]["menu_row"] == [
        "Wagyu Steak",
        "Fugu Platter",
        "Sake Flight",
    ]
    assert [hand(state, s) for s in range(3)] == ["bbgry", "bggrr", "bgryy"]
    assert state.first_seat == 2 and state.set_aside[0].name == "Mango Sticky Rice"


def test_BA_ALL_ZERO_a_round_of_zero_bids_is_no_tie() -> None:
    """BA-ALL-ZERO, BA-ZERO-LOSES. "If your bid was 0 (you bid with an empty hand), you
    automatically lose the auction for the current Dish Card. If all players make a bid of
    0, the Dish Card is removed from the game." Nobody is tied at 0: the fact lists no one
    as tied, and the narration says the dish is removed."""
    state = position(["b", "g", "y"])
    state, facts = play(state, (0, bid("")), (1, bid("")), (2, bid("")))
    (revealed,) = of(facts, "bids_revealed")
    assert revealed["tied"] == [] and revealed["all_zero"] is True and revealed["highest"] == 0
    assert not of(facts, "tie_break_started")
    lines = [ENGINE.narrate(f, NAMES) for f in facts]
    text = " ".join(line for line in lines if line)
    assert "Tied" not in text and "Every bid is 0." in text
    assert "No one wins the Fugu Platter (every bid was 0): it is removed." in text
    state = position(["bg", "bg", "r"])
    state, facts = play(state, (0, bid("b")), (1, bid("b")), (2, bid("")))
    (revealed,) = of(facts, "bids_revealed")
    assert revealed["tied"] == [0, 1] and revealed["all_zero"] is False  # a real tie at 1
    assert "Tied at 1: Ann, Brian." in str(ENGINE.narrate(revealed, NAMES))
