"""Picky Eaters: who acts, how commands are read, and the six moves with their checks.

The fold's generic checks come first (game over: PE-GAME-END; the seat to act: PE-PASS or
PE-TURN-ORDER, see ``out_of_turn``).  A command is malformed (``MalformedCommand``) only
when it names a card id that is no card of the pack, or an ingredient the pack does not
know; everything else a well-formed command can get wrong breaks a rule.  Every move
but a discard-down first waits for a pending discard-down (PE-HAND-LIMIT-DEAL,
PE-HAND-LIMIT).  After any move, an empty Food deck is refilled at once where the option
``deck_refill`` says so (PE-DECK-REFILL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from feastlog.replay.games.engine import (
    Effect,
    Fact,
    MalformedCommand,
    Move,
    RuleViolation,
    as_is,
    evolve,
    how_many,
)
from feastlog.replay.games.picky_eaters import recipes
from feastlog.replay.games.picky_eaters.flow import draw, next_turn, refill_when_empty, set_player
from feastlog.replay.games.picky_eaters.recipes import (
    card_words,
    name_of,
    not_in_hand,
    twice,
)
from feastlog.replay.games.picky_eaters.spec import DISCARD_TO_DRAW, HAND_LIMIT
from feastlog.replay.games.picky_eaters.state import (
    DISCARD_DOWN,
    OVER,
    PLAY,
    State,
    over_hand_limit,
)
from feastlog.v1 import picky_eaters_pb2 as pb

Result = tuple[State, list[Fact]]


def to_act(state: State) -> frozenset[int]:
    """Seats that may send a command: those over 10 cards after the deal, else the turn."""
    if state.phase == OVER:
        return frozenset()
    if state.phase == DISCARD_DOWN:
        return over_hand_limit(state)
    return frozenset({state.turn})


def out_of_turn(state: State, seat: int) -> RuleViolation:
    """PE-PASS for a player who has passed this round, else PE-TURN-ORDER."""
    name = name_of(state, seat)
    if state.phase == PLAY and 0 <= seat < len(state.players) and state.players[seat].passed:
        return RuleViolation("PE-PASS", f"{name} has passed and takes no more actions this round")
    waiting = ", ".join(name_of(state, s) for s in sorted(to_act(state)))
    return RuleViolation("PE-TURN-ORDER", f"it is not {name}'s turn; waiting for {waiting}")


# -- reading commands (MalformedCommand) --------------------------------------------------


def _ids(state: State, field: str, cards: Sequence[str]) -> None:
    """MalformedCommand for an id of a list that is no Food card of the pack, naming
    its place (``discard_to_draw.cards[2]``)."""
    for i, card in enumerate(cards):
        _id(state, f"{field}[{i}]", card)


def _id(state: State, field: str, card: str) -> None:
    """MalformedCommand when ``card`` is no Food card of the pack."""
    if state.pack.kind_of(card) is None:
        raise MalformedCommand(field, f"{card!r} is not a Food card of this pack")


def read_take(state: State, take: pb.PickyEatersTakeFromMarket) -> Any:
    """A Food card of the pack."""
    _id(state, "take_from_market.card", take.card)
    return take


def read_prepare(state: State, prep: pb.PickyEatersPrepareRecipe) -> Any:
    """Food cards of the pack, and ingredients the pack knows."""
    _id(state, "prepare_recipe.recipe", prep.recipe)
    _ids(state, "prepare_recipe.ingredients", prep.ingredients)
    known = {i.name for i in state.pack.ingredients}
    for k, sub in enumerate(prep.substitutions):
        where = f"prepare_recipe.substitutions[{k}]"
        if sub.ingredient not in known:
            raise MalformedCommand(
                f"{where}.ingredient", f"{sub.ingredient!r} is not an ingredient of this pack"
            )
        _ids(state, f"{where}.cards", sub.cards)
    if prep.replaces:
        _id(state, "prepare_recipe.replaces", prep.replaces)
    return prep


def read_item(state: State, play: pb.PickyEatersPlayItem) -> Any:
    """An Item and, when named, a Recipe: Food cards of the pack."""
    _id(state, "play_item.item", play.item)
    if play.recipe:
        _id(state, "play_item.recipe", play.recipe)
    return play


def read_discard_to_draw(state: State, discard: pb.PickyEatersDiscardToDraw) -> list[str]:
    """The cards discarded, Food cards of the pack."""
    _ids(state, "discard_to_draw.cards", discard.cards)
    return list(discard.cards)


def read_discard_down(state: State, discard: pb.PickyEatersDiscardDown) -> list[str]:
    """The cards discarded, Food cards of the pack."""
    _ids(state, "discard_down.cards", discard.cards)
    return list(discard.cards)


# -- checks: each returns the refusal in players' words, or None --------------------------


def _excess(state: State, seat: int) -> int:
    return len(state.players[seat].hand) - HAND_LIMIT


def no_discard_at_deal(state: State, seat: int, move: Any) -> str | None:
    """PE-HAND-LIMIT-DEAL: after the deal, seats over 10 cards discard before anything else."""
    if state.phase == DISCARD_DOWN:
        return _discard_first(state, seat)
    return None


def no_discard_pending(state: State, seat: int, move: Any) -> str | None:
    """PE-HAND-LIMIT: a player over 10 cards discards down before anything else."""
    if state.phase == PLAY and _excess(state, seat) > 0:
        return _discard_first(state, seat)
    return None


def _discard_first(state: State, seat: int) -> str:
    over = how_many(_excess(state, seat), "card")
    return f"{name_of(state, seat)} must first discard {over} to get down to 10"


def something_to_discard(state: State, seat: int, cards: list[str]) -> str | None:
    """PE-HAND-LIMIT: a discard-down needs more than 10 cards in hand."""
    if state.phase == PLAY and _excess(state, seat) <= 0:
        held = _excess(state, seat) + HAND_LIMIT
        return f"{name_of(state, seat)} holds {how_many(held, 'card')}: nothing to discard down"
    return None


def _down_to_ten(state: State, seat: int, cards: list[str]) -> str | None:
    """Exactly the cards over 10, each named once."""
    over = _excess(state, seat)
    named = twice(cards)
    if named is not None:
        return f"{card_words(state, named)} is named twice: discard {over} different cards"
    if len(cards) != over:
        exactly = how_many(over, "card")
        return f"{name_of(state, seat)} must discard exactly {exactly}, not {len(cards)}"
    return None


def down_to_ten_at_deal(state: State, seat: int, cards: list[str]) -> str | None:
    """PE-HAND-LIMIT-DEAL: after the deal, exactly the cards over 10."""
    return _down_to_ten(state, seat, cards) if state.phase == DISCARD_DOWN else None


def down_to_ten_in_play(state: State, seat: int, cards: list[str]) -> str | None:
    """PE-HAND-LIMIT: after taking an 11th card, exactly the cards over 10 (PE-I6)."""
    return _down_to_ten(state, seat, cards) if state.phase == PLAY else None


def cards_in_hand(state: State, seat: int, cards: list[str]) -> str | None:
    """PE-HAND-CARDS: the cards discarded are in hand."""
    return not_in_hand(state, seat, cards)


def market_not_empty(state: State, seat: int, take: Any) -> str | None:
    """PE-MARKET-NO-REFILL: an empty Market waits for the next round."""
    if not state.market:
        return "the Market is empty; it is refilled only at the beginning of the next round"
    return None


def in_market(state: State, seat: int, take: pb.PickyEatersTakeFromMarket) -> str | None:
    """PE-TAKE-MARKET: the card lies in the Market."""
    if take.card not in state.market:
        return (
            f"{card_words(state, take.card)} is not in the Market; it is not refilled until "
            "the next round"
        )
    return None


def two_cards(state: State, seat: int, cards: list[str]) -> str | None:
    """PE-DISCARD-DRAW: exactly 2 different cards."""
    named = twice(cards)
    if named is not None:
        return f"{card_words(state, named)} is named twice: discard 2 different cards"
    if len(cards) != DISCARD_TO_DRAW:
        return f"{name_of(state, seat)} must discard exactly 2 cards to draw 1, not {len(cards)}"
    return None


# -- effects ------------------------------------------------------------------------------


def take(state: State, seat: int, move: pb.PickyEatersTakeFromMarket) -> Result:
    """The card goes from the Market to the hand; an 11th card is discarded down first."""
    card, hand = move.card, state.players[seat].hand
    state = set_player(state, seat, hand=tuple(sorted((*hand, card))))
    state = evolve(state, market=tuple(c for c in state.market if c != card))
    size = len(hand) + 1
    fact: Fact = {
        "type": "took_from_market",
        "seat": seat,
        "card": card,
        "card_name": state.pack.name_of(card),
        "hand_size": size,
        "market_left": len(state.market),
    }
    if size > HAND_LIMIT:
        return state, [{**fact, "must_discard": size - HAND_LIMIT}]
    return next_turn(state, [fact])


def discard_to_draw(state: State, seat: int, cards: list[str]) -> Result:
    """Two cards to the discard pile, one drawn from the Food deck."""
    hand = tuple(c for c in state.players[seat].hand if c not in cards)
    state = evolve(set_player(state, seat, hand=hand), discard=(*state.discard, *cards))
    facts: list[Fact] = [{"type": "discarded_to_draw", "seat": seat, "cards": cards}]
    state, drawn, refill = draw(state, 1)
    state = set_player(state, seat, hand=tuple(sorted((*hand, *drawn))))
    facts += refill
    facts.append({"type": "drew", "seat": seat, "count": len(drawn)})
    facts += [{"type": "card_drawn", "seat": seat, "card": c, "private_to": seat} for c in drawn]
    return next_turn(state, facts)


def discard_down(state: State, seat: int, cards: list[str]) -> Result:
    """Down to 10 cards; after the deal, play starts once no one is over 10."""
    hand = tuple(c for c in state.players[seat].hand if c not in cards)
    state = evolve(set_player(state, seat, hand=hand), discard=(*state.discard, *cards))
    facts: list[Fact] = [{"type": "discarded_down", "seat": seat, "cards": cards}]
    if state.phase == PLAY:
        return next_turn(state, facts)
    if not over_hand_limit(state):
        state = evolve(state, phase=PLAY, turn=state.first_player)
        facts.append({"type": "play_started", "round": state.round, "seat": state.turn})
    return state, facts


def pass_round(state: State, seat: int, move: pb.PickyEatersPass) -> Result:
    """No more actions this round for this player."""
    state = set_player(state, seat, passed=True)
    return next_turn(state, [{"type": "passed", "seat": seat, "round": state.round}])


def refilled(effect: Effect) -> Effect:
    """``effect``, then PE-DECK-REFILL: a Food deck left empty is refilled at once."""

    def then_refill(state: State, seat: int, move: Any) -> Result:
        state, facts = effect(state, seat, move)
        return refill_when_empty(state, facts)

    return then_refill


WAIT = (("PE-HAND-LIMIT-DEAL", no_discard_at_deal), ("PE-HAND-LIMIT", no_discard_pending))
MOVES = {
    "take_from_market": Move(
        read_take,
        (*WAIT, ("PE-MARKET-NO-REFILL", market_not_empty), ("PE-TAKE-MARKET", in_market)),
        refilled(take),
    ),
    "prepare_recipe": Move(
        read_prepare,
        (
            *WAIT,
            ("PE-PREPARE-INGREDIENTS", recipes.card_kinds),
            ("PE-I9", recipes.substitutes_apart),
            ("PE-HAND-CARDS", recipes.prepared_in_hand),
            ("PE-SUBSTITUTE-ONCE", recipes.substitute_once),
            ("PE-SUBSTITUTE", recipes.substitute_three),
            ("PE-PREPARE-INGREDIENTS", recipes.recipe_ingredients),
            ("PE-ITEM-SILVERWARE", recipes.not_replacing_silverware),
            ("PE-REPLACE", recipes.replaces_own),
            ("PE-REPLACE-HOT-PLATE", recipes.not_hot_plate),
            ("PE-SLOTS", recipes.free_slot),
        ),
        refilled(recipes.prepare),
    ),
    "play_item": Move(
        read_item,
        (
            *WAIT,
            ("PE-ITEM-PLAY", recipes.item_card),
            ("PE-HAND-CARDS", recipes.item_in_hand),
            ("PE-ITEM-SILVERWARE", recipes.silverware_in_front),
            ("PE-SLOTS", recipes.silverware_slot),
            ("PE-ITEM-PLAY", recipes.recipe_in_play),
            ("PE-ITEM-EXTRA-SEASONING", recipes.seasoning_on_opponent),
            ("PE-ITEM-HERBS", recipes.herbs_on_own),
            ("PE-I2", recipes.hot_plate),
            ("PE-ITEM-UNIQUE", recipes.item_unique),
        ),
        refilled(recipes.play_item),
    ),
    "discard_to_draw": Move(
        read_discard_to_draw,
        (*WAIT, ("PE-DISCARD-DRAW", two_cards), ("PE-HAND-CARDS", cards_in_hand)),
        refilled(discard_to_draw),
    ),
    "pass_round": Move(as_is, WAIT, refilled(pass_round)),
    "discard_down": Move(
        read_discard_down,
        (
            ("PE-HAND-LIMIT", something_to_discard),
            ("PE-HAND-LIMIT-DEAL", down_to_ten_at_deal),
            ("PE-HAND-LIMIT", down_to_ten_in_play),
            ("PE-HAND-CARDS", cards_in_hand),
        ),
        refilled(discard_down),
    ),
}
