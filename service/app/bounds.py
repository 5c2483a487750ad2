"""The longest value each request field takes: one table for the server's request checks
(``service.limits``) and for what an imported record may name (``service.season``), in a
module light enough for either (no gRPC)."""

from __future__ import annotations

KIB = 1024

# The longest value a request field takes, by field name in any request message:
# characters for strings, bytes for bytes.  Ids are far shorter than their bounds
# (game ids are 18 characters); texts are an arbiter's notes and reasons.
FIELD_BOUNDS: dict[str, int] = {
    "game_id": 64,
    "command_id": 128,
    "tournament_id": 64,
    "players": 40,  # each player's name
    "game_kind": 32,
    "viewer": 32,
    "actor": 32,
    "text": 2000,
    "reason": 500,
    "seed": 32,
    "name": 40,  # a named arbiter's
    "entropy": 1024,
    # an organiser's own pack: the shipped ones are 3-16 KB, 400 cards about 50 KB.  It is
    # read on the event loop, and TOML is read at about 0.5 MB/s at worst (1 MB of small
    # numbers took 2.3 s), so a larger one would stall every game meanwhile
    "content_pack": 128 * KIB,
}
