"""Picky Eaters content packs: the card data, its TOML loader and validation.

A pack lists card kinds, not single cards: ``[[ingredient]]`` and ``[[item]]`` entries carry
a ``count``; ``[[recipe]]`` and ``[[guest]]`` entries are one card each.  Card ids are
derived from names (lower case, spaces as hyphens) so a client can read them at a glance:

- ``ingredient-<name>-<n>`` (n from 1), e.g. ``ingredient-eggplant-3``
- ``recipe-<dish>``, e.g. ``recipe-peanut-butter-sandwich``
- ``item-<name>-<n>``, e.g. ``item-extra-seasoning-2``
- ``guest-<name>``, e.g. ``guest-billie``

Cards the rulebook prints carry ``printed = true`` and list in ``composed`` the fields the
rulebook does not give; every other card is ``printed = false``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

from feastlog.replay.games.engine import (
    PACK_NAME,
    PACK_TEXT,
    PackError,
    PackKeys,
    bounded,
    pack_source,
    unknown_pack_key,
)
from feastlog.replay.games.picky_eaters.spec import SPEC

INGREDIENT, RECIPE, ITEM = "ingredient", "recipe", "item"
EXTRA_SEASONING = "extra-seasoning"
SPRINKLE_OF_HERBS = "sprinkle-of-herbs"
FANCY_SILVERWARE = "fancy-silverware"
HOT_PLATE = "hot-plate"
EFFECTS = (EXTRA_SEASONING, SPRINKLE_OF_HERBS, FANCY_SILVERWARE, HOT_PLATE)
CATEGORIES = ("favorite", "like", "dislike", "restriction")
MIN_GUESTS = 5  # one revealed per round, 5 rounds
# The box has 155 cards (85 Ingredient, 35 Recipe, 19 Item, 16 Guest), at most 6 of a kind.
# Setup and every state hash walk the Food deck, so a pack holds at most a few hundred:
# a count of 300,000 took CreateGame 2.8 s, one of 2**62 never ended.
MOST_OF_A_KIND = 20
MOST_CARDS = 400
RECIPE_INGREDIENTS = 10  # more than a hand of 10 cards holds beside its Recipe


@dataclass(frozen=True)
class Ingredient:
    """An ingredient kind and how many cards of it the Food deck holds."""

    name: str
    count: int
    printed: bool
    composed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recipe:
    """A Recipe card: the dish and the ingredients it needs (a multiset)."""

    card: str
    name: str
    ingredients: tuple[str, ...]
    printed: bool
    composed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Item:
    """An Item kind: its name, the rule it follows, its printed text and its count."""

    name: str
    effect: str
    text: str
    count: int
    printed: bool
    composed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Guest:
    """A Guest card: the dishes they list under each of the four categories."""

    card: str
    name: str
    role: str
    favorite: tuple[str, ...]
    like: tuple[str, ...]
    dislike: tuple[str, ...]
    restriction: tuple[str, ...]
    printed: bool
    composed: tuple[str, ...] = ()

    def category(self, dish: str) -> str | None:
        """The category under which this guest lists ``dish``, or None."""
        for name in CATEGORIES:
            if dish in getattr(self, name):
                return name
        return None


@dataclass(frozen=True)
class Pack:
    """A validated Picky Eaters content pack."""

    id: str
    title: str
    ingredients: tuple[Ingredient, ...]
    recipes: tuple[Recipe, ...]
    items: tuple[Item, ...]
    guests: tuple[Guest, ...]
    source: str  # the TOML text: game state carries this, not the parsed cards

    @cached_property
    def ingredient_of(self) -> dict[str, str]:
        """Ingredient card id -> ingredient name."""
        return {
            f"ingredient-{slug(i.name)}-{n}": i.name
            for i in self.ingredients
            for n in range(1, i.count + 1)
        }

    @cached_property
    def recipe_of(self) -> dict[str, Recipe]:
        """Recipe card id -> Recipe."""
        return {r.card: r for r in self.recipes}

    @cached_property
    def item_of(self) -> dict[str, Item]:
        """Item card id -> Item kind."""
        return {f"item-{slug(i.name)}-{n}": i for i in self.items for n in range(1, i.count + 1)}

    @cached_property
    def guest_of(self) -> dict[str, Guest]:
        """Guest card id -> Guest."""
        return {g.card: g for g in self.guests}

    @cached_property
    def food_cards(self) -> tuple[str, ...]:
        """Every Food deck card id (ingredients, recipes, items), sorted."""
        return tuple(sorted([*self.ingredient_of, *self.recipe_of, *self.item_of]))

    def kind_of(self, card: str) -> str | None:
        """``ingredient``, ``recipe`` or ``item`` for a Food card id; None if unknown."""
        if card in self.ingredient_of:
            return INGREDIENT
        if card in self.recipe_of:
            return RECIPE
        if card in self.item_of:
            return ITEM
        return None

    def name_of(self, card: str) -> str:
        """The printed name of any card id (the id itself when unknown)."""
        if card in self.ingredient_of:
            return self.ingredient_of[card]
        if card in self.recipe_of:
            return self.recipe_of[card].name
        if card in self.item_of:
            return self.item_of[card].name
        if card in self.guest_of:
            return self.guest_of[card].name
        return card


def slug(name: str) -> str:
    """The id form of a name: lower case, runs of other characters as one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def default_pack_bytes() -> bytes:
    """The bundled pack file, pack.toml beside this module."""
    return (resources.files("feastlog.replay.games.picky_eaters") / "pack.toml").read_bytes()


_FIELDS = {
    "ingredient": {"name", "count", "printed", "composed"},
    "recipe": {"name", "ingredients", "printed", "composed"},
    "item": {"name", "effect", "text", "count", "printed", "composed"},
    "guest": {"name", "role", *CATEGORIES, "printed", "composed"},
}

# Every key a Picky Eaters pack may hold; ``load_pack`` refuses any other itself (a
# stored game's pack never held one), so a new pack is checked the same way as the others'.
PACK_KEYS: PackKeys = {
    "id": None,
    "title": None,
    **{kind: dict.fromkeys(sorted(fields)) for kind, fields in _FIELDS.items()},
}


def load_pack(data: bytes) -> Pack:
    """Parse and validate a pack; raise PackError naming the bad card and field."""
    raw = pack_source(data)
    pack_id = raw["id"]
    title = bounded("(pack)", "title", raw.get("title", pack_id), PACK_TEXT)
    if not isinstance(title, str):
        raise PackError("(pack)", "title", "must be a string")
    unknown_pack_key(raw, PACK_KEYS, SPEC.title)  # in the words CreateGame's own check uses
    ingredients = tuple(_ingredient(e) for e in _entries(raw, "ingredient"))
    known = {i.name for i in ingredients}
    recipes = tuple(_recipe(e, known) for e in _entries(raw, "recipe"))
    items = tuple(_item(e) for e in _entries(raw, "item"))
    dishes = {r.name for r in recipes}
    guests = tuple(_guest(e, dishes) for e in _entries(raw, "guest"))
    for kind, names in (
        ("ingredient", [slug(i.name) for i in ingredients]),
        ("recipe", [slug(r.name) for r in recipes]),
        ("item", [slug(i.name) for i in items]),
        ("guest", [slug(g.name) for g in guests]),
    ):
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise PackError(f"{kind}-{name}", "name", f"two {kind} cards share this name")
            seen.add(name)
    _cards_fit(ingredients, recipes, items, guests)
    if len(guests) < MIN_GUESTS:
        raise PackError("(pack)", "guest", f"needs at least {MIN_GUESTS} guests, one per round")
    if not recipes:
        raise PackError("(pack)", "recipe", "needs at least one recipe")
    return Pack(pack_id, title, ingredients, recipes, items, guests, data.decode("utf-8"))


@lru_cache(maxsize=16)
def pack_from_source(source: str) -> Pack:
    """The pack whose TOML text is ``source`` (memoised: the game state holds the text)."""
    return load_pack(source.encode("utf-8"))


def _entries(raw: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    entries = raw.get(kind, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise PackError("(pack)", kind, f"[[{kind}]] must be a list of tables")
    return entries


def _label(kind: str, entry: dict[str, Any], index: int) -> str:
    name = entry.get("name")
    if not isinstance(name, str) or not slug(name):
        return f"{kind} #{index}"
    named = slug(name)
    return f"{kind}-{named if len(named) <= PACK_NAME else named[:PACK_NAME] + '…'}"


def _name(kind: str, entry: dict[str, Any]) -> str:
    name = entry.get("name")
    if not isinstance(name, str) or not slug(name):
        raise PackError(_label(kind, entry, 0), "name", "needs a name with letters or digits")
    if len(name) > PACK_NAME or len(slug(name)) > PACK_NAME:  # its slug is in card ids
        raise PackError(_label(kind, entry, 0), "name", f"is longer than {PACK_NAME} characters")
    return name


def _count(card: str, entry: dict[str, Any]) -> int:
    count = entry.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MOST_OF_A_KIND:
        raise PackError(card, "count", f"must be a whole number from 1 to {MOST_OF_A_KIND}")
    return count


def _cards_fit(
    ingredients: tuple[Ingredient, ...],
    recipes: tuple[Recipe, ...],
    items: tuple[Item, ...],
    guests: tuple[Guest, ...],
) -> None:
    """PackError naming the card (and its count) past which the pack holds more than
    MOST_CARDS cards."""
    total = 0
    for card, field, count in (
        *((f"ingredient-{slug(i.name)}", "count", i.count) for i in ingredients),
        *((r.card, "(card)", 1) for r in recipes),
        *((f"item-{slug(i.name)}", "count", i.count) for i in items),
        *((g.card, "(card)", 1) for g in guests),
    ):
        total += count
        if total > MOST_CARDS:
            raise PackError(card, field, f"the pack would hold more than {MOST_CARDS} cards")


def _marks(card: str, entry: dict[str, Any]) -> tuple[bool, tuple[str, ...]]:
    printed = entry.get("printed")
    if not isinstance(printed, bool):
        raise PackError(card, "printed", "must be true or false")
    composed = entry.get("composed", [])
    if not isinstance(composed, list) or not all(isinstance(c, str) for c in composed):
        raise PackError(card, "composed", "must be a list of field names")
    if len(set(composed)) != len(composed):
        raise PackError(card, "composed", "names a field twice")
    for field in composed:
        if field not in entry:
            raise PackError(card, "composed", f"names {field!r}, which the card does not have")
    return printed, tuple(composed)


def _text(card: str, entry: dict[str, Any], field: str) -> str:
    value = bounded(card, field, entry.get(field), PACK_TEXT)
    if not isinstance(value, str) or not value.strip():
        raise PackError(card, field, "must be a non-empty string")
    return value


def _names(card: str, entry: dict[str, Any], field: str, known: set[str]) -> tuple[str, ...]:
    value = entry.get(field, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PackError(card, field, "must be a list of names")
    for name in value:
        if name not in known:
            raise PackError(card, field, f"{name!r} is not in the pack")
    return tuple(value)


def _ingredient(entry: dict[str, Any]) -> Ingredient:
    name = _name("ingredient", entry)
    card = f"ingredient-{slug(name)}"
    return Ingredient(name, _count(card, entry), *_marks(card, entry))


def _recipe(entry: dict[str, Any], known: set[str]) -> Recipe:
    name = _name("recipe", entry)
    card = f"recipe-{slug(name)}"
    ingredients = _names(card, entry, "ingredients", known)
    if not 1 <= len(ingredients) <= RECIPE_INGREDIENTS:
        raise PackError(
            card, "ingredients", f"a recipe needs 1 to {RECIPE_INGREDIENTS} ingredients"
        )
    return Recipe(card, name, ingredients, *_marks(card, entry))


def _item(entry: dict[str, Any]) -> Item:
    name = _name("item", entry)
    card = f"item-{slug(name)}"
    effect = entry.get("effect")
    if effect not in EFFECTS:
        raise PackError(card, "effect", f"must be one of {', '.join(EFFECTS)}")
    text = _text(card, entry, "text")
    return Item(name, effect, text, _count(card, entry), *_marks(card, entry))


def _guest(entry: dict[str, Any], dishes: set[str]) -> Guest:
    name = _name("guest", entry)
    card = f"guest-{slug(name)}"
    role = _text(card, entry, "role")
    lists = [_names(card, entry, c, dishes) for c in CATEGORIES]
    listed: set[str] = set()
    for category, dishes_listed in zip(CATEGORIES, lists, strict=True):
        for dish in dishes_listed:
            if dish in listed:
                raise PackError(card, category, f"{dish!r} is listed twice")
            listed.add(dish)
    printed, composed = _marks(card, entry)
    favorite, like, dislike, restriction = lists
    return Guest(card, name, role, favorite, like, dislike, restriction, printed, composed)
