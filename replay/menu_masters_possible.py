"""Menu Masters, ruleset 2: what is still possible, for a chef's turn and for the game.

Two readings of the rulebook (rule ids MM-I3 and MM-I7) need to know whether a Menu can
still be completed:

- a chef at the top of a line who cannot buy (they cannot pay, or the store is sold out)
  still has the turn; the turn passes by itself when nothing is possible in it.  That is
  judged from public information only, so an automatic pass tells no one anything about
  the chef's secret Menus: the chef's basket (public) against the community Menus, and,
  when the chef holds secret Menus, against every Menu whose place is not public (the
  Menu deck and all secret hands);
- the game ends after a clean-up once no Menu left can be completed with the cards left.
"""

from __future__ import annotations

from collections.abc import Iterable

from replay.menu_masters_menus import find_completion
from replay.menu_masters_state import State


def _any_completable(state: State, basket: Iterable[str], menus: Iterable[str]) -> bool:
    """Whether one of ``menus`` can be fulfilled from ``basket``."""
    cards = tuple(basket)
    if not cards:
        return False
    pack = state.pack
    shown: set[str] = set()
    paired: set[str] = set()  # stores with two cards showing the same ingredient
    for card_id in cards:
        card = pack.card(card_id)
        paired |= {card.deck for i in card.ingredients if i in shown}
        shown.update(card.ingredients)
    for menu_id in menus:
        menu = pack.menu(menu_id)
        # a quick necessary test first: every ingredient shown, or a Power Food of its store
        if all(i in shown or pack.store_of(i) in paired for i in menu.ingredients) and (
            find_completion(pack, cards, menu) is not None
        ):
            return True
    return False


def unseen_menus(state: State) -> list[str]:
    """Menus whose place is not public: the Menu deck and every secret hand."""
    return [*state.menu_deck, *(m for chef in state.chefs for m in chef.menus)]


def blocked(state: State, store: int, seat: int) -> str:
    """Why the chef at the top of ``store``'s line cannot buy: "sold_out", "cannot_pay" or ""."""
    board = state.stores[store]
    if not board.window:
        return "sold_out"
    if state.chefs[seat].coins < len(board.line):
        return "cannot_pay"
    return ""


def nothing_to_do(state: State, seat: int) -> bool:
    """MM-I3: whether a chef who cannot buy has no Menu they might complete (public view)."""
    chef = state.chefs[seat]
    menus = [*state.community, *(unseen_menus(state) if chef.menus else ())]
    return not _any_completable(state, chef.basket, menus)


def menu_still_possible(state: State) -> bool:
    """MM-I7 (ruleset 2): whether some Menu left can still be completed with the cards left.

    While any store still has cards (window or deck), a chef may still buy them, and a
    basket card may still come back to its deck through a discard: every ingredient card
    in play (stores and baskets together) counts for every Menu left (Menu deck, community
    row, secret hands).  Once every store is empty, baskets no longer change: a chef can
    complete only their own secret Menus, the community row and the Menus still to come
    from the deck, from their own basket.
    """
    menus_left = [*state.menu_deck, *state.community]
    if any(s.window or s.deck for s in state.stores):
        pool = [c for s in state.stores for c in (*s.window, *s.deck)]
        pool += [c for chef in state.chefs for c in chef.basket]
        return _any_completable(state, pool, [*state.community, *unseen_menus(state)])
    return any(
        _any_completable(state, chef.basket, [*chef.menus, *menus_left]) for chef in state.chefs
    )
