"""Picky Eaters: what each viewer may see, the legal commands, one line of plain words a fact.

Hands are seen by their owner only (others see counts); the Market, Recipes in play with
their Items, Fancy Silverware, revealed Guests and the discard pile are public; the order
of the Food and Guest decks is seen by the arbiter only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations, islice, product
from typing import Any

from google.protobuf.message import Message

from feastlog.replay.games.engine import LEGAL_CAP, Fact, RuleViolation, Viewer, how_many
from feastlog.replay.games.picky_eaters.flow import game_over_fact, score_table
from feastlog.replay.games.picky_eaters.moves import MOVES, to_act
from feastlog.replay.games.picky_eaters.pack import (
    FANCY_SILVERWARE,
    HOT_PLATE,
    INGREDIENT,
    ITEM,
    RECIPE,
)
from feastlog.replay.games.picky_eaters.spec import (
    DISCARD_TO_DRAW,
    HAND_LIMIT,
    KIND,
    RECIPE_SLOTS,
    SUBSTITUTE_CARDS,
)
from feastlog.replay.games.picky_eaters.state import OVER, State, has_effect
from feastlog.v1 import picky_eaters_pb2 as pb

Command = pb.PickyEatersCommand


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
        "kind": KIND,
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


def command_public(command: Message) -> bool:
    """Every Picky Eaters command is public: only what is drawn is private (a fact)."""
    return True


def legal_commands(state: State, seat: int) -> list[Command]:
    """Sorted commands the seat to act may send now: all, or the first LEGAL_CAP + 1.

    The list holds, in this order until ``LEGAL_CAP + 1`` are found (then sorted by their
    bytes): when a seat must discard down, every set of cards to discard (and nothing
    else); otherwise Pass, every Market card, every Item on every Recipe it may go on
    (Fancy Silverware in front of the player), every pair of cards to discard to draw, and
    every way to prepare each Recipe in hand: each set of Ingredient cards, each 3-for-1
    (which ingredient, which 3 other cards), each Recipe it may replace.  Commands that
    differ only in the order of the cards they name count once (cards in hand order).
    Candidates are built to pass the moves' checks; Items are filtered through them.
    """
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
            play = pb.PickyEatersPlayItem(item=card, recipe=recipe)
            try:
                MOVES["play_item"].check(state, seat, play)
            except RuleViolation:
                continue
            yield play


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
        return f"{who} is dealt {how_many(fact['count'], 'card')} ({fact['hand_size']} in hand)."
    if kind == "cards_dealt":
        return f"{who} receives {_names(fact['cards'])}."
    if kind == "deck_reshuffled":
        deck = how_many(fact["cards"], "card")
        return f"The discard pile is shuffled into a new Food deck of {deck}."
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
        return f"{who} draws {how_many(fact['count'], 'card')} from the Food deck."
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
