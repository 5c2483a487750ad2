"""Picky Eaters: preparing a Recipe and playing an Item, their checks and their effects.

Each check returns the refusal in the players' words, or None; ``moves.MOVES`` lists them
with their rule ids in the order they run.  A card of the wrong kind, a card named twice,
a card not in hand breaks a rule; only a card id that is no card of the pack is malformed
(``moves`` reads the commands).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from feastlog.replay.games.engine import Fact, evolve
from feastlog.replay.games.picky_eaters.flow import next_turn, set_player
from feastlog.replay.games.picky_eaters.pack import (
    EXTRA_SEASONING,
    FANCY_SILVERWARE,
    HOT_PLATE,
    INGREDIENT,
    ITEM,
    RECIPE,
    SPRINKLE_OF_HERBS,
)
from feastlog.replay.games.picky_eaters.spec import RECIPE_SLOTS, SUBSTITUTE_CARDS
from feastlog.replay.games.picky_eaters.state import (
    PlacedRecipe,
    State,
    has_effect,
    owner_of,
    placed,
)
from feastlog.v1 import picky_eaters_pb2 as pb

Prepare = pb.PickyEatersPrepareRecipe
Play = pb.PickyEatersPlayItem


def name_of(state: State, seat: int) -> str:
    """A seat's player name (or "seat N" for a seat the game lacks)."""
    return state.players[seat].name if 0 <= seat < len(state.players) else f"seat {seat}"


def card_words(state: State, card: str) -> str:
    """A card in players' words: "Tomato (ing-012)"."""
    return f"{state.pack.name_of(card)} ({card})"


def twice(cards: Sequence[str]) -> str | None:
    """The first card named more than once, or None."""
    return next((c for c, n in Counter(cards).items() if n > 1), None)


def not_in_hand(state: State, seat: int, cards: Sequence[str]) -> str | None:
    """PE-HAND-CARDS: the first card not in the seat's hand, in words, or None."""
    hand = state.players[seat].hand
    missing = next((c for c in cards if c not in hand), None)
    if missing is None:
        return None
    return f"{name_of(state, seat)} has no {card_words(state, missing)} in hand"


# -- preparing a Recipe -------------------------------------------------------------------


def card_kinds(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-PREPARE-INGREDIENTS: a Recipe card and Ingredient cards, none named twice."""
    pack = state.pack
    if pack.kind_of(prep.recipe) != RECIPE:
        return f"{card_words(state, prep.recipe)} is not a Recipe card"
    for card in prep.ingredients:
        if pack.kind_of(card) != INGREDIENT:
            return (
                f"{card_words(state, card)} is not an Ingredient card: a Recipe takes its "
                "listed ingredients (or 3 cards in place of one)"
            )
    named = twice(list(prep.ingredients))
    if named is not None:
        return f"{card_words(state, named)} is named twice: each ingredient is a card of its own"
    return None


def substitutes_apart(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-I9: the 3 cards standing in are other cards than the Recipe and its ingredients."""
    used = {prep.recipe, *prep.ingredients}
    standing_in = [c for sub in prep.substitutions for c in sub.cards]
    reused = next((c for c in standing_in if c in used), None) or twice(standing_in)
    if reused is not None:
        return (
            f"{card_words(state, reused)} is used twice: the 3 cards standing in for an "
            "ingredient are other cards of the hand than the Recipe and its ingredients"
        )
    return None


def prepared_in_hand(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-HAND-CARDS: the Recipe, its ingredients and the substitutes are in hand."""
    subs = [c for s in prep.substitutions for c in s.cards]
    return not_in_hand(state, seat, [prep.recipe, *prep.ingredients, *subs])


def substitute_once(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-SUBSTITUTE-ONCE: one 3-for-1 per Recipe."""
    if len(prep.substitutions) > 1:
        dish = state.pack.recipe_of[prep.recipe].name
        return f"{name_of(state, seat)} may use the 3-for-1 substitution only once for {dish}"
    return None


def substitute_three(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-SUBSTITUTE: 3 cards for an ingredient the Recipe calls for."""
    dish = state.pack.recipe_of[prep.recipe]
    for sub in prep.substitutions:
        if len(sub.cards) != SUBSTITUTE_CARDS:
            return (
                f"{name_of(state, seat)} must discard exactly 3 cards in place of "
                f"{sub.ingredient}, not {len(sub.cards)}"
            )
        if sub.ingredient not in dish.ingredients:
            return f"{dish.name} does not call for {sub.ingredient}"
    return None


def recipe_ingredients(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-PREPARE-INGREDIENTS: exactly the Recipe's ingredients (one may be a 3-for-1)."""
    pack, dish = state.pack, state.pack.recipe_of[prep.recipe]
    given = Counter(pack.ingredient_of[c] for c in prep.ingredients)
    given.update(s.ingredient for s in prep.substitutions)
    wanted = Counter(dish.ingredients)
    if given == wanted:
        return None
    missing = sorted((wanted - given).elements())
    extra = sorted((given - wanted).elements())
    parts = [f"missing {', '.join(missing)}" if missing else ""]
    parts.append(f"not in the recipe: {', '.join(extra)}" if extra else "")
    detail = "; ".join(part for part in parts if part)
    return f"{dish.name} needs {', '.join(dish.ingredients)}; {name_of(state, seat)} gave {detail}"


def not_replacing_silverware(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-ITEM-SILVERWARE: Fancy Silverware takes its slot for good."""
    if prep.replaces and prep.replaces in state.players[seat].silverware:
        return (
            f"{state.pack.name_of(prep.replaces)} permanently takes up a Recipe slot: "
            f"{name_of(state, seat)} cannot replace it with a Recipe"
        )
    return None


def replaces_own(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-REPLACE: only a Recipe of one's own in play is replaced."""
    if prep.replaces and owner_of(state, prep.replaces) != seat:
        replaced = state.pack.name_of(prep.replaces)
        return f"{name_of(state, seat)} has no {replaced} in play to replace"
    return None


def not_hot_plate(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-REPLACE-HOT-PLATE: a Recipe with Hot Plate on it stays."""
    if prep.replaces and has_effect(state.pack, placed(state, seat, prep.replaces), HOT_PLATE):
        replaced = state.pack.name_of(prep.replaces)
        return f"{replaced} has a Hot Plate on it and cannot be replaced"
    return None


def free_slot(state: State, seat: int, prep: Prepare) -> str | None:
    """PE-SLOTS: a new Recipe takes a free slot of the 5."""
    if not prep.replaces and state.players[seat].slots_used >= RECIPE_SLOTS:
        name = name_of(state, seat)
        return f"{name}'s 5 Recipe slots are full: replace a Recipe to prepare another"
    return None


def prepare(state: State, seat: int, prep: Prepare) -> tuple[State, list[Fact]]:
    """The Recipe goes in front of the player (or replaces one); its cards are discarded."""
    pack, player = state.pack, state.players[seat]
    substitute = [c for s in prep.substitutions for c in s.cards]
    spent = [*prep.ingredients, *substitute]
    hand = tuple(c for c in player.hand if c not in {prep.recipe, *spent})
    recipes, thrown = list(player.recipes), list(spent)
    replaced_items: list[str] = []
    if prep.replaces:
        index = next(i for i, r in enumerate(recipes) if r.card == prep.replaces)
        replaced_items = list(recipes[index].items)
        thrown += [prep.replaces, *replaced_items]
        recipes[index] = PlacedRecipe(prep.recipe)
    else:
        recipes.append(PlacedRecipe(prep.recipe))
    state = set_player(state, seat, hand=hand, recipes=tuple(recipes))
    state = evolve(state, discard=(*state.discard, *thrown))
    sub = prep.substitutions[0] if prep.substitutions else None
    fact: Fact = {
        "type": "recipe_prepared",
        "seat": seat,
        "recipe": prep.recipe,
        "recipe_name": pack.name_of(prep.recipe),
        "ingredients": list(prep.ingredients),
        "ingredient_names": [pack.name_of(c) for c in prep.ingredients],
        "substitution": ({"ingredient": sub.ingredient, "cards": list(sub.cards)} if sub else None),
        "replaced": prep.replaces or None,
        "replaced_name": pack.name_of(prep.replaces) if prep.replaces else None,
        "replaced_items": replaced_items,
        "discarded": thrown,
        "slots_used": state.players[seat].slots_used,
    }
    return next_turn(state, [fact])


# -- playing an Item ----------------------------------------------------------------------


def item_card(state: State, seat: int, play: Play) -> str | None:
    """PE-ITEM-PLAY: an Item card, played onto a Recipe card."""
    if state.pack.kind_of(play.item) != ITEM:
        return f"{card_words(state, play.item)} is not an Item card: only Items are played"
    if play.recipe and state.pack.kind_of(play.recipe) != RECIPE:
        return f"{card_words(state, play.recipe)} is not a Recipe: an Item goes on a Recipe"
    return None


def item_in_hand(state: State, seat: int, play: Play) -> str | None:
    """PE-HAND-CARDS: the Item is in hand."""
    return not_in_hand(state, seat, [play.item])


def _silverware(state: State, play: Play) -> bool:
    return state.pack.item_of[play.item].effect == FANCY_SILVERWARE


def silverware_in_front(state: State, seat: int, play: Play) -> str | None:
    """PE-ITEM-SILVERWARE (PE-I10): Fancy Silverware goes in front of the player."""
    if _silverware(state, play) and play.recipe:
        item = state.pack.item_of[play.item].name
        return f"{item} goes in front of {name_of(state, seat)}, not on a Recipe"
    return None


def silverware_slot(state: State, seat: int, play: Play) -> str | None:
    """PE-SLOTS: Fancy Silverware takes a free Recipe slot."""
    if _silverware(state, play) and state.players[seat].slots_used >= RECIPE_SLOTS:
        return f"{name_of(state, seat)}'s 5 Recipe slots are full"
    return None


def recipe_in_play(state: State, seat: int, play: Play) -> str | None:
    """PE-ITEM-PLAY: any other Item goes on a Recipe in play."""
    if _silverware(state, play):
        return None
    item = state.pack.item_of[play.item].name
    if not play.recipe:
        return f"{item} must go on a Recipe in play: name the Recipe it goes on"
    if owner_of(state, play.recipe) is None:
        target = state.pack.name_of(play.recipe)
        return f"{item} must go on a Recipe in play; {target} is not in play"
    return None


def _target(state: State, play: Play) -> tuple[str, int] | None:
    """The item's effect and the Recipe's owner, for an Item going on a Recipe."""
    if _silverware(state, play):
        return None
    owner = owner_of(state, play.recipe)
    assert owner is not None  # PE-ITEM-PLAY came first
    return state.pack.item_of[play.item].effect, owner


def seasoning_on_opponent(state: State, seat: int, play: Play) -> str | None:
    """PE-ITEM-EXTRA-SEASONING: on an opponent's Recipe."""
    target = _target(state, play)
    if target == (EXTRA_SEASONING, seat):
        item = state.pack.item_of[play.item].name
        return f"{item} goes on an opponent's Recipe, not {name_of(state, seat)}'s"
    return None


def _own_only(state: State, seat: int, play: Play, effect: str) -> str | None:
    """An Item of ``effect`` goes on one of the player's own Recipes, not an opponent's."""
    target = _target(state, play)
    if target is not None and target[0] == effect and target[1] != seat:
        item = state.pack.item_of[play.item].name
        return f"{item} goes on one of {name_of(state, seat)}'s own Recipes"
    return None


def herbs_on_own(state: State, seat: int, play: Play) -> str | None:
    """PE-ITEM-HERBS: on one of the player's own Recipes."""
    return _own_only(state, seat, play, SPRINKLE_OF_HERBS)


def hot_plate(state: State, seat: int, play: Play) -> str | None:
    """PE-I2: Hot Plate goes on one's own Recipe; with the option, it takes no opponent's Item."""
    wrong = _own_only(state, seat, play, HOT_PLATE)
    target = _target(state, play)
    if wrong is not None or target is None:
        return wrong
    owner = target[1]
    on = placed(state, owner, play.recipe)
    if owner != seat and state.hot_plate_blocks_items and has_effect(state.pack, on, HOT_PLATE):
        dish = state.pack.name_of(play.recipe)
        return f"{name_of(state, owner)}'s {dish} has a Hot Plate: no opponent's Item on it"
    return None


def item_unique(state: State, seat: int, play: Play) -> str | None:
    """PE-ITEM-UNIQUE: no Recipe holds two of the same Item."""
    target = _target(state, play)
    if target is None:
        return None
    pack, item = state.pack, state.pack.item_of[play.item].name
    on = placed(state, target[1], play.recipe)
    if any(pack.item_of[other].name == item for other in on.items):
        return f"{pack.name_of(play.recipe)} already has {with_article(item)} on it"
    return None


def play_item(state: State, seat: int, play: Play) -> tuple[State, list[Fact]]:
    """The Item goes on its Recipe (Fancy Silverware: in front of the player)."""
    pack, player = state.pack, state.players[seat]
    state = set_player(state, seat, hand=tuple(c for c in player.hand if c != play.item))
    owner = None
    if not play.recipe:
        state = set_player(state, seat, silverware=(*player.silverware, play.item))
    else:
        owner = owner_of(state, play.recipe)
        assert owner is not None  # PE-ITEM-PLAY came first
        recipes = tuple(
            PlacedRecipe(r.card, tuple(sorted((*r.items, play.item))))
            if r.card == play.recipe
            else r
            for r in state.players[owner].recipes
        )
        state = set_player(state, owner, recipes=recipes)
    fact: Fact = {
        "type": "item_played",
        "seat": seat,
        "item": play.item,
        "item_name": pack.name_of(play.item),
        "recipe": play.recipe or None,
        "recipe_name": pack.name_of(play.recipe) if play.recipe else None,
        "recipe_owner": owner,
    }
    return next_turn(state, [fact])


def with_article(name: str) -> str:
    """A card's name after "a" or "an", as a player would say it: ``an Extra Seasoning``."""
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
