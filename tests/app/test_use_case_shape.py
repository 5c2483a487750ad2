"""Every use case has one shape (issue 44): a coroutine of a feature's, given who calls
first, awaited for its answer (a value, or a stream checked before its first item, so a
refusal comes before anything is sent); and the application only composes the features.

The use cases are found by their names in every layer's words, as the use-case test
knows them (``test_use_case_definitions.USE_CASES``: every RPC of every proto, and the
page), among the public methods of the feature modules of ``service/app/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.app.test_use_case_definitions import USE_CASES

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "service" / "app"
# The feature modules and the class of each that holds its use cases.
FEATURES = {
    "games.py": "Games",
    "reads.py": "Replays",
    "proving.py": "Proving",
    "tournament.py": "Tournaments",
    "table.py": "AtTable",
    "arbiters.py": "Arbiters",
    "feed.py": "Broadcaster",
}
SPELLINGS = {spelling: name for name, spellings in USE_CASES.items() for spelling in spellings}


def use_case_methods() -> list[tuple[str, str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(feature class, use case, its method) for every public method that is a use case."""
    found = []
    for module, cls in FEATURES.items():
        tree = ast.parse((APP / module).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == cls:
                found += [
                    (cls, SPELLINGS[item.name], item)
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    and not item.name.startswith("_")
                    and item.name in SPELLINGS
                ]
    return found


METHODS = use_case_methods()


def test_the_features_hold_the_use_cases() -> None:
    # the finder finds them: most RPCs are one of these features' methods
    named = {use_case for _, use_case, _ in METHODS}
    assert len(named) >= 40, sorted(named)
    assert {"SubmitCommand", "StreamReplay", "GetTreeHead", "PairRound", "WatchAll"} <= named


@pytest.mark.parametrize(
    "cls_method", [(c, m) for c, _, m in METHODS], ids=[f"{c}.{m.name}" for c, _, m in METHODS]
)
def test_a_use_case_is_awaited_and_told_who_calls(
    cls_method: tuple[str, ast.FunctionDef | ast.AsyncFunctionDef],
) -> None:
    cls, method = cls_method
    assert isinstance(method, ast.AsyncFunctionDef), f"{cls}.{method.name} is not a coroutine"
    params = [a.arg for a in method.args.args]
    assert params[:2] == ["self", "caller"], f"{cls}.{method.name}{params}: caller comes first"


def test_the_application_only_composes() -> None:
    # Application's methods: its making, its start and its end, and the small adapters
    # it hands the features (its clock, a commit run to its end, a tournament's places)
    tree = ast.parse((APP / "application.py").read_text())
    (application,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    methods = {
        n.name for n in application.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assert methods <= {
        "__init__",
        "start",
        "drain",
        "other_nodes_committed",
        "_clock",
        "_commit_to_the_end",
        "_places",
    }, methods
    assert not (methods & set(SPELLINGS)), "a use case is a feature's, not the application's"
