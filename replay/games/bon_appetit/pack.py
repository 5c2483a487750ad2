"""The content pack of Bon Appetit!: 13 Dish Cards, read from TOML and validated.

A pack file has ``id = "..."`` at the top and 13 ``[[dish]]`` tables::

    [[dish]]
    name = "Fugu Platter"
    type = "Side Dish"            # Main Course, Side Dish, Dessert or Drink
    points = 5
    ability = { kind = "none" }   # or gem / dish_type / dish_name, with target and bonus
    printed = true                # the rulebook prints this card (at least in part)
    composed = ["points", "ability"]  # the fields the rulebook does not print
    note = "..."

Ability kinds: ``gem`` (target a colour: the owner's bids with that colour get ``bonus``),
``dish_type`` (target a dish type: ``bonus`` when bidding for a dish of that type, with at
least one gem), ``dish_name`` (target a dish of the pack by name), ``none``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

from feastlog.replay.games.engine import PACK_TEXT, PackError, PackKeys, bounded, pack_source

COLOURS = ("blue", "green", "red", "yellow")
DISH_TYPES = ("Main Course", "Side Dish", "Dessert", "Drink")
DISH_COUNT = 13
ABILITY_KINDS = ("none", "gem", "dish_type", "dish_name")
DISH_FIELDS = ("name", "type", "points", "ability")


@dataclass(frozen=True)
class Ability:
    """A Dish Card's special ability: a gem ability, a dish ability, or none."""

    kind: str  # "none", "gem", "dish_type" or "dish_name"
    target: str = ""  # a colour, a dish type or a dish name
    bonus: int = 0


@dataclass(frozen=True)
class Dish:
    """One Dish Card: name, type, points and special ability."""

    name: str
    type: str
    points: int
    ability: Ability
    printed: bool = False
    composed: tuple[str, ...] = DISH_FIELDS


@dataclass(frozen=True)
class Pack:
    """A validated content pack: its id and its 13 dishes in file order."""

    id: str
    dishes: tuple[Dish, ...]


def describe_ability(ability: Ability) -> str:
    """The ability in plain words, as a card would print it."""
    if ability.kind == "gem":
        return f"+{ability.bonus} to your bids with {ability.target} gems"
    if ability.kind == "dish_type":
        return f"+{ability.bonus} when bidding for a {ability.target}"
    if ability.kind == "dish_name":
        return f"+{ability.bonus} when bidding for the {ability.target}"
    return "no special ability"


# Every key a Bon Appetit! pack may hold (see ``engine.unknown_pack_key``).
PACK_KEYS: PackKeys = {
    "id": None,
    "dish": {
        "name": None,
        "type": None,
        "points": None,
        "ability": {"kind": None, "target": None, "bonus": None},
        "printed": None,
        "composed": None,
        "note": None,
    },
}


def default_pack_bytes() -> bytes:
    """The bundled pack file, pack.toml beside this module."""
    return (resources.files("feastlog.replay.games.bon_appetit") / "pack.toml").read_bytes()


def load_pack(data: bytes) -> Pack:
    """Parse and validate a pack; raise PackError naming the bad card and field."""
    raw = pack_source(data)
    tables = raw.get("dish")
    if not isinstance(tables, list) or len(tables) != DISH_COUNT:
        count = len(tables) if isinstance(tables, list) else 0
        raise PackError("(pack)", "dish", f"a pack has exactly {DISH_COUNT} dishes, not {count}")
    dishes = tuple(_dish(i, table) for i, table in enumerate(tables))
    names = [d.name for d in dishes]
    for dish in dishes:
        if names.count(dish.name) > 1:
            raise PackError(dish.name, "name", "two dishes have this name")
        if dish.ability.kind == "dish_name" and dish.ability.target not in names:
            raise PackError(dish.name, "ability.target", "no dish of the pack has this name")
    return Pack(raw["id"], dishes)


def _dish(index: int, table: Any) -> Dish:
    """One validated dish from its TOML table."""
    card = f"dish #{index + 1}"
    if not isinstance(table, dict):
        raise PackError(card, "(card)", "a dish is a table")
    name = bounded(card, "name", table.get("name"))
    if not isinstance(name, str) or not name.strip():
        raise PackError(card, "name", "a dish needs a name")
    dish_type = table.get("type")
    if dish_type not in DISH_TYPES:
        raise PackError(name, "type", f"the type must be one of {', '.join(DISH_TYPES)}")
    points = table.get("points")
    if not isinstance(points, int) or isinstance(points, bool) or not 0 <= points <= 20:
        raise PackError(name, "points", "points must be a whole number from 0 to 20")
    printed = table.get("printed")
    if not isinstance(printed, bool):
        raise PackError(name, "printed", "say printed = true or printed = false")
    composed = table.get("composed", list(DISH_FIELDS) if not printed else [])
    if not isinstance(composed, list) or any(f not in DISH_FIELDS for f in composed):
        raise PackError(name, "composed", f"list the composed fields among {DISH_FIELDS}")
    if len(set(composed)) != len(composed):
        raise PackError(name, "composed", "a field is listed twice")
    if not printed and sorted(composed) != sorted(DISH_FIELDS):
        raise PackError(name, "composed", "a card not printed has every field composed")
    if not isinstance(bounded(name, "note", table.get("note", ""), PACK_TEXT), str):
        raise PackError(name, "note", "a note is a string")
    return Dish(
        name, str(dish_type), points, _ability(name, table.get("ability")), printed, tuple(composed)
    )


def _ability(name: str, raw: Any) -> Ability:
    """One validated ability."""
    if not isinstance(raw, dict) or raw.get("kind") not in ABILITY_KINDS:
        raise PackError(name, "ability.kind", f"the kind must be one of {ABILITY_KINDS}")
    kind = str(raw["kind"])
    if kind == "none":
        return Ability("none")
    bonus = raw.get("bonus")
    if not isinstance(bonus, int) or isinstance(bonus, bool) or not 1 <= bonus <= 10:
        raise PackError(name, "ability.bonus", "the bonus must be a whole number from 1 to 10")
    target = raw.get("target")
    if kind == "gem" and target not in COLOURS:
        raise PackError(name, "ability.target", f"a gem ability targets one of {COLOURS}")
    if kind == "dish_type" and target not in DISH_TYPES:
        raise PackError(name, "ability.target", f"a dish ability targets one of {DISH_TYPES}")
    if kind == "dish_name" and (not isinstance(target, str) or not target):
        raise PackError(name, "ability.target", "a named-dish ability names a dish")
    return Ability(kind, str(target), bonus)
