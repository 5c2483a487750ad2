"""Bon Appetit!, the rules engine (rulebook: shared/rulebooks/bon-appetit.txt).

2 to 4 players auction 12 dishes with sealed bids of gems whose values move after every
auction.  The facts of the game and the rule catalogue are in ``spec``; the state in
``state``; the bids and their checks in ``moves``; setup, the automatic steps of a round
and scoring in ``flow``; views, legal bids and narration in ``view``; the dishes in
``pack`` (``pack.toml``); the outcome table in ``projection``.
"""

from __future__ import annotations

from feastlog.replay.games.bon_appetit import flow, moves, pack, projection, view
from feastlog.replay.games.bon_appetit.spec import SPEC
from feastlog.replay.games.engine import assemble

ENGINE = assemble(SPEC, flow=flow, moves=moves, view=view, pack=pack, projection=projection)
