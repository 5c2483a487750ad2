"""Picky Eaters, the rules engine (rulebook: shared/rulebooks/picky-eaters.txt).

2 to 6 players (PE-I1) prepare Recipes for 5 picky Guests over 5 rounds.  The facts of
the game and the rule catalogue are in ``spec``; the state in ``state``; the six moves and
their checks in ``moves`` (preparing Recipes and playing Items in ``recipes``); setup,
the automatic steps and scoring in ``flow``; views, legal commands and narration in
``view``; the cards in ``pack`` (``pack.toml``); the outcome table in ``projection``.
"""

from __future__ import annotations

from feastlog.replay.games.engine import assemble
from feastlog.replay.games.picky_eaters import flow, moves, pack, projection, view
from feastlog.replay.games.picky_eaters.spec import SPEC

ENGINE = assemble(SPEC, flow=flow, moves=moves, view=view, pack=pack, projection=projection)
