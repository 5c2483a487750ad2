"""The feastlog command, through click's CliRunner."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.service.app.auth import KEY_FILE
from tests.serverutil import ThreadedServer

SEED = "01" * 32


def test_demo_plays_a_whole_game_on_an_embedded_server_then_replay_reads_it_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["demo", "bon-appetit", "--players", "3", "--seed", SEED])
    assert result.exit_code == 0, result.output
    game_id = re.search(r"game (g_\w+)", result.output)
    assert game_id
    assert "final scores:" in result.output and "(winner)" in result.output
    assert (tmp_path / "feastlog.duckdb").exists()
    assert (tmp_path / KEY_FILE).stat().st_mode & 0o077 == 0  # owner-only
    replay = runner.invoke(cli, ["replay", game_id.group(1)])
    assert replay.exit_code == 0, replay.output
    text = replay.output
    for expected in ("Round 1:", "Round 12:", "Bids revealed", "Gem values now", "Seed revealed"):
        assert expected in text
    assert text.index("Round 1:") < text.index("Round 12:") < text.index("Seed revealed")
    exported = tmp_path / "game.json"
    done = runner.invoke(cli, ["export", game_id.group(1), "-o", str(exported)])
    assert done.exit_code == 0, done.output
    (tmp_path / "feastlog.duckdb").unlink()  # the exported record alone
    from_file = runner.invoke(cli, ["replay", str(exported)])
    assert from_file.exit_code == 0, from_file.output
    assert from_file.output == text


def test_new_finds_the_organiser_key_in_the_servers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(
            cli,
            ["new", "bon-appetit", "--players", "Ann,Brian,Celia", "--server", server.address],
        )
        assert result.exit_code == 0, result.output
        assert re.search(r"^game g_\w+$", result.output, re.M)
        assert len(re.findall(r"^seat \d \w+: seat_\S+$", result.output, re.M)) == 3
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        refused = CliRunner(env={"FEASTLOG_ORGANISER_KEY": ""}).invoke(
            cli, ["new", "bon-appetit", "--players", "Ann,Brian", "--server", server.address]
        )
        assert refused.exit_code == 4
        assert "no organiser key" in refused.output
        with_key = CliRunner().invoke(
            cli,
            [
                "new",
                "bon-appetit",
                "--players",
                "Ann,Brian",
                "--server",
                server.address,
                "--organiser-key",
                server.key,
            ],
        )
        assert with_key.exit_code == 0, with_key.output
    finally:
        server.stop()


def test_new_refuses_a_wrong_player_count_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        result = CliRunner().invoke(
            cli,
            [
                "new",
                "bon-appetit",
                "--players",
                "Ann",
                "--server",
                server.address,
                "--organiser-key",
                server.key,
            ],
        )
        assert result.exit_code == 2
        assert "INVALID_ARGUMENT" in result.output and "2 to 4 players" in result.output
    finally:
        server.stop()


def test_replay_of_an_unknown_game_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    CliRunner().invoke(cli, ["demo", "bon-appetit", "--players", "2"])
    result = CliRunner().invoke(cli, ["replay", "g_missing"])
    assert result.exit_code == 4
    assert "there is no game 'g_missing'" in result.output


def test_rules_lists_the_catalogue() -> None:
    result = CliRunner().invoke(cli, ["rules", "bon-appetit"])
    assert result.exit_code == 0, result.output
    assert "BA-BID-SIZE" in result.output and "BA-I1" in result.output
    assert "options (defaults):" in result.output and "gem_ability=per_bid" in result.output
    assert "BA-SCORE                 [Game End] (never refuses)" in result.output
    masters = CliRunner().invoke(cli, ["rules", "menu-masters"])
    assert "rulesets folded: 1, 2, 3, 4 (new games: 4)" in masters.output
    assert "round_limit=off" in masters.output


def test_new_takes_an_organisers_own_pack_and_refuses_a_broken_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from feastlog.replay.games import engine

    default = engine("bon-appetit").default_pack_bytes().decode()
    own = tmp_path / "house.toml"
    own.write_text(default.replace('id = "bon-appetit-default-1"', 'id = "house-rules-1"'))
    broken = tmp_path / "broken.toml"
    broken.write_text(default.replace("points = 5\n", 'points = "lots"\n', 1))
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        monkeypatch.chdir(tmp_path)
        base = ["new", "bon-appetit", "--players", "Ann,Brian", "--server", server.address]
        result = CliRunner().invoke(cli, [*base, "--pack", str(own)])
        assert result.exit_code == 0, result.output
        replay = CliRunner().invoke(
            cli, ["replay", result.output.split()[1], "--server", server.address]
        )
        assert "pack house-rules-1" in replay.output
        refused = CliRunner().invoke(cli, [*base, "--pack", str(broken)])
        assert refused.exit_code == 2
        assert "INVALID_ARGUMENT" in refused.output and "Fugu Platter" in refused.output
        assert "points" in refused.output
    finally:
        server.stop()


def test_play_shows_a_seat_its_hand_and_moves_and_sends_the_chosen_one(tmp_path: Path) -> None:
    from feastlog.v1 import game_service_pb2 as pb
    from tests.serverutil import create, stub

    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        client = stub(server.address)
        game = create(client, server.key, "bon-appetit", ["Ann", "Brian"], seed=bytes(32))
        ann, brian = (t.token for t in game.seat_tokens)
        base = ["play", game.game_id, "--server", server.address, "--once"]
        result = CliRunner().invoke(cli, [*base, "--token", ann], input="nonsense\n1\n")
        assert result.exit_code == 0, result.output
        out = result.output
        assert "Round 1: the" in out and "you: " in out and "; hand " in out
        assert "  1. " in out and "choose 1 to" in out and "recorded at seq 2" in out
        again = CliRunner().invoke(cli, [*base, "--token", ann])
        assert "not your turn" in again.output
        typed = '{"bon_appetit": {"bid": {}}}\n'
        result = CliRunner().invoke(cli, [*base, "--token", brian], input=typed)
        assert "recorded at seq 3" in result.output, result.output
        assert client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq == 3
    finally:
        server.stop()


def test_new_with_seat_entropy_waits_for_every_join(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        base = ["--server", server.address]
        made = CliRunner().invoke(
            cli,
            [
                "new",
                "bon-appetit",
                "--players",
                "Ann,Brian",
                "--seat-entropy",
                "--organiser-key",
                server.key,
                *base,
            ],
        )
        assert made.exit_code == 0, made.output
        assert "feastlog join" in made.output
        game_id = re.search(r"^game (g_\w+)$", made.output, re.M).group(1)  # type: ignore[union-attr]
        tokens = re.findall(r"^seat \d \w+: (seat_\S+)$", made.output, re.M)
        first = CliRunner().invoke(
            cli, ["join", game_id, "--token", tokens[0], "--entropy", "00ff", *base]
        )
        assert first.exit_code == 0 and "waiting for seat 1" in first.output, first.output
        bad = CliRunner().invoke(cli, ["join", game_id, "--token", tokens[1], "--entropy", "zz"])
        assert bad.exit_code == 2 and "hex" in bad.output
        last = CliRunner().invoke(cli, ["join", game_id, "--token", tokens[1], *base])
        assert last.exit_code == 0 and "has started" in last.output, last.output
    finally:
        server.stop()


def test_standings_through_the_server_and_offline_agree(tmp_path: Path) -> None:
    import json

    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        for i in range(3):
            done = CliRunner().invoke(
                cli,
                [
                    "demo",
                    "bon-appetit",
                    "--players",
                    "3",
                    "--tournament",
                    "spring-cup",
                    "--seed",
                    f"{i + 1:02x}" * 32,
                    "--server",
                    server.address,
                    "--organiser-key",
                    server.key,
                ],
            )
            assert done.exit_code == 0, done.output
        CliRunner().invoke(
            cli,
            [
                "new",
                "bon-appetit",
                "--players",
                "Ann,Brian,Celia",
                "--tournament",
                "spring-cup",
                "--server",
                server.address,
                "--organiser-key",
                server.key,
            ],
        )
        online = CliRunner().invoke(
            cli, ["standings", "spring-cup", "--server", server.address, "--json"]
        )
        assert online.exit_code == 0, online.output
        table = json.loads(online.output)
        assert (table["games_finished"], table["games_running"]) == (3, 1)
        assert sorted(s["name"] for s in table["standings"]) == ["Ann", "Brian", "Celia"]
        assert all(s["games"] == 3 for s in table["standings"])
        missing = CliRunner().invoke(cli, ["standings", "no-such-cup", "--server", server.address])
        assert missing.exit_code == 4 and "NOT_FOUND" in missing.output
        listed = CliRunner().invoke(
            cli, ["games", "--tournament", "spring-cup", "--server", server.address, "--json"]
        )
        assert listed.exit_code == 0, listed.output
        games = json.loads(listed.output)
        assert [(g["over"], g["last_seq"] > 1) for g in games] == [(False, False)] + [
            (True, True)
        ] * 3
        assert all(g["players"] == ["Ann", "Brian", "Celia"] for g in games)
        newest = CliRunner().invoke(cli, ["games", "--limit", "2", "--server", server.address])
        lines = newest.output.splitlines()
        assert newest.exit_code == 0 and len(lines) == 4, newest.output  # header, 2, hint
        assert lines[1].startswith(games[0]["game_id"]) and " running " in lines[1]
        assert lines[2].startswith(games[1]["game_id"]) and " over " in lines[2]
        assert "--limit 0" in lines[3]
        other = CliRunner().invoke(
            cli, ["games", "--kind", "menu-masters", "--server", server.address, "--json"]
        )
        assert other.exit_code == 0 and json.loads(other.output) == []
    finally:
        server.stop()
    every = CliRunner().invoke(
        cli, ["games", "--limit", "0", "--db", str(tmp_path / "feastlog.duckdb"), "--json"]
    )
    assert every.exit_code == 0, every.output
    assert json.loads(every.output) == games
    offline = CliRunner().invoke(
        cli, ["standings", "spring-cup", "--db", str(tmp_path / "feastlog.duckdb"), "--json"]
    )
    assert offline.exit_code == 0, offline.output
    assert json.loads(offline.output) == table
    text = CliRunner().invoke(
        cli, ["standings", "spring-cup", "--db", str(tmp_path / "feastlog.duckdb")]
    )
    assert "3 games finished, 1 still running" in text.output
