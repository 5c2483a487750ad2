"""Each use case is declared once per layer (STYLE.md, convention 14; issue 31): at most
one function or method of its name in the store port, in each store adapter, in the
application, in the servicers, in the web pages and in cli/.

A use case is known by its names in every layer's words: the application's method
(``standings``), its RPC (``GetStandings``) and that in snake case, the store's word where
it has its own (``listed``), the CLI client's (``game_list``).  Helpers that only print a
use case's answer (``play``'s ``Seat.news``, ``watch``'s ``follow``) are commands' own, not
declarations of it.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from feastlog.service.grpc import services

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "service" / "store"

# Each RPC's other names, where a layer has its own word for it (the application's
# method, the store's, the client's); every RPC is known by its name and that in snake
# case besides (``GetStandings``, ``get_standings``).  Words that other helpers use too
# (``end``, ``drop``) are no spelling: ``Tournaments.end`` is not one of a use case's.
ALIASES: dict[str, set[str]] = {
    "CreateGame": {"create"},
    "JoinGame": {"join"},
    "SubmitCommand": {"submit"},
    "GetView": {"view"},
    "ListLegalCommands": {"legal", "legal_commands"},
    "WatchGame": {"watch"},
    "ListGames": {"games", "game_list", "game_list_page", "listed"},
    "GetStateAt": {"state_at"},
    "StreamReplay": {"replay"},
    "ExportRecord": {"export"},
    "VerifyGame": {"audit", "verify"},
    "VerifyAllGames": {"verify_all"},
    "ExplainEvent": {"explain"},
    "ListRejections": {"rejections"},
    "SubmitRuling": {"rule"},
    "GetStandings": {"standings"},
    "GetStats": {"stats"},
    "ListArbiters": {"arbiters"},
    "GetServerInfo": {"server_info"},
    "GetTreeHead": {"tree_head"},
    "GetInclusionProof": {"inclusion_proof"},
    "GetConsistencyProof": {"consistency_proof"},
    "ListCalls": {"calls"},
    "GetCaseFile": {"case_file"},
    "GetClocks": {"clocks"},
    "RegisterPlayer": {"register"},
    "PairRound": {"pair"},
    "SwapPlayers": {"swap"},
    "FixTable": {"fix"},
    "PublishRound": {"publish"},
    "WatchAll": {"feed", "watch_all"},
}
# Use cases no RPC names: the page, and the bulk work of the CLI offline.
WITHOUT_RPC: dict[str, set[str]] = {
    "page": {"page"},
    "export all": {"export_all"},
    "audit all": {"audit_all"},
}


def snake(name: str) -> str:
    """``GetStandings`` as ``get_standings``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def use_cases() -> dict[str, frozenset[str]]:
    """Every RPC of every proto (the service table, from the descriptors), each by its
    spellings, and the use cases no RPC names."""
    found = {
        rpc.name: frozenset({rpc.name, snake(rpc.name), *ALIASES.get(rpc.name, ())})
        for rpc in services.RPCS.values()
    }
    return found | {name: frozenset(s) for name, s in WITHOUT_RPC.items()}


USE_CASES = use_cases()


def opened_by_the_port() -> list[Path]:
    """The stores the port opens by name (``open_store``'s imports): an adapter that is one
    module beside the port (``memory.py``) as well as those that are packages."""
    found = []
    for node in ast.walk(ast.parse((STORE / "port.py").read_text())):
        name = node.module or "" if isinstance(node, ast.ImportFrom) else ""
        if name.startswith("feastlog.service.store."):
            module = STORE / name.removeprefix("feastlog.service.store.")
            found += [m for m in (module.with_suffix(".py"), module) if m.exists()]
    return found


def layers() -> dict[str, list[Path]]:
    """Each layer's modules: the port, what sits beside it, each adapter (every package
    under service/store/ and every store the port opens), the application, the
    servicers, the web pages and the CLI."""
    adapters = {
        *opened_by_the_port(),
        *(p for p in STORE.iterdir() if (p / "__init__.py").exists()),
    }
    found = {
        "store port": [STORE / "port.py"],
        "store, beside the port": sorted(
            p for p in STORE.glob("*.py") if p.name != "port.py" and p not in adapters
        ),
    }
    for adapter in sorted(adapters):
        modules = sorted(adapter.rglob("*.py")) if adapter.is_dir() else [adapter]
        found[f"store adapter {adapter.stem}"] = modules
    found["application"] = sorted((ROOT / "service" / "app").rglob("*.py"))
    found["servicers"] = sorted((ROOT / "service" / "grpc" / "servicers").rglob("*.py"))
    found["web"] = sorted((ROOT / "service" / "web").rglob("*.py"))
    found["cli"] = sorted((ROOT / "cli").rglob("*.py"))
    # the client library: each RPC once as a value (calls.py), run by the blocking and
    # the asyncio client (sync.py, aio.py), each its own layer
    client = sorted((ROOT / "client").rglob("*.py"))
    for name in ("calls", "sync", "aio"):
        found[f"client {name}"] = [p for p in client if p.stem == name]
    found["client, the rest"] = [p for p in client if p.stem not in ("calls", "sync", "aio")]
    return found


LAYERS = layers()
# Declared twice in the DuckDB adapter (log.py hands them to outcomes.py): the store's
# part of issue 31 makes them one; strict, so that this list is emptied when it does.


@cache
def definitions(layer: str) -> dict[str, list[str]]:
    """Per use case, where a layer defines it (``path:line name``)."""
    found: dict[str, list[str]] = {name: [] for name in USE_CASES}
    for path in LAYERS[layer]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for name, spellings in USE_CASES.items():
                    if node.name in spellings:
                        where = path.relative_to(ROOT)
                        found[name].append(f"{where}:{node.lineno} {node.name}")
    return found


def cases() -> list[object]:
    """Every (layer, use case), those awaiting the port's part marked."""
    out: list[object] = []
    for layer in LAYERS:
        for name in USE_CASES:
            out.append(pytest.param(layer, name, id=f"{layer}: {name}"))
    return out


@pytest.mark.parametrize(("layer", "use_case"), cases())
def test_a_use_case_is_declared_at_most_once_in_a_layer(layer: str, use_case: str) -> None:
    assert len(definitions(layer)[use_case]) <= 1, definitions(layer)[use_case]


def test_the_layers_are_where_the_test_looks() -> None:
    """A layer moved away would pass the test above with nothing in it."""
    assert all(LAYERS.values()) and all(p.exists() for ps in LAYERS.values() for p in ps)
    adapters = [layer.removeprefix("store adapter ") for layer in LAYERS if "adapter" in layer]
    assert {"duckdb", "postgres", "process"} <= set(adapters)
    for layer in ("application", "servicers", "client calls", "client sync"):
        assert definitions(layer)["GetStandings"], layer
    assert len(services.RPCS) >= 48 and set(services.RPCS) <= {
        f"/{s.name}/{r.name}" for s in services.SERVICES for r in s.rpcs
    }


def client_calls() -> set[tuple[str, str]]:
    """Every (service, RPC) the client library calls: each ``Call("Service", "Method",
    ...)`` or ``Stream(...)`` in client/."""
    found = set()
    for path in (ROOT / "client").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("Call", "Stream"):
                words = [a.value for a in node.args[:2] if isinstance(a, ast.Constant)]
                if len(words) == 2:
                    found.add((str(words[0]), str(words[1])))
    return found


def rpc_cases() -> list[object]:
    """Every RPC of every proto."""
    return [
        pytest.param(rpc.method.containing_service.name, rpc.name, id=rpc.path)
        for rpc in services.RPCS.values()
    ]


@pytest.mark.parametrize(("service", "rpc"), rpc_cases())
def test_the_client_library_calls_every_rpc(service: str, rpc: str) -> None:
    assert (service, rpc) in client_calls()


def test_the_client_check_reads_the_calls() -> None:
    """A client/ whose calls the walk could not read would mark every RPC."""
    assert ("GameService", "CreateGame") in client_calls()
    assert ("FeedService", "WatchAll") in client_calls()
