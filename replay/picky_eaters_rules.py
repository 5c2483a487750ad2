"""Picky Eaters: the rule catalogue, the game state and the scoring.

Rulebook: shared/rulebooks/picky-eaters.txt.  The engine is in ``replay.picky_eaters``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replay.engine import Fact, Rule, catalogue
from replay.picky_eaters_pack import (
    EXTRA_SEASONING,
    SPRINKLE_OF_HERBS,
    Pack,
    pack_from_source,
)
from replay.rng import Rng

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

DISCARD_DOWN = "discard-down"  # after the deal, seats over 10 cards discard (together)
PLAY = "play"  # one action each in turn
OVER = "over"

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
        "at once, whenever the deck is empty and the discard pile is not (ruleset 2 "
        "default, option deck_refill=when_empty).",
        refuses=False,
    ),
    Rule("PE-GAME-END", S_END, "The game ends once all players have passed in round 5."),
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


@dataclass(frozen=True)
class PlacedRecipe:
    """A Recipe in play and the Item cards on it."""

    card: str
    items: tuple[str, ...] = ()


@dataclass(frozen=True)
class Player:
    """One player: the secret hand (sorted), Recipes in play and Fancy Silverware."""

    name: str
    hand: tuple[str, ...] = ()
    recipes: tuple[PlacedRecipe, ...] = ()
    silverware: tuple[str, ...] = ()
    passed: bool = False

    @property
    def slots_used(self) -> int:
        """Recipe slots taken: Recipes in play plus Fancy Silverware."""
        return len(self.recipes) + len(self.silverware)


@dataclass(frozen=True)
class State:
    """The whole game.  ``food_deck[0]`` is the top card."""

    pack_source: str  # the pack's TOML text; the parsed pack is memoised from it
    players: tuple[Player, ...]
    small_table_variant: bool
    hot_plate_blocks_items: bool
    first_seat: int  # the first player of round 1 (the tie-break order)
    first_player: int  # who holds the first player card this round
    round: int
    phase: str
    turn: int
    food_deck: tuple[str, ...]
    discard: tuple[str, ...]
    market: tuple[str, ...]
    guest_deck: tuple[str, ...]
    guests: tuple[str, ...]  # revealed, in order
    rng: Rng

    @property
    def pack(self) -> Pack:
        """The content pack this game uses."""
        return pack_from_source(self.pack_source)

    @property
    def refill(self) -> str:
        """When an empty Food deck is refilled: ruleset 1 only on a draw (PE-I7)."""
        return ON_DRAW


@dataclass(frozen=True)
class StateV2(State):
    """The state from ruleset 2 on: ruleset 1's fields and the option deck_refill.

    The option is a field here and not in ``State``, so ruleset 1 games keep exactly the
    state shape (and so the state hashes) they were recorded with.
    """

    deck_refill: str = "when_empty"

    @property
    def refill(self) -> str:
        """When an empty Food deck is refilled: "when_empty" (PE-DECK-REFILL) or "on_draw"."""
        return self.deck_refill


def market_size(seats: int, variant: bool) -> int:
    """Market cards per round: 2 per player; 6 with 2 or 3 players in the variant."""
    return 6 if variant and seats <= 3 else 2 * seats


def deal_size(seats: int, variant: bool) -> int:
    """Cards dealt per player per round: 5; 6 with 2 or 3 players in the variant."""
    return 6 if variant and seats <= 3 else 5


def effect_of(pack: Pack, card: str) -> str:
    """The effect of an Item card."""
    return pack.item_of[card].effect


def has_effect(pack: Pack, placed: PlacedRecipe, effect: str) -> int:
    """How many Items with ``effect`` sit on a Recipe."""
    return sum(1 for item in placed.items if effect_of(pack, item) == effect)


def owner_of(state: State, recipe: str) -> int | None:
    """The seat with ``recipe`` in play, or None."""
    for seat, player in enumerate(state.players):
        if any(p.card == recipe for p in player.recipes):
            return seat
    return None


def placed(state: State, seat: int, recipe: str) -> PlacedRecipe:
    """Seat ``seat``'s Recipe in play with card ``recipe``."""
    return next(p for p in state.players[seat].recipes if p.card == recipe)


def score_recipe(pack: Pack, recipe: PlacedRecipe, guests: tuple[str, ...]) -> dict[str, Any]:
    """One Recipe's score line: base, each listing Guest (after Extra Seasoning), herbs."""
    name = pack.recipe_of[recipe.card].name
    notches = has_effect(pack, recipe, EXTRA_SEASONING)
    lines: list[dict[str, Any]] = []
    for card in guests:
        guest = pack.guest_of[card]
        listed = guest.category(name)
        if listed is None:
            continue
        counted = listed
        for _ in range(notches):
            counted = NOTCH_DOWN[counted]
        points = CATEGORY_POINTS[counted]
        lines.append(
            {
                "guest": card,
                "name": guest.name,
                "listed": listed,
                "counted": counted,
                "points": points,
            }
        )
    favorites = sum(1 for line in lines if line["counted"] == "favorite")
    herbs = HERBS_POINTS * favorites * has_effect(pack, recipe, SPRINKLE_OF_HERBS)
    total = RECIPE_POINTS + sum(int(line["points"]) for line in lines) + herbs
    return {
        "recipe": recipe.card,
        "name": name,
        "items": list(recipe.items),
        "base": RECIPE_POINTS,
        "guests": lines,
        "herbs": herbs,
        "points": total,
    }


def score_table(state: State) -> list[dict[str, Any]]:
    """The final scoring table: per player, per Recipe, per Guest."""
    table: list[dict[str, Any]] = []
    for seat, player in enumerate(state.players):
        recipes = [score_recipe(state.pack, r, state.guests) for r in player.recipes]
        silverware: list[dict[str, Any]] = [
            {"item": card, "points": SILVERWARE_POINTS * len(player.recipes)}
            for card in player.silverware
        ]
        points = sum(int(r["points"]) for r in recipes) + sum(int(s["points"]) for s in silverware)
        table.append(
            {
                "seat": seat,
                "name": player.name,
                "recipes": recipes,
                "silverware": silverware,
                "points": points,
            }
        )
    return table


def tiebreak(state: State) -> tuple[int, ...]:
    """Each seat's place in the first round's turn order: later (higher) wins a tie."""
    n = len(state.players)
    return tuple((seat - state.first_seat) % n for seat in range(n))


def game_over_fact(state: State) -> Fact:
    """The game_over fact: points, winners and the full scoring table."""
    table = score_table(state)
    points = [int(row["points"]) for row in table]
    order = tiebreak(state)
    best = max(zip(points, order, strict=True))
    winners = [s for s in range(len(points)) if (points[s], order[s]) == best]
    return {
        "type": "game_over",
        "points": points,
        "winners": winners,
        "tiebreak": list(order),
        "table": table,
    }
