"""The content pack of Menu Masters: ingredient cards and Menu cards, read from TOML.

A pack file has ``id = "..."`` (and a ``title`` string, if it likes) at the top, a
``[stores]`` table naming the ingredients of each store deck, then ``[[ingredient_card]]``
and ``[[menu_card]]`` tables::

    [stores]
    produce-stand = ["broccoli", "tomato", "carrot", "lettuce"]
    butcher-shop = ["salmon", "steak", "chicken", "sausage"]
    bakery = ["bread", "croissant", "muffin", "cake"]

    [[ingredient_card]]
    id = "produce-01"
    deck = "produce-stand"
    ingredients = ["broccoli"]      # one, or two for a dual-ingredient card
    stars = [2]                     # one star value per ingredient
    printed = false

    [[menu_card]]
    id = "menu-01"
    name = "Salmon Toast"
    ingredients = ["salmon", "bread"]
    printed = false

The rulebook prints no card, so every card of the bundled pack is composed
(``printed = false``); the split is documented in the pack's header comment.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any

from feastlog.replay.games.engine import PACK_TEXT, PackError, PackKeys, bounded, pack_source

DECKS = ("produce-stand", "butcher-shop", "bakery")
PLAYING_CARDS = 124  # the box's count; a custom pack may differ
MIN_DECK = 4  # 3 for the store window and 1 for the Supermarket
MIN_MENUS = 15  # 2 secret Menus for 6 chefs and 3 community Menus
MAX_STARS = 9
# A generous few times the box (124 cards, 4 ingredients a store), so that a pack is never
# large enough to slow a server down: 7,440 cards took CreateGame 1.6 s.
MOST_CARDS = 400
MOST_STORE_INGREDIENTS = 16


@dataclass(frozen=True)
class IngredientCard:
    """An ingredient card: its store deck, one or two ingredients, a star value for each."""

    id: str
    deck: str
    ingredients: tuple[str, ...]
    stars: tuple[int, ...]
    printed: bool = False

    def stars_for(self, ingredient: str) -> int:
        """The star value this card shows for ``ingredient`` (0 when it does not show it)."""
        for name, value in zip(self.ingredients, self.stars, strict=True):
            if name == ingredient:
                return value
        return 0


@dataclass(frozen=True)
class MenuCard:
    """A Menu card: its name and the ingredients it needs."""

    id: str
    name: str
    ingredients: tuple[str, ...]
    printed: bool = False


@dataclass(frozen=True)
class Pack:
    """A validated pack: its id and its content as canonical JSON.

    The content string is the only field, so a game state holding the pack hashes it as
    one string; the cards, Menus and indexes are parsed from it once per pack object.
    """

    id: str
    content: str  # canonical JSON: {"stores": [[deck, [names]]], "cards": [...], "menus": [...]}

    @cached_property
    def _parsed(self) -> _Contents:
        """The content parsed back into cards and Menus, with indexes by id."""
        raw = json.loads(self.content)
        stores = tuple((deck, tuple(names)) for deck, names in raw["stores"])
        cards = tuple(
            IngredientCard(
                c["id"], c["deck"], tuple(c["ingredients"]), tuple(c["stars"]), c["printed"]
            )
            for c in raw["cards"]
        )
        menus = tuple(
            MenuCard(m["id"], m["name"], tuple(m["ingredients"]), m["printed"])
            for m in raw["menus"]
        )
        store_of = {name: deck for deck, names in stores for name in names}
        return _Contents(
            stores, cards, menus, {c.id: c for c in cards}, {m.id: m for m in menus}, store_of
        )

    @property
    def stores(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each store deck with its ingredients."""
        return self._parsed.stores

    @property
    def cards(self) -> tuple[IngredientCard, ...]:
        """The ingredient cards in file order."""
        return self._parsed.cards

    @property
    def menus(self) -> tuple[MenuCard, ...]:
        """The Menu cards in file order."""
        return self._parsed.menus

    def card(self, card_id: str) -> IngredientCard:
        """The ingredient card with id ``card_id`` (KeyError when absent)."""
        return self._parsed.card_index[card_id]

    def menu(self, menu_id: str) -> MenuCard:
        """The Menu card with id ``menu_id`` (KeyError when absent)."""
        return self._parsed.menu_index[menu_id]

    def store_of(self, ingredient: str) -> str:
        """The store deck whose cards show ``ingredient`` (KeyError when none)."""
        return self._parsed.store_of[ingredient]

    def ingredients(self) -> frozenset[str]:
        """Every ingredient of the pack."""
        return frozenset(self._parsed.store_of)


@dataclass(frozen=True)
class _Contents:
    """A pack's content, parsed."""

    stores: tuple[tuple[str, tuple[str, ...]], ...]
    cards: tuple[IngredientCard, ...]
    menus: tuple[MenuCard, ...]
    card_index: Mapping[str, IngredientCard]
    menu_index: Mapping[str, MenuCard]
    store_of: Mapping[str, str]


def make_pack(
    pack_id: str,
    stores: Sequence[tuple[str, Sequence[str]]],
    cards: Sequence[IngredientCard],
    menus: Sequence[MenuCard],
) -> Pack:
    """A Pack from its parts (already validated)."""
    content = {
        "stores": [[deck, list(names)] for deck, names in stores],
        "cards": [dataclasses.asdict(c) for c in cards],
        "menus": [dataclasses.asdict(m) for m in menus],
    }
    return Pack(pack_id, json.dumps(content, sort_keys=True, separators=(",", ":")))


# Every key a Menu Masters pack may hold (see ``engine.unknown_pack_key``); ``_stores``
# checks the decks [stores] names.
PACK_KEYS: PackKeys = {
    "id": None,
    "title": None,
    "stores": None,
    "ingredient_card": {
        "id": None,
        "deck": None,
        "ingredients": None,
        "stars": None,
        "printed": None,
    },
    "menu_card": {"id": None, "name": None, "ingredients": None, "printed": None},
}


def default_pack_bytes() -> bytes:
    """The bundled pack file, pack.toml beside this module."""
    return (resources.files("feastlog.replay.games.menu_masters") / "pack.toml").read_bytes()


def load_pack(data: bytes) -> Pack:
    """Parse and validate a pack; raise PackError naming the bad card and field."""
    raw = pack_source(data)
    pack_id = raw["id"]
    if not isinstance(bounded("(pack)", "title", raw.get("title", ""), PACK_TEXT), str):
        raise PackError("(pack)", "title", "must be a string")
    stores = _stores(raw.get("stores"))
    names = {n: deck for deck, ns in stores for n in ns}
    card_tables, menu_tables = _tables(raw, "ingredient_card"), _tables(raw, "menu_card")
    if len(card_tables) + len(menu_tables) > MOST_CARDS:
        past = "ingredient_card" if len(card_tables) > MOST_CARDS else "menu_card"
        raise PackError("(pack)", past, f"a pack holds at most {MOST_CARDS} playing cards")
    seen: set[str] = set()
    cards = tuple(_card(entry, k, names, seen) for k, entry in enumerate(card_tables))
    menus = tuple(_menu(entry, k, names, seen) for k, entry in enumerate(menu_tables))
    for deck in DECKS:
        count = sum(1 for c in cards if c.deck == deck)
        if count < MIN_DECK:
            raise PackError(
                f"({deck} deck)", "deck", f"needs at least {MIN_DECK} cards, has {count}"
            )
    if len(menus) < MIN_MENUS:
        raise PackError(
            "(menu deck)", "menu_card", f"needs at least {MIN_MENUS} Menus, has {len(menus)}"
        )
    return make_pack(pack_id, stores, cards, menus)


def _tables(raw: Mapping[str, Any], key: str) -> list[Any]:
    """The array of tables ``key`` (PackError when it is not one)."""
    found = raw.get(key, [])
    if not isinstance(found, list):
        raise PackError("(pack)", key, "must be an array of tables [[...]]")
    return found


def _stores(raw: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The [stores] table: each of the three decks with its distinct ingredients."""
    if not isinstance(raw, dict) or sorted(raw) != sorted(DECKS):
        raise PackError("(stores)", "stores", f"must name exactly the decks {', '.join(DECKS)}")
    out = []
    seen: set[str] = set()
    for deck in DECKS:
        names = raw[deck]
        if (
            not isinstance(names, list)
            or not 1 <= len(names) <= MOST_STORE_INGREDIENTS
            or not all(isinstance(n, str) and n for n in names)
        ):
            raise PackError(
                "(stores)", deck, f"must list 1 to {MOST_STORE_INGREDIENTS} ingredient names"
            )
        for name in names:
            bounded("(stores)", deck, name)
            if name in seen:
                raise PackError("(stores)", deck, f"ingredient {name!r} is listed twice")
            seen.add(name)
        out.append((deck, tuple(names)))
    return tuple(out)


def _names_of(value: Any) -> bool:
    """Whether ``value`` is a list of strings (an ingredient name is looked up, so a list
    or table in its place would not even be hashable)."""
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _card_id(entry: Any, k: int, kind: str, seen: set[str]) -> str:
    """A new, unique card id (PackError otherwise)."""
    if not isinstance(entry, dict):
        raise PackError(f"({kind} #{k + 1})", "(table)", "must be a table")
    card_id = bounded(f"({kind} #{k + 1})", "id", entry.get("id"))
    if not isinstance(card_id, str) or not card_id.strip():
        raise PackError(f"({kind} #{k + 1})", "id", "needs an id string")
    if card_id in seen:
        raise PackError(card_id, "id", "the id is used twice")
    seen.add(card_id)
    return card_id


def _printed(entry: Mapping[str, Any], card_id: str) -> bool:
    """The card's ``printed`` flag."""
    printed = entry.get("printed")
    if not isinstance(printed, bool):
        raise PackError(card_id, "printed", "must be true or false")
    return printed


def _card(entry: Any, k: int, names: Mapping[str, str], seen: set[str]) -> IngredientCard:
    """One validated ingredient card."""
    card_id = _card_id(entry, k, "ingredient_card", seen)
    deck = entry.get("deck")
    if deck not in DECKS:
        raise PackError(card_id, "deck", f"must be one of {', '.join(DECKS)}")
    ingredients = entry.get("ingredients")
    if not _names_of(ingredients) or len(ingredients) not in (1, 2):
        raise PackError(card_id, "ingredients", "must list 1 or 2 ingredient names")
    if len(set(ingredients)) != len(ingredients):
        raise PackError(card_id, "ingredients", "a dual card shows two different ingredients")
    for name in ingredients:
        if names.get(name) != deck:
            raise PackError(card_id, "ingredients", f"{name!r} is not an ingredient of the {deck}")
    stars = entry.get("stars")
    if (
        not isinstance(stars, list)
        or len(stars) != len(ingredients)
        or not all(type(s) is int and 1 <= s <= MAX_STARS for s in stars)
    ):
        raise PackError(card_id, "stars", f"one star value (1 to {MAX_STARS}) per ingredient")
    return IngredientCard(card_id, deck, tuple(ingredients), tuple(stars), _printed(entry, card_id))


def _menu(entry: Any, k: int, names: Mapping[str, str], seen: set[str]) -> MenuCard:
    """One validated Menu card."""
    menu_id = _card_id(entry, k, "menu_card", seen)
    name = bounded(menu_id, "name", entry.get("name"))
    if not isinstance(name, str) or not name.strip():
        raise PackError(menu_id, "name", "needs a name")
    ingredients = entry.get("ingredients")
    if not _names_of(ingredients) or not 1 <= len(ingredients) <= 6:
        raise PackError(menu_id, "ingredients", "must list 1 to 6 ingredient names")
    for needed in ingredients:
        if needed not in names:
            raise PackError(menu_id, "ingredients", f"{needed!r} is no store's ingredient")
    return MenuCard(menu_id, name, tuple(ingredients), _printed(entry, menu_id))
