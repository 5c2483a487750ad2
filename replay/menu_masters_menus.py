"""Completing Menus in Menu Masters: checking a chef's fulfilments, finding one, scoring.

A Menu is fulfilled ingredient by ingredient (rulebook "Completing Menus", "Power Foods"):

- one basket card showing the ingredient; a dual-ingredient card fulfils one of its
  two ingredients and scores the stars printed for that one (MM-I5);
- or a Power Food: two basket cards both showing the same ingredient X (a dual card
  counts as X when it shows X), fulfilling any ingredient of X's store; it scores the
  higher of the two cards' stars for X (MM-POWER-FOOD).

Each basket card serves at most once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from feastlog.v1 import menu_masters_pb2 as pb
from replay.engine import MalformedCommand, RuleViolation
from replay.menu_masters_pack import MenuCard, Pack


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


def check_completion(
    pack: Pack,
    basket: Sequence[str],
    menu: MenuCard,
    completion: pb.MenuMastersMenuCompletion,
    chef: str,
) -> tuple[Use, ...]:
    """The Uses of a chef's MenuCompletion, raising RuleViolation where it is wrong."""
    uses: list[Use] = []
    for k, fulfilment in enumerate(completion.fulfilments):
        uses.append(_fulfilment_use(pack, fulfilment, f"fulfilments[{k}]", chef))
    if Counter(u.ingredient for u in uses) != Counter(menu.ingredients):
        raise RuleViolation(
            "MM-MENU-INGREDIENTS",
            f"{menu.name} needs {', '.join(menu.ingredients)}: "
            f"{chef} must fulfil each of them exactly once",
        )
    used = [c for u in uses for c in u.cards]
    for card_id in used:
        if used.count(card_id) > 1:
            raise RuleViolation("MM-MENU-INGREDIENTS", f"{chef} uses {card_id} twice")
        if card_id not in basket:
            raise RuleViolation("MM-MENU-INGREDIENTS", f"{card_id} is not in {chef}'s basket")
    return tuple(uses)


def _fulfilment_use(pack: Pack, fulfilment: pb.MenuMastersFulfilment, field: str, chef: str) -> Use:
    """One fulfilment checked on its own (is the card right for the ingredient)."""
    names = pack.ingredients()
    if fulfilment.ingredient not in names:
        raise MalformedCommand(f"{field}.ingredient", f"no ingredient {fulfilment.ingredient!r}")
    by = fulfilment.WhichOneof("by")
    if by is None:
        raise MalformedCommand(field, "give a card_id or a power_food")
    if by == "card_id":
        _known_card(pack, fulfilment.card_id, f"{field}.card_id")
        use = single_use(pack, fulfilment.ingredient, fulfilment.card_id)
        if use is None:
            raise RuleViolation(
                "MM-I5", f"{fulfilment.card_id} does not show {fulfilment.ingredient}"
            )
        return use
    power = fulfilment.power_food
    if power.ingredient not in names:
        raise MalformedCommand(
            f"{field}.power_food.ingredient", f"no ingredient {power.ingredient!r}"
        )
    for card_id in power.card_ids:
        _known_card(pack, card_id, f"{field}.power_food.card_ids")
    if len(power.card_ids) != 2:
        raise RuleViolation(
            "MM-POWER-FOOD",
            f"{chef}: a Power Food is 2 cards of the same ingredient, not {len(power.card_ids)}",
        )
    use = power_food_use(pack, fulfilment.ingredient, power.ingredient, power.card_ids)
    if use is None:
        raise RuleViolation(
            "MM-POWER-FOOD",
            f"{chef}: {' and '.join(power.card_ids)} are not two {power.ingredient} cards "
            f"from the same store as {fulfilment.ingredient}",
        )
    return use


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
