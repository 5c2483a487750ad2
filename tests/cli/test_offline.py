"""Offline reads (service/app/offline.py): the application's read use cases over a DuckDB
file no server holds, or an exported record, with the same visibility policy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from feastlog.replay.record.export import export_record, to_text
from feastlog.replay.record.visibility import Hidden
from feastlog.service.app.auth import ORGANISER, Caller
from feastlog.service.app.errors import GameNotFound, SealedRecord, Unauthenticated
from feastlog.service.app.offline import OfflineFile, OfflineRecord, answer, answers, open_offline
from tests.recordutil import Built, build, store_games

ANYONE = Caller("anonymous")


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Built, Built]:
    """A file with a finished game and a running one."""
    path = tmp_path_factory.mktemp("offline") / "games.duckdb"
    done, running = build(players=3, seed_byte=21), build(players=3, seed_byte=22, stop_after=5)
    store_games(path, [done, running])
    return path, done, running


def test_a_file_answers_views_replays_lists_and_audits(
    stored: tuple[Path, Built, Built],
) -> None:
    path, done, running = stored
    reads = OfflineFile(str(path))
    done_id, running_id = done.rows[0].game_id, running.rows[0].game_id
    now = answer(reads.replays.view(ANYONE, running_id))
    assert now.seq == len(running.rows) and str(now.viewer) == "spectator"
    assert all("hand" not in s for s in now.view["seats"])
    listed = answer(reads.replays.games(ANYONE))
    assert {(g.game_id, g.last_seq, g.over) for g in listed.games} == {
        (done_id, len(done.rows), True),
        (running_id, len(running.rows), False),
    }
    reports = list(answers(reads.replays.verify_all(ORGANISER)))
    assert [r.report.ok for r in reports] == [True, True] and reports[0].total == 2
    with pytest.raises(Unauthenticated):
        list(answers(reads.replays.verify_all(ANYONE)))
    with pytest.raises(GameNotFound):
        answer(reads.replays.view(ANYONE, "g_nothing"))


def test_a_file_follows_the_visibility_policy(stored: tuple[Path, Built, Built]) -> None:
    path, done, running = stored
    reads = OfflineFile(str(path))
    done_id, running_id = done.rows[0].game_id, running.rows[0].game_id
    with pytest.raises(Hidden):
        answer(reads.replays.replay(ANYONE, running_id, viewer="arbiter"))
    with pytest.raises(Hidden):
        answer(reads.replays.export(ANYONE, running_id))
    with pytest.raises(Hidden):
        answer(reads.replays.explain(ANYONE, running_id, 2))
    assert not answer(reads.replays.export(ORGANISER, running_id)).complete
    # once the game is over its record is public: anyone, as anyone
    as_arbiter = answer(reads.replays.replay(ANYONE, done_id, to_seq=3, viewer="arbiter"))
    assert all("hand" in s for s in as_arbiter.steps[-1].view["seats"])
    assert answer(reads.replays.export(ANYONE, done_id)).complete
    assert answer(reads.replays.explain(ANYONE, done_id, 2)).lines


def test_an_exported_record_answers_like_the_file(
    stored: tuple[Path, Built, Built], tmp_path: Path
) -> None:
    path, done, running = stored
    from_file = OfflineFile(str(path))
    record = tmp_path / "done.feastlog.json"
    record.write_text(to_text(export_record(done.rows, done.pack_bytes)))
    from_record = open_offline(str(record))
    assert isinstance(from_record, OfflineRecord)
    game_id = done.rows[0].game_id
    for viewer in ("seat:1", "spectator"):
        a = answer(from_file.replays.replay(ORGANISER, game_id, viewer=viewer))
        b = answer(from_record.replays.replay(ORGANISER, game_id, viewer=viewer))
        assert [s.view for s in a.steps] == [s.view for s in b.steps]
        assert [s.facts for s in a.steps] == [s.facts for s in b.steps]
    assert answer(from_record.replays.verify(ANYONE, game_id)).ok
    assert answer(from_record.replays.rejections(ANYONE, game_id)) == []
    with pytest.raises(GameNotFound):
        answer(from_record.replays.view(ANYONE, "g_other"))
    sealed = OfflineRecord(to_text(export_record(running.rows, running.pack_bytes)), "running")
    with pytest.raises(SealedRecord):
        answer(sealed.replays.view(ANYONE, running.rows[0].game_id))
    assert answer(sealed.replays.verify(ANYONE, "")).ok
    assert json.loads(answer(sealed.replays.export(ORGANISER, "")).text)["server_seed"] is None


def test_offline_calls_need_no_event_loop_even_inside_one(
    stored: tuple[Path, Built, Built],
) -> None:
    path, done, _ = stored
    reads = OfflineFile(str(path))

    async def inside() -> int:
        return answer(reads.replays.view(ANYONE, done.rows[0].game_id)).seq

    assert asyncio.run(inside()) == len(done.rows)
