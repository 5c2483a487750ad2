"""Picky Eaters: what each viewer may see, and one line of plain English per fact.

Hands are seen by their owner only (others see counts); the Market, Recipes in play with
their Items, Fancy Silverware, revealed Guests and the discard pile are public; the order
of the Food and Guest decks is seen by the arbiter only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.engine import Fact, Viewer
from replay.picky_eaters_checks import to_act
from replay.picky_eaters_rules import OVER, State, game_over_fact, score_table


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """The state as ``viewer`` may see it."""
    pack = state.pack
    # points so far: public, as Recipes in play, their Items and revealed Guests are
    points = [int(row["points"]) for row in score_table(state)]
    players = []
    for seat, player in enumerate(state.players):
        players.append(
            {
                "seat": seat,
                "name": player.name,
                "hand": list(player.hand) if viewer.sees_seat(seat) else None,
                "hand_size": len(player.hand),
                "passed": player.passed,
                "recipes": [
                    {"recipe": r.card, "name": pack.name_of(r.card), "items": list(r.items)}
                    for r in player.recipes
                ],
                "silverware": list(player.silverware),
                "slots_used": player.slots_used,
                "points": points[seat],
            }
        )
    out: dict[str, Any] = {
        "kind": "picky-eaters",
        "pack": pack.id,
        "round": state.round,
        "phase": state.phase,
        "over": state.phase == OVER,
        "to_act": sorted(to_act(state)),
        "turn": state.turn if state.phase != OVER else None,
        "first_player": state.first_player,
        "guests": [
            {
                "guest": g.card,
                "name": g.name,
                "role": g.role,
                "favorite": list(g.favorite),
                "like": list(g.like),
                "dislike": list(g.dislike),
                "restriction": list(g.restriction),
            }
            for g in (pack.guest_of[c] for c in state.guests)
        ],
        "market": list(state.market),
        "discard": list(state.discard),
        "food_deck_size": len(state.food_deck),
        "guest_deck_size": len(state.guest_deck),
        "players": players,
    }
    if viewer.role == "arbiter":
        out["food_deck"] = list(state.food_deck)
        out["guest_deck"] = list(state.guest_deck)
    if state.phase == OVER:
        fact = game_over_fact(state)
        out["scores"] = fact["points"]
        out["winners"] = fact["winners"]
        out["table"] = fact["table"]
    return out


def _names(cards: Sequence[str]) -> str:
    return ", ".join(cards) if cards else "nothing"


def narrate(fact: Fact, names: Sequence[str]) -> str | None:
    """One line of plain English for a fact, or None when not worth a line."""
    kind = fact["type"]
    who = names[fact["seat"]] if "seat" in fact and fact["seat"] is not None else ""
    if kind == "game_started":
        return f"Picky Eaters begins; {names[fact['first_seat']]} has the first player card."
    if kind == "round_started":
        return f"Round {fact['round']} begins with {names[fact['first_player']]}."
    if kind == "guest_revealed":
        return (
            f"Guest {fact['name']} ({fact['role']}) arrives: loves "
            f"{_names(fact['favorite'])}; likes {_names(fact['like'])}; dislikes "
            f"{_names(fact['dislike'])}; cannot eat {_names(fact['restriction'])}."
        )
    if kind == "market_filled":
        return f"The Market holds {_names(fact['names'])}."
    if kind == "dealt":
        return f"{who} is dealt {fact['count']} cards ({fact['hand_size']} in hand)."
    if kind == "cards_dealt":
        return f"{who} receives {_names(fact['cards'])}."
    if kind == "deck_reshuffled":
        return f"The discard pile is shuffled into a new Food deck of {fact['cards']} cards."
    if kind == "discarded_down":
        return f"{who} discards down to 10: {_names(fact['cards'])}."
    if kind == "took_from_market":
        extra = f"; must discard {fact['must_discard']}" if "must_discard" in fact else ""
        return f"{who} takes {fact['card_name']} from the Market{extra}."
    if kind == "recipe_prepared":
        return _prepared(fact, who)
    if kind == "item_played":
        if fact["recipe"] is None:
            return f"{who} sets out {fact['item_name']}, taking a Recipe slot."
        owner = names[fact["recipe_owner"]]
        return f"{who} puts {fact['item_name']} on {owner}'s {fact['recipe_name']}."
    if kind == "discarded_to_draw":
        return f"{who} discards {_names(fact['cards'])} to draw a card."
    if kind == "drew":
        return f"{who} draws {fact['count']} card from the Food deck."
    if kind == "play_started":
        return f"Round {fact['round']}: {who} takes the first action."
    if kind == "round_ended":
        return f"Round {fact['round']} is over: everyone has passed."
    if kind == "card_drawn":
        return f"{who} draws {fact['card']}."
    if kind == "passed":
        return f"{who} passes."
    if kind == "market_discarded":
        return f"The Market's leftovers are discarded: {_names(fact['cards'])}."
    if kind == "first_player_moved":
        return f"The first player card passes to {who}."
    if kind == "game_over":
        return _game_over(fact, names)
    return None


def _prepared(fact: Fact, who: str) -> str:
    line = f"{who} prepares {fact['recipe_name']} with {_names(fact['ingredient_names'])}"
    sub = fact["substitution"]
    if sub:
        line += f", 3 cards ({_names(sub['cards'])}) standing in for {sub['ingredient']}"
    if fact["replaced"]:
        items = f" and its items {_names(fact['replaced_items'])}" if fact["replaced_items"] else ""
        line += f", replacing {fact['replaced_name']}{items}"
    return line + "."


def _game_over(fact: Fact, names: Sequence[str]) -> str:
    parts = []
    for row in fact["table"]:
        dishes = ", ".join(f"{r['name']} {r['points']}" for r in row["recipes"]) or "no recipes"
        parts.append(f"{names[row['seat']]} {row['points']} ({dishes})")
    winners = " and ".join(names[s] for s in fact["winners"])
    return f"Final scores: {'; '.join(parts)}. {winners} wins."
