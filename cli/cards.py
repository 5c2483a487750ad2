"""Cards by the names printed on them, for the terminal: views and commands name many
cards by id (``ingredient-beef-4``, ``produce-22``, ``menu-07``); a person reads names.

The names come from the content pack the game was recorded with when it is the bundled
one (its SHA-256 is in the genesis); a game on an organiser's own pack keeps its ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from feastlog.cli.replay_html import bundled_pack
from feastlog.presentation.page_cards import Face, faces_for
from feastlog.v1 import record_pb2

Names = Mapping[str, str]
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]")  # how card ids are spelled


def face_name(face: Face) -> str | None:
    """What a card face is called: its name, or (a Menu Masters ingredient card) its
    ingredients and stars."""
    if face.get("name"):
        return str(face["name"])
    ingredients = face.get("ingredients")
    if ingredients:
        stars = "".join("★" * int(s) for s in face.get("stars", [])[:1])
        return " + ".join(str(i) for i in ingredients) + (f" {stars}" if stars else "")
    return None


class CardNames:
    """Every card id of a game's pack and its printed name (empty for an unknown pack)."""

    def __init__(self, genesis: record_pb2.Genesis) -> None:
        pack = bundled_pack(genesis) if genesis.game_kind else None
        every = _every_id(genesis.game_kind, pack)
        faces = faces_for(genesis.game_kind, pack, [every]) if pack is not None else {}
        self.names: dict[str, str] = {}
        for card, face in faces.items():
            name = face_name(face)
            if name and name != card:
                self.names[card] = name

    def of(self, text: str) -> str:
        """A card id's name (any other string as it is)."""
        return self.names.get(text, text)

    def in_text(self, line: str) -> str:
        """A line of narration with each card id in it replaced by the card's name."""
        if not self.names:
            return line
        return _ID.sub(lambda found: self.of(found.group(0)), line)

    def in_view(self, value: Any) -> Any:
        """A view (or part of one) with each card id replaced by the card's name."""
        if isinstance(value, str):
            return self.of(value)
        if isinstance(value, list):
            return [self.in_view(v) for v in value]
        if isinstance(value, dict):
            return {k: self.in_view(v) for k, v in value.items()}
        return value


def _every_id(kind: str, pack: Any) -> list[str]:
    """Every card id a pack holds, whatever the game (the keys ``faces_for`` may give)."""
    if pack is None:
        return []
    ids: list[str] = []
    for attribute in ("ingredient_of", "recipe_of", "item_of", "guest_of"):
        ids += list(getattr(pack, attribute, {}) or {})
    for attribute in ("cards", "menus"):
        ids += [getattr(c, "id", "") for c in getattr(pack, attribute, ()) or ()]
    return [i for i in ids if i]
