"""The moves of Menu Masters and the automatic steps they trigger.

Each handler takes a state already past the common checks (game running, the chef's
turn) and checks its own rules in a fixed order; see ``menu_masters.CHECKS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from feastlog.v1 import menu_masters_pb2 as pb
from replay.engine import Fact, Outcome, RuleViolation
from replay.menu_masters_menus import Completed, check_completion, use_plain
from replay.menu_masters_pack import DECKS
from replay.menu_masters_possible import blocked, menu_still_possible, nothing_to_do
from replay.menu_masters_state import (
    BASKET,
    DECK_LABELS,
    MENUS_TO_END,
    OVER,
    PAWNS,
    PLACE,
    PURCHASE,
    WINDOW,
    State,
    Turn,
    can_place,
    deck_index,
    evolve,
    with_chef,
    with_store,
)
from replay.menu_masters_view import malformed, store_index, store_name

Result = tuple[State, list[Fact]]


def _step(state: State, step: str, message: str) -> None:
    """MM-STEP: the command belongs to another step of the round."""
    if state.step != step:
        raise RuleViolation("MM-STEP", message)


def place_pawn(state: State, seat: int, move: pb.MenuMastersPlacePawn) -> Result:
    """Step 1: put one Chef Cap in a line, on a store to own it, or on a bank coin."""
    if (
        move.placement not in pb.MenuMastersPlacement.values()
        or move.placement == pb.MENU_MASTERS_PLACEMENT_UNSPECIFIED
    ):
        raise malformed("place_pawn.placement", "choose line, own or collect_coin")
    coin = move.placement == pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN
    if coin and move.store != pb.MENU_MASTERS_STORE_UNSPECIFIED:
        raise malformed("place_pawn.store", "collecting a coin takes no store")
    index = -1 if coin else store_index(move.store, "place_pawn.store")
    name = state.chefs[seat].name
    _step(state, PLACE, f"the pawns are placed; it is {name}'s purchase turn")
    if coin:
        if state.chefs[seat].coin_waiting:
            raise RuleViolation("MM-PLACE-COIN", f"{name} already took a coin this round")
        if state.bank == 0:
            raise RuleViolation("MM-PLACE-COIN", "the bank has no coins left")
        state = evolve(with_chef(state, seat, coin_waiting=True), bank=state.bank - 1)
        fact: Fact = {"type": "pawn_placed", "seat": seat, "placement": "collect_coin"}
        fact["bank"] = state.bank
    else:
        if index >= len(state.stores):
            raise RuleViolation("MM-I1", "the Supermarket is used only with 4 or more chefs")
        store = state.stores[index]
        title = store_name(index, title=True)
        if move.placement == pb.MENU_MASTERS_PLACEMENT_LINE:
            if store.owner == seat:
                raise RuleViolation("MM-I2", f"{name} owns the {title} and cannot queue there")
            state = with_store(state, index, line=(*store.line, seat))
            fact = {"type": "pawn_placed", "seat": seat, "placement": "line"}
            fact |= {"store": store_name(index), "position": len(store.line) + 1}
        else:
            if seat in store.line:
                raise RuleViolation("MM-I2", f"{name} stands in the {title} line and cannot own it")
            if store.owner is not None:
                owner = state.chefs[store.owner].name
                raise RuleViolation("MM-PLACE-OWN", f"{owner} already owns the {title}")
            state = with_store(state, index, owner=seat)
            fact = {"type": "pawn_placed", "seat": seat, "placement": "own"}
            fact["store"] = store_name(index)
    state = with_chef(state, seat, pawns=state.chefs[seat].pawns - 1)
    fact["pawns_left"] = state.chefs[seat].pawns
    return _next_placer(state, seat, [fact])


def _next_placer(state: State, last: int, facts: list[Fact]) -> Result:
    """MM-PLACE-ORDER: the next chef clockwise with pawns left; none left: Step 2."""
    n = len(state.chefs)
    seat = last
    while any(c.pawns for c in state.chefs):
        seat = (seat + 1) % n
        if not state.chefs[seat].pawns:
            continue
        if can_place(state, seat):
            return evolve(state, placing=seat), facts
        left = state.chefs[seat].pawns
        facts.append({"type": "pawns_unplaced", "seat": seat, "count": left})
        state = with_chef(state, seat, pawns=0)
    state = evolve(state, placing=None, step=PURCHASE)
    lines = {store_name(i): list(s.line) for i, s in enumerate(state.stores)}
    owners = {store_name(i): s.owner for i, s in enumerate(state.stores)}
    facts.append({"type": "purchase_started", "lines": lines, "owners": owners})
    return _advance(state, facts)


def _advance(state: State, facts: list[Fact]) -> Result:
    """MM-PURCHASE-ORDER, MM-I3: start the next purchase turn, or clean up.

    Ruleset 1 removes a chef who cannot buy without a turn.  From ruleset 2 that chef has
    the turn (to complete Menus, then leave), which passes by itself when nothing is
    possible in it (judged from public information, see ``menu_masters_possible``).
    """
    while state.turn is None:
        index = next((i for i, s in enumerate(state.stores) if s.line), None)
        if index is None:
            return _clean_up(state, facts)
        store = state.stores[index]
        top, cost = store.line[0], len(store.line)
        why = blocked(state, index, top)
        if why == "sold_out" and state.version == 1:
            facts.append(_sold_out(index, store.line))
            state = with_store(state, index, line=())
        elif why and (state.version == 1 or nothing_to_do(state, top)):
            state, fact = _leave(state, index, why)
            facts.append(fact)
        else:
            state = evolve(state, turn=Turn(top, index, False))
            fact = {"type": "turn_started", "seat": top, "store": store_name(index), "cost": cost}
            facts.append(fact | ({"cannot_buy": why} if why else {}))
    return state, facts


def _leave(state: State, index: int, why: str) -> tuple[State, Fact]:
    """The chef at the top of a line who cannot buy leaves it without a turn to play."""
    store = state.stores[index]
    top, cost = store.line[0], len(store.line)
    state = with_store(state, index, line=store.line[1:])
    fact: Fact = {"type": "left_line", "seat": top, "store": store_name(index), "reason": why}
    if why == "cannot_pay":
        fact |= {"cost": cost, "coins": state.chefs[top].coins}
    if state.version > 1:
        fact["nothing_to_do"] = True
    return state, fact


def _sold_out(index: int, line: tuple[int, ...]) -> Fact:
    """MM-SOLD-OUT: the store is empty and these chefs leave its line."""
    return {"type": "sold_out", "store": store_name(index), "left": list(line)}


def _turn(state: State, seat: int) -> Turn:
    """The running purchase turn (MM-STEP when the pawns are still being placed)."""
    name = state.chefs[seat].name
    _step(state, PURCHASE, f"it is Step 1: {name} must place a pawn")
    if state.turn is None:  # not reached: to_act gives no seat the turn then
        raise RuleViolation("MM-STEP", "no purchase turn is running")
    return state.turn


def purchase(state: State, seat: int, move: pb.MenuMastersPurchaseIngredient) -> Result:
    """Buy one card from the window: pay the stack size, basket it, leave the stack."""
    card_id = views_card(state, move.card_id, "purchase.card_id")
    turn = _turn(state, seat)
    store, name = state.stores[turn.store], state.chefs[seat].name
    title = store_name(turn.store, title=True)
    if turn.bought:
        raise RuleViolation("MM-PURCHASE-ONE", f"{name} already bought an ingredient this turn")
    if not store.window:  # ruleset 2: the rest of the line still has its turns
        raise RuleViolation(
            "MM-SOLD-OUT", f"the {title} is sold out: {name} may complete Menus, then leave"
        )
    if card_id not in store.window:
        raise RuleViolation("MM-PURCHASE-ONE", f"{card_id} is not in the {title} window")
    cost = len(store.line)
    if state.chefs[seat].coins < cost:  # ruleset 2: the chef still has the turn
        raise RuleViolation(
            "MM-PURCHASE-COST",
            f"{name} has {state.chefs[seat].coins} coins and cannot pay {cost}: "
            "complete Menus, then leave the line",
        )
    window = tuple(c for c in store.window if c != card_id)
    line = store.line[1:]
    state = with_store(state, turn.store, window=window, line=line, pot=store.pot + cost)
    chef = state.chefs[seat]
    state = with_chef(state, seat, coins=chef.coins - cost, basket=(*chef.basket, card_id))
    coins_to = (
        "owner" if store.owner is not None else ("store_board" if len(state.chefs) == 2 else "bank")
    )
    facts: list[Fact] = [
        {"type": "purchased", "seat": seat, "store": store_name(turn.store), "card": card_id}
        | {"cost": cost, "paid_to": store.owner, "coins_to": coins_to}
        | {"coins_left": chef.coins - cost, "basket": len(chef.basket) + 1}
        | {"shows": _shows(state, card_id)}
    ]
    if not window and state.version == 1:
        facts.append(_sold_out(turn.store, line))
        state = with_store(state, turn.store, line=())
    elif not window:  # ruleset 2: the rest of the line keeps its turns, without buying
        facts.append(_sold_out(turn.store, ()) | {"in_line": list(line)})
    if len(chef.basket) + 1 > BASKET:
        facts.append({"type": "basket_full", "seat": seat, "basket": len(chef.basket) + 1})
    return evolve(state, turn=evolve(turn, bought=True)), facts


def _shows(state: State, card_id: str) -> list[str]:
    """What a card shows, e.g. ["broccoli 2"] or ["broccoli 1", "tomato 2"]."""
    card = state.pack.card(card_id)
    return [f"{name} {stars}" for name, stars in zip(card.ingredients, card.stars, strict=True)]


def leave_line(state: State, seat: int, move: pb.MenuMastersLeaveLine) -> Result:
    """Take the Chef Cap out of the line without buying; the turn ends."""
    turn = _turn(state, seat)
    if turn.bought:
        name = state.chefs[seat].name
        raise RuleViolation(
            "MM-LEAVE-LINE", f"{name} already bought and left the line: finish the turn"
        )
    store = state.stores[turn.store]
    state = with_store(state, turn.store, line=store.line[1:])
    fact = {"type": "left_line", "seat": seat, "store": store_name(turn.store), "reason": "chose"}
    return _advance(evolve(state, turn=None), [fact])


def complete_menus(state: State, seat: int, move: pb.MenuMastersCompleteMenus) -> Result:
    """Complete Menus in order from the basket; community Menus are replaced at once."""
    if not move.menus:
        raise malformed("complete_menus.menus", "name at least one Menu")
    for k, completion in enumerate(move.menus):
        views_menu(state, completion.menu_id, f"complete_menus.menus[{k}].menu_id")
    turn = _turn(state, seat)
    facts: list[Fact] = []
    for completion in move.menus:
        state = _complete_one(state, seat, completion, facts)
    why = "" if turn.bought else blocked(state, turn.store, seat)
    if why and nothing_to_do(state, seat):  # ruleset 2 only: ruleset 1 has no such turn
        state, fact = _leave(evolve(state, turn=None), turn.store, why)
        return _advance(state, [*facts, fact])
    return state, facts


def _complete_one(
    state: State, seat: int, completion: pb.MenuMastersMenuCompletion, facts: list[Fact]
) -> State:
    """One Menu: MM-MENU-SOURCE, then its fulfilments; then replace a community Menu."""
    chef, menu = state.chefs[seat], state.pack.menu(completion.menu_id)
    if menu.id in chef.menus:
        source = "secret"
    elif menu.id in state.community:
        source = "community"
    else:
        raise RuleViolation(
            "MM-MENU-SOURCE",
            f"{menu.name} is neither {chef.name}'s secret Menu nor a community Menu",
        )
    uses = check_completion(state.pack, chef.basket, menu, completion, chef.name)
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
            row.insert(state.community.index(menu.id), state.menu_deck[0])
            facts.append(
                {
                    "type": "community_menu_revealed",
                    "menu": state.menu_deck[0],
                    "name": state.pack.menu(state.menu_deck[0]).name,
                    "ingredients": list(state.pack.menu(state.menu_deck[0]).ingredients),
                    "replacing": menu.id,
                }
            )
        state = evolve(state, community=tuple(row), menu_deck=state.menu_deck[1:])
    if len(chef.completed) + 1 == MENUS_TO_END and state.third_menu_by is None:
        state = evolve(state, third_menu_by=seat)
        facts.append({"type": "last_round", "seat": seat, "round": state.round})
    return state


def discard(state: State, seat: int, move: pb.MenuMastersDiscardIngredient) -> Result:
    """With a 7th card: discard one, shuffled back into its store deck; the turn ends."""
    card_id = views_card(state, move.card_id, "discard.card_id")
    _turn(state, seat)
    chef = state.chefs[seat]
    if len(chef.basket) <= BASKET:
        raise RuleViolation("MM-DISCARD", f"{chef.name} may discard only with a 7th ingredient")
    if card_id not in chef.basket:
        raise RuleViolation("MM-DISCARD", f"{card_id} is not in {chef.name}'s basket")
    state = with_chef(state, seat, basket=tuple(c for c in chef.basket if c != card_id))
    deck = state.pack.card(card_id).deck
    index = deck_index(deck)
    shuffled, rng = state.rng.shuffle(DECK_LABELS[index], (*state.stores[index].deck, card_id))
    state = evolve(with_store(state, index, deck=shuffled), rng=rng)
    fact = {"type": "discarded", "seat": seat, "card": card_id, "deck": deck}
    return _advance(evolve(state, turn=None), [fact])


def finish_turn(state: State, seat: int, move: pb.MenuMastersFinishPurchaseTurn) -> Result:
    """End the purchase turn after buying."""
    turn = _turn(state, seat)
    chef = state.chefs[seat]
    if not turn.bought:
        raise RuleViolation(
            "MM-I4", f"{chef.name} has not bought: buy an ingredient or leave the line"
        )
    if len(chef.basket) > BASKET:
        raise RuleViolation(
            "MM-BASKET-SIZE", f"{chef.name} holds 7 ingredients: complete a Menu or discard"
        )
    return _advance(evolve(state, turn=None), [{"type": "turn_finished", "seat": seat}])


def _clean_up(state: State, facts: list[Fact]) -> Result:
    """Step 3: owners and coin collectors collect, restock, pass the token; maybe end."""
    n = len(state.chefs)
    facts.append({"type": "clean_up", "round": state.round})
    for index, store in enumerate(state.stores):
        name = store_name(index)
        if store.owner is not None:
            chef = state.chefs[store.owner]
            state = with_chef(state, store.owner, coins=chef.coins + store.pot)
            facts.append(
                {"type": "owner_collected", "seat": store.owner, "store": name, "coins": store.pot}
            )
        elif store.pot and n == 2:
            facts.append({"type": "coins_stay", "store": name, "coins": store.pot})
            continue
        elif store.pot:
            state = evolve(state, bank=state.bank + store.pot)
            facts.append({"type": "coins_to_bank", "store": name, "coins": store.pot})
        state = with_store(state, index, pot=0, owner=None)
    for seat, chef in enumerate(state.chefs):
        if chef.coin_waiting:
            state = with_chef(state, seat, coins=chef.coins + 1, coin_waiting=False)
            facts.append({"type": "bank_coin_collected", "seat": seat})
    state = _restock(state, facts)
    first = (state.first_chef + 1) % n
    state = evolve(state, first_chef=first)
    facts.append({"type": "first_chef_passed", "seat": first})
    facts.append(
        {"type": "coins", "round": state.round, "coins": [c.coins for c in state.chefs]}
        | {
            "bank": state.bank,
            "store_boards": {store_name(i): s.pot for i, s in enumerate(state.stores)},
        }
    )
    end = _end_reason(state)
    if end:
        return _game_over(evolve(state, end=end), facts)
    chefs = tuple(evolve(c, pawns=PAWNS) for c in state.chefs)
    state = evolve(state, round=state.round + 1, step=PLACE, placing=first, chefs=chefs)
    facts.append({"type": "round_started", "round": state.round, "first_chef": first})
    return state, facts


def _restock(state: State, facts: list[Fact]) -> State:
    """MM-CLEANUP-RESTOCK, MM-I9: windows back to 3 from their decks; Supermarket 1 each."""
    for index in range(len(DECKS)):
        store = state.stores[index]
        drawn = store.deck[: WINDOW - len(store.window)]
        if drawn:
            state = with_store(
                state, index, window=(*store.window, *drawn), deck=store.deck[len(drawn) :]
            )
            facts.append({"type": "restocked", "store": store_name(index), "cards": list(drawn)})
    if len(state.stores) > len(DECKS):
        market = len(DECKS)
        have = {state.pack.card(c).deck for c in state.stores[market].window}
        added: list[str] = []
        for index, deck in enumerate(DECKS):
            source = state.stores[index].deck
            if deck not in have and source:
                added.append(source[0])
                state = with_store(state, index, deck=source[1:])
        if added:
            window = (*state.stores[market].window, *added)
            state = with_store(state, market, window=window)
            facts.append({"type": "restocked", "store": store_name(market), "cards": added})
    return state


def _end_reason(state: State) -> str:
    """MM-I6, MM-I7: why the game ends after this clean-up, or "" to play on."""
    if state.third_menu_by is not None:
        return "third_menu"
    if state.version > 1:
        if not menu_still_possible(state):
            return "no_menu_possible"
        return "round_limit" if state.round_limit and state.round >= state.round_limit else ""
    if not (state.menu_deck or state.community or any(c.menus for c in state.chefs)):
        return "no_menus_left"
    if not any(s.window or s.deck for s in state.stores):
        return "no_ingredients_left"
    if state.round >= state.round_limit:
        return "round_limit"
    return ""


def outcome(state: State) -> Outcome:
    """MM-SCORE, MM-TIE: stars per chef, winners by stars then coins, ties share."""
    points = tuple(c.stars() for c in state.chefs)
    coins = tuple(c.coins for c in state.chefs)
    best = max(zip(points, coins, strict=True))
    winners = tuple(s for s in range(len(points)) if (points[s], coins[s]) == best)
    return Outcome(points, winners, coins)


def _game_over(state: State, facts: list[Fact]) -> Result:
    """The end: score, and a game_over fact with the whole scoring table."""
    result = outcome(state)
    table = [
        {"seat": s, "stars": c.stars(), "coins": c.coins}
        | {"menus": [{"menu": d.menu, "stars": d.stars} for d in c.completed]}
        for s, c in enumerate(state.chefs)
    ]
    facts.append(
        {"type": "game_over", "reason": state.end, "points": list(result.points)}
        | {"winners": list(result.winners), "coins": list(result.tiebreak), "table": table}
    )
    return evolve(state, step=OVER, placing=None, turn=None), facts


def views_card(state: State, card_id: str, field: str) -> str:
    """``card_id`` when it names an ingredient card of the pack, else MalformedCommand."""
    try:
        return state.pack.card(card_id).id
    except KeyError:
        raise malformed(field, f"no ingredient card {card_id!r}") from None


def views_menu(state: State, menu_id: str, field: str) -> str:
    """``menu_id`` when it names a Menu card of the pack, else MalformedCommand."""
    try:
        return state.pack.menu(menu_id).id
    except KeyError:
        raise malformed(field, f"no Menu card {menu_id!r}") from None


HANDLERS: Mapping[str, Callable[[State, int, Any], Result]] = {
    "place_pawn": place_pawn,
    "purchase": purchase,
    "leave_line": leave_line,
    "complete_menus": complete_menus,
    "discard": discard,
    "finish_turn": finish_turn,
}
