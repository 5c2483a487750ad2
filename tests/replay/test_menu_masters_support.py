"""Helpers for the Menu Masters tests: constructed positions and command builders.

Card ids of the bundled pack (per deck: 7 single cards per ingredient, stars
1, 1, 2, 2, 2, 3, 3, then 4 dual cards):
produce-01..07 broccoli, 08..14 tomato, 15..21 carrot, 22..28 lettuce,
29 broccoli(1)/tomato(2), 30 carrot(2)/lettuce(1), 31 broccoli(2)/carrot(1),
32 tomato(1)/lettuce(2); butcher-01..07 salmon, 08..14 steak, 15..21 chicken,
22..28 sausage, 29 salmon(1)/steak(2); bakery-01..07 bread, 08..14 croissant,
15..21 muffin, 22..28 cake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from feastlog.replay.games import fold
from feastlog.replay.games.menu_masters import ENGINE, flow
from feastlog.replay.games.menu_masters.state import PURCHASE, State, with_chef, with_store
from feastlog.replay.record.rng import Rng
from feastlog.v1 import menu_masters_pb2 as pb

PACK = ENGINE.load_pack(ENGINE.default_pack_bytes())
NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay")
PRODUCE, BUTCHER, BAKERY, MARKET = 0, 1, 2, 3


def new_game(
    n: int = 3, first: str = "0", names: Sequence[str] = NAMES, ruleset: str = "2", **options: str
) -> State:
    """A game just set up under ``ruleset``, with a fixed seed."""
    opts = {"first_seat": first, **options}
    return ENGINE.setup(tuple(names[:n]), opts, PACK, Rng(b"\x07" * 32), ruleset)[0]


def _remove(state: State, ids: set[str]) -> State:
    """The state with the cards ``ids`` taken out of wherever they are."""

    def keep(cards: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(c for c in cards if c not in ids)

    stores = tuple(replace(s, deck=keep(s.deck), window=keep(s.window)) for s in state.stores)
    chefs = tuple(replace(c, basket=keep(c.basket), menus=keep(c.menus)) for c in state.chefs)
    return replace(
        state,
        stores=stores,
        chefs=chefs,
        menu_deck=keep(state.menu_deck),
        community=keep(state.community),
    )


def give(
    state: State,
    seat: int,
    basket: Sequence[str] | None = None,
    menus: Sequence[str] | None = None,
    **changes: Any,
) -> State:
    """Chef ``seat`` with this basket and these secret Menus (cards moved from elsewhere)."""
    if basket is not None:
        state = _remove(state, set(basket))
        state = with_chef(state, seat, basket=tuple(basket))
    if menus is not None:
        state = _remove(state, set(menus))
        state = with_chef(state, seat, menus=tuple(menus))
    return with_chef(state, seat, **changes) if changes else state


def window(state: State, index: int, cards: Sequence[str]) -> State:
    """Store ``index`` showing ``cards`` (moved from elsewhere)."""
    state = _remove(state, set(cards))
    return with_store(state, index, window=tuple(cards))


def stores_emptied(state: State) -> State:
    """The state with every store's window and deck empty."""
    return replace(state, stores=tuple(replace(s, deck=(), window=()) for s in state.stores))


def community(state: State, menus: Sequence[str]) -> State:
    """The community row showing ``menus`` (moved from elsewhere)."""
    state = _remove(state, set(menus))
    return replace(state, community=tuple(menus))


def purchasing(
    state: State, lines: dict[int, Sequence[int]], owners: dict[int, int] | None = None
) -> tuple[State, list[dict[str, Any]]]:
    """The Purchase step starting with these lines and owners (all pawns placed)."""
    for index, line in lines.items():
        state = with_store(state, index, line=tuple(line))
    for index, owner in (owners or {}).items():
        state = with_store(state, index, owner=owner)
    chefs = tuple(replace(c, pawns=0) for c in state.chefs)
    state = replace(state, chefs=chefs, step=PURCHASE, placing=None)
    return flow.advance(state, [])


def place(store: int, placement: int) -> pb.MenuMastersCommand:
    """PlacePawn at store index ``store`` (-1: none)."""
    move = pb.MenuMastersPlacePawn(store=store + 1 if store >= 0 else 0, placement=placement)  # type: ignore[arg-type]
    return pb.MenuMastersCommand(place_pawn=move)


def line(store: int) -> pb.MenuMastersCommand:
    """Join the line at store index ``store``."""
    return place(store, pb.MENU_MASTERS_PLACEMENT_LINE)


def own(store: int) -> pb.MenuMastersCommand:
    """Own store index ``store``."""
    return place(store, pb.MENU_MASTERS_PLACEMENT_OWN)


def coin() -> pb.MenuMastersCommand:
    """Collect a coin from the bank."""
    return place(-1, pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN)


def buy(card_id: str) -> pb.MenuMastersCommand:
    """Buy ``card_id``."""
    return pb.MenuMastersCommand(purchase=pb.MenuMastersPurchaseIngredient(card_id=card_id))


def leave() -> pb.MenuMastersCommand:
    """Leave the line."""
    return pb.MenuMastersCommand(leave_line=pb.MenuMastersLeaveLine())


def finish() -> pb.MenuMastersCommand:
    """Finish the purchase turn."""
    return pb.MenuMastersCommand(finish_turn=pb.MenuMastersFinishPurchaseTurn())


def discard(card_id: str) -> pb.MenuMastersCommand:
    """Discard ``card_id``."""
    return pb.MenuMastersCommand(discard=pb.MenuMastersDiscardIngredient(card_id=card_id))


Way = str | tuple[str, str, str]  # a card id, or (made_of, card, card) for a Power Food


def completion(menu_id: str, **ways: Way) -> pb.MenuMastersMenuCompletion:
    """A MenuCompletion: ingredient=card_id or ingredient=(made_of, card, card)."""
    fulfilments = []
    for ingredient, way in ways.items():
        if isinstance(way, str):
            fulfilments.append(pb.MenuMastersFulfilment(ingredient=ingredient, card_id=way))
        else:
            power = pb.MenuMastersPowerFood(ingredient=way[0], card_ids=list(way[1:]))
            fulfilments.append(pb.MenuMastersFulfilment(ingredient=ingredient, power_food=power))
    return pb.MenuMastersMenuCompletion(menu_id=menu_id, fulfilments=fulfilments)


def complete(*menus: pb.MenuMastersMenuCompletion) -> pb.MenuMastersCommand:
    """CompleteMenus with these completions."""
    return pb.MenuMastersCommand(complete_menus=pb.MenuMastersCompleteMenus(menus=list(menus)))


def run(
    state: State, *moves: tuple[int, pb.MenuMastersCommand]
) -> tuple[State, list[dict[str, Any]]]:
    """Apply ``(seat, command)`` pairs in order; all the facts."""
    facts: list[dict[str, Any]] = []
    for seat, command in moves:
        state, new = fold.play(ENGINE, state, seat, command)
        facts += new
    return state, facts


def of_type(facts: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The facts of one type."""
    return [f for f in facts if f["type"] == kind]
