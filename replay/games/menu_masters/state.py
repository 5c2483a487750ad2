"""Menu Masters: the state of a game (frozen values), and small pure helpers on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from feastlog.replay.games.engine import evolve
from feastlog.replay.games.menu_masters.pack import DECKS, Pack
from feastlog.replay.games.menu_masters.spec import STORE_TITLES, STORES
from feastlog.replay.record.rng import Rng

T = TypeVar("T")

PLACE = "place_pawns"
PURCHASE = "purchase_ingredients"
OVER = "over"


@dataclass(frozen=True)
class Use:
    """How one ingredient of a Menu was fulfilled, and the stars it scores."""

    ingredient: str  # the Menu's ingredient
    cards: tuple[str, ...]  # one card, or two for a Power Food
    power_food: str  # "" for a single card, else the ingredient both cards show
    stars: int


@dataclass(frozen=True)
class Completed:
    """A completed Menu: which one, from where, the ingredients used and the stars."""

    menu: str
    source: str  # "secret" or "community"
    uses: tuple[Use, ...]
    stars: int


@dataclass(frozen=True)
class StoreBoard:
    """One store: its face-down deck (top first), window, line and coins on the board."""

    deck: tuple[str, ...]  # empty for the Supermarket, which draws from the other decks
    window: tuple[str, ...]
    line: tuple[int, ...]  # Chef Cap pawns by seat, top of the stack (first in) first
    owner: int | None
    pot: int  # coins spent here, waiting for clean-up (2 chefs: carried to the next owner)


@dataclass(frozen=True)
class Chef:
    """One chef: coins, pawns left to place, basket, secret Menus, completed Menus."""

    name: str
    coins: int
    pawns: int
    coin_waiting: bool  # a Chef Cap sits on a bank coin until clean-up
    basket: tuple[str, ...]
    menus: tuple[str, ...]
    completed: tuple[Completed, ...]

    def stars(self) -> int:
        """Stars from completed Menus."""
        return sum(c.stars for c in self.completed)


@dataclass(frozen=True)
class Turn:
    """A purchase turn: the chef at the top of a store's line, and whether they bought."""

    seat: int
    store: int
    bought: bool


@dataclass(frozen=True)
class State:
    """The whole game."""

    pack: Pack
    round_limit: int
    rng: Rng
    round: int
    step: str  # PLACE, PURCHASE or OVER
    first_chef: int
    placing: int | None  # the chef to place a pawn (Place Pawns step)
    chefs: tuple[Chef, ...]
    stores: tuple[StoreBoard, ...]
    bank: int
    box: int
    menu_deck: tuple[str, ...]
    community: tuple[str, ...]
    turn: Turn | None
    third_menu_by: int | None  # the first chef to complete a third Menu
    end: str  # why the game ended, "" while it runs

    @property
    def version(self) -> int:
        """The ruleset version: 1 for this class, whose shape is ruleset 1's."""
        return 1


@dataclass(frozen=True)
class StateV2(State):
    """The state from ruleset 2 on: ruleset 1's fields and the ruleset version.

    The version is a field here and not in ``State``, so ruleset 1 games keep exactly the
    state shape (and so the state hashes) they were recorded with, while a later version
    enters the state hash of its own games.
    """

    ruleset: int = 2

    @property
    def version(self) -> int:
        """The ruleset version this game follows."""
        return self.ruleset


@dataclass(frozen=True)
class StateV3(StateV2):
    """The state from ruleset 3 on: what the end of a game with every store empty needs
    to remember (MM-I7).  Public: completed Menus are shown when completed."""

    ruleset: int = 3
    # Menus completed in all at the last clean-up that found every store empty; -1 when a
    # store still had cards then
    completed_when_empty: int = -1


def with_chef(state: State, seat: int, **changes: object) -> State:
    """The state with chef ``seat`` changed."""
    chefs = list(state.chefs)
    chefs[seat] = evolve(chefs[seat], **changes)
    return evolve(state, chefs=tuple(chefs))


def with_store(state: State, index: int, **changes: object) -> State:
    """The state with store ``index`` changed."""
    stores = list(state.stores)
    stores[index] = evolve(stores[index], **changes)
    return evolve(state, stores=tuple(stores))


def deck_index(deck: str) -> int:
    """The store index of a store deck."""
    return DECKS.index(deck)


def can_place(state: State, seat: int) -> bool:
    """Whether chef ``seat`` has anywhere to put a pawn (MM-I8)."""
    chef = state.chefs[seat]
    if not chef.coin_waiting and state.bank > 0:
        return True
    return any(s.owner != seat for s in state.stores)


def coins_in_play(state: State) -> int:
    """Coins held by chefs, the bank, store boards and waiting under Chef Caps."""
    chefs = sum(c.coins + int(c.coin_waiting) for c in state.chefs)
    return chefs + state.bank + sum(s.pot for s in state.stores)


def all_cards(state: State) -> list[str]:
    """Every card id in the game, wherever it is (for conservation checks)."""
    out: list[str] = [*state.menu_deck, *state.community]
    for store in state.stores:
        out += [*store.deck, *store.window]
    for chef in state.chefs:
        out += [*chef.basket, *chef.menus]
        for done in chef.completed:
            out.append(done.menu)
            out += [c for u in done.uses for c in u.cards]
    return out


def store_name(index: int, title: bool = False) -> str:
    """The store's id (``produce-stand``) or, with ``title``, its name (``Produce Stand``)."""
    return STORE_TITLES[index] if title else STORES[index]
