"""The application, the rules core and the presentation import no gRPC: the status table's
translation to gRPC, the guard and the servicers are the adapter's (service/grpc/).  Nor
do they import the web adapter (service/web/): it calls the application, which draws a
page with the presentation's ``page_html``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The folders that know nothing of the wire: use cases, rules, what is shown.
PURE = ("service/app", "replay", "presentation")
# gRPC and its libraries (grpc, grpc_status, grpc_health, grpc_reflection), the rich
# status messages, and feastlog's own gRPC adapter.
FORBIDDEN = ("grpc", "google.rpc", "feastlog.service.grpc")
# The adapters that call the application besides gRPC's: the web pages, the command line
# (the client library's files, which the server shares with its clients, are no adapter).
ADAPTERS = ("feastlog.service.web", "feastlog.cli")


def forbidden(name: str) -> bool:
    """Whether an imported module is gRPC's or the adapter's."""
    first = name.split(".")[0]
    return first.startswith("grpc") or any(name == f or name.startswith(f"{f}.") for f in FORBIDDEN)


def imported(path: Path) -> list[str]:
    """Every module a file imports, at any depth of it (inside functions too), by an
    import statement or by name (``importlib.import_module("grpc")``, ``__import__``)."""
    return imported_by(ast.parse(path.read_text()), str(path))


def imported_by(tree: ast.AST, path: str = "") -> list[str]:
    """Every module a parsed file imports (see ``imported``)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            if getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module",
                "__import__",
            ):
                names.append(str(node.args[0].value))
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import"
            module = node.module or ""
            names += [module, *(f"{module}.{a.name}" for a in node.names)]
    return names


def test_the_application_rules_and_presentation_import_no_grpc() -> None:
    files = [p for folder in PURE for p in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 30  # the walk found the folders
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in imported(path)
        if forbidden(name)
    ]
    assert found == []


def test_the_check_sees_each_way_of_importing_grpc() -> None:
    for name in ("grpc", "grpc.aio", "grpc_status.rpc_status", "google.rpc.status_pb2"):
        assert forbidden(name), name
    assert forbidden("feastlog.service.grpc.guard")
    for name in ("google.protobuf.message", "feastlog.service.app.errors", "re"):
        assert not forbidden(name), name
    inside = ast.parse(
        "def later():\n    import grpc.aio\n    importlib.import_module('grpc_status')\n"
    )
    assert [n for n in imported_by(inside) if forbidden(n)] == ["grpc.aio", "grpc_status"]


def adapter(name: str) -> bool:
    """Whether an imported module is an adapter's that calls the application."""
    return any(name == a or name.startswith(f"{a}.") for a in ADAPTERS)


def test_the_application_rules_and_presentation_import_no_web_adapter() -> None:
    files = [p for folder in PURE for p in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 30
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in imported(path)
        if adapter(name)
    ]
    assert found == []


def test_the_check_sees_the_web_adapter() -> None:
    for name in ("feastlog.service.web", "feastlog.service.web.server", "feastlog.cli.main"):
        assert adapter(name), name
    for name in ("feastlog.service.webhooks", "feastlog.service.app.feed", "feastlog.presentation"):
        assert not adapter(name), name
    inside = ast.parse("def later():\n    from feastlog.service.web.server import serve\n")
    assert [n for n in imported_by(inside) if adapter(n)] == [
        "feastlog.service.web.server",
        "feastlog.service.web.server.serve",
    ]
