"""Bon Appetit!: the bundled content pack and pack validation."""

from __future__ import annotations

import pytest

from feastlog.replay.games.bon_appetit import ENGINE
from feastlog.replay.games.bon_appetit.pack import DISH_FIELDS, Ability, Pack, load_pack
from feastlog.replay.games.engine import PackError


def _pack() -> Pack:
    return load_pack(ENGINE.default_pack_bytes())


def test_bundled_pack_has_thirteen_dishes_of_the_four_types() -> None:
    pack = _pack()
    assert pack.id == "bon-appetit-default-1" and len(pack.dishes) == 13
    assert {d.type for d in pack.dishes} == {"Main Course", "Side Dish", "Dessert", "Drink"}
    assert len({d.name for d in pack.dishes}) == 13


def test_printed_cards_reproduced_exactly() -> None:
    dishes = {d.name: d for d in _pack().dishes}
    matsutake = dishes["Fresh Matsutake Mashrooms"]  # spelled as printed
    assert matsutake.printed and "name" not in matsutake.composed
    fugu = dishes["Fugu Platter"]
    assert fugu.type == "Side Dish" and fugu.printed
    assert set(fugu.composed) == {"points", "ability"}
    green = [d for d in dishes.values() if d.ability == Ability("gem", "green", 2)]
    assert len(green) == 1 and green[0].printed and "ability" not in green[0].composed
    side = [d for d in dishes.values() if d.ability == Ability("dish_type", "Side Dish", 1)]
    assert len(side) == 1 and side[0].printed and "ability" not in side[0].composed


def test_composed_cards_are_marked_not_printed() -> None:
    pack = _pack()
    composed = [d for d in pack.dishes if not d.printed]
    assert len(composed) == 9
    assert all(set(d.composed) == set(DISH_FIELDS) for d in composed)
    kinds = {(d.ability.kind, d.ability.target) for d in pack.dishes}
    assert {("gem", c) for c in ("blue", "green", "red", "yellow")} <= kinds
    assert any(k == "dish_name" for k, _ in kinds)


def _broken(old: str, new: str) -> bytes:
    text = ENGINE.default_pack_bytes().decode()
    assert old in text
    return text.replace(old, new, 1).encode()


@pytest.mark.parametrize(
    ("old", "new", "card", "field"),
    [
        ('type = "Side Dish"\npoints = 5', 'type = "Soup"\npoints = 5', "Fugu Platter", "type"),
        ("points = 5\n", "points = -1\n", "Fugu Platter", "points"),
        ('target = "green"', 'target = "purple"', "Matcha Garden Tea", "ability.target"),
        ('target = "Fugu Platter"', 'target = "Fugu"', "Sake Flight", "ability.target"),
        ('name = "Wagyu Steak"', 'name = "Fugu Platter"', "Fugu Platter", "name"),
        ('id = "bon-appetit-default-1"', 'id = ""', "(pack)", "id"),
        ('note = "Composed."', "note = { text = 1 }", "Blueberry Cheesecake", "note"),
        # words are bounded: a name 64 characters, a note 500
        ('name = "Wagyu Steak"', f'name = "{"W" * 65}"', "dish #7", "name"),
        ('note = "Composed."', f'note = "{"n" * 501}"', "Blueberry Cheesecake", "note"),
        (
            'composed = ["points", "ability"]',
            'composed = ["points", "ability", "points"]',
            "Fugu Platter",
            "composed",
        ),
    ],
)
def test_broken_pack_names_card_and_field(old: str, new: str, card: str, field: str) -> None:
    with pytest.raises(PackError) as caught:
        load_pack(_broken(old, new))
    assert (caught.value.card, caught.value.field) == (card, field)


def test_a_pack_id_is_at_most_64_characters() -> None:
    with pytest.raises(PackError) as caught:
        load_pack(_broken('id = "bon-appetit-default-1"', f'id = "{"b" * 65}"'))
    assert (caught.value.card, caught.value.field) == ("(pack)", "id")
    assert load_pack(_broken('id = "bon-appetit-default-1"', f'id = "{"b" * 64}"')).id == "b" * 64


def test_pack_with_twelve_dishes_is_refused() -> None:
    text = ENGINE.default_pack_bytes().decode()
    cut = text[: text.rindex("[[dish]]")].encode()
    with pytest.raises(PackError) as caught:
        load_pack(cut)
    assert caught.value.field == "dish"
