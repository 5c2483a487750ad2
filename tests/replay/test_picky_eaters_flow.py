"""Picky Eaters scenario tests: setup, the round's steps, the variant and the game's end."""

from __future__ import annotations

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import ARBITER, SPECTATOR, RuleViolation, Viewer
from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.replay.games.picky_eaters.spec import FIRST_SEAT, FOOD_DECK, GUEST_DECK
from feastlog.replay.games.picky_eaters.state import DISCARD_DOWN, OVER, PLAY
from feastlog.replay.record.rng import Rng
from tests.replay.test_picky_eaters_helpers import (
    PACK,
    assert_conserved,
    down,
    filler,
    ing,
    pass_,
    position,
    take,
)

SEED = Rng(bytes([7]) * 32)
FOUR = ["Ann", "Bob", "Cy", "Dee"]


def expected_decks(rng: Rng = SEED) -> tuple[tuple[str, ...], tuple[str, ...], Rng]:
    """The two shuffles of setup, re-derived straight from the RNG spec."""
    food, rng = rng.shuffle(FOOD_DECK, PACK.food_cards)
    guests, rng = rng.shuffle(GUEST_DECK, sorted(PACK.guest_of))
    return food, guests, rng


def test_PE_SETUP_SHUFFLE_food_and_guest_decks_are_shuffled_with_their_labels():
    """Market and hands come off the top of the Food deck shuffled by its label."""
    state, facts = ENGINE.setup(FOUR, {"first_seat": "0"}, PACK, SEED)
    food, guests, _ = expected_decks()
    assert state.market == food[:8]
    assert state.guests == guests[:1] and state.guest_deck == guests[1:]
    assert state.food_deck == food[8 + 4 * 5 :]
    assert facts[0]["type"] == "game_started"
    assert_conserved(state)


def test_PE_FIRST_PLAYER_option_or_random_draw():
    """first_seat=2 gives Cy the card; random draws uniform(4) after the two shuffles."""
    state, _ = ENGINE.setup(FOUR, {"first_seat": "2"}, PACK, SEED)
    assert state.first_player == 2 and state.turn == 2 and state.first_seat == 2
    _, _, rng = expected_decks()
    first, _ = rng.uniform(FIRST_SEAT, 4)
    state, facts = ENGINE.setup(FOUR, {"first_seat": "random"}, PACK, SEED)
    assert state.first_player == first == facts[0]["first_seat"]


def test_PE_I8_cards_are_dealt_from_the_first_player_after_the_market():
    """With Cy first, Cy gets the 5 cards after the Market, then Dee, Ann, Bob."""
    state, facts = ENGINE.setup(FOUR, {"first_seat": "2"}, PACK, SEED)
    food, _, _ = expected_decks()
    for place, seat in enumerate([2, 3, 0, 1]):
        start = 8 + 5 * place
        assert state.players[seat].hand == tuple(sorted(food[start : start + 5]))
    dealt = [f["seat"] for f in facts if f["type"] == "dealt"]
    assert dealt == [2, 3, 0, 1]


def test_PE_DEAL_PE_MARKET_FILL_five_cards_each_and_two_per_player_in_the_market():
    """4 players: Market of 8, 5 secret cards each; 6 players: Market of 12."""
    state, facts = ENGINE.setup(FOUR, {"first_seat": "0"}, PACK, SEED)
    assert len(state.market) == 8
    assert all(len(p.hand) == 5 for p in state.players)
    private = [f for f in facts if f["type"] == "cards_dealt"]
    assert [f["private_to"] for f in private] == [0, 1, 2, 3]
    public = [f for f in facts if f["type"] == "dealt"]
    assert all("cards" not in f for f in public)
    six, _ = ENGINE.setup([*FOUR, "Eve", "Flo"], {"first_seat": "0"}, PACK, SEED)
    assert len(six.market) == 12


@pytest.mark.parametrize("n", [2, 3])
def test_PE_VARIANT_MARKET_PE_VARIANT_DEAL_two_and_three_players(n):
    """2 or 3 players: Market of 6 and 6 cards each; without the variant, 2n and 5."""
    state, _ = ENGINE.setup(FOUR[:n], {"first_seat": "0"}, PACK, SEED)
    assert len(state.market) == 6
    assert all(len(p.hand) == 6 for p in state.players)
    plain, _ = ENGINE.setup(FOUR[:n], {"first_seat": "0", "small_table_variant": "off"}, PACK, SEED)
    assert len(plain.market) == 2 * n
    assert all(len(p.hand) == 5 for p in plain.players)


@pytest.mark.parametrize("n", [1, 7])
def test_PE_I1_two_to_six_players(n):
    """Picky Eaters seats 2 to 6."""
    with pytest.raises(RuleViolation) as caught:
        ENGINE.setup(["P"] * n, {}, PACK, SEED)
    assert caught.value.rule_id == "PE-I1"


def end_round_one():
    """Round 1: Bob has passed, Ann passes with corn and rice left in the Market."""
    state = position(n=2, passed=[1], market=[ing("corn"), ing("rice")], guests=("guest-billie",))
    return state, *fold.play(ENGINE, state, 0, pass_())


def test_PE_MARKET_DISCARD_leftover_market_cards_are_discarded():
    """Corn and rice go to the discard pile when the round ends."""
    _, state, facts = end_round_one()
    assert {"type": "market_discarded", "cards": [ing("corn"), ing("rice")]} in facts
    assert state.discard[:2] == (ing("corn"), ing("rice"))
    assert_conserved(state)


def test_PE_FIRST_PLAYER_PASS_PE_GUEST_REVEAL_PE_ROUNDS_next_round_starts():
    """Round 2: the first player card moves to Bob, a new Guest is revealed, Market refilled."""
    before, state, facts = end_round_one()
    assert state.round == 2 and state.first_player == 1 and state.turn == 1
    assert state.guests == ("guest-billie", before.guest_deck[0])
    types = [f["type"] for f in facts]
    assert types.index("first_player_moved") < types.index("round_started")
    assert types.index("guest_revealed") < types.index("market_filled") < types.index("dealt")
    assert state.market == before.food_deck[:6]
    assert not any(p.passed for p in state.players)
    assert ENGINE.narrate(facts[types.index("guest_revealed")], ["Ann", "Bob"])


def test_PE_HAND_LIMIT_DEAL_players_over_ten_discard_down_after_the_deal():
    """Ann (9) and Bob (4) are dealt 6: Ann must discard 5 before anyone acts."""
    state = position(n=2, hands=[filler(9), []], passed=[1], market=[], guests=("guest-billie",))
    state, _ = fold.play(ENGINE, state, 0, pass_())
    assert state.phase == DISCARD_DOWN and ENGINE.to_act(state) == frozenset({0})
    hand = state.players[0].hand
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 0, take(state.market[0]))
    assert caught.value.rule_id == "PE-HAND-LIMIT-DEAL"
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 0, down(*hand[:4]))
    assert caught.value.rule_id == "PE-HAND-LIMIT-DEAL"
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 1, pass_())
    assert caught.value.rule_id == "PE-TURN-ORDER"
    state, facts = fold.play(ENGINE, state, 0, down(*hand[:5]))
    assert state.phase == PLAY and state.turn == 1 == state.first_player
    assert facts[-1]["type"] == "play_started"


def test_PE_GAME_END_no_command_after_the_fifth_round():
    """Once all pass in round 5 nobody acts, and commands are refused."""
    state = position(
        passed=[1], round_=5, guests=tuple(sorted(PACK.guest_of))[:5], market=[ing("corn")]
    )
    state, facts = fold.play(ENGINE, state, 0, pass_())
    assert state.phase == OVER and ENGINE.to_act(state) == frozenset()
    assert ENGINE.legal_commands(state, 0) == []
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 0, pass_())
    assert caught.value.rule_id == "PE-GAME-END"
    assert [f["type"] for f in facts][-3:] == ["market_discarded", "round_ended", "game_over"]
    assert ENGINE.view(state, SPECTATOR)["scores"] == facts[-1]["points"]


def test_PE_ROUNDS_round_four_leads_to_round_five():
    """The game goes on after round 4 and reveals the fifth Guest."""
    state = position(passed=[1], round_=4, guests=tuple(sorted(PACK.guest_of))[:4])
    state, _ = fold.play(ENGINE, state, 0, pass_())
    assert state.round == 5 and len(state.guests) == 5 and state.phase != OVER


def test_views_hide_hands_and_decks():
    """A seat sees its own hand only; the arbiter sees decks; nobody sees the RNG."""
    state, _ = ENGINE.setup(FOUR, {"first_seat": "0"}, PACK, SEED)
    mine = ENGINE.view(state, Viewer.of_seat(1))
    assert mine["players"][1]["hand"] == list(state.players[1].hand)
    assert mine["players"][0]["hand"] is None and mine["players"][0]["hand_size"] == 5
    assert "food_deck" not in mine and mine["market"] == list(state.market)
    spectator = ENGINE.view(state, SPECTATOR)
    assert all(p["hand"] is None for p in spectator["players"])
    arbiter = ENGINE.view(state, ARBITER)
    assert arbiter["food_deck"] == list(state.food_deck)
    assert arbiter["guest_deck"] == list(state.guest_deck)
    assert "rng" not in str(arbiter) and "seed" not in str(arbiter)
    assert mine["to_act"] == [0] and mine["round"] == 1 and mine["over"] is False


def test_PE_SETUP_SHUFFLE_golden_seed_pins_the_first_cards():
    """Golden values for seed 07*32 (RNG spec of DESIGN section 3): they must never drift."""
    state, _ = ENGINE.setup(FOUR, {}, PACK, SEED)
    assert state.market[:3] == (
        "ingredient-noodles-2",
        "ingredient-chicken-5",
        "ingredient-peanuts-2",
    )
    assert state.guests == ("guest-hugo",) and state.guest_deck[0] == "guest-kenji"
    assert state.first_player == 1
