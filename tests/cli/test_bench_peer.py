"""The peer benchmark's eventsourcing side plays the same games through the project's fold."""

from __future__ import annotations

from pathlib import Path

import pytest

from feastlog.replay.games.engine import RuleViolation
from scripts.bench_peer import PeerGames, peer_rate, planned


def test_the_peer_plays_the_benchmark_games_to_their_end(tmp_path: Path) -> None:
    plans = planned("bon-appetit", 2, 3)
    commands, seconds = peer_rate(tmp_path, "bon-appetit", plans, 0)
    assert commands == sum(len(p[2]) for p in plans) and seconds > 0


def test_the_peer_checks_every_rule_as_feastlog_does(tmp_path: Path) -> None:
    """A command sent again out of turn is refused by the fold inside the aggregate, and
    nothing is recorded for it."""
    names, seed, commands = planned("bon-appetit", 1, 2)[0]
    app = PeerGames(
        env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp_path / "p")}
    )
    game_id = app.create("bon-appetit", names, seed)
    actor, body = commands[0]
    app.submit(game_id, actor, body)
    with pytest.raises(RuleViolation):
        app.submit(game_id, actor, body)
    assert app.repository.get(game_id).version == 2  # created, one command
    app.close()
