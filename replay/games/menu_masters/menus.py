"""Menu Masters: completing Menus (checking a chef's fulfilments, finding them) and what
is still possible (ruleset 2).

A Menu is fulfilled ingredient by ingredient (rulebook "Completing Menus", "Power Foods"):

- one basket card showing the ingredient; a dual-ingredient card fulfils one of its
  two ingredients and scores the stars printed for that one (MM-I5);
- or a Power Food: two basket cards both showing the same ingredient X (a dual card
  counts as X when it shows X), fulfilling any ingredient of X's store; it scores the
  higher of the two cards' stars for X (MM-POWER-FOOD).

Each basket card serves at most once.

Two readings of ruleset 2 (MM-I3 and MM-I7) need to know whether a Menu can still be
completed:

- a chef at the top of a line who cannot buy (they cannot pay, or the store is sold out)
  still has the turn; the turn passes by itself when nothing is possible in it.  That is
  judged from public information only, so an automatic pass tells no one anything about
  the chef's secret Menus: the chef's basket (public) against the community Menus, and,
  when the chef holds secret Menus, against every Menu whose place is not public (the
  Menu deck and all secret hands);
- the game ends after a clean-up once no Menu left can be completed with the cards left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import combinations

from feastlog.replay.games.engine import MalformedCommand
from feastlog.replay.games.menu_masters.pack import MenuCard, Pack
from feastlog.replay.games.menu_masters.state import State, Use
from feastlog.v1 import menu_masters_pb2 as pb


def single_use(pack: Pack, ingredient: str, card_id: str) -> Use | None:
    """The Use of one card for ``ingredient``, or None when the card does not show it."""
    stars = pack.card(card_id).stars_for(ingredient)
    return Use(ingredient, (card_id,), "", stars) if stars else None


def power_food_use(pack: Pack, ingredient: str, made_of: str, pair: Sequence[str]) -> Use | None:
    """The Use of two cards of ``made_of`` for ``ingredient``, or None when not a Power Food."""
    first, second = (pack.card(c) for c in pair)
    if first.id == second.id or pack.store_of(made_of) != pack.store_of(ingredient):
        return None
    stars = (first.stars_for(made_of), second.stars_for(made_of))
    return Use(ingredient, (first.id, second.id), made_of, max(stars)) if all(stars) else None


def read_fulfilment(pack: Pack, fulfilment: pb.MenuMastersFulfilment, field: str) -> None:
    """MalformedCommand unless the fulfilment names known ingredients and cards, one way."""
    names = pack.ingredients()
    if fulfilment.ingredient not in names:
        raise MalformedCommand(f"{field}.ingredient", f"no ingredient {fulfilment.ingredient!r}")
    by = fulfilment.WhichOneof("by")
    if by is None:
        raise MalformedCommand(field, "give a card_id or a power_food")
    if by == "card_id":
        _known_card(pack, fulfilment.card_id, f"{field}.card_id")
        return
    power = fulfilment.power_food
    if power.ingredient not in names:
        raise MalformedCommand(
            f"{field}.power_food.ingredient", f"no ingredient {power.ingredient!r}"
        )
    for j, card_id in enumerate(power.card_ids):
        _known_card(pack, card_id, f"{field}.power_food.card_ids[{j}]")


def card_refusal(pack: Pack, fulfilment: pb.MenuMastersFulfilment) -> str | None:
    """MM-I5: a single card fulfils an ingredient it shows (a dual card: one of its two)."""
    if fulfilment.WhichOneof("by") != "card_id":
        return None
    if single_use(pack, fulfilment.ingredient, fulfilment.card_id) is None:
        return f"{fulfilment.card_id} does not show {fulfilment.ingredient}"
    return None


def power_food_refusal(pack: Pack, fulfilment: pb.MenuMastersFulfilment, chef: str) -> str | None:
    """MM-POWER-FOOD: two cards showing one ingredient of the same store as the one fulfilled."""
    if fulfilment.WhichOneof("by") != "power_food":
        return None
    power = fulfilment.power_food
    if len(power.card_ids) != 2:
        return f"{chef}: a Power Food is 2 cards of the same ingredient, not {len(power.card_ids)}"
    if power_food_use(pack, fulfilment.ingredient, power.ingredient, power.card_ids) is None:
        return (
            f"{chef}: {' and '.join(power.card_ids)} are not two {power.ingredient} cards "
            f"from the same store as {fulfilment.ingredient}"
        )
    return None


def use_of(pack: Pack, fulfilment: pb.MenuMastersFulfilment) -> Use:
    """The Use of a fulfilment that passed MM-I5 and MM-POWER-FOOD."""
    if fulfilment.WhichOneof("by") == "card_id":
        use = single_use(pack, fulfilment.ingredient, fulfilment.card_id)
    else:
        power = fulfilment.power_food
        use = power_food_use(pack, fulfilment.ingredient, power.ingredient, power.card_ids)
    assert use is not None  # the checks came first
    return use


def ingredients_refusal(
    basket: Sequence[str], menu: MenuCard, uses: Sequence[Use], chef: str
) -> str | None:
    """MM-MENU-INGREDIENTS: each ingredient fulfilled once, by cards of the basket, once each."""
    if Counter(u.ingredient for u in uses) != Counter(menu.ingredients):
        return (
            f"{menu.name} needs {', '.join(menu.ingredients)}: "
            f"{chef} must fulfil each of them exactly once"
        )
    used = [c for u in uses for c in u.cards]
    for card_id in used:
        if used.count(card_id) > 1:
            return f"{chef} uses {card_id} twice"
        if card_id not in basket:
            return f"{card_id} is not in {chef}'s basket"
    return None


# -- the checks of CompleteMenus, for ``moves.MOVES`` ------------------------------------


def read_completions(
    state: State, move: pb.MenuMastersCompleteMenus
) -> pb.MenuMastersCompleteMenus:
    """At least one Menu, each a Menu of the pack, each fulfilment well formed."""
    if not move.menus:
        raise MalformedCommand("complete_menus.menus", "name at least one Menu")
    for k, completion in enumerate(move.menus):
        try:
            state.pack.menu(completion.menu_id)
        except KeyError:
            field = f"complete_menus.menus[{k}].menu_id"
            raise MalformedCommand(field, f"no Menu card {completion.menu_id!r}") from None
    for i, completion in enumerate(move.menus):
        for k, fulfilment in enumerate(completion.fulfilments):
            where = f"complete_menus.menus[{i}].fulfilments[{k}]"
            read_fulfilment(state.pack, fulfilment, where)
    return move


# -- checks: each returns the refusal in players' words, or None --------------------------


def menus_in_reach(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> str | None:
    """MM-MENU-SOURCE: each Menu is the chef's secret Menu or in the community row.

    From ruleset 4, the row as the chef sees it when the command is sent.  The Menu that
    replaces a completed one comes off the face-down deck: rulesets 1 to 3 let the same
    command name it, so a refusal told whether a guessed Menu was the deck's top (this
    rule, or the ingredients of the Menu guessed), and a chef could read the deck by
    guessing.  Now a revealed Menu is completed by a later command (the turn goes on).

    Rulesets 1 to 3 still take such a command when it is legal in all (their records
    hold them), but a refusal no longer tells the deck: a command naming a Menu its chef
    does not see when it is sent, refused for any reason (here or by a later check), is
    refused here, naming the first such Menu, in the words a wrong guess gets.
    """
    twice = _named_twice(state, move)
    if twice is not None:  # never in reach twice, whatever the deck holds: no guess told
        return f"{twice.name} is named twice; each Menu is completed once"
    refusal = _in_reach(state, seat, move)
    if state.version >= 4:
        return refusal
    unseen = _first_unseen(state, seat, move)
    if unseen is None:
        return refusal  # (None: every Menu named is in sight)
    later = (cards_show, power_foods, menus_fulfilled)
    if refusal is None and not any(check(state, seat, move) for check in later):
        return None  # legal in all: rulesets 1 to 3 take it
    chef = state.chefs[seat].name
    return f"{unseen.name} is neither {chef}'s secret Menu nor a community Menu"


def _named_twice(state: State, move: pb.MenuMastersCompleteMenus) -> MenuCard | None:
    """The first Menu a command names a second time, or None (Menu ids are unique in a
    pack, and a Menu once completed leaves the row and the chef's hand)."""
    named: set[str] = set()
    for completion in move.menus:
        if completion.menu_id in named:
            return state.pack.menu(completion.menu_id)
        named.add(completion.menu_id)
    return None


def _first_unseen(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> MenuCard | None:
    """The first Menu a command names that its chef does not see now (beyond its secret
    Menus and the community row, each named once), or None."""
    seen = Counter([*state.chefs[seat].menus, *state.community])
    for completion in move.menus:
        if seen[completion.menu_id] <= 0:
            return state.pack.menu(completion.menu_id)
        seen[completion.menu_id] -= 1
    return None


def _in_reach(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> str | None:
    """Each Menu named is the chef's secret Menu or in the community row (as it is replaced
    by each completion: from ruleset 4 by nothing this command may name)."""
    chef = state.chefs[seat]
    secret, community, deck = list(chef.menus), list(state.community), list(state.menu_deck)
    for completion in move.menus:
        menu = state.pack.menu(completion.menu_id)
        if menu.id in secret:
            secret.remove(menu.id)
        elif menu.id in community:
            # a completed community Menu is replaced at once: from ruleset 4 by a Menu
            # this command cannot name
            place = community.index(menu.id)
            replaced_by = deck[:1] if state.version < 4 else []
            community[place : place + 1] = replaced_by
            deck = deck[len(replaced_by) :]
        else:
            return f"{menu.name} is neither {chef.name}'s secret Menu nor a community Menu"
    return None


def cards_show(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> str | None:
    """MM-I5: each single card shows the ingredient it fulfils."""
    ways = (f for completion in move.menus for f in completion.fulfilments)
    return next(filter(None, (card_refusal(state.pack, f) for f in ways)), None)


def power_foods(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> str | None:
    """MM-POWER-FOOD: each Power Food is two cards of one ingredient of the right store."""
    name = state.chefs[seat].name
    ways = (f for completion in move.menus for f in completion.fulfilments)
    return next(filter(None, (power_food_refusal(state.pack, f, name) for f in ways)), None)


def menus_fulfilled(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> str | None:
    """MM-MENU-INGREDIENTS: each Menu's ingredients once each, from what is left in the basket."""
    chef, basket = state.chefs[seat], list(state.chefs[seat].basket)
    for completion in move.menus:
        uses = [use_of(state.pack, f) for f in completion.fulfilments]
        menu = state.pack.menu(completion.menu_id)
        refusal = ingredients_refusal(basket, menu, uses, chef.name)
        if refusal:
            return refusal
        basket = [c for c in basket if c not in {c for u in uses for c in u.cards}]
    return None


def _known_card(pack: Pack, card_id: str, field: str) -> None:
    """MalformedCommand when ``card_id`` is no ingredient card of the pack."""
    try:
        pack.card(card_id)
    except KeyError:
        raise MalformedCommand(field, f"no ingredient card {card_id!r}") from None


def find_completion(pack: Pack, basket: Sequence[str], menu: MenuCard) -> tuple[Use, ...] | None:
    """One way to fulfil ``menu`` from ``basket`` (single cards tried first), or None."""
    return _search(pack, tuple(basket), menu.ingredients, ())


def all_completions(pack: Pack, basket: Sequence[str], menu: MenuCard) -> Iterator[tuple[Use, ...]]:
    """Every way to fulfil ``menu`` from ``basket``, each set of Uses once.

    Fulfilments follow the Menu's ingredient order; a Power Food's two cards are in basket
    order.  Where a Menu names an ingredient twice, the same Uses in another order are the
    same way and are given once.
    """
    seen: set[tuple[tuple[str, tuple[str, ...], str], ...]] = set()
    for uses in _every(pack, tuple(basket), menu.ingredients, ()):
        key = tuple(sorted((u.ingredient, u.cards, u.power_food) for u in uses))
        if key not in seen:
            seen.add(key)
            yield uses


def _every(
    pack: Pack, basket: tuple[str, ...], needs: tuple[str, ...], done: tuple[Use, ...]
) -> Iterator[tuple[Use, ...]]:
    """Backtracking over the Menu's needs, yielding every complete fulfilment."""
    if not needs:
        yield done
        return
    for use in _options(pack, basket, needs[0]):
        rest = tuple(c for c in basket if c not in use.cards)
        yield from _every(pack, rest, needs[1:], (*done, use))


def _options(pack: Pack, basket: tuple[str, ...], ingredient: str) -> Iterator[Use]:
    """Every Use of basket cards for ``ingredient``: single cards, then Power Foods.

    A generator, so a search that succeeds with single cards never pairs up a large basket.
    """
    for card_id in basket:
        use = single_use(pack, ingredient, card_id)
        if use is not None:
            yield use
    store = pack.store_of(ingredient)
    same_store = [c for c in basket if pack.card(c).deck == store]
    for first, second in combinations(same_store, 2):
        for made_of in pack.card(first).ingredients:
            use = power_food_use(pack, ingredient, made_of, (first, second))
            if use is not None:
                yield use


def _search(
    pack: Pack, basket: tuple[str, ...], needs: tuple[str, ...], done: tuple[Use, ...]
) -> tuple[Use, ...] | None:
    """Backtracking over the Menu's needs, each basket card used at most once."""
    if not needs:
        return done
    for use in _options(pack, basket, needs[0]):
        rest = tuple(c for c in basket if c not in use.cards)
        found = _search(pack, rest, needs[1:], (*done, use))
        if found is not None:
            return found
    return None


def completion_message(menu_id: str, uses: Sequence[Use]) -> pb.MenuMastersMenuCompletion:
    """The MenuCompletion a client would send for ``uses``."""
    fulfilments = []
    for use in uses:
        if use.power_food:
            power = pb.MenuMastersPowerFood(ingredient=use.power_food, card_ids=list(use.cards))
            fulfilments.append(
                pb.MenuMastersFulfilment(ingredient=use.ingredient, power_food=power)
            )
        else:
            fulfilments.append(
                pb.MenuMastersFulfilment(ingredient=use.ingredient, card_id=use.cards[0])
            )
    return pb.MenuMastersMenuCompletion(menu_id=menu_id, fulfilments=fulfilments)


def use_plain(use: Use) -> dict[str, object]:
    """A Use as fact data."""
    return {
        "ingredient": use.ingredient,
        "cards": list(use.cards),
        "power_food": use.power_food or None,
        "stars": use.stars,
    }


def _any_completable(state: State, basket: Iterable[str], menus: Iterable[str]) -> bool:
    """Whether one of ``menus`` can be fulfilled from ``basket``."""
    cards = tuple(basket)
    if not cards:
        return False
    # whether any Menu can be fulfilled does not depend on the order of the cards or of
    # the Menus, and the cards in play change only when a Menu is completed: the same
    # question comes back turn after turn
    return _completable(state.pack, tuple(sorted(cards)), frozenset(menus))


@lru_cache(maxsize=4096)
def _completable(pack: Pack, cards: tuple[str, ...], menus: frozenset[str]) -> bool:
    """``_any_completable`` for sorted cards and a set of Menus."""
    shown: set[str] = set()
    paired: set[str] = set()  # stores with two cards showing the same ingredient
    for card_id in cards:
        card = pack.card(card_id)
        paired |= {card.deck for i in card.ingredients if i in shown}
        shown.update(card.ingredients)
    for menu_id in sorted(menus):
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
    """MM-I7 (from ruleset 2): whether some Menu left can still be completed with the cards left.

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
    if state.version >= 3:
        # from public information only, as MM-I3 judges a turn: a chef still holding
        # secret Menus might hold any Menu nobody has seen; the Menu deck moves only when
        # a community Menu is completed, which the community row itself shows
        unseen = unseen_menus(state)
        return any(
            _any_completable(
                state, chef.basket, [*state.community, *(unseen if chef.menus else ())]
            )
            for chef in state.chefs
        )
    return any(
        _any_completable(state, chef.basket, [*chef.menus, *menus_left]) for chef in state.chefs
    )
