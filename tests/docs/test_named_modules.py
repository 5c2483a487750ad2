"""Every module a docstring or comment names, as ``service.app.games`` or
``service/app/games.py``, is there (issue 44: twenty of them named modules that had
moved or gone).  A dotted name is read part by part: each part while it is a module or
a package of the code, then, below a package, a name its ``__init__.py`` defines; below
a module, whatever follows is that module's attribute."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("service", "replay", "cli", "client", "presentation")
READ = (*TOPS, "scripts", "tests")
DOTTED = re.compile(r"`+((?:feastlog\.)?(?:" + "|".join(TOPS) + r")(?:\.[A-Za-z_]+)+)")
PATHS = re.compile(r"`+((?:" + "|".join(TOPS) + r")/[A-Za-z_/]+\.py)`")


@cache
def defined(init: Path) -> frozenset[str]:
    """The names a package's ``__init__.py`` defines or imports."""
    names = set()
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def missing(name: str) -> bool:
    """Whether a dotted name names a module (or a package's name) that is not there."""
    here = ROOT
    for part in name.removeprefix("feastlog.").split("."):
        if (here / part).is_dir():
            here = here / part
        elif (here / f"{part}.py").is_file():
            return False  # a module: what follows is its attribute
        else:
            init = here / "__init__.py"
            return not (init.is_file() and part in defined(init))
    return False


def named() -> list[tuple[str, str]]:
    """(file, name) for every module named in backquotes in the code and its tests."""
    found = []
    for top in READ:
        for path in sorted((ROOT / top).rglob("*.py")):
            text = path.read_text()
            where = str(path.relative_to(ROOT))
            found += [(where, m.group(1)) for m in DOTTED.finditer(text)]
            found += [(where, m.group(1)) for m in PATHS.finditer(text)]
    return found


def test_every_module_named_is_there() -> None:
    names = named()
    assert len(names) > 120  # the reading found them
    gone = [
        f"{where}: {name}"
        for where, name in names
        if (not (ROOT / name).exists() if name.endswith(".py") else missing(name))
    ]
    assert gone == []


def test_the_check_finds_a_module_that_moved() -> None:
    assert missing("service.reads") and missing("service.app.nothing_here")
    assert missing("feastlog.service.auth.ORGANISER")
    assert not missing("service.app.auth.ORGANISER") and not missing("replay.games.kinds")
    assert not missing("feastlog.service.store.writer.QUIET")
