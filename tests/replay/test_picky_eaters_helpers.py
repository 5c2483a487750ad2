"""Shared helpers for the Picky Eaters tests: constructed positions and command builders."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from feastlog.replay.games.picky_eaters import ENGINE
from feastlog.replay.games.picky_eaters.pack import Pack
from feastlog.replay.games.picky_eaters.state import (
    PLAY,
    PlacedRecipe,
    Player,
    State,
    StateV2,
    StateV3,
)
from feastlog.replay.record.rng import Rng
from feastlog.v1 import picky_eaters_pb2 as pb

PACK: Pack = ENGINE.load_pack(ENGINE.default_pack_bytes())
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Flo")
Command = pb.PickyEatersCommand

Recipes = Sequence[str | tuple[str, Sequence[str]]]


def position(
    n: int = 2,
    hands: Sequence[Sequence[str]] = (),
    recipes: Mapping[int, Recipes] | None = None,
    silverware: Mapping[int, Sequence[str]] | None = None,
    market: Sequence[str] = (),
    guests: Sequence[str] = ("guest-billie",),
    round_: int = 1,
    turn: int = 0,
    first: int = 0,
    first_seat: int = 0,
    phase: str = PLAY,
    passed: Iterable[int] = (),
    deck: Sequence[str] | None = None,
    discard: Sequence[str] = (),
    variant: bool = True,
    blocks: bool = False,
    deck_refill: str | None = "when_empty",
    ruleset: int = 3,
) -> State:
    """A constructed position; unplaced Food cards form the deck (sorted) unless given.

    The current ruleset's state (3, with its option ``deck_refill``, default as printed);
    ``ruleset=2`` gives ruleset 2's state shape, ``deck_refill=None`` ruleset 1's.
    """
    recipes = recipes or {}
    silverware = silverware or {}
    players = []
    for seat in range(n):
        placed = tuple(
            PlacedRecipe(r) if isinstance(r, str) else PlacedRecipe(r[0], tuple(sorted(r[1])))
            for r in recipes.get(seat, ())
        )
        players.append(
            Player(
                NAMES[seat],
                hand=tuple(sorted(hands[seat])) if seat < len(hands) else (),
                recipes=placed,
                silverware=tuple(silverware.get(seat, ())),
                passed=seat in set(passed),
            )
        )
    used = [c for p in players for c in cards_of(p)] + list(market) + list(discard)
    if deck is None:
        deck = [c for c in PACK.food_cards if c not in set(used)]
    shape: dict[str, str | int] = {}
    made: type[State] = State
    if deck_refill is not None:
        shape["deck_refill"] = deck_refill
        made = StateV2
        if ruleset >= 3:
            shape["ruleset"] = ruleset
            made = StateV3
    return made(
        **shape,
        pack_source=PACK.source,
        players=tuple(players),
        small_table_variant=variant,
        hot_plate_blocks_items=blocks,
        first_seat=first_seat,
        first_player=first,
        round=round_,
        phase=phase,
        turn=turn,
        food_deck=tuple(deck),
        discard=tuple(discard),
        market=tuple(market),
        guest_deck=tuple(g for g in sorted(PACK.guest_of) if g not in guests),
        guests=tuple(guests),
        rng=Rng(bytes(32)),
    )


def cards_of(player: Player) -> list[str]:
    """Every Food card a player holds or has in front of them."""
    out = [*player.hand, *player.silverware]
    for placed in player.recipes:
        out += [placed.card, *placed.items]
    return out


def food_locations(state: State) -> Counter[str]:
    """Every Food card wherever it is: deck, discard, market, hands, recipes, items."""
    cards = Counter([*state.food_deck, *state.discard, *state.market])
    for player in state.players:
        cards.update(cards_of(player))
    return cards


def assert_conserved(state: State) -> None:
    """Every card of the pack is in exactly one place."""
    assert food_locations(state) == Counter(state.pack.food_cards)
    assert Counter([*state.guest_deck, *state.guests]) == Counter(list(state.pack.guest_of))


def take(card: str) -> Command:
    """TakeFromMarket."""
    return Command(take_from_market=pb.PickyEatersTakeFromMarket(card=card))


def prepare(
    recipe: str,
    ingredients: Sequence[str] = (),
    subs: Sequence[tuple[str, Sequence[str]]] = (),
    replaces: str = "",
) -> Command:
    """PrepareRecipe, with (ingredient, three cards) substitutions."""
    return Command(
        prepare_recipe=pb.PickyEatersPrepareRecipe(
            recipe=recipe,
            ingredients=ingredients,
            substitutions=[pb.PickyEatersSubstitution(ingredient=i, cards=c) for i, c in subs],
            replaces=replaces,
        )
    )


def item(card: str, recipe: str = "") -> Command:
    """PlayItem."""
    return Command(play_item=pb.PickyEatersPlayItem(item=card, recipe=recipe))


def draw(*cards: str) -> Command:
    """DiscardToDraw."""
    return Command(discard_to_draw=pb.PickyEatersDiscardToDraw(cards=cards))


def down(*cards: str) -> Command:
    """DiscardDown."""
    return Command(discard_down=pb.PickyEatersDiscardDown(cards=cards))


def pass_() -> Command:
    """Pass."""
    return Command(pass_round=pb.PickyEatersPass())


def ing(name: str, n: int = 1) -> str:
    """An ingredient card id."""
    return f"ingredient-{name}-{n}"


def filler(count: int, avoid: Iterable[str] = ()) -> list[str]:
    """``count`` ingredient cards (corn, lentils, potato...) not in ``avoid``."""
    skip = set(avoid)
    pool = [c for c in sorted(PACK.ingredient_of) if c not in skip and "lentils" in c]
    pool += [c for c in sorted(PACK.ingredient_of) if c not in skip and "potato" in c]
    pool += [c for c in sorted(PACK.ingredient_of) if c not in skip and "corn" in c]
    return pool[:count]
