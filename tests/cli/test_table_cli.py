"""``feastlog call``, ``calls``, ``case``, ``verify`` of a case file, ``rule … --call`` and
``rule rewind``, and ``play``'s call, through a real server (CliRunner)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from tests.serverutil import ProcessServer, create, play_to_end, stub

KEY = "org_test-organiser-key-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessServer]:
    running = ProcessServer(tmp_path_factory.mktemp("tablecli") / "games.duckdb", KEY)
    try:
        yield running
    finally:
        running.terminate()


def run(server: ProcessServer, *args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, [*args, "--server", server.address, "--organiser-key", KEY], input=input
    )
    return result.exit_code, result.output


def offline(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_call_queue_case_ruling_and_rewind_from_the_command_line(
    server: ProcessServer, tmp_path: Path
) -> None:
    client = stub(server.address)
    game = create(client, KEY, "picky-eaters", ["Ann", "Brian"], seed=bytes([7]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    play_to_end(client, game.game_id, tokens, seed=5, stop_after=3)

    code, out = run(
        server,
        "call",
        game.game_id,
        "--token",
        tokens[1],
        "--seq",
        "3",
        "--claim",
        "Ann took two cards",
        "--hold",
    )
    assert code == 0, out
    assert out.strip() == "call 5 recorded (the game is held)"
    code, out = run(
        server, "call", game.game_id, "--token", tokens[0], "--seq", "9", "--claim", "a row to come"
    )
    assert code == 4 and "there is no row 9 to call about" in out, out  # one line, exit 4

    code, out = run(server, "calls", "--open")
    assert code == 0, out
    assert (
        f"{game.game_id} call 5: seat 1 about seq 3 (holding the game): Ann took two cards" in out
    )
    code, out = run(server, "calls", game.game_id, "--json")
    assert json.loads(out)[0]["state"] == "open"

    bundle = tmp_path / "case.json"
    code, out = run(server, "case", game.game_id, "5", "--token", tokens[1], "-o", str(bundle))
    assert code == 0, out
    code, out = offline("verify", str(bundle))
    assert code == 0 and "verifies" in out, out
    tampered = json.loads(bundle.read_text())
    tampered["rows"][2]["recorded_at"] = "2020-01-01T00:00:00.000000Z"
    (tmp_path / "bad.json").write_text(json.dumps(tampered))
    code, out = offline("verify", str(tmp_path / "bad.json"))
    assert code == 1 and "does NOT verify" in out, out
    code, out = run(server, "case", game.game_id, "5", "--html")
    assert code == 0 and "<h1>Call 5 of game" in out

    code, out = run(
        server,
        "rule",
        game.game_id,
        "rewind",
        "--to-seq",
        "2",
        "--reason",
        "Ann takes her move back",
        "--call",
        "5",
        "--verdict",
        "upheld",
    )
    assert code == 0 and out.startswith("ruling recorded at seq 6"), out
    code, out = run(
        server,
        "rule",
        game.game_id,
        "note",
        "--reason",
        "again",
        "--call",
        "5",
        "--verdict",
        "denied",
    )
    assert code == 4 and "was already upheld at seq 6" in out, out
    code, out = run(server, "rule", game.game_id, "rewind", "--reason", "no target")
    assert code == 2 and "--to-seq" in out, out
    code, out = run(server, "calls", game.game_id)
    assert "upheld at seq 6 by organiser: Ann takes her move back" in out

    code, out = run(server, "replay", game.game_id)
    assert code == 0, out
    assert "Brian calls the arbiter about seq 3, holding the game: Ann took two cards" in out
    assert "Arbiter ruling by organiser: rewind to seq 2 (reason: Ann takes her move back)" in out
    assert "the seats' moves of seqs 3 to 5 are superseded" in out
    assert "Brian's call at seq 5 is upheld: Ann takes her move back" in out
    code, out = run(server, "explain", game.game_id, "3")
    assert code == 0 and "superseded by the rewind at seq 6: an abandoned line" in out, out
    page = tmp_path / "page.html"
    code, out = run(server, "replay", game.game_id, "--html", str(page))
    assert code == 0, out
    assert '"superseded_by":6' in page.read_text().replace(" ", "")  # the abandoned line, marked

    play_to_end(client, game.game_id, tokens, seed=6)
    code, out = run(server, "audit", game.game_id)
    assert code == 0, out
    exported = tmp_path / "record.json"
    code, out = run(server, "export", game.game_id, "-o", str(exported))
    assert code == 0, out
    code, out = offline("verify", str(exported))
    assert code == 0, out


def test_play_can_call_the_arbiter(server: ProcessServer) -> None:
    client = stub(server.address)
    game = create(client, KEY, "bon-appetit", ["Ann", "Brian"], seed=bytes([8]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    play_to_end(client, game.game_id, tokens, seed=2, stop_after=1)
    for token in tokens:  # whoever is to act answers with a call
        code, out = run(
            server,
            "play",
            game.game_id,
            "--token",
            token,
            "--once",
            input="hold 2 the first bid was out of turn\n",
        )
        assert code == 0, out
        if "recorded at seq 3" in out:
            break
    else:
        pytest.fail("no seat was to act")
    code, out = run(server, "calls", game.game_id, "--json")
    assert [c["claim"] for c in json.loads(out)] == ["the first bid was out of turn"]


def test_clocks_and_pause_from_the_command_line(server: ProcessServer) -> None:
    code, out = run(
        server, "new", "picky-eaters", "--players", "Ann,Dev", "--option", "clock=bank:600+5"
    )
    assert code == 0, out
    game_id = next(w for w in out.split() if w.startswith("g_"))
    code, out = run(server, "clocks", game_id)
    assert code == 0 and out.startswith("bank clock, time-out: arbiter"), out
    assert "600.0 s left" in out or "599." in out
    code, out = run(server, "rule", game_id, "pause", "--reason", "lunch")
    assert code == 0, out
    code, out = run(server, "clocks", game_id, "--json")
    found = json.loads(out)
    assert found["paused"] and not any(s["running"] for s in found["seats"])
    code, out = run(server, "rule", game_id, "pause", "--reason", "again")
    assert code == 4 and "already paused" in out, out
    code, out = run(
        server, "new", "picky-eaters", "--players", "Ann,Dev", "--option", "clock=move:2"
    )
    assert code == 2 and "5 to 86400" in out, out  # a bad option: usage, nothing made
