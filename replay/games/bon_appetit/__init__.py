"""Bon Appetit!, the rules engine (rulebook: shared/rulebooks/bon-appetit.txt).

2 to 4 players auction 12 dishes with sealed bids of gems whose values move after every
auction.  The facts of the game and the rule catalogue are in ``spec``; the state in
``state``; the bids and their checks in ``moves``; setup, the automatic steps of a round
and scoring in ``flow``; views, legal bids and narration in ``view``; the dishes in
``pack`` (``pack.toml``); the outcome table in ``projection``.
"""

from __future__ import annotations

from feastlog.replay.engine import Engine
from feastlog.replay.games.bon_appetit import flow, moves, pack, projection, view
from feastlog.replay.games.bon_appetit.spec import SPEC

ENGINE = Engine(
    spec=SPEC,
    prepare=flow.setup,
    moves=moves.MOVES,
    to_act=moves.to_act,
    out_of_turn=moves.out_of_turn,
    commands=view.legal_commands,
    is_over=lambda state: bool(state.over),
    outcome=flow.outcome,
    view=view.view,
    command_public=view.command_public,
    narrate=view.narrate,
    load_pack=pack.load_pack,
    default_pack_bytes=pack.default_pack_bytes,
    projection=projection.PROJECTION,
)
