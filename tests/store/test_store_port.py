"""The store port owns its words: the port imports no driver, and its adapters (``duckdb/``,
``process/``, ``postgres/``) import the port, never each other (STYLE.md, 13)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

STORE = Path(__file__).resolve().parents[2] / "service" / "store"
PACKAGE = "feastlog.service.store"
ADAPTERS = ("duckdb", "process", "postgres")
DRIVERS = ("duckdb", "psycopg", "psycopg_pool")

# Everything of the port, the store in memory and the store process's client: none may
# load a driver.
DRIVERLESS = (
    PACKAGE,
    f"{PACKAGE}.port",
    f"{PACKAGE}.records",
    f"{PACKAGE}.errors",
    f"{PACKAGE}.projection",
    f"{PACKAGE}.sql",
    f"{PACKAGE}.memory",
    f"{PACKAGE}.writer",
    f"{PACKAGE}.process",
    f"{PACKAGE}.process.client",
)


def imported_at_load(path: Path) -> Iterator[str]:
    """The modules a file imports when it is loaded: at its top level, not in a function
    nor under ``if TYPE_CHECKING``."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def adapter_of(module: str) -> str | None:
    """The adapter a module name belongs to (None: the port or elsewhere)."""
    parts = module.removeprefix(f"{PACKAGE}.").split(".")
    if not module.startswith(f"{PACKAGE}.") or parts[0] not in ADAPTERS:
        return None
    return parts[0]


def test_the_port_and_the_store_process_client_load_no_driver() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {DRIVERLESS!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {DRIVERS!r}))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


def test_adapters_import_the_port_never_each_other() -> None:
    crossing = []
    for path in sorted(STORE.rglob("*.py")):
        own = path.relative_to(STORE).parts[0] if path.parent != STORE else None
        for module in imported_at_load(path):
            other = adapter_of(module)
            if other is not None and other != own:
                crossing.append(f"{path.relative_to(STORE)} imports {module}")
    assert crossing == []
