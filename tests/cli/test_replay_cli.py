"""The arbiter's commands offline on a DuckDB file (CliRunner), and a smoke test of
replay, export, verify and explain over every game kind whose engine is present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.presentation.explain import explain, what_if
from feastlog.replay import games
from feastlog.replay.record.audit import verify
from feastlog.replay.record.export import export_record, to_text, verify_document
from feastlog.replay.record.history import command_of, refold
from tests.recordutil import Built, build, store_games


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Built, Built]:
    """A file with a finished game and a running one."""
    path = tmp_path_factory.mktemp("cli") / "games.duckdb"
    done, live = build(players=3, seed_byte=3), build(players=3, seed_byte=4, stop_after=4)
    store_games(path, [done, live])
    return path, done, live


def run(*args: str) -> tuple[int, str]:
    """Invoke the CLI."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout


def test_replay_at_a_seq_as_a_seat_of_a_live_game_shows_only_that_seat(
    stored: tuple[Path, Built, Built],
) -> None:
    path, _, live = stored
    game_id = live.rows[0].game_id
    code, out = run("replay", game_id, "--db", str(path), "--at", "4", "--as", "seat:1")
    assert code == 0, out
    view = json.loads(out[out.index("{") :])
    assert [("hand" in s) for s in view["seats"]] == [False, True, False]
    assert all("sealed_bid" not in s for i, s in enumerate(view["seats"]) if i != 1)
    assert "as seat:1" in out and "Round 1" in out


def test_explain_whatif_and_stats_offline(stored: tuple[Path, Built, Built]) -> None:
    path, done, _ = stored
    game_id = done.rows[0].game_id
    code, out = run("explain", game_id, "4", "--db", str(path))
    assert code == 0 and "BA-BID-OWN (2. Bidding Phase)" in out and "who could see" in out
    code, out = run("whatif", game_id, "4", '{"bid": {"gems": []}}', "--db", str(path), "--json")
    assert code == 0 and json.loads(out)["legal"] is True
    gems = ["BON_APPETIT_GEM_RED"] * 3 + ["BON_APPETIT_GEM_BLUE"]
    greedy = json.dumps({"bid": {"gems": gems}})
    code, out = run("whatif", game_id, "4", greedy, "--db", str(path))
    assert code == 4 and "not legal" in out and "BA-BID-" in out  # refused, as documented
    code, out = run("stats", "--db", str(path), "--json")
    assert code == 0
    (kind,) = json.loads(out)
    assert kind["game_kind"] == "bon-appetit" and kind["games"] == 1
    assert sum(kind["win_rate_by_seat"]) >= 1 and kind["value"] > 0
    code, out = run("rejections", game_id, "--db", str(path))
    assert code == 0 and "0 rejected commands" in out


@pytest.mark.parametrize("kind", games.kinds())
def test_every_game_kind_replays_exports_verifies_and_explains(kind: str) -> None:
    engine = games.engine(kind)
    built = build(kind=kind, players=engine.spec.min_seats, seed_byte=11, stop_after=60)
    rows = built.rows
    folded = refold(rows, built.seed, built.pack_bytes)
    report = verify(rows, built.pack_bytes, built.seed)
    assert report.ok, report.summary()
    document = to_text(export_record(rows, built.pack_bytes))
    assert verify_document(document).ok
    assert (built.seed.hex() in document) == (rows[-1].kind == "seed_reveal")
    found = explain(folded, 2)
    assert found["checks"] and all(c["text"] for c in found["checks"])
    answer = what_if(folded, 2, rows[1].actor, command_of(rows[1]))
    assert answer["legal"] and answer["state_hash"] == rows[1].state_hash


def test_replay_of_an_export_honours_at_and_as(tmp_path: Path) -> None:
    """``feastlog replay EXPORT.json --at N --as seat:K``: what seat K saw at seq N."""
    done = build(players=3, seed_byte=7)
    exported = tmp_path / "game.json"
    exported.write_text(to_text(export_record(done.rows, done.pack_bytes)))
    code, whole = run("replay", str(exported))
    assert code == 0 and "Game over" in whole
    code, out = run("replay", str(exported), "--at", "4", "--as", "seat:1")
    assert code == 0, out
    assert "-- the table after seq 4, as seat:1 saw it --" in out and "Game over" not in out
    view = json.loads(out[out.index("{") :])
    folded = refold(done.rows, done.seed, done.pack_bytes)
    then = folded.tables[3].game
    assert view["round"] == then.round and not view["over"]
    assert [("hand" in s) for s in view["seats"]] == [False, True, False]
    assert view["seats"][1]["hand"] == list(then.players[1].hand)
    code, out = run("replay", str(exported), "--at", "4", "--as", "arbiter")
    assert code == 0 and all("hand" in s for s in json.loads(out[out.index("{") :])["seats"])
    wrong_seat = CliRunner().invoke(cli, ["replay", str(exported), "--as", "seat:7"])
    assert wrong_seat.exit_code == 2 and "Traceback" not in wrong_seat.output
    assert "there is no seat 7 in this game" in wrong_seat.output
    assert "seat:2 (Celia)" in wrong_seat.output
    too_far = CliRunner().invoke(cli, ["replay", str(exported), "--at", str(len(done.rows) + 1)])
    assert too_far.exit_code == 4 and f"it has seqs 1 to {len(done.rows)}" in too_far.output
