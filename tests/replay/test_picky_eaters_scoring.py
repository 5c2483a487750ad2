"""Picky Eaters scenario tests: scoring, the items' effects and the winner."""

from __future__ import annotations

from feastlog.replay.games import fold
from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.replay.games.picky_eaters.flow import score_table
from feastlog.replay.games.picky_eaters.state import OVER
from tests.replay.test_picky_eaters_helpers import PACK, item, pass_, position

BILLIE, ALEX, RAMONA = "guest-billie", "guest-alex", "guest-ramona"
SEASONING = "item-extra-seasoning-1"
HERBS = "item-sprinkle-of-herbs-1"
SILVER, SILVER2 = "item-fancy-silverware-1", "item-fancy-silverware-2"
HOT = "item-hot-plate-1"


def points(state, seat=0):
    return score_table(state)[seat]["points"]


def test_PE_SCORE_RECIPE_PE_SCORE_GUESTS_moussaka_under_billie_and_ramona_scores_8():
    """Moussaka: 2 + Billie's favorite 4 + Ramona's like 2 = 8."""
    state = position(recipes={0: ["recipe-moussaka"]}, guests=(BILLIE, RAMONA))
    line = score_table(state)[0]["recipes"][0]
    assert [(g["name"], g["counted"], g["points"]) for g in line["guests"]] == [
        ("Billie", "favorite", 4),
        ("Ramona", "like", 2),
    ]
    assert line["base"] == 2 and line["points"] == 8 and points(state) == 8


def test_PE_SCORE_GUESTS_peanut_butter_sandwich_under_three_printed_guests_scores_0():
    """Peanut butter sandwich: 2 - 3 (Billie) + 4 (Alex) - 3 (Ramona) = 0."""
    state = position(recipes={0: ["recipe-peanut-butter-sandwich"]}, guests=(BILLIE, ALEX, RAMONA))
    line = score_table(state)[0]["recipes"][0]
    assert [g["points"] for g in line["guests"]] == [-3, 4, -3]
    assert points(state) == 0


def test_PE_SCORE_RECIPE_unlisted_recipe_is_worth_2_and_slots_add_up():
    """A Recipe no guest lists is worth 2; a player's Recipes add together."""
    state = position(recipes={0: ["recipe-tacos", "recipe-moussaka"]}, guests=(BILLIE,))
    assert points(state) == 2 + 6


def test_PE_ITEM_EXTRA_SEASONING_PE_I3_downgrades_one_notch_for_every_listing_guest():
    """Extra Seasoning: Billie favorite -> like (+2), Ramona like -> dislike (-1): 2+2-1 = 3."""
    state = position(recipes={0: [("recipe-moussaka", [SEASONING])]}, guests=(BILLIE, RAMONA))
    line = score_table(state)[0]["recipes"][0]
    assert [(g["listed"], g["counted"]) for g in line["guests"]] == [
        ("favorite", "like"),
        ("like", "dislike"),
    ]
    assert points(state) == 3


def test_PE_I3_restriction_stays_restriction_and_dislike_becomes_restriction():
    """Peanut butter sandwich seasoned: restriction stays -3, Alex favorite -> like."""
    state = position(
        recipes={0: [("recipe-peanut-butter-sandwich", [SEASONING])]},
        guests=(BILLIE, ALEX, RAMONA),
    )
    assert points(state) == 2 - 3 + 2 - 3
    dal = position(recipes={0: [("recipe-dal", [SEASONING])]}, guests=(RAMONA,))
    assert points(dal) == 2 - 3


def test_PE_ITEM_HERBS_adds_2_each_time_the_recipe_is_a_favorite():
    """Sushi is Alex's favorite (+4); herbs add +2 once per favorite; Billie likes it."""
    state = position(recipes={0: [("recipe-sushi", [HERBS])]}, guests=(ALEX, BILLIE))
    line = score_table(state)[0]["recipes"][0]
    assert line["herbs"] == 2
    assert points(state) == 2 + 4 + 2 + 2
    two = position(recipes={0: [("recipe-maafe", [HERBS])]}, guests=(RAMONA, "guest-fatou"))
    assert score_table(two)[0]["recipes"][0]["herbs"] == 4


def test_PE_I4_herbs_count_favorites_after_extra_seasoning():
    """Seasoned moussaka is no longer Billie's favorite, so herbs add nothing."""
    state = position(recipes={0: [("recipe-moussaka", [HERBS, SEASONING])]}, guests=(BILLIE,))
    assert score_table(state)[0]["recipes"][0]["herbs"] == 0
    assert points(state) == 2 + 2


def test_PE_ITEM_SILVERWARE_PE_I4_PE_I10_plus_1_per_recipe_not_itself():
    """Two Recipes and Fancy Silverware: +2; a second Silverware scores again."""
    state = position(
        recipes={0: ["recipe-tacos", "recipe-pho"]}, silverware={0: [SILVER]}, guests=(BILLIE,)
    )
    assert points(state) == 4 + 2
    assert state.players[0].slots_used == 3
    both = position(
        recipes={0: ["recipe-tacos", "recipe-pho"]},
        silverware={0: [SILVER, SILVER2]},
        guests=(BILLIE,),
    )
    assert points(both) == 4 + 4


def test_PE_I2_hot_plate_scores_nothing_itself():
    """Hot Plate only protects its Recipe; it adds no points."""
    state = position(recipes={0: [("recipe-moussaka", [HOT])]}, guests=(BILLIE,))
    assert points(state) == 6


def finish(state):
    """Seat 0 passes last in round 5: the game ends."""
    return fold.play(ENGINE, state, 0, pass_())


def test_PE_GAME_END_PE_WINNER_game_over_fact_carries_the_scoring_table():
    """After all pass in round 5 the game is scored: most points wins."""
    state = position(
        recipes={0: ["recipe-moussaka"], 1: ["recipe-tacos"]},
        guests=(BILLIE, ALEX, RAMONA, "guest-dev", "guest-priya"),
        round_=5,
        passed=[1],
    )
    state, facts = finish(state)
    assert state.phase == OVER and ENGINE.is_over(state)
    over = facts[-1]
    assert over["type"] == "game_over"
    assert over["points"] == [8, 4] and over["winners"] == [0]
    assert over["table"][0]["recipes"][0]["guests"][0]["name"] == "Billie"
    result = ENGINE.outcome(state)
    assert result.points == (8, 4) and result.winners == (0,)
    assert "Ann 8" in (ENGINE.narrate(over, ["Ann", "Bob"]) or "")


def test_PE_I5_tie_goes_to_the_later_player_of_the_first_round():
    """Seat 1 started the game, so seat 0 sat later in round 1's order and wins the tie."""
    tied = position(
        recipes={0: ["recipe-tacos"], 1: ["recipe-fried-rice"]},
        guests=(BILLIE, ALEX, RAMONA, "guest-greta", "guest-maya"),
        round_=5,
        first_seat=1,
        passed=[1],
    )
    tied, facts = finish(tied)
    assert facts[-1]["points"] == [2, 2]
    assert ENGINE.outcome(tied).winners == (0,)
    assert ENGINE.outcome(tied).tiebreak == (1, 0)
    flipped, facts = finish(
        position(
            recipes={0: ["recipe-tacos"], 1: ["recipe-fried-rice"]},
            guests=(BILLIE, ALEX, RAMONA, "guest-greta", "guest-maya"),
            round_=5,
            first_seat=0,
            passed=[1],
        )
    )
    assert ENGINE.outcome(flipped).winners == (1,)


def test_printed_item_texts_are_on_the_items_played():
    """The three printed Item cards keep their printed text."""
    assert PACK.item_of[SEASONING].text.startswith("Put on an opponent's Recipe")
    assert PACK.item_of[HERBS].effect == "sprinkle-of-herbs"


def test_PE_ITEM_PLAY_item_goes_on_a_recipe_and_narrates():
    """Extra Seasoning played on Bob's moussaka lands there and is narrated."""
    state = position(hands=[[SEASONING]], recipes={1: ["recipe-moussaka"]})
    state, facts = fold.play(ENGINE, state, 0, item(SEASONING, "recipe-moussaka"))
    assert state.players[1].recipes[0].items == (SEASONING,)
    assert state.players[0].hand == ()
    assert ENGINE.narrate(facts[0], ["Ann", "Bob"]) == (
        "Ann puts Extra Seasoning on Bob's moussaka."
    )
