"""cli/ only parses, calls and prints: it never opens DuckDB or builds the service itself."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "cli"
# What only service/ may touch: the driver, the store, the application and its database.
FORBIDDEN_MODULES = ("duckdb", "service.app", "service.live")
FORBIDDEN_NAMES = {"Store", "Database", "Games"}


def test_cli_imports_no_store_no_duckdb_and_no_application() -> None:
    found = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found += [
                    f"{path.name}: import {a.name}"
                    for a in node.names
                    if a.name.startswith(FORBIDDEN_MODULES)
                ]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if module.startswith(FORBIDDEN_MODULES):
                    found.append(f"{path.name}: from {module}")
                found += [
                    f"{path.name}: {module}.{a.name}"
                    for a in node.names
                    if a.name in FORBIDDEN_NAMES
                ]
    assert found == []


def test_cli_has_one_error_class() -> None:
    classes = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "attr", getattr(b, "id", "")) for b in node.bases}
                if bases & {"ClickException", "Exception", "UsageError"}:
                    classes.append(f"{path.name}: {node.name}")
    # NoMoreInput is play's signal that input ended, never shown to anyone
    assert classes == ["errors.py: CliError", "play.py: NoMoreInput"]
