"""Picky Eaters: the facts of the game, first: seats, options, RNG labels, the rule catalogue.

Rulebook: shared/rulebooks/picky-eaters.txt.

2 to 6 players (PE-I1) prepare Recipes for 5 picky Guests over 5 rounds.  Hidden
information: each hand (others see counts) and the two decks (only the arbiter sees them).
Market, Recipes in play, Items on them, revealed Guests and the discard pile are public.

RNG labels, in the order they are consumed:

1. ``picky-eaters/food-deck``: shuffle of the Food deck (ingredients, recipes, items) at
   setup, from the pack's card ids sorted;
2. ``picky-eaters/guest-deck``: shuffle of the Guest deck at setup, from guest ids sorted;
3. ``picky-eaters/first-seat``: ``uniform(n)`` for the first player when the option
   ``first_seat`` is ``random``;
4. ``picky-eaters/reshuffle``: each refill of the Food deck: the discard pile, sorted
   by card id, is shuffled and becomes the deck.  When, depends on ``deck_refill``:
   ``when_empty`` (the default from ruleset 2, PE-DECK-REFILL as printed: "If the Food Deck is
   ever empty, shuffle the discard pile to form a new Food Deck"): whenever the deck is
   empty and the discard pile is not, at once — while cards are drawn, right after the
   card that empties the deck, and otherwise at the end of the command that left it so;
   ``on_draw`` (PE-I7, ruleset 1's only reading): only when a card must be drawn from an
   empty deck.

Ruleset versions: ``3`` (new games) is ``2`` with nothing reshuffled once the game is
over (the last pass of round 5 discards the Market; ruleset 2 then refilled an empty Food
deck from it, after the end); ``2`` adds the option ``deck_refill`` (default
``when_empty``); ``1`` always refilled on a draw.  Refusals are the same in all three.

Options: ``first_seat`` (``random`` or a seat number), ``small_table_variant`` (``on``: the
2- and 3-player Market of 6 and deal of 6), ``hot_plate_blocks_items`` (``off``; ``on``: a
Recipe with Hot Plate takes no opponent's Item, PE-I2), ``deck_refill`` (``when_empty``
or ``on_draw``; from ruleset 2).

Flow: each round reveals a Guest, fills the Market, deals (from the first player, PE-I8);
seats over 10 cards then send ``discard_down`` (phase ``discard-down``, together); then one
action each in turn (phase ``play``).  A player who takes an 11th card sends
``discard_down`` before the next player acts (PE-I6).  When all have passed the Market is
discarded, the first player card moves clockwise and the next round starts; after round 5
the game is scored.

The legal commands are every legal command up to ``LEGAL_CAP`` (see ``view``): Pass,
every Market card, every Item on every Recipe it may go on, every pair to discard to
draw, every way to prepare each Recipe in hand (each set of ingredient cards, each
3-for-1, each Recipe it may replace), and every set of cards to discard down.
"""

from __future__ import annotations

from collections.abc import Mapping

from feastlog.replay.games.engine import Option, Rule, Spec, catalogue
from feastlog.v1 import picky_eaters_pb2 as pb

KIND = "picky-eaters"
FOOD_DECK = f"{KIND}/food-deck"
GUEST_DECK = f"{KIND}/guest-deck"
FIRST_SEAT = f"{KIND}/first-seat"
RESHUFFLE = f"{KIND}/reshuffle"

ROUNDS = 5
HAND_LIMIT = 10
RECIPE_SLOTS = 5
SUBSTITUTE_CARDS = 3
DISCARD_TO_DRAW = 2
RECIPE_POINTS = 2
HERBS_POINTS = 2
SILVERWARE_POINTS = 1
CATEGORY_POINTS = {"favorite": 4, "like": 2, "dislike": -1, "restriction": -3}
NOTCH_DOWN = {
    "favorite": "like",
    "like": "dislike",
    "dislike": "restriction",
    "restriction": "restriction",
}

WHEN_EMPTY = "when_empty"  # PE-DECK-REFILL read literally: at once (ruleset 2 default)
ON_DRAW = "on_draw"  # PE-I7: only when a card must be drawn (ruleset 1)

OPTIONS = (
    Option("first_seat", ("random",), "PE-OPTIONS", "PE-FIRST-PLAYER", open_value="seat"),
    Option("small_table_variant", ("on", "off"), "PE-OPTIONS", "PE-VARIANT-MARKET"),
    Option("hot_plate_blocks_items", ("off", "on"), "PE-OPTIONS", "PE-I2"),
    Option("deck_refill", (WHEN_EMPTY, ON_DRAW), "PE-OPTIONS", "PE-DECK-REFILL"),
)
# Every ruleset version this build folds, with its option defaults.
RULESETS: Mapping[str, Mapping[str, str]] = {
    "1": {"first_seat": "random", "small_table_variant": "on", "hot_plate_blocks_items": "off"},
    "2": {
        "first_seat": "random",
        "small_table_variant": "on",
        "hot_plate_blocks_items": "off",
        "deck_refill": WHEN_EMPTY,
    },
    # the same options; nothing is reshuffled once the game is over (PE-GAME-END)
    "3": {
        "first_seat": "random",
        "small_table_variant": "on",
        "hot_plate_blocks_items": "off",
        "deck_refill": WHEN_EMPTY,
    },
}

S_COMP, S_SETUP, S_PLAY = "Components", "Setup", "Gameplay"
S_ACT, S_MORE, S_END = "Actions", "Additional Rules", "Game End"
S_SCORE, S_VAR, S_ITEMS = "Scoring", "2-Player and 3-Player Variant", "Components: Item cards"
S_D8 = "DESIGN section 8"

RULES: Mapping[str, Rule] = catalogue(
    Rule(
        "PE-SETUP-SHUFFLE",
        S_SETUP,
        "Shuffle the Food deck (ingredients, recipes, items) and the Guest deck.",
        refuses=False,
    ),
    Rule(
        "PE-FIRST-PLAYER",
        S_SETUP,
        "The first player card goes to one player (option first_seat: a seat, or random).",
        refuses=False,
    ),
    Rule(
        "PE-OPTIONS",
        "feastlog record",
        "The rule options are first_seat, small_table_variant, hot_plate_blocks_items and "
        "(from ruleset 2) deck_refill, each with its listed values.",
    ),
    Rule("PE-ROUNDS", S_PLAY, "The game has 5 rounds.", refuses=False),
    Rule("PE-GUEST-REVEAL", S_PLAY, "Each round starts by revealing 1 new Guest.", refuses=False),
    Rule(
        "PE-MARKET-FILL",
        S_PLAY,
        "Fill the Market face up with 2 Food cards per player.",
        refuses=False,
    ),
    Rule(
        "PE-MARKET-DISCARD",
        S_PLAY,
        "Cards left in the Market at the end of a round are discarded.",
        refuses=False,
    ),
    Rule("PE-DEAL", S_PLAY, "Deal 5 secret Food cards to each player.", refuses=False),
    Rule("PE-HAND-LIMIT-DEAL", S_PLAY, "After the deal, players over 10 cards discard down to 10."),
    Rule(
        "PE-TURN-ORDER",
        S_PLAY,
        "Starting with the first player, each player takes 1 action in turn until all have passed.",
    ),
    Rule(
        "PE-FIRST-PLAYER-PASS",
        S_PLAY,
        "At the end of a round the first player card passes clockwise.",
        refuses=False,
    ),
    Rule(
        "PE-VARIANT-MARKET", S_VAR, "With 2 or 3 players the Market holds 6 cards.", refuses=False
    ),
    Rule(
        "PE-VARIANT-DEAL", S_VAR, "With 2 or 3 players each player is dealt 6 cards.", refuses=False
    ),
    Rule("PE-HAND-CARDS", S_ACT, "Cards you prepare, play or discard come from your own hand."),
    Rule("PE-TAKE-MARKET", S_ACT, "Get Food: take 1 card from the Market."),
    Rule("PE-MARKET-NO-REFILL", S_MORE, "The Market is refilled only at the start of a round."),
    Rule(
        "PE-PREPARE-INGREDIENTS",
        S_ACT,
        "To prepare a Recipe you need its Recipe card and "
        "its listed ingredients in hand; they are discarded, the Recipe goes in front of you.",
    ),
    Rule("PE-SUBSTITUTE", S_ACT, "Any 3 cards from your hand may stand in for 1 ingredient."),
    Rule("PE-SUBSTITUTE-ONCE", S_ACT, "The 3-for-1 substitution may be used once per Recipe."),
    Rule(
        "PE-REPLACE",
        S_MORE,
        "A Recipe is replaced only when preparing a new one; the old "
        "Recipe and its Items are discarded.",
    ),
    Rule("PE-REPLACE-HOT-PLATE", S_MORE, "A Recipe with Hot Plate on it cannot be replaced."),
    Rule("PE-SLOTS", S_MORE, "You may never use more than 5 Recipe slots."),
    Rule("PE-ITEM-PLAY", S_ACT, "Play an Item card from your hand onto a Recipe in play."),
    Rule("PE-ITEM-UNIQUE", S_MORE, "No Recipe can have more than 1 of the same Item."),
    Rule(
        "PE-ITEM-EXTRA-SEASONING",
        S_ITEMS,
        "Extra Seasoning goes on an opponent's Recipe and "
        "downgrades it one notch for every Guest listing it.",
    ),
    Rule(
        "PE-ITEM-HERBS",
        S_ITEMS,
        "Sprinkle of Herbs goes on your Recipe: +2 each time it is a Guest's favorite.",
    ),
    Rule(
        "PE-ITEM-SILVERWARE",
        S_ITEMS,
        "Fancy Silverware: +1 per Recipe of yours; it takes a Recipe slot for good.",
    ),
    Rule("PE-DISCARD-DRAW", S_ACT, "Discard 2 cards from your hand to draw 1 from the Food deck."),
    Rule("PE-PASS", S_ACT, "A player who passes takes no more actions that round."),
    Rule(
        "PE-HAND-LIMIT",
        S_MORE,
        "No player ends a turn with more than 10 cards: over 10, they discard down to 10.",
    ),
    Rule(
        "PE-DECK-REFILL",
        S_MORE,
        "If the Food Deck is ever empty, shuffle the discard pile to form a new Food Deck: "
        "at once, whenever the deck is empty and the discard pile is not (from ruleset 2, "
        "option deck_refill=when_empty; from ruleset 3, never once the game is over).",
        refuses=False,
    ),
    Rule(
        "PE-GAME-END",
        S_END,
        "The game ends once all players have passed in round 5 (from ruleset 3 nothing "
        "happens after it: the Food deck is not refilled).",
    ),
    Rule("PE-SCORE-RECIPE", S_SCORE, "Each Recipe in play is worth 2 points.", refuses=False),
    Rule(
        "PE-SCORE-GUESTS",
        S_SCORE,
        "Each revealed Guest listing a Recipe: Favorite +4, Like +2, Dislike -1, Restriction -3.",
        refuses=False,
    ),
    Rule("PE-WINNER", S_SCORE, "The player with the most points wins.", refuses=False),
    Rule("PE-I1", S_D8, "2 to 6 players (6 player aids).", True),
    Rule(
        "PE-I2",
        S_D8,
        "Hot Plate goes on your own Recipe, which then cannot be replaced; "
        "option hot_plate_blocks_items: it also takes no opponent's Item.",
        True,
    ),
    Rule(
        "PE-I3",
        S_D8,
        "Extra Seasoning: Favorite -> Like -> Dislike -> Restriction (stays), "
        "for each Guest listing the Recipe.",
        True,
        refuses=False,
    ),
    Rule(
        "PE-I4",
        S_D8,
        "Herbs count favorites after downgrades; Silverware counts Recipes, not itself.",
        True,
        refuses=False,
    ),
    Rule(
        "PE-I5",
        S_D8,
        "A tie goes to the player later in the first round's turn order.",
        True,
        refuses=False,
    ),
    Rule(
        "PE-I6",
        "Additional Rules (interpretation)",
        "A player who takes an 11th card "
        "discards down (DiscardDown command) before the next player acts.",
        True,
        refuses=False,
    ),
    Rule(
        "PE-I7",
        "Additional Rules (interpretation)",
        "Option deck_refill=on_draw (ruleset 1's only reading): the Food deck is refilled "
        "only when a card must be drawn from it; with deck and discard both empty no card "
        "comes.",
        True,
        refuses=False,
    ),
    Rule(
        "PE-I8",
        "Gameplay (interpretation)",
        "Cards are dealt in turn order from the first "
        "player, each player's cards at once, after the Market is filled.",
        True,
        refuses=False,
    ),
    Rule(
        "PE-I9",
        "Actions (interpretation)",
        "The 3 substitute cards may be any cards in hand "
        "other than the Recipe and the ingredients used; the substitution names the "
        "ingredient it stands for.",
        True,
    ),
    Rule(
        "PE-I10",
        "Components (interpretation)",
        "Fancy Silverware is played in front of you, "
        "not on a Recipe; each copy takes a slot and scores.",
        True,
        refuses=False,
    ),
)

SPEC = Spec(
    kind=KIND,
    title="Picky Eaters",
    rulebook="shared/rulebooks/picky-eaters.txt",
    min_seats=2,
    max_seats=6,
    seats_rule="PE-I1",
    end_rule="PE-GAME-END",
    turn_rules=("PE-PASS", "PE-TURN-ORDER"),
    options_rule="PE-OPTIONS",
    ruleset_version="3",
    rulesets=RULESETS,
    options=OPTIONS,
    rng_labels=(FOOD_DECK, GUEST_DECK, FIRST_SEAT, RESHUFFLE),
    rules=RULES,
    command_field="picky_eaters",
    command_type=pb.PickyEatersCommand,
)
