"""Seeded random legal playouts of Menu Masters through the fold, 2 to 6 chefs, under
every ruleset version this build folds.

Bots choose among ``legal_commands`` only, biased toward progress (complete a Menu when
they can, buy what their Menus need).  Every game must end; coins and cards are
conserved after every command.  That a record refolds to every state hash is a contract of
every game (tests/contract/).  Under ruleset 2 a chef who cannot buy has a turn; across
the playouts such turns complete Menus.
"""

from __future__ import annotations

import random

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.menu_masters import ENGINE
from feastlog.replay.games.menu_masters.state import all_cards, coins_in_play
from feastlog.v1 import record_pb2
from tests.replay.test_menu_masters_support import NAMES, PACK

GAMES_PER_COUNT = 20  # per ruleset version
ALL_CARDS = sorted([c.id for c in PACK.cards] + [m.id for m in PACK.menus])


def genesis(n: int, ruleset: str = ENGINE.spec.ruleset_version) -> record_pb2.Genesis:
    """A Menu Masters genesis row for ``n`` chefs under ``ruleset``."""
    seats = [record_pb2.SeatInfo(name=name) for name in NAMES[:n]]
    return record_pb2.Genesis(game_kind="menu-masters", ruleset_version=ruleset, seats=seats)


def needs(state, seat: int) -> set[str]:
    """The ingredients the chef's secret Menus and the community Menus ask for."""
    menus = (*state.chefs[seat].menus, *state.community)
    return {i for m in menus for i in PACK.menu(m).ingredients}


def choose(state, seat: int, rng: random.Random):
    """A legal command, biased toward completing Menus and buying what they need."""
    legal = ENGINE.legal_commands(state, seat)
    assert legal, "a seat to act must have a legal command"
    by_kind: dict[str, list] = {}
    for command in legal:
        by_kind.setdefault(command.WhichOneof("action"), []).append(command)
    if "complete_menus" in by_kind:
        return by_kind["complete_menus"][0]
    wanted = needs(state, seat)
    if "purchase" in by_kind:
        useful = [
            c
            for c in by_kind["purchase"]
            if wanted & set(PACK.card(c.purchase.card_id).ingredients)
        ]
        if useful or rng.random() < 0.3:
            return rng.choice(useful or by_kind["purchase"])
        return by_kind["leave_line"][0]
    if "place_pawn" in by_kind:
        lines = [
            c
            for c in by_kind["place_pawn"]
            if c.place_pawn.placement == 1
            and any(
                wanted & set(PACK.card(card).ingredients)
                for card in state.stores[c.place_pawn.store - 1].window
            )
        ]
        if lines and rng.random() < 0.7:
            return rng.choice(lines)
    return rng.choice(legal)


def check_invariants(table: fold.Table, n: int) -> None:
    """Coins (8 per chef in play, the rest boxed) and all 124 cards are conserved."""
    state = table.game
    assert coins_in_play(state) == 8 * n and state.box == 48 - 8 * n
    assert all(c.coins >= 0 for c in state.chefs) and state.bank >= 0
    assert sorted(all_cards(state)) == ALL_CARDS
    for seat, chef in enumerate(state.chefs):
        acting = state.turn is not None and state.turn.seat == seat
        assert len(chef.basket) <= (7 if acting else 6)


def play(seed: int, n: int, ruleset: str = ENGINE.spec.ruleset_version) -> list[dict]:
    """One seeded game; returns every fact."""
    rng = random.Random(seed)
    server_seed = bytes([seed % 256, n]) * 16
    table, facts = fold.start(genesis(n, ruleset), server_seed, PACK)
    assert table.game.version == int(ruleset)
    check_invariants(table, n)
    commands = 0
    while not fold.is_over(ENGINE, table):
        (seat,) = ENGINE.to_act(table.game)
        command = record_pb2.Command(menu_masters=choose(table.game, seat, rng))
        table, new = fold.step(ENGINE, table, f"seat:{seat}", command)
        facts += new
        check_invariants(table, n)
        commands += 1
        assert commands < 8000, "the game must end"
    assert ENGINE.is_over(table.game) and ENGINE.to_act(table.game) == frozenset()
    return facts


def menus_in_turns_without_buying(facts: list[dict]) -> int:
    """Menus completed in purchase turns of chefs who could not buy (ruleset 2, MM-I3)."""
    completed, blocked = 0, False
    for fact in facts:
        if fact["type"] == "turn_started":
            blocked = "cannot_buy" in fact
        elif fact["type"] in ("left_line", "turn_finished", "discarded", "purchased"):
            blocked = False
        elif fact["type"] == "menu_completed" and blocked:
            completed += 1
    return completed


@pytest.mark.parametrize("ruleset", sorted(ENGINE.spec.rulesets))
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_playouts_end_and_conserve_coins_and_cards(n, ruleset):
    ends: dict[str, int] = {}
    blocked_menus = 0
    for seed in range(GAMES_PER_COUNT):
        facts = play(seed * 7 + n, n, ruleset=ruleset)
        (over,) = [f for f in facts if f["type"] == "game_over"]
        ends[over["reason"]] = ends.get(over["reason"], 0) + 1
        blocked_menus += menus_in_turns_without_buying(facts)
        if ruleset == "1":
            assert not any("cannot_buy" in f for f in facts if f["type"] == "turn_started")
    assert sum(ends.values()) == GAMES_PER_COUNT
    if ruleset != "1":
        assert "round_limit" not in ends  # off by default
        assert blocked_menus > 0  # the turn a chef who cannot buy now has is used
    else:
        assert blocked_menus == 0
