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
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "service" / "store"

USE_CASES: dict[str, frozenset[str]] = {
    name: frozenset(spellings)
    for name, spellings in {
        "create": {"create", "create_game", "CreateGame"},
        "join": {"join", "join_game", "JoinGame"},
        "submit": {"submit", "submit_command", "SubmitCommand"},
        "view": {"view", "get_view", "GetView"},
        "legal": {"legal", "legal_commands", "list_legal_commands", "ListLegalCommands"},
        "watch": {"watch", "watch_game", "WatchGame"},
        "game list": {"games", "game_list", "game_list_page", "list_games", "listed", "ListGames"},
        "state at": {"state_at", "get_state_at", "GetStateAt"},
        "replay": {"replay", "stream_replay", "StreamReplay"},
        "page": {"page"},
        "export": {"export", "export_record", "ExportRecord"},
        "export all": {"export_all"},
        "audit": {"audit", "verify", "verify_game", "VerifyGame"},
        "verify all": {"verify_all", "verify_all_games", "VerifyAllGames"},
        "audit all": {"audit_all"},
        "explain": {"explain", "explain_event", "ExplainEvent"},
        "what_if": {"what_if", "WhatIf"},
        "rejections": {"rejections", "list_rejections", "ListRejections"},
        "rule": {"rule", "submit_ruling", "SubmitRuling"},
        "standings": {"standings", "get_standings", "GetStandings"},
        "stats": {"stats", "get_stats", "GetStats"},
        "arbiters": {"arbiters", "list_arbiters", "ListArbiters"},
        "add arbiter": {"add_arbiter", "AddArbiter"},
        "revoke arbiter": {"revoke_arbiter", "RevokeArbiter"},
        "server info": {"server_info", "get_server_info", "GetServerInfo"},
        "tree head": {"tree_head", "get_tree_head", "GetTreeHead"},
        "inclusion proof": {"inclusion_proof", "get_inclusion_proof", "GetInclusionProof"},
        "consistency proof": {"consistency_proof", "get_consistency_proof", "GetConsistencyProof"},
        "add cosignature": {"add_cosignature", "AddCosignature"},
        "call arbiter": {"call_arbiter", "CallArbiter"},
        "calls": {"calls", "list_calls", "ListCalls"},
        "watch calls": {"watch_calls", "WatchCalls"},
        "case file": {"case_file", "get_case_file", "GetCaseFile"},
        "clocks": {"clocks", "get_clocks", "GetClocks"},
    }.items()
}


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
    for layer in ("application", "servicers", "cli"):
        assert definitions(layer)["standings"], layer
