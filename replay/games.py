"""The registry of rules engines, by game kind."""

from __future__ import annotations

import importlib

from replay.engine import Engine

_MODULES = {
    "bon-appetit": "replay.bon_appetit",
    "menu-masters": "replay.menu_masters",
    "picky-eaters": "replay.picky_eaters",
}


KINDS = tuple(_MODULES)


class UnknownGameKind(KeyError):
    """A game kind this build does not know."""


def engine(kind: str) -> Engine:
    """The engine for ``kind`` (``bon-appetit``, ``menu-masters``, ``picky-eaters``)."""
    module_name = _MODULES.get(kind)
    if module_name is None:
        raise UnknownGameKind(kind)
    module = importlib.import_module(module_name)
    found: Engine = module.ENGINE
    return found


def kinds() -> list[str]:
    """The game kinds whose engines are present in this build."""
    present = []
    for kind, module_name in _MODULES.items():
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError as missing:
            if missing.name != module_name:
                raise
            continue
        present.append(kind)
    return present
