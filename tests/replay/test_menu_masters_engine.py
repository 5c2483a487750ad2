"""Menu Masters engine surface: registry, views per viewer, narration, catalogue meta-test."""

from __future__ import annotations

import random

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.games.menu_masters import ENGINE
from feastlog.replay.games.menu_masters.spec import RULES
from feastlog.replay.record.rng import Rng
from feastlog.replay.record.visibility import sees_fact
from feastlog.v1 import menu_masters_pb2 as pb
from tests.replay.test_menu_masters_support import NAMES, PACK, new_game


def test_engine_is_registered_with_its_facts():
    assert games.engine("menu-masters") is ENGINE
    assert (ENGINE.spec.kind, ENGINE.spec.title, ENGINE.spec.command_field) == (
        "menu-masters",
        "Menu Masters",
        "menu_masters",
    )
    assert (ENGINE.spec.min_seats, ENGINE.spec.max_seats, ENGINE.spec.ruleset_version) == (
        2,
        6,
        "4",
    )
    assert ENGINE.spec.option_defaults == {"first_seat": "random", "round_limit": "off"}
    assert ENGINE.spec.rulesets == {
        "1": {"first_seat": "random", "round_limit": "30"},
        "2": {"first_seat": "random", "round_limit": "off"},
        "3": {"first_seat": "random", "round_limit": "off"},
        "4": {"first_seat": "random", "round_limit": "off"},
    }
    assert (ENGINE.spec.seats_rule, ENGINE.spec.end_rule) == ("MM-I1", "MM-GAME-OVER")
    assert ENGINE.spec.rng_labels == (
        "menu-masters/produce-stand-deck",
        "menu-masters/butcher-shop-deck",
        "menu-masters/bakery-deck",
        "menu-masters/first-seat",
        "menu-masters/menu-deck",
    )
    assert ENGINE.command_public(pb.MenuMastersCommand(leave_line=pb.MenuMastersLeaveLine()))


def test_views_hide_secret_menus_and_deck_orders():
    state = new_game(4)
    ann = ENGINE.view(state, Viewer.of_seat(0))
    assert [m["id"] for m in ann["chefs"][0]["menus"]] == list(state.chefs[0].menus)
    assert "menus" not in ann["chefs"][1] and ann["chefs"][1]["menu_count"] == 2
    assert "deck" not in ann["stores"][0] and "menu_deck" not in ann
    spectator = ENGINE.view(state, SPECTATOR)
    assert all("menus" not in c for c in spectator["chefs"])
    assert (
        spectator["to_act"] == [0]
        and spectator["phase"] == "place_pawns"
        and spectator["round"] == 1
    )
    arbiter = ENGINE.view(state, ARBITER)
    assert arbiter["stores"][0]["deck"] == list(state.stores[0].deck)
    assert arbiter["menu_deck"] == list(state.menu_deck)
    assert "rng" not in str(arbiter) and "seed" not in str(arbiter)


def _finished_game(n: int, seed: int):
    """A bot game to its end; the state and every fact."""
    state, facts = ENGINE.setup(NAMES[:n], {"first_seat": "random"}, PACK, Rng(bytes([seed]) * 32))
    rng = random.Random(seed)
    while not ENGINE.is_over(state):
        (seat,) = ENGINE.to_act(state)
        legal = ENGINE.legal_commands(state, seat)
        menus = [c for c in legal if c.WhichOneof("action") == "complete_menus"]
        state, new = fold.play(ENGINE, state, seat, menus[0] if menus else rng.choice(legal))
        facts += new
    return state, facts


def test_narration_tells_every_round_and_private_facts_stay_private():
    state, facts = _finished_game(4, 3)
    names = NAMES[:4]
    lines = [ENGINE.narrate(f, names) for f in facts]
    kinds = {f["type"] for f, line in zip(facts, lines, strict=True) if line}
    assert {
        "round_started",
        "pawn_placed",
        "purchased",
        "menu_completed",
        "coins",
        "game_over",
    } <= kinds
    for fact, line in zip(facts, lines, strict=True):
        if "private_to" in fact:
            assert line is None and not sees_fact(SPECTATOR, fact, public=False)
            assert sees_fact(Viewer.of_seat(fact["private_to"]), fact, public=False)
    bought = next(f for f in facts if f["type"] == "purchased")
    assert {"cost", "paid_to", "coins_to"} <= bought.keys()
    over = ENGINE.view(state, SPECTATOR)
    assert over["over"] and over["scores"] == list(ENGINE.outcome(state).points)
    assert over["winners"] == list(ENGINE.outcome(state).winners) and over["to_act"] == []
    # the engine shows secret Menus by viewer alone; the policy shows the arbiter's table
    # to everyone once the record is public (replay.visibility.table_viewer)
    assert not any("menus" in c for c in over["chefs"]) and "menu_deck" not in over
    assert all("menus" in c for c in ENGINE.view(state, ARBITER)["chefs"])


def test_catalogue_shape():
    """Every rule has its section and text; the readings are MM-I1..MM-I9 (that every id is
    cited by a test is a contract of every game, tests/contract/)."""
    assert all(rule.section and rule.text for rule in RULES.values())
    assert [r for r in RULES if RULES[r].interpretation] == [f"MM-I{k}" for k in range(1, 10)]
