"""What acts after a commit subscribes to the stream of committed rows
(``service/store/stream.py``): no code that commits calls a feature's after-commit step by
name.  Read from the source: in every function of ``service/`` and ``cli/`` that awaits a
database commit (``….db.commit(…)``, ``Database.commit``), no call to what the stream's
subscribers do (a game's advance in memory, its timer, a tournament's result, the tree's
catch-up); and each of those subscribers is on the stream, named in ``Application``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# what the stream's subscribers do after a commit, by the method's name
AFTER_COMMIT = {
    "advance": "LiveGame.advance (memory moves with the stream: LiveGames.committed)",
    "advanced": "AtTable.advanced (timers and calls: AtTable.committed)",
    "start": "LiveGames.start (a begun game is live by the stream)",
    "settle": "LiveGames.settle (LiveGames.committed)",
    "ended_soon": "Tournaments.ended_soon (Tournaments.committed)",
    "game_ended": "Tournaments.game_ended (Tournaments.committed)",
    "catch_up": "LogTree.catch_up / Database.catch_up (the stream)",
}
# the receivers those names are features on (``self.live.start`` is one; ``task.start`` no)
RECEIVERS = {"live", "game", "table", "tournaments", "signing", "tree", "db", "app", "self"}
WRITER = {ROOT / "service" / "store" / "writer.py", ROOT / "service" / "store" / "stream.py"}


def _commits(function: ast.AST) -> bool:
    """Whether a function awaits a database commit."""
    for node in ast.walk(function):
        if isinstance(node, ast.Await) and isinstance(node.value, ast.Call):
            called = node.value.func
            if not isinstance(called, ast.Attribute) or called.attr != "commit":
                continue
            if "db" in ast.unparse(called.value).split("."):
                return True
    return False


def _receiver(call: ast.Call) -> str:
    assert isinstance(call.func, ast.Attribute)
    return ast.unparse(call.func.value).split(".")[-1]


def after_commit_calls() -> list[str]:
    """Every call by name to an after-commit step in a function that commits."""
    found = []
    for folder in ("service", "cli"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path in WRITER or path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            tree = ast.parse(path.read_text(), str(path))
            for function in ast.walk(tree):
                if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                if not _commits(function):
                    continue
                for node in ast.walk(function):
                    if (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr in AFTER_COMMIT
                        and _receiver(node) in RECEIVERS
                    ):
                        where = f"{path.relative_to(ROOT)}:{node.lineno} in {function.name}"
                        found.append(f"{where}: {AFTER_COMMIT[node.func.attr]}")
    return found


def test_no_code_that_commits_calls_an_after_commit_step_by_name() -> None:
    assert after_commit_calls() == []


def test_the_guard_finds_such_a_call(tmp_path: Path) -> None:
    """The check itself can fail: a function that commits and then advances memory."""
    source = (
        "async def decide(self, game, done):\n"
        "    await self.db.commit(done.batch)\n"
        "    game.advance(done.rows, done.tables, done.facts)\n"
    )
    function = ast.parse(source).body[0]
    assert _commits(function)
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
    named = [
        c
        for c in calls
        if isinstance(c.func, ast.Attribute)
        and c.func.attr in AFTER_COMMIT
        and _receiver(c) in RECEIVERS
    ]
    assert len(named) == 1


def test_every_subscriber_is_on_the_stream() -> None:
    """Each feature's ``committed`` is subscribed where the application is composed."""
    source = (ROOT / "service" / "app" / "application.py").read_text()
    for subscriber in (
        "self.live.committed",
        "self.table.committed",
        "self.tournaments.committed",
        "self.signing.committed",
    ):
        assert "db.stream.subscribe(" in source and subscriber in source, subscriber
