"""Menu Masters: who acts, and the six moves, each with its checks in the order they run.

The fold's generic checks come first (game over: MM-GAME-OVER; the chef to act:
MM-TURN-ORDER, see ``out_of_turn``).  A move is read first (``MalformedCommand`` names the
bad field: an unknown store, card, Menu or ingredient), then checked, then carried out
with the automatic steps it triggers (``flow``).
"""

from __future__ import annotations

from typing import Any

from feastlog.replay.games.engine import (
    Fact,
    MalformedCommand,
    Move,
    RuleViolation,
    as_is,
    how_many,
    in_words,
)
from feastlog.replay.games.enums import not_a_value
from feastlog.replay.games.menu_masters import menus
from feastlog.replay.games.menu_masters.flow import advance, leave, next_placer, sold_out
from feastlog.replay.games.menu_masters.menus import (
    blocked,
    nothing_to_do,
    use_of,
    use_plain,
)
from feastlog.replay.games.menu_masters.spec import BASKET, DECK_LABELS, MENUS_TO_END
from feastlog.replay.games.menu_masters.state import (
    PLACE,
    PURCHASE,
    Completed,
    State,
    Turn,
    deck_index,
    evolve,
    store_name,
    with_chef,
    with_store,
)
from feastlog.v1 import menu_masters_pb2 as pb

Result = tuple[State, list[Fact]]


def to_act(state: State) -> frozenset[int]:
    """The chef who may act: the one placing a pawn, or the one whose purchase turn it is."""
    if state.step == PLACE and state.placing is not None:
        return frozenset({state.placing})
    if state.turn is not None:
        return frozenset({state.turn.seat})
    return frozenset()


def out_of_turn(state: State, seat: int) -> RuleViolation:
    """MM-TURN-ORDER: whose turn it is, in players' words."""
    name = state.chefs[seat].name if 0 <= seat < len(state.chefs) else f"seat {seat}"
    if state.step == PLACE and state.placing is not None:
        whose = f"it is {state.chefs[state.placing].name}'s turn to place a pawn, not {name}'s"
    elif state.turn is not None:
        other = state.chefs[state.turn.seat].name
        where = store_name(state.turn.store, True)
        whose = f"it is {other}'s purchase turn at the {where}, not {name}'s"
    else:
        whose = f"it is not {name}'s turn"
    return RuleViolation("MM-TURN-ORDER", whose)


# -- reading commands (MalformedCommand) --------------------------------------------------


def store_index(value: int, field: str) -> int:
    """The store index of a proto Store value (MalformedCommand when unset or unknown)."""
    if value not in pb.MenuMastersStore.values() or value == pb.MENU_MASTERS_STORE_UNSPECIFIED:
        raise MalformedCommand(field, not_a_value(pb.MenuMastersStore.DESCRIPTOR, value, "a store"))
    return value - 1


def read_placement(state: State, move: pb.MenuMastersPlacePawn) -> pb.MenuMastersPlacePawn:
    """A placement and, unless a coin is collected, a store."""
    if (
        move.placement not in pb.MenuMastersPlacement.values()
        or move.placement == pb.MENU_MASTERS_PLACEMENT_UNSPECIFIED
    ):
        raise MalformedCommand(
            "place_pawn.placement",
            not_a_value(pb.MenuMastersPlacement.DESCRIPTOR, move.placement, "a placement"),
        )
    if move.placement == pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN:
        if move.store != pb.MENU_MASTERS_STORE_UNSPECIFIED:
            raise MalformedCommand("place_pawn.store", "collecting a coin takes no store")
    else:
        store_index(move.store, "place_pawn.store")
    return move


def _card(state: State, card_id: str, field: str) -> None:
    """MalformedCommand unless ``card_id`` names an ingredient card of the pack."""
    try:
        state.pack.card(card_id)
    except KeyError:
        raise MalformedCommand(field, f"no ingredient card {card_id!r}") from None


def read_purchase(
    state: State, move: pb.MenuMastersPurchaseIngredient
) -> pb.MenuMastersPurchaseIngredient:
    """A card of the pack."""
    _card(state, move.card_id, "purchase.card_id")
    return move


def read_discard(
    state: State, move: pb.MenuMastersDiscardIngredient
) -> pb.MenuMastersDiscardIngredient:
    """A card of the pack."""
    _card(state, move.card_id, "discard.card_id")
    return move


def placing_step(state: State, seat: int, move: Any) -> str | None:
    """MM-STEP: pawns are placed in Step 1."""
    if state.step != PLACE:
        return f"the pawns are placed; it is {state.chefs[seat].name}'s purchase turn"
    return None


def purchase_step(state: State, seat: int, move: Any) -> str | None:
    """MM-STEP: buying, leaving a line, Menus and discards belong to a purchase turn."""
    if state.step != PURCHASE:
        return f"it is Step 1: {state.chefs[seat].name} must place a pawn"
    if state.turn is None:  # not reached: to_act gives no seat the turn then
        return "no purchase turn is running"
    return None


def supermarket_open(state: State, seat: int, move: pb.MenuMastersPlacePawn) -> str | None:
    """MM-I1: the Supermarket is used only with 4 or more chefs."""
    if move.placement != pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN and move.store - 1 >= len(
        state.stores
    ):
        return "the Supermarket is used only with 4 or more chefs"
    return None


def not_owner_and_queue(state: State, seat: int, move: pb.MenuMastersPlacePawn) -> str | None:
    """MM-I2: no chef owns a store where they queue, nor queues where they own."""
    if move.placement == pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN:
        return None
    store, name = state.stores[move.store - 1], state.chefs[seat].name
    title = store_name(move.store - 1, title=True)
    if move.placement == pb.MENU_MASTERS_PLACEMENT_LINE and store.owner == seat:
        return f"{name} owns the {title} and cannot queue there"
    if move.placement == pb.MENU_MASTERS_PLACEMENT_OWN and seat in store.line:
        return f"{name} stands in the {title} line and cannot own it"
    return None


def store_unowned(state: State, seat: int, move: pb.MenuMastersPlacePawn) -> str | None:
    """MM-PLACE-OWN: a store has one owner a round."""
    store = (
        state.stores[move.store - 1] if move.placement == pb.MENU_MASTERS_PLACEMENT_OWN else None
    )
    if store is not None and store.owner is not None:
        title = store_name(move.store - 1, title=True)
        return f"{state.chefs[store.owner].name} already owns the {title}"
    return None


def coin_to_take(state: State, seat: int, move: pb.MenuMastersPlacePawn) -> str | None:
    """MM-PLACE-COIN: one bank coin a chef a round, while the bank has coins."""
    if move.placement != pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN:
        return None
    if state.chefs[seat].coin_waiting:
        return f"{state.chefs[seat].name} already took a coin this round"
    if state.bank == 0:
        return "the bank has no coins left"
    return None


def _turn(state: State) -> Turn:
    assert state.turn is not None  # MM-STEP came first
    return state.turn


def not_bought(state: State, seat: int, move: Any) -> str | None:
    """MM-PURCHASE-ONE: one ingredient a purchase turn."""
    if _turn(state).bought:
        return f"{state.chefs[seat].name} already bought an ingredient this turn"
    return None


def not_sold_out(state: State, seat: int, move: Any) -> str | None:
    """MM-SOLD-OUT: a store with an empty window sells nothing (ruleset 2: the turn stays)."""
    turn = _turn(state)
    if not state.stores[turn.store].window:
        title = store_name(turn.store, title=True)
        return f"the {title} is sold out: {state.chefs[seat].name} may complete Menus, then leave"
    return None


def in_window(state: State, seat: int, move: pb.MenuMastersPurchaseIngredient) -> str | None:
    """MM-PURCHASE-ONE: the card bought lies in the store's window."""
    turn = _turn(state)
    if move.card_id not in state.stores[turn.store].window:
        return f"{move.card_id} is not in the {store_name(turn.store, title=True)} window"
    return None


def can_pay(state: State, seat: int, move: Any) -> str | None:
    """MM-PURCHASE-COST: the cost is the stack size (ruleset 2: the chef still has the turn)."""
    cost, chef = len(state.stores[_turn(state).store].line), state.chefs[seat]
    if chef.coins < cost:
        held = how_many(chef.coins, "coin")
        return (
            f"{chef.name} has {held} and cannot pay {cost}{_not_yet(state, seat)}: "
            "complete Menus, then leave the line"
        )
    return None


def _not_yet(state: State, seat: int) -> str:
    """MM-COINS-NEXT-ROUND: the coins this chef has coming, which are not spendable yet."""
    owned = [
        store_name(i, title=True) for i, s in enumerate(state.stores) if s.owner == seat and s.pot
    ]
    coming = (["the bank coin"] if state.chefs[seat].coin_waiting else []) + [
        f"the coins spent at the {name}" for name in owned
    ]
    if not coming:
        return ""
    return f" ({in_words(coming)} can be spent from the next round)"


def may_leave(state: State, seat: int, move: Any) -> str | None:
    """MM-LEAVE-LINE: a chef leaves the line instead of buying, not after."""
    if _turn(state).bought:
        name = state.chefs[seat].name
        return f"{name} already bought and left the line: finish the turn"
    return None


def may_discard(state: State, seat: int, move: pb.MenuMastersDiscardIngredient) -> str | None:
    """MM-DISCARD: only with a 7th ingredient, a card of the basket."""
    chef = state.chefs[seat]
    if len(chef.basket) <= BASKET:
        return f"{chef.name} may discard only with a 7th ingredient"
    if move.card_id not in chef.basket:
        return f"{move.card_id} is not in {chef.name}'s basket"
    return None


def has_bought(state: State, seat: int, move: Any) -> str | None:
    """MM-I4: FinishPurchaseTurn ends a turn after buying (before it, leave the line)."""
    if not _turn(state).bought:
        return f"{state.chefs[seat].name} has not bought: buy an ingredient or leave the line"
    return None


def basket_fits(state: State, seat: int, move: Any) -> str | None:
    """MM-BASKET-SIZE: a turn does not end with 7 ingredients."""
    if len(state.chefs[seat].basket) > BASKET:
        return f"{state.chefs[seat].name} holds 7 ingredients: complete a Menu or discard"
    return None


# -- effects ------------------------------------------------------------------------------


def place_pawn(state: State, seat: int, move: pb.MenuMastersPlacePawn) -> Result:
    """Step 1: put one Chef Cap in a line, on a store to own it, or on a bank coin."""
    if move.placement == pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN:
        state = evolve(with_chef(state, seat, coin_waiting=True), bank=state.bank - 1)
        fact: Fact = {"type": "pawn_placed", "seat": seat, "placement": "collect_coin"}
        fact["bank"] = state.bank
    elif move.placement == pb.MENU_MASTERS_PLACEMENT_LINE:
        index = move.store - 1
        store = state.stores[index]
        state = with_store(state, index, line=(*store.line, seat))
        fact = {"type": "pawn_placed", "seat": seat, "placement": "line"}
        fact |= {"store": store_name(index), "position": len(store.line) + 1}
    else:
        state = with_store(state, move.store - 1, owner=seat)
        fact = {"type": "pawn_placed", "seat": seat, "placement": "own"}
        fact["store"] = store_name(move.store - 1)
    state = with_chef(state, seat, pawns=state.chefs[seat].pawns - 1)
    fact["pawns_left"] = state.chefs[seat].pawns
    return next_placer(state, seat, [fact])


def purchase(state: State, seat: int, move: pb.MenuMastersPurchaseIngredient) -> Result:
    """Buy one card from the window: pay the stack size, basket it, leave the stack."""
    turn, card_id = _turn(state), move.card_id
    store = state.stores[turn.store]
    cost = len(store.line)
    window = tuple(c for c in store.window if c != card_id)
    line = store.line[1:]
    state = with_store(state, turn.store, window=window, line=line, pot=store.pot + cost)
    chef = state.chefs[seat]
    state = with_chef(state, seat, coins=chef.coins - cost, basket=(*chef.basket, card_id))
    coins_to = (
        "owner" if store.owner is not None else ("store_board" if len(state.chefs) == 2 else "bank")
    )
    card = state.pack.card(card_id)
    shows = [f"{name} {stars}" for name, stars in zip(card.ingredients, card.stars, strict=True)]
    facts: list[Fact] = [
        {"type": "purchased", "seat": seat, "store": store_name(turn.store), "card": card_id}
        | {"cost": cost, "paid_to": store.owner, "coins_to": coins_to}
        | {"coins_left": chef.coins - cost, "basket": len(chef.basket) + 1}
        | {"shows": shows}
    ]
    if not window and state.version == 1:
        facts.append(sold_out(turn.store, line))
        state = with_store(state, turn.store, line=())
    elif not window:  # ruleset 2: the rest of the line keeps its turns, without buying
        facts.append(sold_out(turn.store, ()) | {"in_line": list(line)})
    if len(chef.basket) + 1 > BASKET:
        facts.append({"type": "basket_full", "seat": seat, "basket": len(chef.basket) + 1})
    return evolve(state, turn=evolve(turn, bought=True)), facts


def leave_line(state: State, seat: int, move: pb.MenuMastersLeaveLine) -> Result:
    """Take the Chef Cap out of the line without buying; the turn ends."""
    turn = _turn(state)
    store = state.stores[turn.store]
    state = with_store(state, turn.store, line=store.line[1:])
    fact = {"type": "left_line", "seat": seat, "store": store_name(turn.store), "reason": "chose"}
    return advance(evolve(state, turn=None), [fact])


def complete_menus(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> Result:
    """Complete Menus in order from the basket; community Menus are replaced at once."""
    turn = _turn(state)
    facts: list[Fact] = []
    for completion in move.menus:
        state = _complete_one(state, seat, completion, facts)
    why = "" if turn.bought else blocked(state, turn.store, seat)
    if why and nothing_to_do(state, seat):  # ruleset 2 only: ruleset 1 has no such turn
        state, fact = leave(evolve(state, turn=None), turn.store, why)
        return advance(state, [*facts, fact])
    return state, facts


def _complete_one(
    state: State, seat: int, completion: pb.MenuMastersMenuCompletion, facts: list[Fact]
) -> State:
    """One Menu completed (its checks passed); a community Menu is replaced at once."""
    chef, menu = state.chefs[seat], state.pack.menu(completion.menu_id)
    source = "secret" if menu.id in chef.menus else "community"
    uses = tuple(use_of(state.pack, f) for f in completion.fulfilments)
    used = {c for u in uses for c in u.cards}
    done = Completed(menu.id, source, uses, sum(u.stars for u in uses))
    basket = tuple(c for c in chef.basket if c not in used)
    menus = tuple(m for m in chef.menus if m != menu.id)
    state = with_chef(state, seat, basket=basket, menus=menus, completed=(*chef.completed, done))
    facts.append(
        {"type": "menu_completed", "seat": seat, "menu": menu.id, "name": menu.name}
        | {"source": source, "uses": [use_plain(u) for u in uses], "stars": done.stars}
        | {"completed": len(chef.completed) + 1}
    )
    if source == "community":
        row = [m for m in state.community if m != menu.id]
        if state.menu_deck:
            new = state.pack.menu(state.menu_deck[0])
            row.insert(state.community.index(menu.id), new.id)
            facts.append(
                {"type": "community_menu_revealed", "menu": new.id, "name": new.name}
                | {"ingredients": list(new.ingredients), "replacing": menu.id}
            )
        state = evolve(state, community=tuple(row), menu_deck=state.menu_deck[1:])
    if len(chef.completed) + 1 == MENUS_TO_END and state.third_menu_by is None:
        state = evolve(state, third_menu_by=seat)
        facts.append({"type": "last_round", "seat": seat, "round": state.round})
    return state


def discard(state: State, seat: int, move: pb.MenuMastersDiscardIngredient) -> Result:
    """With a 7th card: discard one, shuffled back into its store deck; the turn ends."""
    chef, card_id = state.chefs[seat], move.card_id
    state = with_chef(state, seat, basket=tuple(c for c in chef.basket if c != card_id))
    deck = state.pack.card(card_id).deck
    index = deck_index(deck)
    shuffled, rng = state.rng.shuffle(DECK_LABELS[index], (*state.stores[index].deck, card_id))
    state = evolve(with_store(state, index, deck=shuffled), rng=rng)
    fact = {"type": "discarded", "seat": seat, "card": card_id, "deck": deck}
    return advance(evolve(state, turn=None), [fact])


def finish_turn(state: State, seat: int, move: pb.MenuMastersFinishPurchaseTurn) -> Result:
    """End the purchase turn after buying."""
    return advance(evolve(state, turn=None), [{"type": "turn_finished", "seat": seat}])


MOVES = {
    "place_pawn": Move(
        read_placement,
        (
            ("MM-STEP", placing_step),
            ("MM-I1", supermarket_open),
            ("MM-I2", not_owner_and_queue),
            ("MM-PLACE-OWN", store_unowned),
            ("MM-PLACE-COIN", coin_to_take),
        ),
        place_pawn,
    ),
    "purchase": Move(
        read_purchase,
        (
            ("MM-STEP", purchase_step),
            ("MM-PURCHASE-ONE", not_bought),
            ("MM-SOLD-OUT", not_sold_out),
            ("MM-PURCHASE-ONE", in_window),
            ("MM-PURCHASE-COST", can_pay),
        ),
        purchase,
    ),
    "leave_line": Move(
        as_is, (("MM-STEP", purchase_step), ("MM-LEAVE-LINE", may_leave)), leave_line
    ),
    "complete_menus": Move(
        menus.read_completions,
        (
            ("MM-STEP", purchase_step),
            ("MM-MENU-SOURCE", menus.menus_in_reach),
            ("MM-I5", menus.cards_show),
            ("MM-POWER-FOOD", menus.power_foods),
            ("MM-MENU-INGREDIENTS", menus.menus_fulfilled),
        ),
        complete_menus,
    ),
    "discard": Move(
        read_discard, (("MM-STEP", purchase_step), ("MM-DISCARD", may_discard)), discard
    ),
    "finish_turn": Move(
        as_is,
        (("MM-STEP", purchase_step), ("MM-I4", has_bought), ("MM-BASKET-SIZE", basket_fits)),
        finish_turn,
    ),
}
