"""Card faces for the replay page: what each card of a content pack prints.

Views name some cards by id or name only (a Picky Eaters hand, the arbiter's view of a
deck); the page looks their printed facts up here.  A face is what the card shows to
anyone holding it, taken from the pack the game was recorded with: nothing about who
holds it or where it lies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from feastlog.replay.games.bon_appetit.state import dish_card

Face = dict[str, Any]


def _bon_appetit(pack: Any) -> dict[str, Face]:
    """Dish Cards by name (the arbiter's deck and the removed dishes are named)."""
    return {dish.name: dish_card(dish) for dish in pack.dishes}


def _menu_masters(pack: Any) -> dict[str, Face]:
    """Ingredient cards and Menus by id."""
    faces: dict[str, Face] = {}
    for card in pack.cards:
        faces[card.id] = {
            "id": card.id,
            "deck": card.deck,
            "ingredients": list(card.ingredients),
            "stars": list(card.stars),
        }
    for menu in pack.menus:
        faces[menu.id] = {"id": menu.id, "name": menu.name, "ingredients": list(menu.ingredients)}
    return faces


def _picky_eaters(pack: Any) -> dict[str, Face]:
    """Food cards (ingredients, Recipes, Items) and Guests by id."""
    faces: dict[str, Face] = {
        card: {"kind": "ingredient", "name": name} for card, name in pack.ingredient_of.items()
    }
    for card, recipe in pack.recipe_of.items():
        faces[card] = {
            "kind": "recipe",
            "name": recipe.name,
            "ingredients": list(recipe.ingredients),
        }
    for card, item in pack.item_of.items():
        faces[card] = {"kind": "item", "name": item.name, "effect": item.effect, "text": item.text}
    for card, guest in pack.guest_of.items():
        faces[card] = {"kind": "guest", "name": guest.name, "role": guest.role}
    return faces


_FACES: Mapping[str, Callable[[Any], dict[str, Face]]] = {
    "bon-appetit": _bon_appetit,
    "menu-masters": _menu_masters,
    "picky-eaters": _picky_eaters,
}


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON-able value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def faces_for(kind: str, pack: Any, values: Iterable[Any]) -> dict[str, Face]:
    """The faces of the cards the given views (or parts of views) name.

    None for a kind or pack not known.
    """
    make = _FACES.get(kind)
    if make is None or pack is None:
        return {}
    faces = make(pack)
    named: set[str] = set()
    for value in values:
        named.update(strings_in(value))
    return {key: face for key, face in faces.items() if key in named}
