"""Client text the service turns into numbers or stores: plain ASCII digits only, page
tokens bound to their filter, names and ids free of control characters (and such text
already stored printed escaped by the CLI)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay import games
from feastlog.replay.games.fold import state_hash, step
from feastlog.replay.games.text import escaped, plain_number, unprintable
from feastlog.replay.record.export import export_record, to_text
from feastlog.replay.record.history import begin, new_genesis
from feastlog.replay.record.rows import COMMAND, CURRENT_VERSION, SEED_REVEAL, Row, make_row
from feastlog.service.store.postgres.follow import parse
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2, view_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests.hostileutil import TOURNAMENT, Targets, pack_refused, populated_server, refused
from tests.serverutil import ThreadedServer, bearer, error_info, stub
from tests.webutil import WebServer
from tests.webutil import request as http_request

NOT_PLAIN = ["١", "３", "²", " 1", "1 ", "+1", "-0", "0_1", "1.0", "", "1" * 19]
CONTROLS = ["\x1b[2J", "a\nb", "\r", "\t", "\x00", "\x7f", "\x85", "x\u202ey", "\u2066x"]
CONTROLS += ["a\u200bb", "\ufeff", "a\u2028b", "\U000e0041"]
ORDINARY = ["Zoë", "李雷", "Ана", "👩\u200d🍳 Chef", "🏴\U000e0067\U000e0062\U000e0073\U000e0063"]
ORDINARY[-1] += "\U000e0074\U000e007f Ewan"  # a subdivision flag (Scotland) and a name


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ThreadedServer, Targets]]:
    yield from populated_server(tmp_path_factory, "text")


def bad_field(error: grpc.RpcError) -> str:
    """The field an INVALID_ARGUMENT names."""
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    return str(error_info(error).metadata["field"])


# ---- numbers: plain ASCII digits ---------------------------------------------------------


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_only_plain_ascii_digits_are_a_number(text: str) -> None:
    assert plain_number(text) is None
    assert parse(f"g_1 {text}") is None  # a notification's seq, the same way


def test_plain_digits_are_their_number() -> None:
    assert [plain_number(t) for t in ("0", "7", "007", "1" * 18)] == [0, 7, 7, int("1" * 18)]
    assert parse("g_1 12") == ("g_1", 12)


@pytest.mark.parametrize("digits", ["١", "３", " 1", "+1", "0_1", "²"])
def test_a_viewer_or_actor_seat_in_other_digits_is_invalid_argument(
    served: tuple[ThreadedServer, Targets], digits: str
) -> None:
    server, targets = served
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    request = rpb.GetStateAtRequest(game_id=targets.running, viewer=f"seat:{digits}")
    assert bad_field(refused(replay.GetStateAt, request, metadata=bearer(server.key))) == "viewer"
    what_if = apb.WhatIfRequest(
        game_id=targets.running, seq=2, actor=f"seat:{digits}", command=targets.move
    )
    assert bad_field(refused(audit.WhatIf, what_if, metadata=bearer(server.key))) == "actor"
    seen = replay.GetStateAt(  # the same seat in ASCII digits is taken
        rpb.GetStateAtRequest(game_id=targets.running, viewer="seat:1"), metadata=bearer(server.key)
    )
    assert seen.viewer == "seat:1"


@pytest.mark.parametrize("digits", ["١", "１", " 1", "+1", "²"])
def test_a_rule_option_in_other_digits_is_refused(
    served: tuple[ThreadedServer, Targets], digits: str
) -> None:
    server, _ = served
    client = stub(server.address)
    request = pb.CreateGameRequest(
        game_kind="bon-appetit", players=["Ann", "Bo"], options={"first_seat": digits}
    )
    error = refused(client.CreateGame, request, metadata=bearer(server.key))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert "first_seat" in (error.details() or "")
    request.options["first_seat"] = "1"
    assert client.CreateGame(request, metadata=bearer(server.key)).game_id


# ---- page tokens: bound to the RPC and the filter ------------------------------------------


def test_a_page_token_of_another_filter_is_refused_naming_page_token(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, _ = served
    client = stub(server.address)
    for _ in range(3):  # a tournament with enough games of one kind for two pages
        client.CreateGame(
            pb.CreateGameRequest(
                game_kind="picky-eaters", players=["Ann", "Bo"], tournament_id=TOURNAMENT
            ),
            metadata=bearer(server.key),
        )
    asked = pb.ListGamesRequest(game_kind="picky-eaters", tournament_id=TOURNAMENT, page_size=2)
    first = client.ListGames(asked)
    token = first.next_page_token
    assert token and "picky" not in token and TOURNAMENT not in token  # opaque
    # the same filter, by its enum this time, takes the token
    typed = pb.ListGamesRequest(
        kind=view_pb2.GAME_KIND_PICKY_EATERS, tournament_id=TOURNAMENT, page_size=2
    )
    typed.page_token = token
    second = client.ListGames(typed)
    assert second.games and not {g.game_id for g in second.games} & {g.game_id for g in first.games}
    for other in (
        pb.ListGamesRequest(page_token=token),  # no filter
        pb.ListGamesRequest(game_kind="bon-appetit", tournament_id=TOURNAMENT, page_token=token),
        pb.ListGamesRequest(game_kind="picky-eaters", tournament_id="other", page_token=token),
        pb.ListGamesRequest(game_kind="picky-eaters", page_token=token),
    ):
        error = refused(client.ListGames, other)
        assert bad_field(error) == "page_token"
        assert "another filter" in (error.details() or "")
        assert "without a page_token" in (error.details() or "")


def test_a_page_token_not_given_out_here_is_refused(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, _ = served
    client = stub(server.address)
    token = client.ListGames(pb.ListGamesRequest(page_size=1)).next_page_token
    rpc, place, digest = base64.urlsafe_b64decode(token).decode().split(".")
    assert rpc == "ListGames" and place.isdigit()
    made = [f"{rpc}.{p}.{digest}" for p in ("١", "３", " 1", "+1", "1_0", "0", "")]
    made += [f"WatchGame.{place}.{digest}", f"n{place}", "n1", place]
    for text in made:
        forged = base64.urlsafe_b64encode(text.encode()).decode()
        error = refused(client.ListGames, pb.ListGamesRequest(page_token=forged))
        assert bad_field(error) == "page_token", text
    assert bad_field(refused(client.ListGames, pb.ListGamesRequest(page_token="%%"))) == (
        "page_token"
    )


# ---- names and ids: no control characters -------------------------------------------------


@pytest.mark.parametrize("text", CONTROLS)
def test_control_and_format_characters_are_found(text: str) -> None:
    found = unprintable(text)
    assert found is not None and found.startswith("U+")
    shown = escaped(text)
    assert unprintable(shown) is None and "\\" in shown


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_names_of_any_script_are_plain_text(text: str) -> None:
    assert unprintable(text) is None
    assert escaped(text) == text


@pytest.mark.parametrize("name", CONTROLS)
def test_create_game_refuses_a_name_with_a_control_character(
    served: tuple[ThreadedServer, Targets], name: str
) -> None:
    server, _ = served
    client = stub(server.address)
    before = len(client.ListGames(pb.ListGamesRequest(page_size=500)).games)
    for request, field in (
        (pb.CreateGameRequest(game_kind="bon-appetit", players=["Ann", name]), "players[1]"),
        (
            pb.CreateGameRequest(
                game_kind="bon-appetit", players=["Ann", "Bo"], tournament_id=f"cup{name}"
            ),
            "tournament_id",
        ),
    ):
        error = refused(client.CreateGame, request, metadata=bearer(server.key))
        assert bad_field(error) == field
        assert f"U+{ord(next(c for c in name if unprintable(c))):04X}" in (error.details() or "")
    assert len(client.ListGames(pb.ListGamesRequest(page_size=500)).games) == before


@pytest.mark.parametrize(
    ("kind", "old", "new", "card", "field"),
    [
        ("bon-appetit", 'id = "bon-appetit-default-1"', 'id = "pack\\u001b[2J"', "(pack)", "id"),
        (
            "bon-appetit",
            'name = "Matcha Garden Tea"',
            'name = "Matcha\\u202eGarden Tea"',
            "dish #3",
            "name",
        ),
        ("picky-eaters", 'id = "picky-eaters-default-1"', 'id = "pe\\u2028x"', "(pack)", "id"),
        ("menu-masters", 'id = "menu-masters-default-1"', 'id = "mm\\u0007"', "(pack)", "id"),
    ],
)
def test_create_game_refuses_a_pack_with_control_characters(
    served: tuple[ThreadedServer, Targets], kind: str, old: str, new: str, card: str, field: str
) -> None:
    """A pack's words are shown to players and printed: refused as a name would be, naming
    the card and the field (BAD_CONTENT_PACK); a pack of ordinary words of any script is
    taken."""
    server, _ = served
    client = stub(server.address)
    error = pack_refused(server, kind, old, new, card, field)
    assert "U+" in (error.details() or "")
    text = games.engine(kind).default_pack_bytes().decode()
    ordinary = re.sub(r"\\u[0-9a-f]{4}", " Crème brûlée 李 🍮 ", new)  # in words instead
    plain = text.replace(old, ordinary, 1)
    assert "\\u" not in ordinary and plain != text
    made = client.CreateGame(
        pb.CreateGameRequest(game_kind=kind, players=["Ann", "Bo"], content_pack=plain.encode()),
        metadata=bearer(server.key),
    )
    assert made.game_id


def test_create_game_keeps_names_of_any_script(served: tuple[ThreadedServer, Targets]) -> None:
    server, _ = served
    client = stub(server.address)
    made = client.CreateGame(
        pb.CreateGameRequest(game_kind="picky-eaters", players=ORDINARY[:4]),
        metadata=bearer(server.key),
    )
    listed = {g.game_id: g for g in client.ListGames(pb.ListGamesRequest(page_size=500)).games}
    assert list(listed[made.game_id].players) == ORDINARY[:4]
    flag = client.CreateGame(
        pb.CreateGameRequest(game_kind="bon-appetit", players=[ORDINARY[4], "Bo"]),
        metadata=bearer(server.key),
    )
    assert flag.seat_tokens[0].name == ORDINARY[4]


@pytest.mark.parametrize("text", ["\x1b[31m", "line\nforged", "\u202edrow"])
def test_commands_and_rulings_with_control_characters_change_nothing(
    served: tuple[ThreadedServer, Targets], text: str
) -> None:
    server, targets = served
    client = stub(server.address)
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    org = bearer(server.key)
    game_id = targets.running
    seq = client.GetView(pb.GetViewRequest(game_id=game_id), metadata=org).seq
    rejected = len(
        audit.ListRejections(apb.ListRejectionsRequest(game_id=game_id), metadata=org).rejections
    )
    token = bearer(targets.tokens[game_id][targets.own])
    move = pb.SubmitCommandRequest(game_id=game_id, command_id=f"c{text}", command=targets.move)
    assert bad_field(refused(client.SubmitCommand, move, metadata=token)) == "command_id"
    for ruling, field in (
        (record_pb2.ArbiterCommand(reason=text, note=record_pb2.Note(text="n")), "reason"),
        (record_pb2.ArbiterCommand(reason="why", note=record_pb2.Note(text=text)), "note.text"),
    ):
        as_command = pb.SubmitCommandRequest(
            game_id=game_id, command_id="rule", command=record_pb2.Command(arbiter=ruling)
        )
        named = bad_field(refused(client.SubmitCommand, as_command, metadata=org))
        assert named == f"command.arbiter.{field}"
        as_ruling = apb.SubmitRulingRequest(game_id=game_id, command_id="rule", ruling=ruling)
        assert bad_field(refused(audit.SubmitRuling, as_ruling, metadata=org)) == f"ruling.{field}"
    assert client.GetView(pb.GetViewRequest(game_id=game_id), metadata=org).seq == seq
    after = audit.ListRejections(apb.ListRejectionsRequest(game_id=game_id), metadata=org)
    assert len(after.rejections) == rejected  # refused at the door: nothing stored


# ---- text already stored: printed escaped -------------------------------------------------

HOSTILE = ("Ann\x1b[2J", "Bo\nSeat 9 Mallory: 999 points", "Cy\u202eolleh")


def hostile_record(path: Path) -> str:
    """An exported, finished record whose names, tournament and ruling hold control
    characters, made without a server (which refuses them): as an older or imported
    record may hold them."""
    engine = games.engine("bon-appetit")
    seed = bytes(range(32))
    pack_bytes = engine.default_pack_bytes()
    pack = engine.load_pack(pack_bytes)
    genesis = new_genesis(
        "g_hostile",
        "bon-appetit",
        HOSTILE,
        {},
        pack_bytes,
        pack,
        seed,
        "2026-01-01T00:00:00Z",
        tournament_id="cup\x1b]0;owned\x07",
    )
    first, table, _ = begin(genesis, seed, pack)
    rows: list[Row] = [first]
    close = record_pb2.ArbiterCommand(
        reason="gone\x1b[1A\x1b[2K", close_game=record_pb2.CloseGame()
    )
    for kind, actor, body in (
        (COMMAND, "arbiter", record_pb2.Command(arbiter=close).SerializeToString()),
        (SEED_REVEAL, "server", record_pb2.SeedReveal(server_seed=seed).SerializeToString()),
    ):
        if kind == COMMAND:
            table, _ = step(engine, table, actor, record_pb2.Command.FromString(body))
        prev = rows[-1]
        rows.append(
            make_row(
                prev.game_id,
                prev.seq + 1,
                kind,
                actor,
                body,
                "2026-01-01T00:01:00Z",
                prev.hash,
                state_hash(table),
                "c\x1b" if kind == COMMAND else "",
                version=CURRENT_VERSION,
                server_seed=seed,
            )
        )
    path.write_text(to_text(export_record(rows, pack_bytes)))
    return str(path)


def test_the_cli_prints_stored_control_characters_escaped(tmp_path: Path) -> None:
    record = hostile_record(tmp_path / "hostile.feastlog.json")
    for args in (("replay", record), ("replay", record, "--at", "2"), ("verify", record)):
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        out = result.output
        assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
        assert not any(line.startswith("Seat 9 Mallory") for line in out.splitlines())
    replayed = CliRunner().invoke(cli, ["replay", record]).output
    assert "Ann\\x1b[2J" in replayed and "Bo\\x0aSeat 9 Mallory" in replayed
    assert "Cy\\u202eolleh" in replayed and "gone\\x1b[1A" in replayed
    as_json = CliRunner().invoke(cli, ["verify", record, "--json"])
    assert json.loads(as_json.output)["ok"]  # JSON output escapes by itself


@pytest.mark.parametrize("seq", ['"2"', '"٢"', "2.0", "true"])
def test_a_record_whose_seq_is_not_a_whole_number_is_not_read(tmp_path: Path, seq: str) -> None:
    record = Path(hostile_record(tmp_path / "hostile.feastlog.json"))
    text = record.read_text()
    assert text.count('"seq": 2,') == 1
    record.write_text(text.replace('"seq": 2,', f'"seq": {seq},'))
    result = CliRunner().invoke(cli, ["verify", str(record)])
    assert result.exit_code == 3 and "is not a whole number" in result.output, result.output


def test_the_web_follow_takes_a_seq_in_ascii_digits_only(tmp_path: Path) -> None:
    server = WebServer(tmp_path / "games.duckdb")
    try:
        made = stub(server.address).CreateGame(
            pb.CreateGameRequest(game_kind="bon-appetit", players=["Ann", "Bo"]),
            metadata=bearer(server.key),
        )
        events = f"/games/{made.game_id}/events"
        for after in ("١", "²", "+0", " 0"):
            reply = http_request(server, "GET", f"{events}?{urlencode({'after': after})}")
            assert reply.status == 400 and "after is a seq" in reply.body, after
        assert http_request(server, "GET", f"{events}?after=0", until="data:").status == 200
    finally:
        server.stop()
