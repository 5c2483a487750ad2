"""Menu Masters bad input: malformed commands, illegal moves (state unchanged), legality."""

from __future__ import annotations

import random

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import MalformedCommand, RuleViolation
from feastlog.replay.games.menu_masters import ENGINE
from feastlog.replay.games.menu_masters.spec import RULES
from feastlog.replay.record.canonical import canonical_bytes
from feastlog.v1 import menu_masters_pb2 as pb
from tests.replay.test_menu_masters_support import (
    BAKERY,
    PRODUCE,
    buy,
    complete,
    completion,
    discard,
    finish,
    give,
    leave,
    line,
    new_game,
    purchasing,
    run,
    window,
)


def _purchase_turn():
    """Ann at the top of the Produce Stand line, with a basket and two Menus."""
    state = give(new_game(3), 0, basket=["produce-08", "bakery-01"], menus=["menu-05", "menu-02"])
    state = give(state, 1, menus=["menu-01"])
    state = window(state, PRODUCE, ["produce-01", "produce-09", "produce-15"])
    state, _ = purchasing(state, {PRODUCE: [0, 1]})
    return state


def _placing(store: int, placement: int) -> pb.MenuMastersCommand:
    """A PlacePawn with raw enum numbers (unknown values allowed, as on the wire)."""
    move = pb.MenuMastersPlacePawn()
    move.store = store  # type: ignore[assignment]
    move.placement = placement  # type: ignore[assignment]
    return pb.MenuMastersCommand(place_pawn=move)


MALFORMED = [
    ("action", pb.MenuMastersCommand()),
    ("place_pawn.placement", _placing(1, 0)),
    ("place_pawn.placement", _placing(1, 9)),
    ("place_pawn.store", _placing(0, 1)),
    ("place_pawn.store", _placing(7, 2)),
    ("place_pawn.store", _placing(1, 3)),
    ("purchase.card_id", buy("produce-99")),
    ("discard.card_id", discard("")),
    ("complete_menus.menus", complete()),
    ("complete_menus.menus[0].menu_id", complete(completion("menu-99", tomato="produce-08"))),
    (
        "complete_menus.menus[0].fulfilments[0].ingredient",
        complete(completion("menu-05", caviar="produce-08")),
    ),
    (
        "complete_menus.menus[0].fulfilments[0].card_id",
        complete(completion("menu-05", tomato="nope")),
    ),
    (
        "complete_menus.menus[0].fulfilments[0].power_food.card_ids[1]",
        complete(completion("menu-05", tomato=("broccoli", "produce-01", ""))),
    ),
]


@pytest.mark.parametrize("field,command", MALFORMED, ids=[f for f, _ in MALFORMED])
def test_malformed_commands_raise_malformed(field, command):
    state = new_game(3) if command.WhichOneof("action") == "place_pawn" else _purchase_turn()
    with pytest.raises(MalformedCommand) as caught:
        fold.play(ENGINE, state, 0, command)
    assert caught.value.field == field


def test_power_food_needs_exactly_two_cards_and_a_way():
    """MM-POWER-FOOD "2 of the same ingredient can be combined to create a Power Food": one
    card (or three) is a well-formed command breaking that rule; no way at all is malformed."""
    state = _purchase_turn()
    one = pb.MenuMastersFulfilment(
        ingredient="tomato",
        power_food=pb.MenuMastersPowerFood(ingredient="broccoli", card_ids=["produce-01"]),
    )
    command = complete(pb.MenuMastersMenuCompletion(menu_id="menu-05", fulfilments=[one]))
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, 0, command)
    assert caught.value.rule_id == "MM-POWER-FOOD" and "not 1" in caught.value.message
    empty = complete(
        pb.MenuMastersMenuCompletion(
            menu_id="menu-05", fulfilments=[pb.MenuMastersFulfilment(ingredient="tomato")]
        )
    )
    with pytest.raises(MalformedCommand):
        fold.play(ENGINE, state, 0, empty)


ILLEGAL = [
    ("MM-TURN-ORDER", 1, leave()),
    ("MM-STEP", 0, line(BAKERY)),
    ("MM-PURCHASE-ONE", 0, buy("bakery-01")),
    ("MM-I4", 0, finish()),
    ("MM-DISCARD", 0, discard("produce-08")),
    ("MM-MENU-SOURCE", 0, complete(completion("menu-01", salmon="produce-08", bread="bakery-01"))),
    ("MM-MENU-INGREDIENTS", 0, complete(completion("menu-05", tomato="produce-08"))),
    ("MM-I5", 0, complete(completion("menu-05", tomato="bakery-01", bread="produce-08"))),
    (
        "MM-POWER-FOOD",
        0,
        complete(
            completion("menu-05", tomato=("tomato", "produce-08", "produce-08"), bread="bakery-01")
        ),
    ),
]


@pytest.mark.parametrize("rule_id,seat,command", ILLEGAL, ids=[r for r, _, _ in ILLEGAL])
def test_illegal_moves_cite_the_rule_and_leave_the_state_unchanged(rule_id, seat, command):
    state = _purchase_turn()
    before = canonical_bytes(state)
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    assert caught.value.rule_id == rule_id and rule_id in RULES
    assert canonical_bytes(state) == before
    assert rule_id in ENGINE.checks(command) or rule_id in ENGINE.spec.turn_rules
    assert rule_id in fold.checked_rules(ENGINE, fold.wrap_command("menu_masters", command))


def test_every_rejection_rule_of_each_command_kind_is_in_the_catalogue():
    for move in ENGINE.moves.values():
        assert all(rule_id in RULES for rule_id in move.rule_ids)
        assert move.rule_ids[0] == "MM-STEP"  # after the fold's MM-GAME-OVER, MM-TURN-ORDER


def test_after_buying_leaving_is_refused_and_purchase_again_too():
    state, _ = run(_purchase_turn(), (0, buy("produce-01")))
    for rule_id, command in [("MM-LEAVE-LINE", leave()), ("MM-PURCHASE-ONE", buy("produce-09"))]:
        with pytest.raises(RuleViolation) as caught:
            fold.play(ENGINE, state, 0, command)
        assert caught.value.rule_id == rule_id


@pytest.mark.parametrize("n", [2, 4, 6])
def test_every_legal_command_is_accepted(n):
    state = new_game(n, first="random")
    rng = random.Random(n)
    checked = 0
    while not ENGINE.is_over(state) and checked < 400:
        (seat,) = ENGINE.to_act(state)
        legal = ENGINE.legal_commands(state, seat)
        assert legal == sorted(legal, key=lambda c: c.SerializeToString(deterministic=True))
        for other in set(range(n)) - {seat}:
            assert ENGINE.legal_commands(state, other) == []
        for command in legal:
            fold.play(ENGINE, state, seat, command)
        menus = [c for c in legal if c.WhichOneof("action") == "complete_menus"]
        state, _ = fold.play(ENGINE, state, seat, menus[0] if menus else rng.choice(legal))
        checked += 1
