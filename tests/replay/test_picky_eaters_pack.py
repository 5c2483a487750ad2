"""Picky Eaters content pack: component counts, printed cards exact, validation errors."""

from __future__ import annotations

import pytest

from feastlog.replay.games.engine import PackError
from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.service.app.commands import new_pack
from tests.replay.test_picky_eaters_helpers import PACK

PRINTED_GUESTS = {
    "Billie": (
        "school teacher",
        ["moussaka"],
        ["pizza", "bolognese", "sushi"],
        ["pad thai", "falafel"],
        ["peanut butter sandwich", "naan"],
    ),
    "Alex": (
        "health nut",
        ["sushi", "peanut butter sandwich"],
        ["baba ganoush", "veggie burger", "kebab"],
        ["burger", "pizza"],
        ["pierogi"],
    ),
    "Ramona": (
        "food critic",
        ["maafe"],
        ["moussaka", "baingan bharta", "sushi"],
        ["burrito", "dal", "popcorn"],
        ["peanut butter sandwich"],
    ),
}
PRINTED_ITEMS = {
    "Extra Seasoning": "Put on an opponent's Recipe to downgrade it one notch for all Guests "
    "that have it listed.",
    "Sprinkle of Herbs": "Put on one of your Recipes to add +2 points each time it is a "
    "Guest's favorite.",
    "Fancy Silverware": "+1 point for each of your Recipes. This card permanently takes up a "
    "Recipe slot.",
}


def test_component_counts_are_exact():
    """85 Ingredient, 35 Recipe, 19 Item and 16 Guest cards; 139 in the Food deck."""
    assert len(PACK.ingredient_of) == 85
    assert len(PACK.recipe_of) == 35
    assert len(PACK.item_of) == 19
    assert len(PACK.guest_of) == 16
    assert len(PACK.food_cards) == 139 == len(set(PACK.food_cards))


def test_printed_guests_are_reproduced_exactly():
    """Billie, Alex and Ramona as the rulebook prints them."""
    for name, (role, *lists) in PRINTED_GUESTS.items():
        guest = PACK.guest_of[f"guest-{name.lower()}"]
        assert guest.name == name and guest.role == role and guest.printed
        assert [list(guest.favorite), list(guest.like), list(guest.dislike)] == lists[:3]
        assert list(guest.restriction) == lists[3]
        assert guest.composed == ()


def test_printed_items_and_hot_plate():
    """The three printed Items keep their text (count composed); Hot Plate is composed."""
    kinds = {i.name: i for i in PACK.items}
    for name, text in PRINTED_ITEMS.items():
        assert kinds[name].text == text and kinds[name].printed
        assert kinds[name].composed == ("count",)
    assert kinds["Hot Plate"].effect == "hot-plate" and not kinds["Hot Plate"].printed


def test_every_dish_on_a_guest_card_is_a_recipe_and_composed_cards_are_marked():
    """Dishes named on Guest cards exist as Recipes; unprinted cards say printed = false."""
    dishes = {r.name for r in PACK.recipes}
    for guest in PACK.guests:
        for listed in (guest.favorite, guest.like, guest.dislike, guest.restriction):
            assert set(listed) <= dishes
    assert sum(g.printed for g in PACK.guests) == 3
    assert not any(r.printed for r in PACK.recipes)
    assert not any(i.printed for i in PACK.ingredients)
    assert "ingredient-eggplant-3" in PACK.ingredient_of
    assert "recipe-peanut-butter-sandwich" in PACK.recipe_of
    assert "item-extra-seasoning-2" in PACK.item_of


def broken(old: str, new: str) -> bytes:
    """The default pack with one text replaced."""
    text = ENGINE.default_pack_bytes().decode()
    assert old in text
    return text.replace(old, new, 1).encode()


@pytest.mark.parametrize(
    ("old", "new", "card", "field"),
    [
        (
            'ingredients = ["eggplant", "beef", "tomato"]',
            'ingredients = ["eggplant", "lamb"]',
            "recipe-moussaka",
            "ingredients",
        ),
        ('effect = "hot-plate"', 'effect = "warmer"', "item-hot-plate", "effect"),
        (
            'favorite = ["moussaka"]',
            'favorite = ["moussaka", "haggis"]',
            "guest-billie",
            "favorite",
        ),
        (
            'name = "eggplant"\ncount = 5',
            'name = "eggplant"\ncount = 0',
            "ingredient-eggplant",
            "count",
        ),
        # setup and every state hash walk the Food deck: 300,000 cards took 2.8 s
        (
            'name = "eggplant"\ncount = 5',
            'name = "eggplant"\ncount = 300000',
            "ingredient-eggplant",
            "count",
        ),
        (
            'name = "eggplant"\ncount = 5',
            f'name = "eggplant"\ncount = {2**62}',
            "ingredient-eggplant",
            "count",
        ),
        (
            'name = "eggplant"\ncount = 5',
            'name = "eggplant"\ncount = true',
            "ingredient-eggplant",
            "count",
        ),
        ('role = "food critic"', 'role = ""', "guest-ramona", "role"),
        # words and lists are bounded: a name 64 characters, other words 500
        ('name = "eggplant"', f'name = "{"e" * 65}"', f"ingredient-{'e' * 64}…", "name"),
        ('role = "food critic"', f'role = "{"r" * 501}"', "guest-ramona", "role"),
        ('title = "Picky Eaters (default pack)"', f'title = "{"t" * 501}"', "(pack)", "title"),
        (
            'ingredients = ["eggplant", "beef", "tomato"]',
            f"ingredients = {['eggplant'] * 11}".replace("'", '"'),
            "recipe-moussaka",
            "ingredients",
        ),
        (
            'composed = ["count"]',
            'composed = ["count", "count"]',
            "item-extra-seasoning",
            "composed",
        ),
        ('like = ["moussaka",', 'like = ["maafe",', "guest-ramona", "like"),
        ('id = "picky-eaters-default-1"', 'id = ""', "(pack)", "id"),
        ('name = "Hugo"', 'name = "Billie"', "guest-billie", "name"),
        (
            'name = "Extra Seasoning"',
            'name = "Extra Seasoning"\ncolour = "red"',
            "item #1",  # a key no card reads: named as CreateGame's check names it
            "colour",
        ),
    ],
)
def test_broken_pack_names_the_card_and_field(old, new, card, field):
    """load_pack refuses a bad card with a PackError naming it and the field."""
    with pytest.raises(PackError) as caught:
        ENGINE.load_pack(broken(old, new))
    assert (caught.value.card, caught.value.field) == (card, field)


def test_a_key_no_card_reads_is_refused_in_the_words_of_create_games_check():
    """The game's own load and CreateGame's check of a new pack (``new_pack``) read one
    key list and say the same thing, so an organiser meets one wording whichever comes
    first."""
    for old, new in (
        ('name = "Extra Seasoning"', 'name = "Extra Seasoning"\ncolour = "red"'),
        ('id = "picky-eaters-default-1"', 'id = "picky-eaters-default-1"\nedition = 2'),
    ):
        with pytest.raises(PackError) as loaded:
            ENGINE.load_pack(broken(old, new))
        with pytest.raises(PackError) as created:
            new_pack(ENGINE, broken(old, new))
        assert str(loaded.value) == str(created.value)
        assert "is not a field of a Picky Eaters pack" in str(loaded.value)


def test_a_pack_of_more_than_400_cards_names_the_card_past_them():
    """Every ingredient 20 times (340 cards), the 35 recipes and 19 items (394): the
    seventh guest is the 401st card."""
    bundled = ENGINE.default_pack_bytes().decode()
    text = bundled.replace("count = 5\n", "count = 20\n", 17)  # the ingredients come first
    assert text.index("count = 5\n") > text.index("[[item]]")
    with pytest.raises(PackError) as caught:
        ENGINE.load_pack(text.encode())
    assert (caught.value.card, caught.value.field) == (PACK.guests[6].card, "(card)")
    assert "400 cards" in caught.value.message
    fewer = text.replace('name = "eggplant"\ncount = 20', 'name = "eggplant"\ncount = 10')  # 400
    assert len(ENGINE.load_pack(fewer.encode()).food_cards) + len(PACK.guests) == 400


def test_not_toml_is_refused():
    """Garbage is a PackError on the pack itself."""
    with pytest.raises(PackError) as caught:
        ENGINE.load_pack(b"id = [")
    assert (caught.value.card, caught.value.field) == ("(pack)", "(file)")
