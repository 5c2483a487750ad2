"""Menu Masters, the rules engine (rulebook: shared/rulebooks/menu-masters.txt).

2 to 6 chefs place pawns in store lines, buy ingredients first in, first out, and complete
Menus for stars.  The facts of the game and the rule catalogue are in ``spec``; the state
in ``state``; the six moves and their checks in ``moves``; setup, the automatic steps and
scoring in ``flow``; completing Menus and what is still possible in ``menus``; views,
legal commands and narration in ``view``; the cards in ``pack`` (``pack.toml``); the
outcome tables in ``projection``.
"""

from __future__ import annotations

from feastlog.replay.games.engine import assemble
from feastlog.replay.games.menu_masters import flow, moves, pack, projection, view
from feastlog.replay.games.menu_masters.spec import SPEC

ENGINE = assemble(SPEC, flow=flow, moves=moves, view=view, pack=pack, projection=projection)
