"""Typed views and facts mirror the JSON ones exactly, for every game, viewer and fact.

Seeded random playouts of every kind and seat count are folded; after every row, the view
of every viewer and every fact go through ``presentation.typed`` to their message and back, and
must come back as they were (a null key comes back absent: both mean unset). Every
viewer is checked: the arbiter and a spectator after every row, the seats in turn.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from feastlog.presentation import typed
from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Fact, Viewer
from feastlog.v1 import record_pb2, view_pb2

# seeded games per seat count: Menu Masters games are long, the others short
SEEDS = {"bon-appetit": 4, "menu-masters": 2, "picky-eaters": 2}


def playout(
    kind: str, seats: int, seed: int, ruleset: str = ""
) -> Iterator[tuple[fold.Table, list[Fact]]]:
    """Every table of a seeded random legal game (the latest ruleset by default), with the
    facts that led to it."""
    engine = games.engine(kind)
    pack = engine.load_pack(engine.default_pack_bytes())
    genesis = record_pb2.Genesis(
        game_kind=kind,
        ruleset_version=ruleset,
        seats=[record_pb2.SeatInfo(name=f"P{k}") for k in range(seats)],
    )
    table, facts = fold.start(genesis, bytes([seed, seats]) * 16, pack)
    chooser = random.Random(seed * 100 + seats)
    yield table, facts
    while not fold.is_over(engine, table):
        seat = chooser.choice(sorted(engine.to_act(table.game)))
        command = chooser.choice(engine.legal_commands(table.game, seat))
        table, facts = fold.step(
            engine, table, f"seat:{seat}", fold.wrap_command(engine.spec.command_field, command)
        )
        yield table, facts


def round_trips_view(field: str, view: dict[str, Any]) -> None:
    message = typed.view_message(field, view)
    again = view_pb2.TableView.FromString(message.SerializeToString())
    assert typed.view_dict(again) == typed.without_nulls(view)


def round_trips_fact(field: str, fact: Fact) -> None:
    message = typed.fact_message(field, fact)
    # protobuf's constructor (the fast way) builds what the field-by-field way builds,
    # and the field-by-field way, which refuses a null that cannot be unset, takes it
    assert message == typed.checked_fact_message(field, fact)
    again = view_pb2.Fact.FromString(message.SerializeToString())
    assert typed.fact_dict(again) == typed.without_nulls(fact)


@pytest.mark.parametrize("kind", games.SHIPPED)
def test_every_view_and_fact_of_seeded_games_round_trips(kind: str) -> None:
    engine = games.engine(kind)
    rulesets = sorted(engine.spec.rulesets)
    seen: set[str] = set()
    for seats in range(engine.spec.min_seats, engine.spec.max_seats + 1):
        for seed in range(SEEDS[kind]):
            ruleset = rulesets[(seats + seed + 1) % len(rulesets)]  # every ruleset in turn
            for row, (table, facts) in enumerate(playout(kind, seats, seed, ruleset)):
                # the arbiter and a spectator after every row; each seat in turn
                for viewer in (ARBITER, SPECTATOR, Viewer.of_seat(row % seats)):
                    round_trips_view(engine.spec.command_field, engine.view(table.game, viewer))
                for fact in facts:
                    round_trips_fact(engine.spec.command_field, fact)
                    seen.add(fact["type"])
    game_facts = view_pb2.Fact.DESCRIPTOR.fields_by_name[engine.spec.command_field].message_type
    assert game_facts is not None
    # every fact the .proto names happened in these games: none is described but never sent
    assert seen == set(game_facts.fields_by_name), set(game_facts.fields_by_name) - seen


@pytest.mark.parametrize(
    "ruling",
    [
        record_pb2.ArbiterCommand(reason="r", note=record_pb2.Note(text="clock stopped")),
        record_pb2.ArbiterCommand(
            reason="r", score_adjustment=record_pb2.ScoreAdjustment(seat=1, points=-2)
        ),
        record_pb2.ArbiterCommand(reason="r", forfeit=record_pb2.Forfeit(seat=0)),
        record_pb2.ArbiterCommand(reason="r", close_game=record_pb2.CloseGame()),
    ],
)
def test_rulings_and_the_seed_reveal_round_trip(ruling: record_pb2.ArbiterCommand) -> None:
    table, _ = next(playout("bon-appetit", 2, 0))
    _, facts = fold.step(
        games.engine("bon-appetit"), table, "arbiter", record_pb2.Command(arbiter=ruling)
    )
    for fact in [*facts, {"type": "seed_revealed", "server_seed": "ab" * 32}]:
        message = typed.fact_message("bon_appetit", fact)
        assert message.WhichOneof("fact") == fact["type"]
        round_trips_fact("bon_appetit", fact)


def test_a_key_the_message_lacks_is_refused_not_dropped() -> None:
    table, _ = next(playout("menu-masters", 3, 0))
    view = games.engine("menu-masters").view(table.game, SPECTATOR)
    with pytest.raises(typed.NotTyped, match=re.escape("view.chefs[0].mood")):
        typed.view_message("menu_masters", {**view, "chefs": [{**view["chefs"][0], "mood": 1}]})
    with pytest.raises(typed.NotTyped, match=re.escape("view.round is str")):
        typed.view_message("menu_masters", {**view, "round": "1"})
    with pytest.raises(typed.NotTyped, match="no fact 'dance'"):
        typed.fact_message("menu_masters", {"type": "dance"})


def test_a_fact_that_does_not_fit_is_refused_by_name_whichever_way_it_is_built() -> None:
    """protobuf's constructor refuses a wrong type or an unknown key; the field-by-field
    conversion then names it, as it names a null that cannot be unset."""
    with pytest.raises(typed.NotTyped, match=re.escape("cleanup.round is bool")):
        typed.fact_message("bon_appetit", {"type": "cleanup", "round": True})
    with pytest.raises(typed.NotTyped, match=re.escape("'cleanup.mood'")):
        typed.fact_message("bon_appetit", {"type": "cleanup", "mood": 1})
    with pytest.raises(typed.NotTyped, match=re.escape("cleanup.order is null")):
        typed.checked_fact_message("bon_appetit", {"type": "cleanup", "order": None})
    # the constructor leaves it unset, as a round trip gives it back
    assert not typed.fact_message(
        "bon_appetit", {"type": "cleanup", "order": None}
    ).bon_appetit.cleanup.order
