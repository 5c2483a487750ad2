"""Picky Eaters: the checks every command passes, in the order ``checks()`` lists them.

A command is malformed (``MalformedCommand``) only when it names no action, a card id that
is no card of the pack, or an ingredient the pack does not know.  Everything else a
well-formed command can get wrong breaks a rule and raises ``RuleViolation`` with the
rule's id, in the players' words: a card of the wrong kind, a card named twice, a card not
in hand, a wrong turn.  ``apply`` and ``legal_commands`` share these functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from feastlog.v1 import picky_eaters_pb2 as pb
from replay.engine import MalformedCommand, RuleViolation
from replay.picky_eaters_pack import (
    EXTRA_SEASONING,
    FANCY_SILVERWARE,
    HOT_PLATE,
    INGREDIENT,
    ITEM,
    RECIPE,
    SPRINKLE_OF_HERBS,
)
from replay.picky_eaters_rules import (
    DISCARD_DOWN,
    DISCARD_TO_DRAW,
    HAND_LIMIT,
    OVER,
    PLAY,
    RECIPE_SLOTS,
    SUBSTITUTE_CARDS,
    State,
    has_effect,
    owner_of,
    placed,
)

COMMON = ("PE-GAME-END", "PE-PASS", "PE-TURN-ORDER", "PE-HAND-LIMIT-DEAL", "PE-HAND-LIMIT")
CHECKS: dict[str, tuple[str, ...]] = {
    "take_from_market": (*COMMON, "PE-MARKET-NO-REFILL", "PE-TAKE-MARKET"),
    "prepare_recipe": (
        *COMMON,
        "PE-PREPARE-INGREDIENTS",
        "PE-I9",
        "PE-HAND-CARDS",
        "PE-SUBSTITUTE-ONCE",
        "PE-SUBSTITUTE",
        "PE-ITEM-SILVERWARE",
        "PE-REPLACE",
        "PE-REPLACE-HOT-PLATE",
        "PE-SLOTS",
    ),
    "play_item": (
        *COMMON,
        "PE-ITEM-PLAY",
        "PE-HAND-CARDS",
        "PE-ITEM-SILVERWARE",
        "PE-SLOTS",
        "PE-ITEM-EXTRA-SEASONING",
        "PE-ITEM-HERBS",
        "PE-I2",
        "PE-ITEM-UNIQUE",
    ),
    "discard_to_draw": (*COMMON, "PE-DISCARD-DRAW", "PE-HAND-CARDS"),
    "pass_round": COMMON,
    "discard_down": (*COMMON, "PE-HAND-CARDS"),
}


def to_act(state: State) -> frozenset[int]:
    """Seats that may send a command: those over 10 cards after the deal, else the turn."""
    if state.phase == OVER:
        return frozenset()
    if state.phase == DISCARD_DOWN:
        return frozenset(s for s, p in enumerate(state.players) if len(p.hand) > HAND_LIMIT)
    return frozenset({state.turn})


def well_formed(state: State, command: pb.PickyEatersCommand) -> str:
    """The action's name, once every card id in it is a card of the pack."""
    action = command.WhichOneof("action")
    if action is None:
        raise MalformedCommand("action", "the command names no action")
    if action == "take_from_market":
        _ids(state, "take_from_market.card", [command.take_from_market.card])
    elif action == "prepare_recipe":
        _prepare_well_formed(state, command.prepare_recipe)
    elif action == "play_item":
        play = command.play_item
        _ids(state, "play_item.item", [play.item])
        if play.recipe:
            _ids(state, "play_item.recipe", [play.recipe])
    elif action == "discard_to_draw":
        _ids(state, "discard_to_draw.cards", command.discard_to_draw.cards)
    elif action == "discard_down":
        _ids(state, "discard_down.cards", command.discard_down.cards)
    return action


def check_command(state: State, seat: int, command: pb.PickyEatersCommand) -> str:
    """Every check of ``command`` by ``seat``, in the order of ``CHECKS``; the action name."""
    action = well_formed(state, command)
    check_common(state, seat, action)
    if action == "take_from_market":
        check_take(state, seat, command.take_from_market.card)
    elif action == "prepare_recipe":
        check_prepare(state, seat, command.prepare_recipe)
    elif action == "play_item":
        check_item(state, seat, command.play_item.item, command.play_item.recipe)
    elif action == "discard_to_draw":
        check_discard_to_draw(state, seat, command.discard_to_draw.cards)
    elif action == "discard_down":
        check_discard_down(state, seat, command.discard_down.cards)
    return action


def _prepare_well_formed(state: State, prep: pb.PickyEatersPrepareRecipe) -> None:
    _ids(state, "prepare_recipe.recipe", [prep.recipe])
    _ids(state, "prepare_recipe.ingredients", prep.ingredients)
    known = {i.name for i in state.pack.ingredients}
    for sub in prep.substitutions:
        if sub.ingredient not in known:
            raise MalformedCommand(
                "prepare_recipe.substitutions.ingredient",
                f"{sub.ingredient!r} is not an ingredient of this pack",
            )
        _ids(state, "prepare_recipe.substitutions.cards", sub.cards)
    if prep.replaces:
        _ids(state, "prepare_recipe.replaces", [prep.replaces])


def _ids(state: State, field: str, cards: Sequence[str]) -> None:
    """MalformedCommand for an id that is no Food card of the pack."""
    for card in cards:
        if state.pack.kind_of(card) is None:
            raise MalformedCommand(field, f"{card!r} is not a Food card of this pack")


def _twice(cards: Sequence[str]) -> str | None:
    """The first card named more than once, or None."""
    return next((c for c, n in Counter(cards).items() if n > 1), None)


def _card(state: State, card: str) -> str:
    """A card in players' words: "Tomato (ing-012)"."""
    return f"{state.pack.name_of(card)} ({card})"


def check_common(state: State, seat: int, action: str) -> None:
    """Game not over, the seat is to act, and no discard-down is pending for another action."""
    if state.phase == OVER:
        raise RuleViolation("PE-GAME-END", "the game is over: all players passed in round 5")
    name = _name(state, seat)
    if seat not in to_act(state):
        if state.phase == PLAY and 0 <= seat < len(state.players) and state.players[seat].passed:
            raise RuleViolation(
                "PE-PASS", f"{name} has passed and takes no more actions this round"
            )
        waiting = ", ".join(_name(state, s) for s in sorted(to_act(state)))
        raise RuleViolation("PE-TURN-ORDER", f"it is not {name}'s turn; waiting for {waiting}")
    over = len(state.players[seat].hand) - HAND_LIMIT
    if state.phase == DISCARD_DOWN and action != "discard_down":
        raise RuleViolation(
            "PE-HAND-LIMIT-DEAL", f"{name} must first discard {over} cards down to 10"
        )
    if state.phase == PLAY and over > 0 and action != "discard_down":
        raise RuleViolation("PE-HAND-LIMIT", f"{name} must first discard {over} cards down to 10")
    if state.phase == PLAY and over <= 0 and action == "discard_down":
        raise RuleViolation(
            "PE-HAND-LIMIT", f"{name} holds {over + HAND_LIMIT} cards: nothing to discard down"
        )


def check_discard_down(state: State, seat: int, cards: Sequence[str]) -> None:
    """Exactly the cards over 10, each named once, all from the player's hand."""
    over = len(state.players[seat].hand) - HAND_LIMIT
    rule = "PE-HAND-LIMIT-DEAL" if state.phase == DISCARD_DOWN else "PE-HAND-LIMIT"
    twice = _twice(cards)
    if twice is not None:
        raise RuleViolation(
            rule, f"{_card(state, twice)} is named twice: discard {over} different cards"
        )
    if len(cards) != over:
        raise RuleViolation(
            rule, f"{_name(state, seat)} must discard exactly {over} cards, not {len(cards)}"
        )
    check_in_hand(state, seat, cards)


def check_in_hand(state: State, seat: int, cards: Iterable[str]) -> None:
    """Every card is in the seat's hand (PE-HAND-CARDS)."""
    hand = state.players[seat].hand
    for card in cards:
        if card not in hand:
            raise RuleViolation(
                "PE-HAND-CARDS",
                f"{_name(state, seat)} has no {state.pack.name_of(card)} ({card}) in hand",
            )


def check_take(state: State, seat: int, card: str) -> None:
    """The Market is not empty, and the card lies in it."""
    if not state.market:
        raise RuleViolation(
            "PE-MARKET-NO-REFILL",
            "the Market is empty; it is refilled only at the beginning of the next round",
        )
    if card not in state.market:
        raise RuleViolation(
            "PE-TAKE-MARKET",
            f"{state.pack.name_of(card)} ({card}) is not in the Market; it is not refilled "
            "until the next round",
        )


def check_discard_to_draw(state: State, seat: int, cards: Sequence[str]) -> None:
    """Exactly 2 cards from the hand."""
    twice = _twice(cards)
    if twice is not None:
        raise RuleViolation(
            "PE-DISCARD-DRAW", f"{_card(state, twice)} is named twice: discard 2 different cards"
        )
    if len(cards) != DISCARD_TO_DRAW:
        raise RuleViolation(
            "PE-DISCARD-DRAW",
            f"{_name(state, seat)} must discard exactly 2 cards to draw 1, not {len(cards)}",
        )
    check_in_hand(state, seat, cards)


def check_prepare(state: State, seat: int, prep: pb.PickyEatersPrepareRecipe) -> None:
    """The Recipe, its ingredients (or one 3-for-1), the replaced Recipe and the slots."""
    name, pack = _name(state, seat), state.pack
    subs = list(prep.substitutions)
    _prepare_kinds(state, prep)
    check_in_hand(
        state, seat, [prep.recipe, *prep.ingredients, *(c for s in subs for c in s.cards)]
    )
    dish = pack.recipe_of[prep.recipe]
    if len(subs) > 1:
        raise RuleViolation(
            "PE-SUBSTITUTE-ONCE",
            f"{name} may use the 3-for-1 substitution only once for {dish.name}",
        )
    for sub in subs:
        if len(sub.cards) != SUBSTITUTE_CARDS:
            raise RuleViolation(
                "PE-SUBSTITUTE",
                f"{name} must discard exactly 3 cards in place of {sub.ingredient}, "
                f"not {len(sub.cards)}",
            )
        if sub.ingredient not in dish.ingredients:
            raise RuleViolation("PE-SUBSTITUTE", f"{dish.name} does not call for {sub.ingredient}")
    given = Counter(pack.ingredient_of[c] for c in prep.ingredients)
    given.update(s.ingredient for s in subs)
    wanted = Counter(dish.ingredients)
    if given != wanted:
        missing = sorted((wanted - given).elements())
        extra = sorted((given - wanted).elements())
        detail = "; ".join(
            part
            for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"not in the recipe: {', '.join(extra)}" if extra else "",
            )
            if part
        )
        raise RuleViolation(
            "PE-PREPARE-INGREDIENTS",
            f"{dish.name} needs {', '.join(dish.ingredients)}; {name} gave {detail}",
        )
    if prep.replaces:
        if prep.replaces in state.players[seat].silverware:
            raise RuleViolation(
                "PE-ITEM-SILVERWARE",
                f"{pack.name_of(prep.replaces)} permanently takes up a Recipe slot: "
                f"{name} cannot replace it with a Recipe",
            )
        if owner_of(state, prep.replaces) != seat:
            raise RuleViolation(
                "PE-REPLACE",
                f"{name} has no {pack.name_of(prep.replaces)} in play to replace",
            )
        if has_effect(pack, placed(state, seat, prep.replaces), HOT_PLATE):
            raise RuleViolation(
                "PE-REPLACE-HOT-PLATE",
                f"{pack.name_of(prep.replaces)} has a Hot Plate on it and cannot be replaced",
            )
    elif state.players[seat].slots_used >= RECIPE_SLOTS:
        raise RuleViolation(
            "PE-SLOTS", f"{name}'s 5 Recipe slots are full: replace a Recipe to prepare another"
        )


def _prepare_kinds(state: State, prep: pb.PickyEatersPrepareRecipe) -> None:
    """A Recipe card, Ingredient cards, and no card used twice (PE-I9 for the 3-for-1)."""
    pack = state.pack
    if pack.kind_of(prep.recipe) != RECIPE:
        raise RuleViolation(
            "PE-PREPARE-INGREDIENTS", f"{_card(state, prep.recipe)} is not a Recipe card"
        )
    for card in prep.ingredients:
        if pack.kind_of(card) != INGREDIENT:
            raise RuleViolation(
                "PE-PREPARE-INGREDIENTS",
                f"{_card(state, card)} is not an Ingredient card: a Recipe takes its listed "
                "ingredients (or 3 cards in place of one)",
            )
    twice = _twice(list(prep.ingredients))
    if twice is not None:
        raise RuleViolation(
            "PE-PREPARE-INGREDIENTS",
            f"{_card(state, twice)} is named twice: each ingredient is a card of its own",
        )
    used = {prep.recipe, *prep.ingredients}
    standing_in = [c for sub in prep.substitutions for c in sub.cards]
    reused = next((c for c in standing_in if c in used), None) or _twice(standing_in)
    if reused is not None:
        raise RuleViolation(
            "PE-I9",
            f"{_card(state, reused)} is used twice: the 3 cards standing in for an ingredient "
            "are other cards of the hand than the Recipe and its ingredients",
        )


def check_item(state: State, seat: int, item: str, recipe: str) -> None:
    """Where the Item may go: its effect, the target's owner, Hot Plate and uniqueness."""
    name, pack = _name(state, seat), state.pack
    if pack.kind_of(item) != ITEM:
        raise RuleViolation(
            "PE-ITEM-PLAY", f"{_card(state, item)} is not an Item card: only Items are played"
        )
    if recipe and pack.kind_of(recipe) != RECIPE:
        raise RuleViolation(
            "PE-ITEM-PLAY", f"{_card(state, recipe)} is not a Recipe: an Item goes on a Recipe"
        )
    check_in_hand(state, seat, [item])
    kind = pack.item_of[item]
    if kind.effect == FANCY_SILVERWARE:
        if recipe:
            raise RuleViolation(
                "PE-ITEM-SILVERWARE", f"{kind.name} goes in front of {name}, not on a Recipe"
            )
        if state.players[seat].slots_used >= RECIPE_SLOTS:
            raise RuleViolation("PE-SLOTS", f"{name}'s 5 Recipe slots are full")
        return
    owner = owner_of(state, recipe) if recipe else None
    if owner is None:
        target = pack.name_of(recipe) if recipe else "nothing"
        raise RuleViolation(
            "PE-ITEM-PLAY", f"{kind.name} must go on a Recipe in play; {target} is not in play"
        )
    dish = pack.name_of(recipe)
    if kind.effect == EXTRA_SEASONING and owner == seat:
        raise RuleViolation(
            "PE-ITEM-EXTRA-SEASONING", f"{kind.name} goes on an opponent's Recipe, not {name}'s"
        )
    if kind.effect == SPRINKLE_OF_HERBS and owner != seat:
        raise RuleViolation("PE-ITEM-HERBS", f"{kind.name} goes on one of {name}'s own Recipes")
    if kind.effect == HOT_PLATE and owner != seat:
        raise RuleViolation("PE-I2", f"{kind.name} goes on one of {name}'s own Recipes")
    on = placed(state, owner, recipe)
    if owner != seat and state.hot_plate_blocks_items and has_effect(pack, on, HOT_PLATE):
        raise RuleViolation(
            "PE-I2", f"{_name(state, owner)}'s {dish} has a Hot Plate: no opponent's Item on it"
        )
    if any(pack.item_of[other].name == kind.name for other in on.items):
        raise RuleViolation("PE-ITEM-UNIQUE", f"{dish} already has a {kind.name} on it")


def _name(state: State, seat: int) -> str:
    if 0 <= seat < len(state.players):
        return state.players[seat].name
    return f"seat {seat}"
