"""Picky Eaters: the representative set of legal commands for a seat.

Candidates are built from the position and kept only when the same checks ``apply`` runs
accept them, so every command offered is accepted.  The set always holds Pass (or, when a
seat must discard down, two ways of doing so), so every seat in ``to_act`` has a move.
"""

from __future__ import annotations

from feastlog.v1 import picky_eaters_pb2 as pb
from replay.engine import RuleViolation
from replay.picky_eaters_checks import check_command, to_act
from replay.picky_eaters_pack import FANCY_SILVERWARE, INGREDIENT, ITEM, RECIPE
from replay.picky_eaters_rules import HAND_LIMIT, SUBSTITUTE_CARDS, State

Command = pb.PickyEatersCommand


def legal_commands(state: State, seat: int) -> list[Command]:
    """Sorted, de-duplicated commands ``seat`` may send now (a representative set)."""
    if seat not in to_act(state):
        return []
    hand = state.players[seat].hand
    over = len(hand) - HAND_LIMIT
    if over > 0:
        return _sorted(
            [
                Command(discard_down=pb.PickyEatersDiscardDown(cards=hand[:over])),
                Command(discard_down=pb.PickyEatersDiscardDown(cards=hand[-over:])),
            ]
        )
    out = [Command(pass_round=pb.PickyEatersPass())]
    out += [Command(take_from_market=pb.PickyEatersTakeFromMarket(card=c)) for c in state.market]
    out += [Command(prepare_recipe=p) for p in _preparations(state, seat)]
    out += [Command(play_item=p) for p in _item_plays(state, seat)]
    out += [
        Command(discard_to_draw=pb.PickyEatersDiscardToDraw(cards=pair))
        for pair in (hand[:2], hand[-2:])
    ]
    return _sorted([c for c in out if _accepted(state, seat, c)])


def _accepted(state: State, seat: int, command: Command) -> bool:
    try:
        check_command(state, seat, command)
    except RuleViolation:
        return False
    return True


def _sorted(commands: list[Command]) -> list[Command]:
    unique = {c.SerializeToString(deterministic=True): c for c in commands}
    return [unique[key] for key in sorted(unique)]


def _preparations(state: State, seat: int) -> list[pb.PickyEatersPrepareRecipe]:
    """Each Recipe in hand with the first cards that fit, or one 3-for-1 for a gap."""
    pack = state.pack
    hand = state.players[seat].hand
    own = [r.card for r in state.players[seat].recipes]
    out = []
    for card in (c for c in hand if pack.kind_of(c) == RECIPE):
        pool = [c for c in hand if pack.kind_of(c) == INGREDIENT]
        used: list[str] = []
        missing: list[str] = []
        for ingredient in pack.recipe_of[card].ingredients:
            found = next((c for c in pool if pack.ingredient_of[c] == ingredient), None)
            if found is None:
                missing.append(ingredient)
            else:
                pool.remove(found)
                used.append(found)
        subs = []
        if len(missing) == 1:
            rest = [c for c in hand if c != card and c not in used][:SUBSTITUTE_CARDS]
            subs = [pb.PickyEatersSubstitution(ingredient=missing[0], cards=rest)]
        elif missing:
            continue
        for replaces in ["", *own]:
            out.append(
                pb.PickyEatersPrepareRecipe(
                    recipe=card, ingredients=used, substitutions=subs, replaces=replaces
                )
            )
    return out


def _item_plays(state: State, seat: int) -> list[pb.PickyEatersPlayItem]:
    """Every Item in hand on every Recipe in play (Fancy Silverware in front of the player)."""
    pack = state.pack
    recipes = [r.card for p in state.players for r in p.recipes]
    out = []
    for card in (c for c in state.players[seat].hand if pack.kind_of(c) == ITEM):
        if pack.item_of[card].effect == FANCY_SILVERWARE:
            out.append(pb.PickyEatersPlayItem(item=card))
        else:
            out += [pb.PickyEatersPlayItem(item=card, recipe=r) for r in recipes]
    return out
