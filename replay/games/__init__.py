"""The registry of rules engines, by game kind.

Each game is a package of this folder with the same files (spec, state, moves, flow,
view, pack, projection) and an ``ENGINE`` built from them; the packages are imported
here by name.  ``register`` adds another engine (the tests register a test-only game):
nothing in the service or the CLI names a game kind.
"""

from __future__ import annotations

from feastlog.replay.games import bon_appetit, menu_masters, picky_eaters
from feastlog.replay.games.engine import Engine

_ENGINES: dict[str, Engine] = {}


class UnknownGameKind(KeyError):
    """A game kind this build does not know."""


def register(engine: Engine) -> None:
    """Make ``engine`` the engine of its kind (registering the same engine again is a no-op)."""
    kind = engine.spec.kind
    if _ENGINES.setdefault(kind, engine) is not engine:
        raise ValueError(f"another engine is registered for {kind!r}")


def engine(kind: str) -> Engine:
    """The engine for ``kind`` (``bon-appetit``, ``menu-masters``, ``picky-eaters``, ...)."""
    found = _ENGINES.get(kind)
    if found is None:
        raise UnknownGameKind(kind)
    return found


def kinds() -> tuple[str, ...]:
    """The game kinds registered, in the order they were registered."""
    return tuple(_ENGINES)


for _game in (bon_appetit, menu_masters, picky_eaters):
    register(_game.ENGINE)

# The games this build ships (its own packages), before anyone registers more.
SHIPPED = kinds()
