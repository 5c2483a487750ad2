"""Picky Eaters: every legal command for a seat, up to ``LEGAL_CAP``.

The list holds, in this order until ``LEGAL_CAP + 1`` are found (then sorted by their
bytes): when a seat must discard down, every set of cards to discard (and nothing else);
otherwise Pass, every Market card, every Item on every Recipe it may go on (Fancy
Silverware in front of the player), every pair of cards to discard to draw, and every way
to prepare each Recipe in hand: each set of Ingredient cards, each 3-for-1 (which
ingredient, which 3 other cards), each Recipe it may replace.  Commands that differ only
in the order of the cards they name count once (cards in hand order).

Candidates are built to pass the checks ``apply`` runs; Items are filtered through those
checks; the tests hold every offered command to being accepted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations, islice, product

from feastlog.v1 import picky_eaters_pb2 as pb
from replay.engine import LEGAL_CAP, RuleViolation
from replay.picky_eaters_checks import check_item, to_act
from replay.picky_eaters_pack import FANCY_SILVERWARE, HOT_PLATE, INGREDIENT, ITEM, RECIPE
from replay.picky_eaters_rules import (
    DISCARD_TO_DRAW,
    HAND_LIMIT,
    RECIPE_SLOTS,
    SUBSTITUTE_CARDS,
    State,
    has_effect,
)

Command = pb.PickyEatersCommand


def legal_commands(state: State, seat: int) -> list[Command]:
    """Sorted commands ``seat`` may send now: all of them, or the first LEGAL_CAP + 1."""
    if seat not in to_act(state):
        return []
    found = islice(_candidates(state, seat), LEGAL_CAP + 1)
    return sorted(found, key=lambda c: c.SerializeToString(deterministic=True))


def _candidates(state: State, seat: int) -> Iterator[Command]:
    """Every legal command, in the order of the module docstring."""
    hand = state.players[seat].hand
    over = len(hand) - HAND_LIMIT
    if over > 0:
        for cards in combinations(hand, over):
            yield Command(discard_down=pb.PickyEatersDiscardDown(cards=cards))
        return
    yield Command(pass_round=pb.PickyEatersPass())
    for card in state.market:
        yield Command(take_from_market=pb.PickyEatersTakeFromMarket(card=card))
    for play in _item_plays(state, seat):
        yield Command(play_item=play)
    for pair in combinations(hand, DISCARD_TO_DRAW):
        yield Command(discard_to_draw=pb.PickyEatersDiscardToDraw(cards=pair))
    for prep in _preparations(state, seat):
        yield Command(prepare_recipe=prep)


def _item_plays(state: State, seat: int) -> Iterator[pb.PickyEatersPlayItem]:
    """Every Item in hand on every Recipe in play it may go on (Silverware: in front)."""
    pack = state.pack
    recipes = [r.card for p in state.players for r in p.recipes]
    for card in (c for c in state.players[seat].hand if pack.kind_of(c) == ITEM):
        targets = [""] if pack.item_of[card].effect == FANCY_SILVERWARE else recipes
        for recipe in targets:
            try:
                check_item(state, seat, card, recipe)
            except RuleViolation:
                continue
            yield pb.PickyEatersPlayItem(item=card, recipe=recipe)


def _preparations(state: State, seat: int) -> Iterator[pb.PickyEatersPrepareRecipe]:
    """Each Recipe in hand, every set of cards that prepares it, every slot it may take."""
    pack, player = state.pack, state.players[seat]
    hand = player.hand
    targets = [""] if player.slots_used < RECIPE_SLOTS else []
    targets += [r.card for r in player.recipes if not has_effect(pack, r, HOT_PLATE)]
    if not targets:
        return
    for recipe in (c for c in hand if pack.kind_of(c) == RECIPE):
        needs = list(pack.recipe_of[recipe].ingredients)
        others = [c for c in hand if c != recipe]
        for used in _ingredient_sets(state, others, needs):
            for replaces in targets:
                yield pb.PickyEatersPrepareRecipe(
                    recipe=recipe, ingredients=used, replaces=replaces
                )
        for missing in dict.fromkeys(needs):
            rest = list(needs)
            rest.remove(missing)
            for used in _ingredient_sets(state, others, rest):
                pool = [c for c in others if c not in used]
                for three in combinations(pool, SUBSTITUTE_CARDS):
                    sub = pb.PickyEatersSubstitution(ingredient=missing, cards=three)
                    for replaces in targets:
                        yield pb.PickyEatersPrepareRecipe(
                            recipe=recipe, ingredients=used, substitutions=[sub], replaces=replaces
                        )


def _ingredient_sets(
    state: State, cards: Sequence[str], needs: Sequence[str]
) -> Iterator[list[str]]:
    """Every set of Ingredient cards among ``cards`` that shows exactly ``needs``."""
    pack = state.pack
    wanted = Counter(needs)
    choices = []
    for ingredient, count in wanted.items():
        showing = [
            c
            for c in cards
            if pack.kind_of(c) == INGREDIENT and pack.ingredient_of[c] == ingredient
        ]
        choices.append(list(combinations(showing, count)))
    for picked in product(*choices):
        yield [c for group in picked for c in group]
