"""``feastlog play`` shows the table in words: nested records (a dish, a store's window,
a guest) read as ``Head (key value, ...)``, never as JSON."""

from __future__ import annotations

import pytest

from feastlog.cli.narrate import view_lines
from feastlog.replay import games
from feastlog.replay.games.engine import Viewer
from tests.presentation.test_typed_views import playout


@pytest.mark.parametrize("kind", games.SHIPPED)
def test_every_line_of_the_table_is_words_not_json(kind: str) -> None:
    engine = games.engine(kind)
    for n, (table, _) in enumerate(playout(kind, 3, 1)):
        if n % 7:
            continue
        lines = view_lines(engine.view(table.game, Viewer.of_seat(1)), 1)
        assert lines[0] == "the table:"
        for line in lines[1:]:
            assert not any(mark in line for mark in '{}"'), line
        assert any(line.startswith("  you: ") for line in lines)


def test_a_record_is_headed_by_its_name_and_a_list_inside_it_is_bracketed() -> None:
    view = {
        "dish": {"name": "Creme Brulee", "points": 4, "type": "Dessert"},
        "window": [
            {"id": "produce-05", "ingredients": ["lettuce", "tomato"], "stars": 2},
            {"id": "produce-06", "ingredients": ["corn"], "stars": 1},
        ],
        "players": [{"seat": 1, "name": "Ann", "hand": [], "bid": None, "ready": True}],
    }
    assert view_lines(view, 1) == [
        "the table:",
        "  dish: Creme Brulee (points 4, type Dessert)",
        "  window: produce-05 (ingredients [lettuce, tomato], stars 2);"
        " produce-06 (ingredients corn, stars 1)",
        "  you: bid none; hand none; ready yes",
    ]
