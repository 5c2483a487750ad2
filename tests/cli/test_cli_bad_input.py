# ruff: noqa: E501  (the table of cases reads best one case a line)
"""Every feastlog command given bad input: one line, its documented exit code, no traceback.

Exit codes (cli/errors.py): 1 a record does not verify, 2 usage, 3 cannot reach the
server or the file, 4 refused, 70 a bug (the server's too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import grpc
import pytest
from click.testing import CliRunner
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from feastlog.cli.errors import from_failure
from feastlog.cli.main import cli
from feastlog.client.errors import from_rpc
from feastlog.replay import games
from feastlog.replay.record.export import export_record, to_text
from feastlog.service.app import commands
from feastlog.v1 import bon_appetit_pb2 as bpb
from feastlog.v1 import record_pb2
from tests.recordutil import build
from tests.serverutil import ThreadedServer

NO_ENV = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": "", "FEASTLOG_CA": ""}
NOWHERE = "127.0.0.1:9"  # nothing listens on the discard port


@dataclass
class Place:
    """A served file with a running, a finished and a waiting game; files made to be bad."""

    db: str
    running: str
    finished: str
    waiting: str
    token: str
    folder: Path
    server: str


def invoke(*args: str) -> tuple[int, str]:
    """Run the CLI; exit code and everything it printed."""
    result = CliRunner(env=NO_ENV).invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        result.exception,
    )
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Place]:
    folder = tmp_path_factory.mktemp("bad")
    db = str(folder / "feastlog.duckdb")
    server = ThreadedServer(Path(db))
    try:
        made = json.loads(
            invoke("new", "bon-appetit", "--players", "Ann,Brian", "--db", db, "--json")[1]
        )
        done = invoke("demo", "bon-appetit", "--players", "2", "--db", db, "--json")[1]
        waiting = invoke(
            "new", "bon-appetit", "--players", "Ann,Brian", "--seat-entropy", "--db", db, "--json"
        )[1]
        built = build(players=2, seed_byte=9)
        document = json.loads(to_text(export_record(built.rows, built.pack_bytes)))
        breaks = json.loads(json.dumps(document))  # a bid of gems nobody has
        greedy = record_pb2.Command()
        greedy.bon_appetit.bid.gems.extend([bpb.BON_APPETIT_GEM_RED] * 9)
        row = next(r for r in breaks["rows"] if r["kind"] == "command")
        row["body"] = greedy.SerializeToString().hex()
        (folder / "breaks.json").write_text(json.dumps(breaks))
        (folder / "good.json").write_text(json.dumps(document))
        (folder / "garbled.json").write_text('{"format": "feastlog-record", "rows": [')
        (folder / "other.json").write_text('{"hello": "world"}')
        (folder / "list.json").write_text("[]")
        no_rows = dict(document, rows=[None])
        (folder / "null-row.json").write_text(json.dumps(no_rows))
        (folder / "not-utf8.json").write_bytes(b"\xff\xfe\x00")
        (folder / "folder.json").mkdir()
        edited = dict(document)
        edited["server_seed"] = "ab" * 32
        (folder / "edited.json").write_text(json.dumps(edited))
        rehashed = json.loads(json.dumps(document))  # rules kept, one row's hash replaced
        rehashed["rows"][3]["hash"] = "ab" * 32
        (folder / "rehashed.json").write_text(json.dumps(rehashed))
        (folder / "garbage.duckdb").write_bytes(b"not a database at all" * 100)
        duckdb.connect(str(folder / "empty.duckdb")).close()  # a database, not feastlog's
        (folder / "garbage.jsonl").write_text("not json\n")
        # packs that broke the pack reader or its checks: INTERNAL, exit 4, a traceback
        (folder / "deep.toml").write_text('id = "p"\na = ' + "[" * 60_000 + "]" * 60_000)
        menus = games.engine("menu-masters").default_pack_bytes().decode()
        nested = menus.replace('ingredients = ["broccoli"]', 'ingredients = [["broccoli"]]', 1)
        (folder / "nested.toml").write_text(nested)
        (folder / "large.toml").write_text('id = "p"\n' + "# a comment\n" * 12_000)
        (folder / "empty.toml").write_bytes(b"")
        (folder / "bad.pem").write_text(
            "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"
        )
        yield Place(
            db,
            made["game_id"],
            json.loads(done)["game_id"],
            json.loads(waiting)["game_id"],
            made["seats"][0]["token"],
            folder,
            server.address,
        )
    finally:
        server.stop()


# (arguments, exit code, words the one line holds); {db}, {running}, {finished},
# {waiting}, {token}, {folder} and {server} are filled in from the place (in the words too).
CASES: list[tuple[tuple[str, ...], int, str]] = [
    # wrong tokens
    (("play", "{running}", "--token", "seat_wrong", "--db", "{db}"), 4, "UNAUTHENTICATED"),
    (("play", "{running}", "--token", "nonsense token", "--db", "{db}"), 4, "UNAUTHENTICATED"),
    (("join", "{waiting}", "--token", "seat_wrong", "--db", "{db}"), 4, "UNAUTHENTICATED"),
    (("rule", "{running}", "note", "--reason", "r", "--db", "{db}", "--organiser-key", "arb_x"), 4, "UNAUTHENTICATED"),
    (("audit", "--all", "--db", "{db}", "--organiser-key", "org_wrong"), 4, "UNAUTHENTICATED"),
    (("play", "{running}", "--token", "seat_\u00e9", "--db", "{db}"), 2, "printable ASCII"),
    (("audit", "--all", "--db", "{db}", "--organiser-key", "org_\x01"), 2, "printable ASCII"),
    (("new", "bon-appetit", "--players", "A,B", "--db", "{db}", "--organiser-key", "{token}"), 4, "PERMISSION_DENIED"),
    (("arbiter", "list", "--db", "{db}", "--organiser-key", "{token}"), 4, "PERMISSION_DENIED"),
    # unknown games
    (("replay", "g_nope", "--db", "{db}"), 4, "NOT_FOUND"),
    (("replay", "g_\u00e9", "--db", "{db}"), 4, "NOT_FOUND"),  # no header can carry it
    (("audit", "g_\x1b[31m", "--db", "{db}"), 2, "game_id holds"),  # malformed: not looked up
    # ASCII but not printable: no header carries it, as a token (usage) or as a game id (sent without its routing header)
    (("play", "{running}", "--token", "seat_\x7f", "--db", "{db}"), 2, "printable ASCII"),
    (("export", "g_\x7f", "-o", "{folder}/x.json", "--db", "{db}"), 2, "game_id holds"),
    (("replay", "g_nope", "--db", "{db}", "--html", "{folder}/x.html"), 4, "NOT_FOUND"),
    (("audit", "g_nope", "--db", "{db}"), 4, "NOT_FOUND"),
    (("explain", "g_nope", "2", "--db", "{db}"), 4, "NOT_FOUND"),
    (("whatif", "g_nope", "2", "{{}}", "--db", "{db}"), 4, "NOT_FOUND"),
    (("rejections", "g_nope", "--db", "{db}"), 4, "NOT_FOUND"),
    (("export", "g_nope", "-o", "{folder}/x.json", "--db", "{db}"), 4, "NOT_FOUND"),
    (("rule", "g_nope", "note", "--reason", "r", "--db", "{db}"), 4, "NOT_FOUND"),
    (("play", "g_nope", "--token", "{token}", "--db", "{db}"), 4, "NOT_FOUND"),
    (("standings", "no-such-cup", "--db", "{db}"), 4, "NOT_FOUND"),
    (("arbiter", "revoke", "nobody", "--db", "{db}"), 4, "NOT_FOUND"),
    # seqs and values out of range, bad options
    (("explain", "{finished}", "0", "--db", "{db}"), 2, "x>=1"),
    (("explain", "{finished}", "9999", "--db", "{db}"), 2, "seq 9999"),
    (("replay", "{finished}", "--at", "9999", "--db", "{db}"), 2, "9999"),
    (("replay", "{finished}", "--as", "seat:9", "--db", "{db}"), 2, "seat"),
    (("replay", "{finished}", "--as", "nobody", "--db", "{db}"), 2, "nobody"),
    (("whatif", "{finished}", "3", "not json", "--db", "{db}"), 2, "not a command"),
    (("whatif", "{finished}", "3", '{{"bid": {{}}}}', "--as", "seat:7", "--db", "{db}"), 2, "seat"),
    (("rule", "{running}", "adjust", "--seat", "1", "--reason", "r", "--db", "{db}"), 2, "--points"),
    (("rule", "{running}", "forfeit", "--reason", "r", "--db", "{db}"), 2, "--seat"),
    (("rule", "{running}", "note", "--seat", "5", "--reason", "r", "--db", "{db}"), 2, "a note ruling takes no --seat"),
    (("rule", "{running}", "close", "--points", "3", "--reason", "r", "--db", "{db}"), 2, "a close ruling takes no --points"),
    (("rule", "{running}", "forfeit", "--seat", "0", "--text", "t", "--reason", "r", "--db", "{db}"), 2, "takes no --text"),
    (("rule", "{running}", "adjust", "--seat", "7", "--points", "1", "--reason", "r", "--db", "{db}"), 4, "no seat 7"),
    (("replay", "{finished}", "--at", "99999999999999999999999", "--db", "{db}"), 2, "--at"),
    (("explain", "{finished}", "99999999999999999999999", "--db", "{db}"), 2, "SEQ"),
    (("whatif", "{finished}", "99999999999999999999", "{{}}", "--db", "{db}"), 2, "SEQ"),
    (("rule", "{running}", "adjust", "--seat", "0", "--points", "99999999999", "--reason", "r", "--db", "{db}"), 2, "--points"),
    (("rule", "{running}", "forfeit", "--seat", "99999999999", "--reason", "r", "--db", "{db}"), 2, "--seat"),
    (("rule", "{running}", "adjust", "--seat", "0", "--points", "2000000", "--reason", "r", "--db", "{db}"), 4, "within ±1,000,000 points"),
    (("new", "bon-appetit", "--players", "Ann", "--db", "{db}"), 2, "2 to 4 players"),
    (("new", "bon-appetit", "--players", "A,B", "--pack", "{folder}/deep.toml", "--db", "{db}"), 2, "nest more than 10 deep"),
    (("new", "menu-masters", "--players", "A,B", "--pack", "{folder}/nested.toml", "--db", "{db}"), 2, "'produce-01', field 'ingredients'"),
    (("new", "bon-appetit", "--players", "A,B", "--pack", "{folder}/large.toml", "--db", "{db}"), 2, "larger than a content pack may be (128 KiB)"),
    (("new", "bon-appetit", "--players", "A,B", "--pack", "/dev/zero", "--db", "{db}"), 2, "larger than a content pack may be"),
    (("new", "bon-appetit", "--players", "A,B", "--pack", "{folder}/empty.toml", "--db", "{db}"), 2, "empty.toml is empty: a pack needs an id"),
    # the same through a server the command starts on a file no server holds
    (("new", "bon-appetit", "--players", "A,B", "--pack", "{folder}/deep.toml", "--db", "{folder}/own.duckdb"), 2, "nest more than 10 deep"),
    (("new", "menu-masters", "--players", "A,B", "--pack", "{folder}/nested.toml", "--db", "{folder}/own.duckdb"), 2, "'produce-01', field 'ingredients'"),
    (("new", "bon-appetit", "--players", "A,B", "--seed", "xyz", "--db", "{db}"), 2, "hex"),
    (("new", "bon-appetit", "--players", "A,B", "--option", "nope", "--db", "{db}"), 2, "KEY=VALUE"),
    (("new", "bon-appetit", "--players", "A,B", "--option", "x=1", "--db", "{db}"), 2, "option"),
    (("new", "chess", "--players", "A,B", "--db", "{db}"), 2, "chess"),
    (("demo", "bon-appetit", "--players", "1", "--db", "{db}"), 2, "2 to 4 players"),
    (("join", "{waiting}", "--token", "{token}", "--entropy", "zz", "--db", "{db}"), 2, "hex"),
    (("arbiter", "add", "Not A Name", "--db", "{db}"), 2, "lowercase"),
    (("arbiter", "add", "organiser", "--db", "{db}"), 2, "names a role in the record"),
    (("games", "--server", "127.0.0.1:99999"), 2, "'99999' is not a port"),
    (("games", "--server", "", "--db", "{db}"), 2, "names no server"),
    (("replay", "g_x", "--server", "[::1]:0"), 2, "'0' is not a port"),
    (("audit", "--db", "{db}"), 2, "GAME_ID or --all"),
    (("export", "-o", "{folder}/x.json", "--db", "{db}"), 2, "GAME_ID or --all"),
    (("rules", "chess"), 2, "chess"),
    (("serve", "--port", "70000", "--db", "{folder}/s.duckdb"), 2, "70000"),
    (("serve", "--port", "8123", "--http", "8123", "--db", "{folder}/s.duckdb"), 2, "--http 8123 is the gRPC --port too"),
    (("serve", "--host", "", "--db", "{folder}/s.duckdb"), 2, "--host"),
    (("serve", "--host", "127.0.0.1:8123", "--db", "{folder}/s.duckdb"), 2, "the port goes in --port"),
    (("bench", "--kind", "chess"), 2, "chess"),
    (("bench", "--games", "many"), 2, "many"),
    (("bench-audit", "--games", "0"), 2, "0"),
    (("bench-scale", "--games", "1,x"), 2, "1,x"),
    (("bench-scale", "--reuse"), 2, "--keep"),
    # a game waiting for seat entropy
    (("play", "{waiting}", "--token", "{token}", "--db", "{db}"), 4, "waiting for"),
    (("replay", "{waiting}", "--db", "{db}"), 4, "waiting for"),
    (("audit", "{waiting}", "--db", "{db}"), 4, "waiting for seat entropy"),
    (("export", "{waiting}", "-o", "{folder}/w.json", "--db", "{db}"), 4, "waiting for"),
    (("explain", "{waiting}", "2", "--db", "{db}"), 4, "waiting for"),
    # a record that does not verify, files that are not records
    (("verify", "{folder}/edited.json"), 1, "FAILED"),
    (("replay", "{folder}/edited.json"), 1, "not a record that replays"),
    # a record whose rows still replay, but whose chain is broken: told, after its story
    (("replay", "{folder}/rehashed.json"), 1, "does not verify: g_"),
    (("replay", "{folder}/rehashed.json", "--html", "{folder}/r.html"), 1, "FAILED at seq 4"),
    (("verify", "{folder}/breaks.json"), 1, "FAILED"),
    (("replay", "{folder}/breaks.json"), 1, "not a record that replays"),
    (("replay", "{folder}/breaks.json", "--html", "{folder}/x.html"), 1, "not a record that"),
    (("verify", "{folder}/missing.json"), 3, "missing.json"),
    (("verify", "{folder}/garbled.json"), 3, "not a readable"),
    (("verify", "{folder}/other.json"), 3, "not a feastlog-record"),
    (("verify", "{folder}/list.json"), 3, "holds no JSON object"),
    (("verify", "{folder}/null-row.json"), 3, "rows are not a list of row objects"),
    (("verify", "{folder}/not-utf8.json"), 3, "not-utf8.json"),
    (("verify", "{folder}/folder.json"), 3, "folder.json: Is a directory"),
    (("verify", "{folder}/not-utf8.json"), 3, "not UTF-8 text"),
    # no end to it: refused as it is read, not read whole first (3 GB in 3 s)
    (("verify", "/dev/zero"), 3, "a line is longer than a record may be"),
    (("import", "/dev/zero", "--db", "{folder}/i.duckdb"), 3, "a line is longer than a record may be"),
    (("replay", "g_x", "--server", NOWHERE, "--ca", "/dev/zero"), 3, "larger than a PEM file may be"),
    (("import", "{folder}/missing.json", "--db", "{folder}/i.duckdb"), 3, "missing.json"),
    (("import", "{folder}/folder.json", "--db", "{folder}/i.duckdb"), 3, "folder.json: Is a directory"),
    (("import", "{folder}/not-utf8.json", "--db", "{folder}/i.duckdb"), 3, "not UTF-8 text"),
    (("replay", "{folder}/missing.json"), 3, "missing.json"),
    (("replay", "{folder}/garbled.json"), 3, "not a readable"),
    (("replay", "{folder}/other.json", "--html", "{folder}/x.html"), 3, "not a feastlog-record"),
    (("import", "{folder}/garbage.jsonl", "--db", "{folder}/i.duckdb"), 1, "1 of 1 record failed; nothing imported"),
    # no server, no file, a file that is not a database
    (("play", "{running}", "--token", "{token}", "--server", NOWHERE), 3, "cannot reach"),
    (("join", "{waiting}", "--token", "{token}", "--server", NOWHERE), 3, "cannot reach"),
    (("new", "bon-appetit", "--players", "A,B", "--server", NOWHERE, "--organiser-key", "k" * 32), 3, "cannot reach"),
    (("replay", "g_x", "--server", NOWHERE), 3, "cannot reach"),
    (("stats", "--server", NOWHERE), 3, "cannot reach"),
    (("arbiter", "list", "--server", NOWHERE, "--organiser-key", "k" * 32), 3, "cannot reach"),
    (("play", "g_x", "--token", "seat_x", "--db", "{folder}/none.duckdb"), 3, "needs a running server"),
    (("replay", "g_x", "--db", "{folder}/none.duckdb"), 3, "no database"),
    (("audit", "--all", "--db", "{folder}/none.duckdb"), 3, "no database"),
    (("stats", "--db", "{folder}/none.duckdb"), 3, "no database"),
    (("standings", "cup", "--db", "{folder}/none.duckdb"), 3, "no database"),
    (("games", "--db", "{folder}/none.duckdb"), 3, "no database"),
    (("games", "--server", NOWHERE), 3, "cannot reach"),
    (("games", "--kind", "chess", "--db", "{db}"), 2, "not a game kind"),
    (("games", "--limit", "-1", "--db", "{db}"), 2, "-1"),
    # int() takes other scripts' digits and a sign or a space: each refused, named
    (("games", "--limit", "٣", "--db", "{db}"), 2, "is not a whole number in ASCII digits"),
    (("games", "--limit", "+3", "--db", "{db}"), 2, "is not a whole number in ASCII digits"),
    (("replay", "{finished}", "--at", " 3", "--db", "{db}"), 2, "is not a whole number in ASCII digits"),
    (("rule", "{running}", "forfeit", "--seat", "١", "--reason", "r", "--db", "{db}"), 2, "ASCII digits"),
    (("demo", "bon-appetit", "--players", "٢", "--db", "{db}"), 2, "ASCII digits"),
    (("rejections", "g_x", "--db", "{folder}/none.duckdb"), 3, "no database"),
    # a ruling or the arbiters of a file that is not there: no database, folder or key made
    (("rule", "g_x", "note", "--reason", "r", "--db", "{folder}/none/sub/r.duckdb"), 3, "no database"),
    (("arbiter", "list", "--db", "{folder}/none/sub/a.duckdb"), 3, "no database"),
    (("arbiter", "revoke", "bob", "--db", "{folder}/none/sub/a.duckdb"), 3, "no database"),
    (("export", "--all", "-o", "{folder}/x.jsonl", "--db", "{folder}/none.duckdb"), 3, "no database"),
    (("projection", "rebuild", "--db", "{folder}/none.duckdb"), 3, "no database"),
    (("replay", "g_x", "--db", "{folder}/garbage.duckdb"), 3, "garbage.duckdb"),
    (("stats", "--db", "{folder}/garbage.duckdb"), 3, "garbage.duckdb"),
    *[((*command, "--db", "{folder}/empty.duckdb"), 3, "is not a feastlog database") for command in (
        ("replay", "g_x"), ("stats",), ("standings", "cup"), ("audit", "--all"), ("rejections", "g_x"),
        ("export", "--all", "-o", "{folder}/x.jsonl"), ("projection", "rebuild"), ("games",),
    )],
    # a folder where a file is written: exit 3, as a missing folder is
    (("export", "{finished}", "-o", "{folder}", "--db", "{db}"), 3, "cannot write {folder}: Is a directory"),
    (("replay", "{finished}", "--html", "{folder}", "--db", "{db}"), 3, "cannot write {folder}: Is a directory"),
    (("export", "--all", "-o", "{folder}", "--db", "{db}"), 3, "cannot write {folder}: Is a directory"),
    (("export", "{finished}", "-o", "{folder}/missing/x.json", "--db", "{db}"), 3, "No such file"),
    (("export", "{finished}", "-o", "", "--db", "{db}"), 2, "an output file needs a name"),
    (("replay", "{finished}", "--html", "", "--db", "{db}"), 2, "an output file needs a name"),
    (("serve", "--request-log", "{folder}", "--db", "{folder}/s.duckdb", "--port", "0"), 3, "request log"),
    # a folder where the database should be: exit 3 from every command, serve included
    *[((*command, "--db", "{folder}"), 3, "is a folder, not a database file") for command in (
        ("replay", "g_x"), ("replay", "g_x", "--html", "{folder}/x.html"), ("stats",),
        ("standings", "cup"), ("audit", "g_x"), ("audit", "--all"), ("explain", "g_x", "2"),
        ("whatif", "g_x", "2", "{{}}"), ("rejections", "g_x"), ("export", "g_x", "-o", "{folder}/x.json"),
        ("export", "--all", "-o", "{folder}/x.jsonl"), ("import", "{folder}/good.json"),
        ("projection", "rebuild"), ("new", "bon-appetit", "--players", "A,B"),
        ("demo", "bon-appetit", "--players", "2"), ("rule", "g_x", "note", "--reason", "r"),
        ("arbiter", "list"), ("serve", "--port", "0"),
    )],
    # no organiser key for a server: refused (4) before asking, as the server would refuse it
    (("new", "bon-appetit", "--players", "A,B", "--server", "{server}"), 4, "no organiser key"),
    (("demo", "bon-appetit", "--players", "2", "--server", "{server}"), 4, "no organiser key"),
    (("arbiter", "list", "--server", "{server}"), 4, "UNAUTHENTICATED"),
    (("audit", "--all", "--server", "{server}"), 4, "UNAUTHENTICATED"),
    (("replay", "g_x", "--server", NOWHERE, "--ca", "{folder}/missing.pem"), 3, "missing.pem"),
    # PEM-shaped but no certificate: gRPC took the bytes, then told a port taken, or failed
    # to connect, after lines of its own
    (("replay", "g_x", "--server", NOWHERE, "--ca", "{folder}/bad.pem"), 3, "holds no PEM certificate"),
    (("serve", "--db", "{folder}/s.duckdb", "--port", "0", "--tls-cert", "{folder}/bad.pem", "--tls-key", "{folder}/bad.pem"), 3, "are not a PEM certificate and its private key"),
    (("serve", "--db", "{folder}/s.duckdb", "--port", "0", "--tls-cert", "{folder}/missing.pem", "--tls-key", "{folder}/missing.pem"), 3, "missing.pem"),
    # seat links are made on it: an address a browser opens, nothing else
    *[(("serve", "--db", "{folder}/s.duckdb", "--port", "0", "--link-base", base), 2, "--link-base") for base in (
        "table.example", "ftp://table.example/", "https://", "https://table.example/?a=1", "https://table .example/",
    )],
]  # fmt: skip


@pytest.mark.parametrize(("args", "code", "words"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_input_gets_one_line_and_its_exit_code(
    place: Place, args: tuple[str, ...], code: int, words: str
) -> None:
    fields = {
        "db": place.db,
        "running": place.running,
        "finished": place.finished,
        "waiting": place.waiting,
        "token": place.token,
        "folder": place.folder,
        "server": place.server,
    }
    filled = [a.format(**fields) for a in args]
    words = words.format(**fields)
    got, output = invoke(*filled)
    assert "Traceback" not in output
    assert got == code, (filled, output)
    assert not Path(place.folder, "none").exists(), filled  # nothing made to say there is none
    if code:
        errors = [line for line in output.splitlines() if line.startswith("Error")]
        assert errors or code == 1, output
        assert words in output, output


@pytest.mark.parametrize("debug", [False, True])
def test_an_unexpected_failure_of_a_server_the_command_started_is_one_line_and_exit_70(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, debug: bool
) -> None:
    """Its log is the terminal: the incident in one line (the traceback only with
    FEASTLOG_DEBUG=1), and INTERNAL is a bug (70), not a refusal (4)."""

    def broken(*args: object) -> None:
        raise RuntimeError("a bug in open_game")

    monkeypatch.setattr(commands, "open_game", broken)
    if debug:
        monkeypatch.setenv("FEASTLOG_DEBUG", "1")
    db = str(tmp_path / "own.duckdb")
    got, output = invoke("new", "bon-appetit", "--players", "Ann,Bo", "--db", db)
    assert got == 70, output
    incident = re.search(r"incident (inc_[0-9a-f]+)", output)
    assert incident, output
    assert f"server: incident {incident[1]}: unexpected RuntimeError" in output
    assert (
        f"Error: INTERNAL: the server failed to answer this request (incident {incident[1]})"
        in output
    )
    assert ("Traceback" in output) == debug and ("a bug in open_game" in output) == debug
    if not debug:
        assert len(output.splitlines()) == 2, output


def test_export_all_to_a_folder_offline_names_the_folder(tmp_path: Path) -> None:
    """A file no server holds is exported here; its output a folder is one line, exit 3."""
    db = str(tmp_path / "free.duckdb")
    assert invoke("demo", "bon-appetit", "--players", "2", "--db", db)[0] == 0
    (tmp_path / "out").mkdir()
    got, output = invoke("export", "--all", "-o", str(tmp_path / "out"), "--db", db)
    assert (got, "Traceback" in output) == (3, False), output
    assert f"cannot write {tmp_path / 'out'}: Is a directory" in output, output


class _Refused(grpc.RpcError):
    """A gRPC error as a client sees it, with the trailers given."""

    def __init__(self, trailers: tuple[tuple[str, bytes], ...] | None) -> None:
        self.trailers = trailers

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.FAILED_PRECONDITION

    def details(self) -> str:
        return "the game waits for seat entropy"

    def trailing_metadata(self) -> Any:
        return self.trailers


def test_a_refusal_whose_rich_status_does_not_fit_is_still_one_clear_line() -> None:
    """The CLI reads a refusal's ErrorInfo reason; a rich status that disagrees with the
    code (a proxy rewrote it), that does not decode, or no trailers at all, leave the
    reason empty and the refusal in words, never an exception."""
    info = error_details_pb2.ErrorInfo(reason="WAITING_FOR_SEAT_ENTROPY", domain="feastlog")
    detail = any_pb2.Any()
    detail.Pack(info)
    words = "the game waits for seat entropy"
    fitting = status_pb2.Status(code=9, message=words, details=[detail]).SerializeToString()
    other = status_pb2.Status(code=5, message=words, details=[detail]).SerializeToString()
    key = "grpc-status-details-bin"
    assert (
        from_failure(from_rpc(_Refused(((key, fitting),))), "here").reason
        == "WAITING_FOR_SEAT_ENTROPY"
    )
    for trailers in (((key, other),), ((key, b"\xff\xff\xff"),), None, ()):
        found = from_failure(from_rpc(_Refused(trailers)), "here")
        assert found.reason == "" and found.exit_code == 4, trailers
        assert found.message == "FAILED_PRECONDITION: the game waits for seat entropy"


# Ids over the bound the server holds requests to: (arguments without --db, the field).
TOO_LONG = [
    (("games", "--tournament", "t" * 65), "tournament_id"),
    (("standings", "t" * 65), "tournament_id"),
    (("stats", "--tournament", "t" * 65), "tournament_id"),
    (("replay", "g_" + "0" * 63), "game_id"),
    (("rejections", "g_" + "0" * 63), "game_id"),
]


def test_an_over_long_id_is_refused_the_same_offline_as_through_the_server(
    place: Place, tmp_path: Path
) -> None:
    """Read from the file alone, an id longer than a request may hold was looked for and
    not found (exit 0 'no games', or NOT_FOUND), where the server refuses the request:
    now both refuse it, INVALID_ARGUMENT naming the field, exit 2."""
    offline = str(tmp_path / "offline.duckdb")
    assert invoke("demo", "bon-appetit", "--players", "2", "--db", offline)[0] == 0
    for args, field in TOO_LONG:
        for db in (place.db, offline):  # the server holds the first; none the second
            got, output = invoke(*args, "--db", db)
            assert got == 2 and f"{field} is 65 characters long" in output, (args, db, output)
            assert "at most 64" in output and "Traceback" not in output


def test_plays_menu_takes_a_choice_in_ascii_digits_only() -> None:
    """`play`'s menu took "٣" (another script's 3) as move 3 and recorded it."""
    from feastlog.cli.play import pick

    moves = [record_pb2.Command(), record_pb2.Command(), record_pb2.Command()]
    moves[2].bon_appetit.bid.gems.append(bpb.BON_APPETIT_GEM_RED)
    answers = iter(["٣", "+3", "4", "3"])
    assert pick(moves, lambda _: next(answers)) is moves[2]
    assert next(answers, None) is None  # the first three were asked again
