"""Bon Appetit!: the table as each viewer may see it, the legal bids, narration by fact.

A seat sees its own gems and sealed bid; the others see how many gems each seat holds
(BA-I8) and that a bid is sealed; the arbiter also sees the deck, the bag and the dish set
aside.  Bids are sealed: no command is shown to others before the game ends.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from feastlog.replay.games.bon_appetit.flow import standings
from feastlog.replay.games.bon_appetit.moves import ENUM_OF_GEM, to_act
from feastlog.replay.games.bon_appetit.pack import COLOURS
from feastlog.replay.games.bon_appetit.spec import KIND, ROUNDS
from feastlog.replay.games.bon_appetit.state import (
    Auction,
    State,
    bid_limit,
    dish_card,
    held,
    values_of,
)
from feastlog.replay.games.engine import Fact, Viewer, in_words
from feastlog.v1 import bon_appetit_pb2 as pb


def _phase(state: State) -> str:
    """The phase in words for views."""
    if state.over or state.auction is None:
        return "over"
    return "tie_break" if state.auction.tie_round else "bidding"


def _seat_view(state: State, seat: int, viewer: Viewer) -> dict[str, Any]:
    """One seat as ``viewer`` may see it."""
    player = state.players[seat]
    auction = state.auction
    out: dict[str, Any] = {
        "seat": seat,
        "name": player.name,
        "gem_count": held(state, seat),
        "dishes": [dish_card(d) for d in player.dishes],
        "points": sum(d.points for d in player.dishes),
    }
    if auction is not None:
        sealed = dict(auction.sealed)
        out["bidding"] = seat in auction.bidders
        out["has_bid"] = seat in sealed
        out["on_table"] = list(auction.table[seat])
        if viewer.sees_seat(seat) and seat in sealed:
            out["sealed_bid"] = list(sealed[seat])
    if viewer.sees_seat(seat):
        out["hand"] = list(player.hand)
    return out


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """The table as ``viewer`` may see it; the arbiter also sees deck, bag and set-aside."""
    auction: Auction | None = state.auction
    out: dict[str, Any] = {
        "kind": KIND,
        "round": state.round,
        "rounds": ROUNDS,
        "phase": _phase(state),
        "over": state.over,
        "to_act": sorted(to_act(state)),
        "gem_values": values_of(state.gem_values),
        "menu_row": [dish_card(d) for d in state.menu_row],
        "dish": dish_card(auction.dish) if auction else None,
        "tie_round": auction.tie_round if auction else 0,
        "deck_count": len(state.deck),
        "bag_count": len(state.bag),
        "removed": [d.name for d in state.removed],
        "removed_unseen": len(state.set_aside),
        "first_seat": state.first_seat,
        "last_winner": state.last_winner,
        "options": {
            "gem_ability": state.gem_ability,
            "tie_break_value": state.tie_break_value,
            "max_bid": state.max_bid,
        },
        "seats": [_seat_view(state, s, viewer) for s in range(len(state.players))],
    }
    if viewer.role == "arbiter":
        out["deck"] = [d.name for d in state.deck]
        out["set_aside"] = [d.name for d in state.set_aside]
        out["bag"] = list(state.bag)
    if state.over:
        points, worth, winners = standings(state)
        out["scores"] = list(points)
        out["gem_worth"] = list(worth)
        out["winners"] = list(winners)
    return out


def _command(which: str, gems: Sequence[str]) -> pb.BonAppetitCommand:
    """A command message from colours."""
    enums = [ENUM_OF_GEM[g] for g in gems]
    if which == "bid":
        return pb.BonAppetitCommand(bid=pb.BonAppetitBid(gems=enums))
    return pb.BonAppetitCommand(tie_break_bid=pb.BonAppetitTieBreakBid(gems=enums))


def legal_commands(state: State, seat: int) -> list[pb.BonAppetitCommand]:
    """Every legal bid of a seat to act (all sub-multisets of the hand that fit), sorted."""
    auction = state.auction
    assert auction is not None
    hand = state.players[seat].hand
    which = "tie_break_bid" if auction.tie_round else "bid"
    ranges = [range(hand.count(c) + 1) for c in COLOURS]
    out = []
    for counts in itertools.product(*ranges):
        gems = [c for c, k in zip(COLOURS, counts, strict=True) for _ in range(k)]
        if which == "bid":
            if len(gems) > bid_limit(state):
                continue
            if sum(1 for k in counts if k) > 3:
                continue
        out.append(_command(which, gems))
    return sorted(out, key=lambda m: m.SerializeToString(deterministic=True))


def command_public(command: Message) -> bool:
    """Bids and tie-break bids are sealed: never shown before the game ends."""
    return False


def _names(colours: Sequence[str]) -> str:
    """Gems in words: "2 blue and 1 yellow"."""
    counts = [f"{colours.count(c)} {c}" for c in COLOURS if c in colours]
    if not counts:
        return "no gems"
    return in_words(counts)


def _bid_line(bid: Fact, names: Sequence[str]) -> str:
    """One bid of a reveal in words, with its breakdown."""
    gems = bid["gems"]
    if not gems:
        return f"{names[bid['seat']]} 0 (no gems)"
    parts = [f"{_names(gems)} = {bid['base']}"]
    parts += [f"+{a['bonus']} {a['colour']} ({a['dish']})" for a in bid["gem_abilities"]]
    parts += [f"+{a['bonus']} for {a['for']} ({a['dish']})" for a in bid["dish_abilities"]]
    return f"{names[bid['seat']]} {' '.join(parts)} -> {bid['total']}"


def _values(values: Mapping[str, int]) -> str:
    """The Gem Card in words."""
    return ", ".join(f"{c} {values[c]}" for c in COLOURS)


def narrate(fact: Fact, names: Sequence[str]) -> str | None:
    """One line of plain English for a fact, or None."""
    kind = fact["type"]
    who = names[fact["seat"]] if "seat" in fact and isinstance(fact["seat"], int) else ""
    if kind == "gem_card_set":
        return f"The Gem Card is set: {_values(fact['gem_values'])}."
    if kind == "dishes_prepared":
        return f"One dish is removed unseen; the Menu row shows {', '.join(fact['menu_row'])}."
    if kind == "first_player":
        return f"{who} is the starting player."
    if kind == "round_started":
        dish = fact["dish"]
        return (
            f"Round {fact['round']}: the {dish['name']} ({dish['type']}, {dish['points']} "
            f"points; {dish['ability']}) is up for auction."
        )
    if kind == "bid_sealed":
        extra = " (no gems in hand)" if fact["automatic"] else ""
        return f"{who} seals a bid{extra}."
    if kind == "bids_revealed":
        label = "Tie-break bids" if fact["tie_round"] else "Bids"
        line = f"{label} revealed: " + "; ".join(_bid_line(b, names) for b in fact["bids"]) + "."
        if fact.get("all_zero"):
            line += " No tied player adds a gem." if fact["tie_round"] else " Every bid is 0."
        elif fact["tied"]:
            line += (
                f" Tied at {fact['highest']}: " + ", ".join(names[s] for s in fact["tied"]) + "."
            )
        return line
    if kind == "tie_break_started":
        return (
            f"Tie-break round {fact['tie_round']}: "
            + " and ".join(names[s] for s in fact["seats"])
            + " bid again."
        )
    if kind == "dish_won":
        return f"{who} wins the {fact['dish']['name']}, paying {_names(fact['paid'])}."
    if kind == "dish_removed":
        return f"No one wins the {fact['dish']['name']} ({fact['why']}): it is removed."
    if kind == "gem_values_changed":
        return f"Gem values now: {_values(fact['after'])} (were {_values(fact['before'])})."
    if kind == "drew" and fact["reason"] == "cleanup":
        return f"{who} draws a gem from the bag."
    if kind == "cleanup" and fact["missed"]:
        return "The bag is empty: " + ", ".join(names[s] for s in fact["missed"]) + " draw nothing."
    if kind == "game_over":
        scores = ", ".join(f"{names[s]} {p}" for s, p in enumerate(fact["points"]))
        won = " and ".join(names[s] for s in fact["winners"])
        how = {"points": "", "gems": " on the gems left", "shared": " (shared victory)"}
        return (
            f"Game over: {scores}. {won} win{'s' if len(fact['winners']) == 1 else ''}"
            f"{how[fact['decided_by']]}."
        )
    return None
