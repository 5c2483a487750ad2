"""The Menu Masters content pack: counts of the bundled pack, and validation errors."""

from __future__ import annotations

from collections import Counter

import pytest

from feastlog.replay.games.engine import PackError
from feastlog.replay.games.menu_masters import ENGINE
from feastlog.replay.games.menu_masters.pack import PLAYING_CARDS, load_pack

BUNDLED = ENGINE.default_pack_bytes()


def test_bundled_pack_has_exactly_124_playing_cards_all_composed():
    pack = ENGINE.load_pack(BUNDLED)
    assert pack.id == "menu-masters-default-1"
    assert len(pack.cards) + len(pack.menus) == PLAYING_CARDS == 124
    assert Counter(c.deck for c in pack.cards) == {
        "produce-stand": 32,
        "butcher-shop": 32,
        "bakery": 32,
    }
    assert len(pack.menus) == 28
    assert not any(c.printed for c in pack.cards) and not any(m.printed for m in pack.menus)
    assert BUNDLED.count(b"\nprinted = false") == 124 and b"printed = true" not in BUNDLED


def test_bundled_pack_names_the_rulebooks_ingredients_and_has_dual_cards():
    pack = ENGINE.load_pack(BUNDLED)
    assert {"broccoli", "tomato"} <= set(dict(pack.stores)["produce-stand"])
    assert {"salmon", "steak"} <= set(dict(pack.stores)["butcher-shop"])
    duals = [c for c in pack.cards if len(c.ingredients) == 2]
    assert len(duals) == 12 and all(c.deck == pack.store_of(c.ingredients[1]) for c in duals)
    assert {2, 3} <= {s for c in pack.cards for s in c.stars}
    shows = Counter(i for c in pack.cards for i in c.ingredients)
    assert set(shows.values()) == {9}
    needed = Counter(i for m in pack.menus for i in m.ingredients)
    assert set(needed.values()) == {7} and len(needed) == 12
    assert Counter(len(m.ingredients) for m in pack.menus) == {2: 9, 3: 10, 4: 9}


def _broken(old: str, new: str) -> bytes:
    """The bundled pack with one text replaced (first occurrence)."""
    text = BUNDLED.decode()
    assert old in text
    return text.replace(old, new, 1).encode()


BROKEN = [
    ("(pack)", "id", _broken('id = "menu-masters-default-1"', "")),
    ("(pack)", "(file)", b"id = = 3"),
    ("(stores)", "stores", _broken('bakery = ["bread"', 'pastry = ["bread"')),
    ("produce-01", "deck", _broken('deck = "produce-stand"', 'deck = "fishmonger"')),
    (
        "produce-01",
        "ingredients",
        _broken('ingredients = ["broccoli"]', 'ingredients = ["salmon"]'),
    ),
    ("produce-01", "stars", _broken("stars = [1]", "stars = [1, 2]")),
    ("produce-01", "stars", _broken("stars = [1]", "stars = [0]")),
    (
        "produce-01",
        "printed",
        _broken("stars = [1]\nprinted = false", 'stars = [1]\nprinted = "no"'),
    ),
    ("produce-01", "id", _broken('id = "produce-02"', 'id = "produce-01"')),
    (
        "menu-01",
        "ingredients",
        _broken('ingredients = ["salmon", "bread"]', 'ingredients = ["caviar"]'),
    ),
    ("menu-01", "name", _broken('name = "Salmon Toast"', 'name = ""')),
    # a list or table in place of a name was looked up as one: TypeError, unhashable
    (
        "produce-01",
        "ingredients",
        _broken('ingredients = ["broccoli"]', 'ingredients = [["broccoli"]]'),
    ),
    ("produce-01", "ingredients", _broken('ingredients = ["broccoli"]', "ingredients = [{}]")),
    (
        "menu-01",
        "ingredients",
        _broken('ingredients = ["salmon", "bread"]', 'ingredients = ["salmon", ["bread"]]'),
    ),
    ("(pack)", "title", _broken('title = "Menu Masters, composed default pack"', "title = 124")),
    # words and lists are bounded: a name or id 64 characters, a store 16 ingredients
    ("(ingredient_card #1)", "id", _broken('id = "produce-01"', f'id = "{"p" * 65}"')),
    ("menu-01", "name", _broken('name = "Salmon Toast"', f'name = "{"S" * 65}"')),
    ("(stores)", "bakery", _broken('bakery = ["bread"', f'bakery = ["{"b" * 65}", "bread"')),
    (
        "(stores)",
        "bakery",
        _broken(
            'bakery = ["bread"', "bakery = [" + "".join(f'"b{i}", ' for i in range(13)) + '"bread"'
        ),
    ),
]


@pytest.mark.parametrize("card,field,data", BROKEN, ids=[f"{c}-{f}" for c, f, _ in BROKEN])
def test_broken_pack_names_the_card_and_field(card, field, data):
    with pytest.raises(PackError) as caught:
        load_pack(data)
    assert (caught.value.card, caught.value.field) == (card, field)


def test_a_pack_holds_at_most_400_playing_cards():
    """The bundled 124 cards and 276 more Menus are taken; one more is refused."""
    menu = BUNDLED.decode()[BUNDLED.decode().index("[[menu_card]]") :].split("\n\n")[0]

    def more(count: int) -> bytes:
        menus = (menu.replace('"menu-01"', f'"extra-{i}"') for i in range(count))
        return BUNDLED + ("\n\n" + "\n\n".join(menus) + "\n").encode()

    assert len(load_pack(more(276)).menus) == 28 + 276
    with pytest.raises(PackError) as caught:
        load_pack(more(277))
    assert (caught.value.card, caught.value.field) == ("(pack)", "menu_card")


def test_too_few_menus_is_refused():
    text = BUNDLED.decode()
    cut = text.index("[[menu_card]]")
    with pytest.raises(PackError) as caught:
        load_pack(text[:cut].encode())
    assert caught.value.field == "menu_card"


def test_pack_content_is_canonical_and_loads_the_same_twice():
    assert load_pack(BUNDLED) == load_pack(BUNDLED)
    assert load_pack(BUNDLED).card("butcher-29").stars_for("steak") == 2
