"""Each room imports only the rooms at its level or below it, as docs/architecture.md's
diagram draws them (issue 44): the rooms and their order are read from the diagram
itself, and every import of every module is checked against them, imports made inside a
function or by name included (``tests/app/test_app_layers.imported``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.app.test_app_layers import imported, imported_by

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
CODE = ("cli", "client", "service", "presentation", "replay")


def levels() -> dict[str, int]:
    """Each room of the diagram (a folder named at the start of a line) and its level: 0
    at the top; the rooms of one level are named on lines with no ``│`` between them."""
    text = DOC.read_text().split("## Rooms by role", 1)[1]
    diagram = text.split("```", 2)[1]
    found: dict[str, int] = {}
    level = 0
    for line in diagram.splitlines():
        if line.strip() == "│":
            level += 1
            continue
        named = re.match(r"([a-z_]+/(?:[a-z_]+/)?)\s", line)
        if named:
            found[named.group(1).rstrip("/")] = level
    return found


LEVELS = levels()


def room_of(path: str) -> str:
    """The deepest room of the diagram holding a path (``service/app/games.py``)."""
    rooms = [r for r in LEVELS if path == r or path.startswith(f"{r}/")]
    assert rooms, f"{path} is in no room of the diagram"
    return max(rooms, key=len)


def module_path(name: str) -> str | None:
    """The folder path of an imported feastlog module (None: not feastlog's)."""
    if name != "feastlog" and not name.startswith("feastlog."):
        return None
    parts = name.split(".")[1:]
    if parts[:1] == ["v1"]:
        return "proto/feastlog/v1"
    return "/".join(parts) or None


def upward(path: Path, names: list[str]) -> list[str]:
    """The imports of a module that reach a room above its own."""
    here = room_of(str(path.relative_to(ROOT)))
    out = []
    for name in names:
        target = module_path(name)
        if target is None:
            continue
        there = room_of(target)
        if LEVELS[there] < LEVELS[here]:
            out.append(f"{path.relative_to(ROOT)} ({here}) imports {name} ({there})")
    return sorted(set(out))


def test_the_diagram_names_every_room_in_order() -> None:
    assert list(LEVELS)[:2] == ["cli", "service/grpc"]
    assert LEVELS["service/app"] < LEVELS["service/store"] < LEVELS["service"]
    assert LEVELS["service"] < LEVELS["client"] < LEVELS["presentation"] < LEVELS["replay"]
    assert LEVELS["replay"] < LEVELS["proto"]
    for room in LEVELS:
        assert (ROOT / room).is_dir(), room


def test_each_room_imports_only_its_level_and_below() -> None:
    files = [p for top in CODE for p in sorted((ROOT / top).rglob("*.py"))]
    assert len(files) > 150  # the walk found the code
    found = [line for path in files for line in upward(path, imported(path))]
    assert found == []


def test_the_check_finds_an_import_upward_even_inside_a_function() -> None:
    inside = "def later():\n    from feastlog.service.app import games\n"
    names = imported_by(ast.parse(inside))
    assert upward(ROOT / "service" / "store" / "port.py", names) == [
        "service/store/port.py (service/store) imports feastlog.service.app (service/app)",
        "service/store/port.py (service/store) imports feastlog.service.app.games (service/app)",
    ]
    assert upward(ROOT / "client" / "calls.py", ["feastlog.service.files"]) != []
    assert upward(ROOT / "service" / "files.py", ["feastlog.client.files"]) == []
