"""Picky Eaters: the state of a game (frozen values), and small pure helpers on it."""

from __future__ import annotations

from dataclasses import dataclass

from feastlog.replay.games.picky_eaters.pack import Pack, pack_from_source
from feastlog.replay.games.picky_eaters.spec import HAND_LIMIT, ON_DRAW
from feastlog.replay.record.rng import Rng

DISCARD_DOWN = "discard-down"  # after the deal, seats over 10 cards discard (together)
PLAY = "play"  # one action each in turn
OVER = "over"


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

    @property
    def version(self) -> int:
        """The ruleset version: 1 for this class, whose shape is ruleset 1's."""
        return 1


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

    @property
    def version(self) -> int:
        """The ruleset version: 2 for this class, whose shape is ruleset 2's."""
        return 2


@dataclass(frozen=True)
class StateV3(StateV2):
    """The state from ruleset 3 on: ruleset 2's fields and the ruleset version.

    Ruleset 3 ends the game with its last pass (PE-GAME-END): an empty Food deck is not
    refilled after it.  Ruleset 2 games keep the reshuffle they were recorded with.
    """

    ruleset: int = 3

    @property
    def version(self) -> int:
        """The ruleset version this game follows."""
        return self.ruleset


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


def over_hand_limit(state: State) -> frozenset[int]:
    """The seats holding more than 10 cards (PE-HAND-LIMIT)."""
    return frozenset(s for s, p in enumerate(state.players) if len(p.hand) > HAND_LIMIT)
