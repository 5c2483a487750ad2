"""cli/ builds no request of a feastlog service: every request is the client library's
(``feastlog.client``), which the CLI calls over a server's channel or the in-process one;
the benchmarks' load generators too (cli/benchmarks/, cli/wire.py), a call made once and
sent many times where they need it."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "cli"


def requests_built(source: str) -> list[str]:
    """Each ``<module of feastlog.v1>.<Name>Request(...)`` call, each request type taken
    by name (``getattr(<module>, "...Request")``) and each stub made, in ``source``."""
    tree = ast.parse(source)
    protos: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("feastlog.v1"):
            protos |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            protos |= {a.asname or a.name for a in node.names if a.name.startswith("feastlog.v1")}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            made = func.attr.endswith(("Request", "Stub"))
            if func.value.id in protos and made:
                found.append(f"{func.value.id}.{func.attr}")
        elif isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            first, name = node.args[0], node.args[1]
            if isinstance(first, ast.Name) and first.id in protos:
                found.append(f"getattr({first.id}, {ast.unparse(name)})")
    return found


def test_no_command_builds_a_request_of_its_own() -> None:
    found = {}
    scanned = sorted(CLI.glob("**/*.py"))
    assert "benchmarks/serving.py" in {p.relative_to(CLI).as_posix() for p in scanned}
    for path in scanned:
        if built := requests_built(path.read_text()):
            found[path.relative_to(CLI).as_posix()] = built
    assert found == {}


def test_the_scan_sees_a_request_made_under_any_name() -> None:
    made = (
        "from feastlog.v1 import game_service_pb2 as g\n"
        "import feastlog.v1.audit_service_pb2\n"
        "from feastlog.v1 import tournament_service_pb2 as tpb\n"
        "g.GetViewRequest(game_id='x')\n"
        "getattr(tpb, 'PairRoundRequest')()\n"
    )
    assert requests_built(made) == ["g.GetViewRequest", "getattr(tpb, 'PairRoundRequest')"]
    assert requests_built("from feastlog.v1 import record_pb2\nrecord_pb2.Command()\n") == []
