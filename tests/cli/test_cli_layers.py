"""cli/ only parses, calls and prints: it never opens DuckDB or builds the service itself."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "cli"
# What only service/ may touch: the driver, the store, the application and its database.
FORBIDDEN_MODULES = ("duckdb", "feastlog.service.app.application", "feastlog.service.app.live")
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


# What cli/ may import of service/: the application's entry points, the gRPC adapter's
# server and in-process channel (a command's own server; a file no server holds), TLS,
# the web pages (serve --http), the store port's words, the announcement beside a file,
# and the benchmarks' records.  Never a store adapter, whose driver it would load.
CLI_MAY_IMPORT = (
    "feastlog.service.app",
    "feastlog.service.grpc.inprocess",
    "feastlog.service.grpc.server",
    "feastlog.service.web.server",
    "feastlog.service.store.port",
    "feastlog.service.store.errors",
    "feastlog.service.store.records",
    "feastlog.service.announce",
    "feastlog.service.bench.data",
)


def imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement loads: a name imported from a package that is
    itself a module (``from feastlog.service.app import season``) counts as that module."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    found = []
    for alias in node.names:
        module = f"{node.module}.{alias.name}"
        parts = module.removeprefix("feastlog.").split(".")
        is_module = (CLI.parent / Path(*parts)).with_suffix(".py").exists() or (
            CLI.parent / Path(*parts)
        ).is_dir()
        found.append(module if is_module else node.module or "")
    return found


def test_cli_imports_of_the_service_are_its_entry_points() -> None:
    found = []
    for path in sorted(CLI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            for module in imported(node):
                service = module.startswith("feastlog.service")
                allowed = module == "feastlog.service.store" or module.startswith(CLI_MAY_IMPORT)
                if service and not allowed:
                    found.append(f"{path.relative_to(CLI)}: {module}")
    assert found == []


def test_cli_has_one_error_class() -> None:
    classes = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "attr", getattr(b, "id", "")) for b in node.bases}
                if bases & {"ClickException", "Exception", "UsageError"}:
                    classes.append(f"{path.name}: {node.name}")
    # NoMoreInput and TableMoved are play's signals (input ended; the table changed while
    # the player chose), never shown to anyone
    assert classes == ["errors.py: CliError", "play.py: NoMoreInput", "play.py: TableMoved"]


def test_every_module_imports_the_installed_names() -> None:
    """Installed, the code is feastlog.replay, feastlog.service and feastlog.cli; a bare
    ``replay``, ``service`` or ``cli`` imports only from the repository's root, so none is."""
    root = CLI.parent
    found = []
    for folder in ("replay", "service", "cli", "client", "tests", "scripts"):
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                found += [
                    f"{path.relative_to(root)}: {n}"
                    for n in names
                    if n.split(".")[0] in ("replay", "service", "cli", "client")
                ]
    assert found == []
