"""The CLI beside its server: finding it, keys sent only to it, TLS, the request log,
named arbiters, replays as a seat after the end, verify's header checks, play's loop."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner, Result

from feastlog.cli.main import cli
from feastlog.client.tls import Tls
from feastlog.service import announce
from feastlog.service.store.duckdb.mark import SUFFIX as MARK_SUFFIX
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from tests.serverutil import ThreadedServer, bearer, play_to_end, stub
from tests.tlsutil import make_pki

SEED = "02" * 32
NO_ENV = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": "", "FEASTLOG_CA": ""}


def run(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:
    """Invoke the CLI with no key, server or CA from the environment unless given."""
    return CliRunner(env={**NO_ENV, **(env or {})}).invoke(cli, list(args), input=input)


def game_of(result: Result) -> str:
    """The game id a command printed (text or --json)."""
    assert result.exit_code == 0, result.output
    found = re.search(r"\b(g_[0-9a-f]{16})\b", result.output)
    assert found, result.output
    return found.group(1)


def test_every_command_finds_the_server_that_holds_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        assert announce.read("feastlog.duckdb") is not None
        game_id = game_of(run("demo", "bon-appetit", "--players", "2", "--seed", SEED, "--json"))
        listed = stub(server.address).ListGames(pb.ListGamesRequest())
        assert game_id in [g.game_id for g in listed.games]  # played through the server
        for args in (
            ("replay", game_id),
            ("replay", game_id, "--at", "5", "--as", "seat:1"),
            ("audit", game_id),
            ("audit", "--all"),
            ("explain", game_id, "3"),
            ("rejections", game_id),
            ("stats",),
            ("export", game_id, "-o", "game.json"),
        ):
            done = run(*args)
            assert done.exit_code == 0, (args, done.output)
        listed = stub(server.address).ListGames(pb.ListGamesRequest())
        assert len(listed.games) == 1
    finally:
        server.stop()
    assert announce.read("feastlog.duckdb") is None  # gone with a clean stop
    offline = run("replay", game_id)  # and the file alone, now no server holds it
    assert offline.exit_code == 0 and "Seed revealed" in offline.output


def test_no_output_file_is_written_over_a_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export GAME -o games.duckdb --db games.duckdb` replaced the live database with one
    game's JSON (through its server, and offline).  An output that is a DuckDB database,
    its write-ahead log, commit mark or announcement, or an organiser key file is refused (exit 2),
    through the server and from the file, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        game_id = game_of(run("demo", "bon-appetit", "--players", "2", "--seed", SEED, "--json"))
        announcement = f"feastlog.duckdb{announce.SUFFIX}"
        mark = f"feastlog.duckdb{MARK_SUFFIX}"
        kept = {
            name: Path(name).read_bytes()
            for name in ("feastlog.duckdb", "feastlog-organiser.key", announcement, mark)
            if Path(name).exists()
        }
        assert "feastlog.duckdb" in kept and announcement in kept and mark in kept
        for output in [*kept, "feastlog.duckdb.wal"]:
            for args in (("export", game_id, "-o", output), ("replay", game_id, "--html", output)):
                done = run(*args)
                assert done.exit_code == 2, (args, done.output)
                assert "writing there would destroy it" in done.output, args
        assert {name: Path(name).read_bytes() for name in kept} == kept
        assert run("export", game_id, "-o", "game.json").exit_code == 0  # any other file
    finally:
        server.stop()
    before = Path("feastlog.duckdb").read_bytes()
    offline = run("export", "--all", "-o", "feastlog.duckdb")
    assert offline.exit_code == 2 and Path("feastlog.duckdb").read_bytes() == before


def test_a_stale_announcement_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    game_id = game_of(run("demo", "bon-appetit", "--players", "2", "--json"))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = announce.Announcement("127.0.0.1:9", gone.pid, "0" * 32)
    announce.write("feastlog.duckdb", stale)  # a server killed without its clean stop
    assert announce.read("feastlog.duckdb") is None
    done = run("replay", game_id)
    assert done.exit_code == 0 and "Seed revealed" in done.output
    # damaged or copied: a pid past any pid ended `games` in OverflowError (exit 70), init's
    # or a process group's counted as alive, a copy's sent commands to the original's server
    here = str(Path("feastlog.duckdb").resolve())
    for pid, database in ((10**30, here), (1, here), (-1, here), (os.getpid(), "/else.duckdb")):
        announce.write(
            "feastlog.duckdb", announce.Announcement("127.0.0.1:9", pid, "0" * 32, False, database)
        )
        assert announce.read("feastlog.duckdb") is None, (pid, database)
        listed = run("games")
        assert listed.exit_code == 0 and game_id in listed.output, (pid, listed.output)
    mine = os.getpid()  # alive, the file's own: only its address is damaged
    announce.write(
        "feastlog.duckdb", announce.Announcement("\x1b[2J:9", mine, "0" * 32, False, here)
    )
    assert announce.read("feastlog.duckdb") is None


def test_the_key_file_goes_only_to_its_own_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    log = (tmp_path / "b-requests.log").open("w")
    mine = ThreadedServer(tmp_path / "a" / "feastlog.duckdb")
    other = ThreadedServer(tmp_path / "b" / "feastlog.duckdb", announce=False, request_log=log)
    try:
        monkeypatch.chdir(tmp_path / "a")
        here = run("new", "bon-appetit", "--players", "Ann,Brian")
        assert here.exit_code == 0, here.output
        for how in (["--server", other.address], []):
            env = {} if how else {"FEASTLOG_SERVER": other.address}
            refused = run("new", "bon-appetit", "--players", "Ann,Brian", *how, env=env)
            assert refused.exit_code == 4, refused.output
            assert "sent only to the server that announced itself" in refused.output
        given = run(
            "new", "bon-appetit", "--players", "Ann,Brian", "--server", other.address,
            "--organiser-key", other.key,
        )  # fmt: skip
        assert given.exit_code == 0, given.output
    finally:
        mine.stop()
        other.stop()
        log.close()
    lines = [json.loads(line) for line in (tmp_path / "b-requests.log").read_text().splitlines()]
    assert [(r["rpc"], r["role"]) for r in lines] == [("CreateGame", "organiser")]
    assert mine.key not in (tmp_path / "b-requests.log").read_text()


def test_tls_round_trip_and_client_certificates(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    db = tmp_path / "feastlog.duckdb"
    tls = Tls.load(str(pki.server_cert), str(pki.server_key), None)
    server = ThreadedServer(db, announce=False, tls=tls)
    try:
        base = ["--server", server.address, "--organiser-key", server.key]
        made = run(
            "new", "bon-appetit", "--players", "Ann,Brian", "--json", *base, "--ca", str(pki.ca)
        )
        assert made.exit_code == 0, made.output
        game_id = json.loads(made.output)["game_id"]
        seen = run("replay", game_id, *base, env={"FEASTLOG_CA": str(pki.ca)})
        assert seen.exit_code == 0 and "Seats: Ann (seat 0), Brian (seat 1)" in seen.output
        for ca in ([], ["--ca", str(pki.other_ca)]):  # the system's roots; a CA that signed nothing
            refused = run("replay", game_id, *base, *ca)
            assert refused.exit_code == 3, refused.output
            assert "cannot reach the server" in refused.output and "Traceback" not in refused.output
        # as a user runs it: one line on standard error, gRPC's own log lines kept back,
        # and no ": OK" of gRPC's before the hint
        command = [sys.executable, "-m", "feastlog.cli.main", "replay", game_id, *base]
        wrong_ca = subprocess.run(
            [*command, "--ca", str(pki.other_ca)],
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"},
        )
        assert wrong_ca.returncode == 3 and len(wrong_ca.stderr.splitlines()) == 1, wrong_ca.stderr
        assert "CERTIFICATE_VERIFY_FAILED" in wrong_ca.stderr
        assert wrong_ca.stderr.rstrip().endswith(
            "unable to get local issuer certificate (TLS: check --ca, --tls-cert and --tls-key)"
        ), wrong_ca.stderr
        with pytest.raises(grpc.RpcError):  # no plain-text client gets through
            stub(server.address).GetView(pb.GetViewRequest(game_id=game_id), timeout=5)
    finally:
        server.stop()
    mutual = Tls.load(str(pki.server_cert), str(pki.server_key), str(pki.ca))
    server = ThreadedServer(db, announce=False, tls=mutual)
    try:
        base = ["--server", server.address, "--ca", str(pki.ca), "--organiser-key", server.key]
        no_cert = run("replay", game_id, *base)
        assert no_cert.exit_code == 3, no_cert.output
        client = ["--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key)]
        with_cert = run("replay", game_id, *base, *client)
        assert with_cert.exit_code == 0, with_cert.output
        missing = run("replay", game_id, *base, "--tls-cert", str(tmp_path / "nope.pem"))
        assert missing.exit_code == 3 and "--tls-key" in missing.output
    finally:
        server.stop()


def test_the_request_log_holds_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "requests.log"
    log = path.open("w")
    server = ThreadedServer(tmp_path / "feastlog.duckdb", request_log=log)
    try:
        made = json.loads(run("new", "bon-appetit", "--players", "Ann,Brian", "--json").output)
        tokens = [s["token"] for s in made["seats"]]
        game_id = made["game_id"]
        played = run("play", game_id, "--token", tokens[0], "--once", input="1\n")
        assert played.exit_code == 0, played.output
        bad = run("play", game_id, "--token", "seat_not-a-real-token", "--once")
        assert bad.exit_code == 4 and "UNAUTHENTICATED" in bad.output
        added = json.loads(run("arbiter", "add", "dana", "--json").output)
        ruled = run(
            "rule", game_id, "note", "--reason", "a secret reason", "--organiser-key", added["key"]
        )
        assert ruled.exit_code == 0, ruled.output
        finished = game_of(run("demo", "bon-appetit", "--players", "2", "--seed", SEED))
        assert run("export", finished, "-o", "finished.json").exit_code == 0
        seed = json.loads(Path("finished.json").read_text())["server_seed"]
    finally:
        server.stop()
        log.close()
    text = path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines and all(
        set(r) == {"time", "rpc", "game_id", "role", "status", "ms"} for r in lines
    )
    seen = {(r["rpc"], r["role"], r["status"]) for r in lines}
    assert ("CreateGame", "organiser", "OK") in seen
    assert ("SubmitCommand", "seat:0", "OK") in seen
    assert ("GetView", "unknown", "UNAUTHENTICATED") in seen
    assert ("SubmitRuling", "arbiter:dana", "OK") in seen
    assert all(r["game_id"] in ("", game_id, finished) for r in lines)
    secrets = [*tokens, server.key, added["key"], "a secret reason", SEED, seed]
    assert [s for s in secrets if s in text] == []


def test_named_arbiters_rule_by_name_and_a_revoked_key_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        game_id = game_of(run("new", "bon-appetit", "--players", "Ann,Brian"))
        added = run("arbiter", "add", "alice", "--json")
        assert added.exit_code == 0, added.output
        key = json.loads(added.output)["key"]
        assert key.startswith("arb_")
        again = run("arbiter", "add", "alice")
        assert again.exit_code == 4 and "already holds a key" in again.output
        as_alice = ["--organiser-key", key]
        ruled = run("rule", game_id, "note", "--reason", "clock stopped", *as_alice)
        assert ruled.exit_code == 0, ruled.output
        by_organiser = run("rule", game_id, "note", "--reason", "clock started")
        assert by_organiser.exit_code == 0, by_organiser.output
        told = run("replay", game_id).output
        assert "Arbiter ruling by alice: note: clock stopped" in told
        assert "Arbiter ruling by organiser: note: clock started" in told
        rows = [json.loads(json.dumps(r)) for r in _exported_rows(game_id, tmp_path)]
        rulings = [
            record_pb2.Command.FromString(bytes.fromhex(r["body"])).arbiter.ruled_by
            for r in rows
            if r["kind"] == "command" and r["actor"] == "arbiter"
        ]
        assert rulings == ["alice", "organiser"]
        create = run("new", "bon-appetit", "--players", "Ann,Brian", *as_alice)
        assert create.exit_code == 4 and "PERMISSION_DENIED" in create.output
        listed = json.loads(run("arbiter", "list", "--json").output)
        assert listed == [{"name": "alice", "added_at": listed[0]["added_at"], "revoked_at": None}]
        assert run("arbiter", "revoke", "alice").exit_code == 0
        refused = run("rule", game_id, "note", "--reason", "too late", *as_alice)
        assert refused.exit_code == 4 and "UNAUTHENTICATED" in refused.output
        admin = adpb_grpc.AdminServiceStub(grpc.insecure_channel(server.address))
        with pytest.raises(grpc.RpcError) as denied:
            stub(server.address).GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(key))
        assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as not_found:
            admin.RevokeArbiter(adpb.RevokeArbiterRequest(name="bob"), metadata=bearer(server.key))
        assert not_found.value.code() == grpc.StatusCode.NOT_FOUND
        listed = json.loads(run("arbiter", "list", "--json").output)
        assert listed[0]["revoked_at"]
    finally:
        server.stop()


def _exported_rows(game_id: str, folder: Path) -> list[dict[str, Any]]:
    out = folder / f"{game_id}.json"
    done = run("export", game_id, "-o", str(out))
    assert done.exit_code == 0, done.output
    rows: list[dict[str, Any]] = json.loads(out.read_text())["rows"]
    return rows


@pytest.mark.parametrize("online", [True, False])
def test_replay_as_a_seat_after_the_end_shows_what_that_seat_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, online: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    game_id = game_of(run("demo", "bon-appetit", "--players", "3", "--seed", SEED))
    server = ThreadedServer(tmp_path / "feastlog.duckdb") if online else None
    try:
        done = run("replay", game_id, "--as", "seat:1")
        assert done.exit_code == 0, done.output
        view = json.loads(done.output[done.output.index("\n{") :])
        assert [("hand" in s) for s in view["seats"]] == [False, True, False]
        assert "as seat:1 saw it" in done.output and "Seed revealed" in done.output
        unknown = run("replay", game_id, "--as", "seat:9")
        assert unknown.exit_code == 2 and "Traceback" not in unknown.output
        assert "seat" in unknown.output
    finally:
        if server is not None:
            server.stop()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("server_seed", "ab" * 32),
        ("game_kind", "menu-masters"),
        ("ruleset_version", "9"),
        ("game_id", "g_0000000000000000"),
        ("content_pack.sha256", "cd" * 32),
    ],
)
def test_verify_checks_every_header_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: str
) -> None:
    monkeypatch.chdir(tmp_path)
    game_id = game_of(run("demo", "bon-appetit", "--players", "2", "--seed", SEED))
    assert run("export", game_id, "-o", "game.json").exit_code == 0
    assert run("verify", "game.json").exit_code == 0
    document = json.loads(Path("game.json").read_text())
    if "." in field:
        outer, inner = field.split(".")
        document[outer][inner] = value
    else:
        document[field] = value
    Path("edited.json").write_text(json.dumps(document))
    done = run("verify", "edited.json", "--json")
    assert done.exit_code == 1, done.output
    report = json.loads(done.output)["reports"][0]
    assert not report["ok"] and any(f"file's {field}" in f["message"] for f in report["faults"])


def test_verify_takes_export_alls_file_and_several_files_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An arbiter handed a table's ``export --all`` file verifies it with no database:
    every line a record, each reported; one that fails fails the command (exit 1), a line
    that is no record at all is named (exit 3)."""
    monkeypatch.chdir(tmp_path)
    first = game_of(run("demo", "bon-appetit", "--players", "2", "--seed", SEED))
    second = game_of(run("demo", "picky-eaters", "--players", "3"))
    assert run("export", "--all", "-o", "table.jsonl").exit_code == 0
    assert run("export", first, "-o", "game.json").exit_code == 0
    lines = Path("table.jsonl").read_text().splitlines()
    assert len(lines) == 2

    done = run("verify", "table.jsonl")
    assert done.exit_code == 0, done.output
    assert f"{first}: OK" in done.output and f"{second}: OK" in done.output
    assert "2 games, 2 verified, 0 failed" in done.output

    both = run("verify", "table.jsonl", "game.json", "--json")
    assert both.exit_code == 0, both.output
    reports = json.loads(both.output)["reports"]
    assert [r["game_id"] for r in reports].count(first) == 2 and len(reports) == 3

    tampered = json.loads(lines[1])
    tampered["result"]["points"][0] += 1  # the claimed result no longer matches the refold
    Path("tampered.jsonl").write_text(lines[0] + "\n" + json.dumps(tampered) + "\n")
    failed = run("verify", "tampered.jsonl", "--json")
    assert failed.exit_code == 1, failed.output
    verdicts = [r["ok"] for r in json.loads(failed.output)["reports"]]
    assert verdicts == [True, False]

    Path("table-copy").write_text(Path("table.jsonl").read_text())  # saved under any name
    copied = run("verify", "table-copy")
    assert copied.exit_code == 0 and "2 games, 2 verified" in copied.output, copied.output

    Path("broken.jsonl").write_text(lines[0] + "\n" + "{not a record\n")
    broken = run("verify", "broken.jsonl")
    assert broken.exit_code == 3 and "broken.jsonl:2" in broken.output, broken.output
    Path("empty.jsonl").write_text("\n")
    empty = run("verify", "empty.jsonl")
    assert empty.exit_code == 3 and "holds no record" in empty.output, empty.output
    assert run("verify").exit_code == 2  # a file is required


def test_play_asks_again_after_a_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        made = json.loads(run("new", "bon-appetit", "--players", "Ann,Brian", "--json").output)
        game_id, token = made["game_id"], made["seats"][0]["token"]
        greedy = {"bon_appetit": {"bid": {"gems": ["BON_APPETIT_GEM_RED"] * 6}}}
        done = run("play", game_id, "--token", token, "--once", input=json.dumps(greedy) + "\n1\n")
        assert done.exit_code == 0, done.output
        out = done.output
        assert "refused: FAILED_PRECONDITION" in out and "recorded at seq 2" in out
        after = out[out.index("refused:") :]
        assert "you: " in after and after.count("your move") == 1  # the table, then asked again
        # in words: the moves without the protobuf spelling, the hand as a list
        assert "  1. bid\n" in out and re.search(r"\n  2\. bid: gems [a-z]+\n", out), out
        assert "BON_APPETIT_GEM" not in out.replace(json.dumps(greedy), "")
        ended = run("play", game_id, "--token", made["seats"][1]["token"], input="")
        assert ended.exit_code == 0 and "no more input" in ended.output
    finally:
        server.stop()


def test_play_with_piped_input_stops_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Waiting for the others with nothing more to read: it stops instead of hanging."""
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        made = json.loads(run("new", "bon-appetit", "--players", "Ann,Brian", "--json").output)
        env = {**os.environ, **NO_ENV}
        code = "from feastlog.cli.main import main; main()"
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                "play",
                made["game_id"],
                "--token",
                made["seats"][0]["token"],
            ],
            input="1\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "recorded at seq 2" in done.stdout and "no more input" in done.stdout
    finally:
        server.stop()


def test_the_web_pages_speak_tls_with_the_servers_certificate(tmp_path: Path) -> None:
    import ssl
    import urllib.request

    from feastlog.cli.serve import web_tls
    from feastlog.service.web.server import serve_http

    pki = make_pki(tmp_path)
    tls = Tls.load(str(pki.server_cert), str(pki.server_key), None)
    server = ThreadedServer(tmp_path / "feastlog.duckdb", announce=False, tls=tls)
    try:
        secure = web_tls(str(pki.server_cert), str(pki.server_key))
        port = server.call(serve_http(server.running, "127.0.0.1", 0, secure))
        trusting = ssl.create_default_context(cafile=str(pki.ca))
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/", context=trusting) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        with pytest.raises(OSError):  # no plain HTTP beside it
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10)
    finally:
        server.stop()


def test_watch_follows_a_game_live_as_a_spectator_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``feastlog watch`` beside the organiser's key file still asks as a spectator: the
    story so far, then each row as it is recorded, told as ``replay --as spectator`` tells
    it; it ends by itself at the seed reveal."""
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        made = json.loads(run("new", "bon-appetit", "--players", "Ann,Brian", "--json").output)
        game_id, tokens = made["game_id"], [s["token"] for s in made["seats"]]
        code = "from feastlog.cli.main import main; main()"
        errors = tmp_path / "watch.err"
        with errors.open("w") as err:
            watcher = subprocess.Popen(
                [sys.executable, "-c", code, "watch", game_id],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env={**os.environ, **NO_ENV},
            )
        stuck = threading.Timer(120, watcher.kill)  # a watcher that never ends fails, not hangs
        stuck.start()
        try:
            assert watcher.stdout is not None
            first = watcher.stdout.readline()  # it follows before any command is sent
            assert first.startswith("Bon Appetit! — game " + game_id), first
            sent = play_to_end(stub(server.address), game_id, tokens, seed=3)
            rest = watcher.stdout.read()  # to its end: the watcher stops by itself
            watcher.wait(timeout=120)
        finally:
            stuck.cancel()
            watcher.kill()
        assert watcher.returncode == 0, errors.read_text()
        told = [first.rstrip("\n"), *rest.splitlines()]
        assert told[-1] == "the game is over" and told[-2].startswith(f"[{sent + 2}] Seed revealed")
        story = [re.sub(r"^\[\d+\] ", "", line) for line in told[:-1]]
        replayed = run("replay", game_id, "--as", "spectator")
        assert replayed.exit_code == 0, replayed.output
        assert replayed.output.splitlines()[: len(story)] == story
        # a seat watches with its token; the file alone cannot be watched
        seat = run("watch", game_id, "--token", tokens[1], "--from", str(sent + 2))
        assert seat.exit_code == 0 and seat.output.startswith(f"[{sent + 2}] Seed revealed")
        keyed = run("watch", game_id, "--organiser-key", server.key, "--from", str(sent + 2))
        assert keyed.exit_code == 0 and "watching as a spectator" in keyed.output, keyed.output
    finally:
        server.stop()
    offline = run("watch", game_id)
    assert offline.exit_code == 3 and "needs a running server" in offline.output
    both = run("watch", game_id, "--token", tokens[0], "--arbiter")
    assert both.exit_code == 2 and "not both" in both.output


def test_watch_waits_for_a_game_that_waits_for_seat_entropy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spectator who starts watching before every seat has sent its entropy is told so
    once, and the story starts with the deal."""
    monkeypatch.chdir(tmp_path)
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        made = json.loads(
            run("new", "bon-appetit", "--players", "Ann,Brian", "--seat-entropy", "--json").output
        )
        game_id, tokens = made["game_id"], [s["token"] for s in made["seats"]]
        code = "from feastlog.cli.main import main; main()"
        watcher = subprocess.Popen(
            [sys.executable, "-c", code, "watch", game_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, **NO_ENV},
        )
        stuck = threading.Timer(120, watcher.kill)
        stuck.start()
        try:
            assert watcher.stdout is not None
            assert watcher.stdout.readline().startswith("waiting for every seat's entropy")
            client = stub(server.address)
            for token in tokens:
                join = pb.JoinGameRequest(game_id=game_id, entropy=os.urandom(32))
                client.JoinGame(join, metadata=bearer(token))
            assert watcher.stdout.readline().startswith("Bon Appetit! — game " + game_id)
            play_to_end(client, game_id, tokens, seed=5)
            rest = watcher.stdout.read()
            watcher.wait(timeout=120)
        finally:
            stuck.cancel()
            watcher.kill()
        assert watcher.returncode == 0
        assert "waiting" not in rest and rest.endswith("the game is over\n"), rest[-300:]
        assert "Seat entropy mixed into the seed: Ann " in rest
    finally:
        server.stop()
