"""Menu Masters: the table as each viewer may see it, the legal commands, narration by fact.

Everything is played in the open but the secret Menus (their owner sees them; the others
see how many) and the order of the decks (the arbiter sees it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any

from google.protobuf.message import Message

from feastlog.replay.games.engine import LEGAL_CAP, Fact, Viewer, how_many, in_words
from feastlog.replay.games.menu_masters.menus import all_completions, blocked, completion_message
from feastlog.replay.games.menu_masters.moves import to_act
from feastlog.replay.games.menu_masters.spec import BASKET, KIND, STORE_TITLES, STORES
from feastlog.replay.games.menu_masters.state import OVER, PLACE, State, Use, store_name
from feastlog.v1 import menu_masters_pb2 as pb


def command_public(command: Message) -> bool:
    """Every Menu Masters command is played in the open."""
    return True


def legal_commands(state: State, seat: int) -> list[pb.MenuMastersCommand]:
    """Every legal command of the chef to act, sorted; Menus: every set completable
    together, every way.

    Enumeration stops after ``LEGAL_CAP + 1`` commands (the caller reports a partial list).
    """
    out: list[pb.MenuMastersCommand] = []
    chef = state.chefs[seat]
    if state.step == PLACE:
        for index, store in enumerate(state.stores):
            if store.owner != seat:
                out.append(_place(index + 1, pb.MENU_MASTERS_PLACEMENT_LINE))
            if store.owner is None and seat not in store.line:
                out.append(_place(index + 1, pb.MENU_MASTERS_PLACEMENT_OWN))
        if not chef.coin_waiting and state.bank > 0:
            out.append(
                _place(pb.MENU_MASTERS_STORE_UNSPECIFIED, pb.MENU_MASTERS_PLACEMENT_COLLECT_COIN)
            )
    elif state.turn is not None:
        turn, store = state.turn, state.stores[state.turn.store]
        if len(chef.basket) > BASKET:
            for card_id in sorted(set(chef.basket)):
                out.append(
                    pb.MenuMastersCommand(discard=pb.MenuMastersDiscardIngredient(card_id=card_id))
                )
        elif turn.bought:
            out.append(pb.MenuMastersCommand(finish_turn=pb.MenuMastersFinishPurchaseTurn()))
        else:
            if chef.coins >= len(store.line):  # ruleset 2 gives a turn to a chef who cannot pay
                for card_id in store.window:
                    buy = pb.MenuMastersPurchaseIngredient(card_id=card_id)
                    out.append(pb.MenuMastersCommand(purchase=buy))
            out.append(pb.MenuMastersCommand(leave_line=pb.MenuMastersLeaveLine()))
        out += _completions(state, seat, LEGAL_CAP + 1 - len(out))
    return sorted(out, key=lambda c: c.SerializeToString(deterministic=True))


def _completions(state: State, seat: int, room: int) -> list[pb.MenuMastersCommand]:
    """CompleteMenus commands: each set of Menus the chef can see, with disjoint cards.

    Sets are taken smallest first, Menus in the order secret hand then community row, and
    each Menu in every way ``all_completions`` gives; at most ``room`` commands.
    """
    chef, pack = state.chefs[seat], state.pack
    ways = {m: list(all_completions(pack, chef.basket, pack.menu(m))) for m in chef.menus}
    ways |= {m: list(all_completions(pack, chef.basket, pack.menu(m))) for m in state.community}
    open_menus = [m for m, found in ways.items() if found]
    out: list[pb.MenuMastersCommand] = []
    for size in range(1, len(open_menus) + 1):
        for group in combinations(open_menus, size):
            for chosen in _disjoint(group, ways, frozenset()):
                menus = [completion_message(m, uses) for m, uses in zip(group, chosen, strict=True)]
                out.append(
                    pb.MenuMastersCommand(complete_menus=pb.MenuMastersCompleteMenus(menus=menus))
                )
                if len(out) >= room:
                    return out
    return out


def _disjoint(
    group: Sequence[str], ways: dict[str, list[tuple[Use, ...]]], used: frozenset[str]
) -> Iterator[tuple[tuple[Use, ...], ...]]:
    """One way per Menu of ``group``, no basket card used twice across them."""
    if not group:
        yield ()
        return
    for uses in ways[group[0]]:
        cards = {c for u in uses for c in u.cards}
        if cards & used:
            continue
        for rest in _disjoint(group[1:], ways, used | cards):
            yield (uses, *rest)


def _place(store: int, placement: int) -> pb.MenuMastersCommand:
    """A PlacePawn command."""
    move = pb.MenuMastersPlacePawn(store=store, placement=placement)  # type: ignore[arg-type]
    return pb.MenuMastersCommand(place_pawn=move)


def _card(state: State, card_id: str) -> dict[str, Any]:
    """An ingredient card as shown face up."""
    card = state.pack.card(card_id)
    return {
        "id": card.id,
        "deck": card.deck,
        "ingredients": list(card.ingredients),
        "stars": list(card.stars),
    }


def _menu(state: State, menu_id: str) -> dict[str, Any]:
    """A Menu card as shown face up."""
    menu = state.pack.menu(menu_id)
    return {"id": menu.id, "name": menu.name, "ingredients": list(menu.ingredients)}


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """The table as ``viewer`` may see it."""
    over = state.step == OVER
    everything = viewer.role == "arbiter"  # the whole table once public: the policy's
    stores = []
    for index, store in enumerate(state.stores):
        shown: dict[str, Any] = {"store": store_name(index), "title": store_name(index, True)}
        shown |= {"window": [_card(state, c) for c in store.window], "line": list(store.line)}
        shown |= {"owner": store.owner, "coins_on_board": store.pot, "deck_count": len(store.deck)}
        if everything:
            shown["deck"] = list(store.deck)
        stores.append(shown)
    chefs = []
    for seat, chef in enumerate(state.chefs):
        shown = {"seat": seat, "name": chef.name, "coins": chef.coins, "pawns_left": chef.pawns}
        shown |= {
            "coin_waiting": chef.coin_waiting,
            "basket": [_card(state, c) for c in chef.basket],
        }
        shown["menu_count"] = len(chef.menus)
        if everything or viewer.sees_seat(seat):
            shown["menus"] = [_menu(state, m) for m in chef.menus]
        shown["completed"] = [
            {"menu": _menu(state, d.menu), "source": d.source, "stars": d.stars}
            | {
                "uses": [
                    {"ingredient": u.ingredient, "cards": list(u.cards), "stars": u.stars}
                    for u in d.uses
                ]
            }
            for d in chef.completed
        ]
        shown["stars"] = chef.stars()
        chefs.append(shown)
    out: dict[str, Any] = {
        "kind": KIND,
        "round": state.round,
        "phase": state.step,
        "over": over,
        "to_act": sorted(to_act(state)),
        "first_chef": state.first_chef,
        "stores": stores,
        "chefs": chefs,
        "bank": state.bank,
        "box": state.box,
        "community": [_menu(state, m) for m in state.community],
        "menu_deck_count": len(state.menu_deck),
        "turn": None,
        "last_round": state.third_menu_by is not None,
    }
    if state.turn is not None:
        cost = len(state.stores[state.turn.store].line)
        out["turn"] = {"seat": state.turn.seat, "store": store_name(state.turn.store)}
        out["turn"] |= {"bought": state.turn.bought, "cost": None if state.turn.bought else cost}
        if not state.turn.bought:
            out["turn"]["cannot_buy"] = blocked(state, state.turn.store, state.turn.seat) or None
    if everything:
        out["menu_deck"] = list(state.menu_deck)
    if over:
        out["end"] = state.end
        out["scores"] = [c.stars() for c in state.chefs]
        best = max((c.stars(), c.coins) for c in state.chefs)
        out["winners"] = [s for s, c in enumerate(state.chefs) if (c.stars(), c.coins) == best]
    return out


def _title(store: str) -> str:
    """``produce-stand`` as ``Produce Stand``."""
    return STORE_TITLES[STORES.index(store)]


def _who(names: Sequence[str], seats: Sequence[int]) -> str:
    """Seat names joined in plain English."""
    return in_words([names[s] for s in seats])


_END_WORDS = {
    "third_menu": "a chef completed a third Menu",
    "no_menu_possible": "no Menu can be completed any more with the cards left",
    "stalled": "a whole round passed with every store empty and no Menu completed",
    "no_menus_left": "no Menu left",
    "no_ingredients_left": "no ingredient left",
    "round_limit": "the round limit",
}


def _verb(seats: Sequence[int], verb: str) -> str:
    """``leaves`` for one chef, ``leave`` for several."""
    return f"{verb}s" if len(seats) == 1 else verb


def _coins(count: int) -> str:
    """``1 coin``, ``3 coins``."""
    return how_many(count, "coin")


def narrate(fact: Fact, names: Sequence[str]) -> str | None:
    """One line of plain English for a fact (None for private or minor facts)."""
    kind = fact["type"]
    who = names[fact["seat"]] if isinstance(fact.get("seat"), int) else ""
    store = _title(fact["store"]) if "store" in fact else ""
    if kind == "setup":
        first = names[fact["first_chef"]]
        return f"{fact['chefs']} chefs sit down; {first} holds the First Chef token."
    if kind == "menus_dealt":
        return None if "private_to" in fact else f"{who} is dealt {fact['count']} secret Menus."
    if kind == "round_started":
        return f"Round {fact['round']} begins; {names[fact['first_chef']]} places first."
    if kind == "pawn_placed":
        if fact["placement"] == "collect_coin":
            return f"{who} takes a coin from the bank ({fact['bank']} left)."
        if fact["placement"] == "own":
            return f"{who} owns the {store} this round."
        return f"{who} joins the {store} line (position {fact['position']})."
    if kind == "purchase_started":
        return "Every Chef Cap is placed: the stores open, Produce Stand first."
    if kind == "turn_started":
        cannot = fact.get("cannot_buy")
        if cannot == "sold_out":
            return (
                f"{who} is at the top of the {store} line: it is sold out, but Menus may be done."
            )
        if cannot == "cannot_pay":
            return (
                f"{who} is at the top of the {store} line and cannot pay {fact['cost']}, "
                "but may complete Menus before leaving."
            )
        return f"{who} is at the top of the {store} line: ingredients cost {fact['cost']}."
    if kind == "basket_full":
        return f"{who} has 7 ingredients and must complete a Menu or discard one."
    if kind == "restocked":
        return f"The {store} is restocked with {', '.join(fact['cards'])}."
    if kind == "pawns_unplaced":
        caps = (
            "1 Chef Cap and keeps it"
            if fact["count"] == 1
            else f"{fact['count']} Chef Caps and keeps them"
        )
        return f"{who} has nowhere to place {caps} off the board."
    if kind == "purchased":
        where = {
            "owner": f"paid to {names[fact['paid_to']]}" if fact["paid_to"] is not None else ""
        }
        where |= {"store_board": "left on the store board", "bank": "going back to the bank"}
        paid = where[fact["coins_to"]]
        card = f"{fact['card']} ({' / '.join(s + '★' for s in fact['shows'])})"
        return f"{who} buys {card} at the {store} for {_coins(fact['cost'])}, {paid}."
    if kind == "left_line":
        idle = ", with nothing else to do," if fact.get("nothing_to_do") else ""
        reason = {
            "chose": "leaves",
            "cannot_pay": f"cannot pay {fact.get('cost')}{idle} and leaves",
            "sold_out": f"finds it sold out{idle} and leaves",
        }
        return f"{who} {reason[fact['reason']]} the {store} line."
    if kind == "sold_out":
        left, waiting = fact["left"], fact.get("in_line", [])
        if left:
            return f"The {store} is sold out; {_who(names, left)} {_verb(left, 'leave')} the line."
        if waiting:
            return (
                f"The {store} is sold out; {_who(names, waiting)} "
                f"{_verb(waiting, 'stay')} in line but may not buy there."
            )
        return f"The {store} is sold out."
    if kind == "menu_completed":
        used = ", ".join(
            f"{u['ingredient']} with {' + '.join(u['cards'])}"
            + (f" (Power Food of {u['power_food']}" if u["power_food"] else " (")
            + f"{', ' if u['power_food'] else ''}{u['stars']}★)"
            for u in fact["uses"]
        )
        return f"{who} completes {fact['name']} ({fact['source']}): {used}; {fact['stars']} stars."
    if kind == "community_menu_revealed":
        needs = ", ".join(fact.get("ingredients", []))
        name = fact.get("name", fact["menu"])
        return (
            f"A new community Menu is revealed: {name} ({needs})."
            if needs
            else (f"A new community Menu is revealed: {name}.")
        )
    if kind == "last_round":
        return f"{who} has completed 3 Menus: this is the last round."
    if kind == "discarded":
        deck = _title(fact["deck"])
        return f"{who} discards {fact['card']}; it is shuffled back into the {deck} deck."
    if kind == "owner_collected":
        return f"{who} collects {_coins(fact['coins'])} from the {store}."
    if kind == "coins_stay":
        stay = "stays" if fact["coins"] == 1 else "stay"
        return f"{_coins(fact['coins'])} {stay} on the {store} board for its next owner."
    if kind == "coins_to_bank":
        go = "goes" if fact["coins"] == 1 else "go"
        return f"{_coins(fact['coins'])} from the unowned {store} {go} back to the bank."
    if kind == "bank_coin_collected":
        return f"{who} picks up the bank coin."
    if kind == "first_chef_passed":
        return f"The First Chef token passes to {who}."
    if kind == "coins":
        held = ", ".join(f"{names[s]} {c}" for s, c in enumerate(fact["coins"]))
        return f"Coins after round {fact['round']}: {held}; bank {fact['bank']}."
    if kind == "game_over":
        scores = ", ".join(f"{names[s]} {p}" for s, p in enumerate(fact["points"]))
        ended = _END_WORDS.get(fact["reason"], fact["reason"])
        winners = _who(names, fact["winners"])
        verb = "wins" if len(fact["winners"]) == 1 else "share the victory"
        return f"Game over ({ended}): {scores} stars; {winners} {verb}."
    return None
