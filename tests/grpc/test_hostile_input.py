"""Bounded input: field bounds, unknown fields, undecodable bytes, bad actors and viewers,
refusals stored bounded and rate limited, expensive RPCs kept for the organiser."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from feastlog.replay import games
from feastlog.replay.games.engine import PackError, pack_source, unknown_pack_key
from feastlog.service.app import reads, source
from feastlog.service.app.auth import Credentials, check_arbiter_name
from feastlog.service.app.errors import (
    BadRequest,
    FieldTooLong,
    Unauthenticated,
    UndecodableRequest,
    UnknownFields,
)
from feastlog.service.app.limits import (
    REFUSED_BODY_KEPT,
    RefusalBudget,
    body_is_whole,
    stored_refusal,
)
from feastlog.service.grpc.guard import (
    Refused,
    check_fields,
    checked_deserializer,
    server_options,
    smallest_bound,
)
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import bon_appetit_pb2 as ba
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import picky_eaters_pb2 as pe
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as tpb_grpc
from tests.hostileutil import (
    TOURNAMENT,
    UNDECODABLE,
    Targets,
    call_raw,
    pack_refused,
    populated_server,
    refused,
    rpc_paths,
    unknown_field,
)
from tests.serverutil import ThreadedServer, bearer, error_info, stub


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ThreadedServer, Targets]]:
    yield from populated_server(tmp_path_factory, "hostile")


def last_seq(server: ThreadedServer, game_id: str) -> int:
    """A game's last seq, as the arbiter sees it."""
    view = stub(server.address).GetView(
        pb.GetViewRequest(game_id=game_id), metadata=bearer(server.key)
    )
    return int(view.seq)


def rejections(server: ThreadedServer, game_id: str) -> list[apb.Rejection]:
    """A game's stored refusals, as the arbiter sees them."""
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    found = audit.ListRejections(
        apb.ListRejectionsRequest(game_id=game_id), metadata=bearer(server.key)
    )
    return list(found.rejections)


# ---- the checks themselves -------------------------------------------------------------


def test_unknown_fields_are_found_inside_a_command_and_named() -> None:
    inner = pe.PickyEatersCommand.FromString(
        pe.PickyEatersCommand(pass_round=pe.PickyEatersPass()).SerializeToString()
        + unknown_field(77)
    )
    request = pb.SubmitCommandRequest(game_id="g", command=record_pb2.Command(picky_eaters=inner))
    request = pb.SubmitCommandRequest.FromString(request.SerializeToString())
    with pytest.raises(UnknownFields) as found:
        check_fields(request)
    assert found.value.metadata["field"] == "command.picky_eaters"
    assert found.value.metadata["unknown_fields"] == "command.picky_eaters#77"
    check_fields(pb.SubmitCommandRequest(game_id="g", command=record_pb2.Command()))


def test_a_short_request_skips_the_walk_but_not_the_unknown_field_check() -> None:
    """A request shorter than every bound its fields could break is not walked for them;
    unknown fields in it are still found, and named, by the checked deserializer."""
    read = checked_deserializer(pb.SubmitCommandRequest)
    inner = pe.PickyEatersCommand(pass_round=pe.PickyEatersPass()).SerializeToString()
    command = record_pb2.Command(
        picky_eaters=pe.PickyEatersCommand.FromString(inner + unknown_field(77))
    )
    raw = pb.SubmitCommandRequest(game_id="g_1", command=command).SerializeToString()
    assert len(raw) < smallest_bound(pb.SubmitCommandRequest.DESCRIPTOR)
    refused = read(raw)
    assert isinstance(refused, Refused) and isinstance(refused.error, UnknownFields)
    assert refused.error.metadata["unknown_fields"] == "command.picky_eaters#77"
    clean = pb.SubmitCommandRequest(
        game_id="g_1",
        command_id="c1",
        command=record_pb2.Command(
            picky_eaters=pe.PickyEatersCommand(pass_round=pe.PickyEatersPass())
        ),
    )
    assert read(clean.SerializeToString()) == clean
    # the smallest bound of a type is one of its fields' (here game_kind's, 32)
    assert smallest_bound(pb.CreateGameRequest.DESCRIPTOR) == 32


def test_a_known_field_sent_as_the_wrong_type_is_named_as_such() -> None:
    """Protobuf sets a known field sent with another wire type aside with the unknown
    ones: it was refused as "field number 1, which this server does not know", when the
    server knows field 1 well (game_id).  It is named, with the type it takes."""
    read = checked_deserializer(pb.SubmitCommandRequest)
    cases = [
        (bytes([0x08, 5]), "game_id", "a string"),  # field 1 as a varint
        (bytes([0x20, 1]), "command", "a Command message"),  # field 4 as a varint
        (
            pb.SubmitCommandRequest(
                game_id="g_1",
                command=record_pb2.Command.FromString(bytes([0x08, 0x01])),
            ).SerializeToString(),
            "command.bon_appetit",  # field 1 of Command, as a varint
            "a BonAppetitCommand message",
        ),
    ]
    for raw, field, words in cases:
        refused = read(raw)
        assert isinstance(refused, Refused), field
        assert isinstance(refused.error, UndecodableRequest), field
        assert refused.error.metadata["field"] == field
        assert f"is sent as the wrong type: it is {words}" in str(refused.error)
    refused = read(bytes([0xF8, 0x07, 1]))  # field 127: unknown, and still said so
    assert isinstance(refused, Refused) and isinstance(refused.error, UnknownFields)


@pytest.mark.parametrize(
    ("request_message", "field"),
    [
        (pb.SubmitCommandRequest(command_id="c" * 129), "command_id"),
        (pb.CreateGameRequest(players=["Ann", "B" * 41]), "players[1]"),
        (pb.CreateGameRequest(options={"k" * 65: "1"}), "options key"),
        (pb.CreateGameRequest(options={"k": "v" * 65}), "options['k']"),
        (pb.CreateGameRequest(tournament_id="t" * 65), "tournament_id"),
        (pb.CreateGameRequest(players=[str(i) for i in range(65)]), "players"),
        (pb.GetViewRequest(game_id="g" * 65), "game_id"),
        (
            apb.SubmitRulingRequest(
                ruling=record_pb2.ArbiterCommand(reason="r" * 501, note=record_pb2.Note())
            ),
            "ruling.reason",
        ),
        (
            apb.SubmitRulingRequest(
                ruling=record_pb2.ArbiterCommand(reason="r", note=record_pb2.Note(text="n" * 2001))
            ),
            "ruling.note.text",
        ),
        (apb.WhatIfRequest(actor="seat:" + "1" * 40), "actor"),
    ],
)
def test_over_long_fields_are_refused_naming_the_field(request_message: Any, field: str) -> None:
    with pytest.raises(FieldTooLong) as found:
        check_fields(request_message)
    assert found.value.metadata["field"] == field
    assert field.split("[")[0].split(" ")[0] in found.value.message
    # and by the checked deserializer, which skips the walk only for shorter requests
    refused = checked_deserializer(type(request_message))(request_message.SerializeToString())
    assert isinstance(refused, Refused) and isinstance(refused.error, FieldTooLong)
    assert refused.error.metadata["field"] == field


def test_the_largest_request_is_a_content_pack() -> None:
    (name, largest), *_ = server_options()
    assert name == "grpc.max_receive_message_length"
    assert largest == (64 + 128) * 1024  # a request, and a pack of at most 128 KiB


def test_create_game_refuses_a_pack_over_128_kib_before_reading_it(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, _ = served
    bundled = games.engine("bon-appetit").default_pack_bytes()
    padded = bundled + b"# " + b"x" * (128 * 1024 - len(bundled) - 3) + b"\n"
    client = stub(server.address)
    for pack, taken in ((padded, True), (padded + b"\n", False)):
        request = pb.CreateGameRequest(
            game_kind="bon-appetit", players=["Ann", "Bo"], content_pack=pack
        )
        if taken:
            assert client.CreateGame(request, metadata=bearer(server.key)).game_id
            continue
        error = refused(client.CreateGame, request, metadata=bearer(server.key))
        info = error_info(error)
        assert (info.reason, info.metadata["field"]) == ("FIELD_TOO_LONG", "content_pack")


def test_a_refused_command_is_kept_cut_with_its_length_and_digest() -> None:
    body = bytes(range(256)) * 40
    kept, message = stored_refusal(body, "Ann cannot do that", 0)
    assert len(kept) == REFUSED_BODY_KEPT and kept == body[:REFUSED_BODY_KEPT]
    assert not body_is_whole(kept)
    assert "10240 bytes" in message and "sha256 " in message
    small, said = stored_refusal(b"\x08\x01", "m" * 5000, 3)
    assert small == b"\x08\x01" and body_is_whole(small)
    assert len(said) < 700 and "3 earlier refusal(s)" in said


def test_the_refusal_budget_is_a_token_bucket_per_sender() -> None:
    now = [0.0]
    budget = RefusalBudget(burst=3, per_minute=6, clock=lambda: now[0])
    ann = "seat:0 of game g_1"
    assert [budget.take(ann) for _ in range(5)] == [0, 0, 0, None, None]
    assert budget.take("seat:1 of game g_1") == 0  # another sender has its own bucket
    now[0] += 10  # one more at 6 a minute
    assert budget.take(ann) == 2  # stored, saying two were skipped
    assert budget.take(ann) is None
    assert budget.unstored == 3


# Content pack files that broke the TOML reader (RecursionError, ValueError, or time and
# memory growing with the square of a dotted key's parts: 10,000 parts took 2.3 s and
# 400 MB, 100,000 were killed for memory); each is refused on the file itself.
BROKEN_FILES = {
    "deep arrays": b'id = "p"\na = ' + b"[" * 60_000 + b"]" * 60_000,
    "deep inline tables": b'id = "p"\na = ' + b"{b=" * 20_000 + b"1" + b"}" * 20_000,
    "a 5000-digit number": b'id = "p"\nn = ' + b"9" * 5000,
    "a dotted key of 3000 parts": b'id = "p"\n' + b"a." * 3000 + b"b = 1",
    "a table header of 3000 parts": b'id = "p"\n[' + b"a." * 3000 + b"b]",
    "nesting 11 deep in all": b'id = "p"\n[a.b.c]\nd.e.f = [[[{g = [1]}]]]',
}


@pytest.mark.parametrize("kind", games.SHIPPED)
@pytest.mark.parametrize("name", BROKEN_FILES)
def test_a_pack_file_that_breaks_the_reader_is_refused_on_the_file(kind: str, name: str) -> None:
    with pytest.raises(PackError) as refused_pack:
        games.engine(kind).load_pack(BROKEN_FILES[name])
    assert (refused_pack.value.card, refused_pack.value.field) == ("(pack)", "(file)")
    assert "Traceback" not in refused_pack.value.message
    assert "sys." not in refused_pack.value.message  # no advice to change Python's limits


def test_a_pack_nests_ten_deep_and_brackets_in_its_words_do_not_count() -> None:
    words = b"""id = "p"
note = "[[[[[[[[[[[ {{{{{{{{{{{ a.b.c.d.e.f.g.h.i.j.k.l"
title = 'x.x.x.x.x.x.x.x.x.x.x.x [[[[[[[[[[[['
text = \"\"\"[[[[[[[[[[[[
\\\"[[[[[[[[[[[[\"\"\"\"
"a.a.a.a.a.a.a.a.a.a.a.a" = [1.5, 2.5, 1979-05-27T07:32:00.999999]  # [[[[[[[[[[[[
"""
    deepest = b"[a.b]\nc.d = [[{e = [[[1]]]}]]\n"  # the file's table and 9 more
    read = pack_source(words + deepest)
    assert read["text"] == '[[[[[[[[[[[[\n"[[[[[[[[[[[["'
    assert read["a"]["b"]["c"]["d"] == [[{"e": [[[1]]]}]]
    with pytest.raises(PackError, match="more than 10 deep"):
        pack_source(words + deepest.replace(b"[[[1]]]", b"[[[[1]]]]"))


def test_credentials_sent_are_always_checked() -> None:
    credentials = Credentials("org_key")
    for metadata in (
        [("authorization", "Bearer")],
        [("authorization", "Bearer    ")],
        [("authorization", "Basic org_key")],
        [("authorization", "Bearer org_key"), ("authorization", "Bearer x")],
        [("authorization", "Bearer seat_unknown")],
    ):
        with pytest.raises(Unauthenticated):
            credentials.caller(metadata)
    assert credentials.caller([("authorization", "Bearer org_key")]).role == "organiser"
    assert credentials.caller([]).role == "anonymous"
    with pytest.raises(Unauthenticated):  # an empty organiser key is never matched
        Credentials("").caller([("authorization", "Bearer  ")])


# ---- through a real server ---------------------------------------------------------------


def test_create_game_refuses_a_pack_file_that_breaks_the_reader_and_makes_nothing(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, _ = served
    client = stub(server.address)
    listed = pb.ListGamesRequest(page_size=500)
    before = len(client.ListGames(listed).games)
    for name, pack in BROKEN_FILES.items():
        request = pb.CreateGameRequest(
            game_kind="bon-appetit", players=["Ann", "Bo"], content_pack=pack
        )
        error = refused(client.CreateGame, request, metadata=bearer(server.key))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (name, error.details())
        info = error_info(error)
        assert (info.reason, info.metadata["card"], info.metadata["field"]) == (
            "BAD_CONTENT_PACK",
            "(pack)",
            "(file)",
        ), name
    assert len(client.ListGames(listed).games) == before


# Cards of the bundled packs with one value changed that no check refused in time:
# (game, text, its replacement, the card and field the refusal names).
BROKEN_CARDS = [
    # an ingredient looked up as a name: TypeError, unhashable
    (
        "menu-masters",
        'ingredients = ["broccoli"]',
        'ingredients = [["broccoli"]]',
        "produce-01",
        "ingredients",
    ),
    # a Food deck of 300,000 cards, walked on the server's event loop: 2.8 s, taken
    (
        "picky-eaters",
        'name = "eggplant"\ncount = 5',
        'name = "eggplant"\ncount = 300000',
        "ingredient-eggplant",
        "count",
    ),
]


@pytest.mark.parametrize(("kind", "old", "new", "card", "field"), BROKEN_CARDS)
def test_create_game_refuses_a_broken_card_naming_it_and_makes_nothing(
    served: tuple[ThreadedServer, Targets], kind: str, old: str, new: str, card: str, field: str
) -> None:
    pack_refused(served[0], kind, old, new, card, field)


def test_undecodable_bytes_are_invalid_argument_in_plain_words(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, _ = served
    channel = grpc.insecure_channel(server.address)
    for path, method in rpc_paths():
        for raw in UNDECODABLE:
            answer = call_raw(channel, method, raw, bearer(server.key))
            assert answer.code == grpc.StatusCode.INVALID_ARGUMENT, (path, raw)
            assert answer.reason == "UNDECODABLE_REQUEST", (path, raw)
            assert "DecodeError" not in answer.details and "Traceback" not in answer.details
            assert method.input_type.full_name in answer.details


def test_bounded_fields_are_refused_and_change_nothing(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, targets = served
    client = stub(server.address)
    own = bearer(targets.tokens[targets.running][targets.own])
    before = last_seq(server, targets.running), len(rejections(server, targets.running))
    huge_id = pb.SubmitCommandRequest(
        game_id=targets.running, command_id="c" * 4000, command=targets.move
    )
    error = refused(client.SubmitCommand, huge_id, metadata=own)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(error).metadata["field"] == "command_id"
    create = pb.CreateGameRequest(game_kind="bon-appetit", players=["Ann", "x" * 100])
    error = refused(client.CreateGame, create, metadata=bearer(server.key))
    assert error_info(error).metadata["field"] == "players[1]"
    create = pb.CreateGameRequest(
        game_kind="bon-appetit", players=["A", "B"], options={"o" * 99: ""}
    )
    error = refused(client.CreateGame, create, metadata=bearer(server.key))
    assert error_info(error).reason == "FIELD_TOO_LONG"
    assert (last_seq(server, targets.running), len(rejections(server, targets.running))) == before


def test_unknown_fields_in_a_command_never_ride_into_the_chain(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, targets = served
    channel = grpc.insecure_channel(server.address)
    method = dict(rpc_paths())["/feastlog.v1.GameService/SubmitCommand"]
    which = targets.move.WhichOneof("game") or ""
    inner: Any = getattr(targets.move, which)
    command = record_pb2.Command()
    getattr(command, which).CopyFrom(
        type(inner).FromString(inner.SerializeToString() + unknown_field(99) * 1000)
    )
    request = pb.SubmitCommandRequest(game_id=targets.running, command_id="u1", command=command)
    before = last_seq(server, targets.running), len(rejections(server, targets.running))
    own = bearer(targets.tokens[targets.running][targets.own])
    answer = call_raw(channel, method, request.SerializeToString(), own)
    assert (answer.code, answer.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_FIELDS")
    assert f"command.{which}" in answer.details and "99" in answer.details
    assert (last_seq(server, targets.running), len(rejections(server, targets.running))) == before


@pytest.mark.parametrize("actor", ["seat:", "seat:0:1", "seat:9", "seat:-1", "spectator", "x"])
def test_what_if_with_a_bad_actor_is_invalid_argument(
    served: tuple[ThreadedServer, Targets], actor: str
) -> None:
    server, targets = served
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    request = apb.WhatIfRequest(game_id=targets.running, seq=2, actor=actor, command=targets.move)
    error = refused(audit.WhatIf, request, metadata=bearer(server.key))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert error_info(error).metadata["field"] == "actor"


def test_what_if_in_place_of_a_seed_reveal_needs_an_actor(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, targets = served
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    close = record_pb2.Command(
        arbiter=record_pb2.ArbiterCommand(reason="again", note=record_pb2.Note(text="n"))
    )
    request = apb.WhatIfRequest(game_id=targets.finished, seq=3, command=close)
    error = refused(audit.WhatIf, request, metadata=bearer(server.key))
    assert error_info(error).metadata["field"] == "actor"
    request.actor = "arbiter"
    answer = audit.WhatIf(request, metadata=bearer(server.key))
    # a note on a closed game is refused, as SubmitCommand refuses it: nothing after the end
    assert not answer.legal and answer.rule_id == "FL-GAME-CLOSED"


def test_a_viewer_outside_the_game_is_invalid_argument(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, targets = served
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
    for viewer in ("seat:3", "seat:1:2", "seat:"):
        request = rpb.GetStateAtRequest(game_id=targets.running, viewer=viewer)
        error = refused(replay.GetStateAt, request, metadata=bearer(server.key))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_info(error).metadata["field"] == "viewer"


def test_verify_all_games_is_the_organisers(served: tuple[ThreadedServer, Targets]) -> None:
    server, targets = served
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    seat = bearer(targets.tokens[targets.running][targets.own])
    for metadata, code in (
        (seat, grpc.StatusCode.PERMISSION_DENIED),
        ((), grpc.StatusCode.UNAUTHENTICATED),
    ):
        error = refused(
            lambda m: list(audit.VerifyAllGames(apb.VerifyAllGamesRequest(), metadata=m)), metadata
        )
        assert error.code() == code
    reports = list(audit.VerifyAllGames(apb.VerifyAllGamesRequest(), metadata=bearer(server.key)))
    assert reports and all(r.report.ok for r in reports)


def test_a_cancelled_verify_all_stops_between_games(
    served: tuple[ThreadedServer, Targets], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _ = served
    audited: list[str] = []
    folding, release = threading.Event(), threading.Event()
    real = source.audit_stored

    def slow(stored: Any) -> Any:
        audited.append(stored.rows[0].game_id)
        if len(audited) == 2:  # the first call's second game waits until the test says
            folding.set()
            release.wait(timeout=60)
        return real(stored)

    monkeypatch.setattr(source, "audit_stored", slow)
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    stream = audit.VerifyAllGames(apb.VerifyAllGamesRequest(), metadata=bearer(server.key))
    total = next(stream).total
    assert total >= 3 and folding.wait(timeout=60)
    stream.cancel()
    # Bulk verification folds one game at a time, whoever asks: a new call can only get
    # through while the first call's second game is still folding if the first call
    # stopped when it was cancelled.
    again = audit.VerifyAllGames(
        apb.VerifyAllGamesRequest(), metadata=bearer(server.key), timeout=60
    )
    assert len(list(again)) == total
    release.set()
    assert len(audited) == 2 + total


def test_refusals_are_stored_bounded_and_at_a_senders_pace(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "games.duckdb")
    try:
        client = stub(server.address)
        game = client.CreateGame(
            pb.CreateGameRequest(game_kind="picky-eaters", players=["Ann", "Bob"]),
            metadata=bearer(server.key),
        )
        big = pe.PickyEatersPrepareRecipe(
            recipe="r",
            substitutions=[
                pe.PickyEatersSubstitution(ingredient="i", cards=["c" * 128] * 64) for _ in range(7)
            ],
        )
        command = record_pb2.Command(picky_eaters=pe.PickyEatersCommand(prepare_recipe=big))
        assert len(command.SerializeToString()) > 50_000
        for i in range(60):
            request = pb.SubmitCommandRequest(
                game_id=game.game_id, command_id=f"big-{i}", command=command
            )
            error = refused(
                client.SubmitCommand, request, metadata=bearer(game.seat_tokens[i % 2].token)
            )
            assert error.code() in (
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.INVALID_ARGUMENT,
            )
        stored = rejections(server, game.game_id)
        budget = server.running.app.games.refusals
        assert 2 * budget.burst <= len(stored) < 60  # a burst per seat, a few refilled
        assert budget.unstored == 60 - len(stored)
        assert {r.actor for r in stored} == {"seat:0", "seat:1"}
        for rejection in stored:
            assert "command cut:" in rejection.message and "sha256 " in rejection.message
            assert not rejection.HasField("command")  # a prefix is never shown as a command
    finally:
        server.stop()


def test_standings_are_sql_over_the_projection_and_the_same_for_everyone(
    served: tuple[ThreadedServer, Targets],
) -> None:
    server, targets = served
    standings = tpb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
    request = tpb.GetStandingsRequest(tournament_id=TOURNAMENT)
    seat = bearer(targets.tokens[targets.running][targets.own])
    organiser = standings.GetStandings(request, metadata=bearer(server.key))
    assert organiser.games_finished == 1 and organiser.games_running >= 2
    # nothing is folded to answer, so a seat and a spectator get the same answer
    assert standings.GetStandings(request, metadata=seat) == organiser
    assert standings.GetStandings(request) == organiser


def test_one_seat_token_sent_to_many_games_is_stored_within_one_budget(tmp_path: Path) -> None:
    """A seat's token sent to other games is refused (PERMISSION_DENIED) and the refusal
    kept in the game it was sent to: within the one budget of that credential, however
    many games it is sent to (each game had a budget of its own before: a hundred games, a
    hundred times the rows)."""
    server = ThreadedServer(tmp_path / "budget.duckdb")
    try:
        client = stub(server.address)

        def new(players: list[str]) -> pb.CreateGameResponse:
            request = pb.CreateGameRequest(game_kind="bon-appetit", players=players)
            reply: pb.CreateGameResponse = client.CreateGame(request, metadata=bearer(server.key))
            return reply

        attacker = new(["Eve", "Mal"])
        eve = attacker.seat_tokens[0].token
        victims = [new(["Ann", "Bob"]).game_id for _ in range(4)]
        bid = record_pb2.Command(bon_appetit=ba.BonAppetitCommand(bid=ba.BonAppetitBid()))
        for i in range(40):
            request = pb.SubmitCommandRequest(
                game_id=victims[i % 4], command_id=f"x{i}", command=bid
            )
            with pytest.raises(grpc.RpcError) as caught:
                client.SubmitCommand(request, metadata=bearer(eve))
            assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        stored = [r for g in victims for r in rejections(server, g)]
        assert {r.actor for r in stored} == {f"seat:0 of game {attacker.game_id}"}
        assert 20 <= len(stored) <= 21  # the burst (and a refill of 12 a minute at most)
    finally:
        server.stop()


def test_a_command_sent_with_another_games_token_never_shows_that_games_secrets(
    tmp_path: Path,
) -> None:
    """A client with a stale game id sends its seat's sealed bid to another table: refused,
    and kept in that table's refusals.  That table's refusals become public when it ends,
    while the sender's game may still run: the bid (from the sender's hidden gems) was
    there for anyone to read.  The command is now kept without its body, and the refusal
    is the arbiter's alone, before and after the table it was sent to ends."""
    server = ThreadedServer(tmp_path / "foreign.duckdb")
    try:
        client = stub(server.address)
        audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
        org = bearer(server.key)

        def new(players: list[str]) -> pb.CreateGameResponse:
            request = pb.CreateGameRequest(game_kind="bon-appetit", players=players)
            reply: pb.CreateGameResponse = client.CreateGame(request, metadata=org)
            return reply

        sender, table = new(["Eve", "Mal"]), new(["Ann", "Bob"])
        bid = ba.BonAppetitBid(gems=[ba.BON_APPETIT_GEM_BLUE, ba.BON_APPETIT_GEM_BLUE])
        command = record_pb2.Command(bon_appetit=ba.BonAppetitCommand(bid=bid))
        request = pb.SubmitCommandRequest(
            game_id=table.game_id, command_id="eves-bid", command=command
        )
        with pytest.raises(grpc.RpcError) as caught:
            client.SubmitCommand(request, metadata=bearer(sender.seat_tokens[0].token))
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED

        def refused(metadata: tuple[tuple[str, str], ...]) -> list[apb.Rejection]:
            asked = apb.ListRejectionsRequest(game_id=table.game_id)
            return list(audit.ListRejections(asked, metadata=metadata).rejections)

        close = record_pb2.ArbiterCommand(reason="over", close_game=record_pb2.CloseGame())
        for phase in ("running", "closed"):
            (kept,) = refused(org)  # the arbiter sees it, without the command
            assert kept.actor == f"seat:0 of game {sender.game_id}", phase
            assert not kept.HasField("command") and "command not kept" in kept.message
            for metadata in ((), bearer(table.seat_tokens[0].token)):
                assert refused(metadata) == [], phase
            if phase == "running":
                client.SubmitCommand(
                    pb.SubmitCommandRequest(
                        game_id=table.game_id,
                        command_id="close",
                        command=record_pb2.Command(arbiter=close),
                    ),
                    metadata=org,
                )
        # its own table's refusals still become public when it ends
        own = pb.SubmitCommandRequest(game_id=table.game_id, command_id="late", command=command)
        with pytest.raises(grpc.RpcError):
            client.SubmitCommand(own, metadata=bearer(table.seat_tokens[0].token))
        assert [r.actor for r in refused(())] == ["seat:0"]
    finally:
        server.stop()


def test_ids_with_control_or_format_characters_are_invalid_argument(
    served: tuple[ThreadedServer, Targets],
) -> None:
    """An id holding a line break or a bidi control names no game and no tournament: it
    is refused as malformed (INVALID_ARGUMENT, the field named), not looked up."""
    server, targets = served
    client = stub(server.address)
    tournaments = tpb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
    calls = [
        ("game_id", lambda: client.GetView(pb.GetViewRequest(game_id=targets.running + "\n"))),
        (
            "game_id",
            lambda: client.SubmitCommand(
                pb.SubmitCommandRequest(game_id="g\n", command_id="c"),
                metadata=bearer(targets.tokens[targets.running][targets.own]),
            ),
        ),
        ("tournament_id", lambda: tournaments.GetStats(tpb.GetStatsRequest(tournament_id="a\nb"))),
        (
            "tournament_id",
            lambda: tournaments.GetStandings(tpb.GetStandingsRequest(tournament_id="a\u202eb")),
        ),
        (
            "tournament_id",
            lambda: client.ListGames(pb.ListGamesRequest(tournament_id="a\u200bb")),
        ),
    ]
    for field, call in calls:
        with pytest.raises(grpc.RpcError) as caught:
            call()
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
        assert error_info(caught.value).metadata["field"] == field


# A misspelt key in an organiser's own pack: (game, text, its replacement, card, field).
MISSPELT_KEYS = [
    (
        "bon-appetit",
        'name = "Fugu Platter"\ntype = "Side Dish"\npoints = 5',
        'name = "Fugu Platter"\ntype = "Side Dish"\npionts = 5',
        "dish #2",
        "pionts",
    ),
    (
        "bon-appetit",
        'ability = { kind = "gem", target = "green", bonus = 2 }',
        'ability = { kind = "gem", target = "green", bonsu = 2 }',
        "dish #3",
        "ability.bonsu",
    ),
    ("bon-appetit", 'id = "bon-appetit-default-1"', 'id = "b"\ntitle = "t"', "(pack)", "title"),
    (
        "menu-masters",
        'title = "Menu Masters, composed default pack"',
        'titel = "Menu Masters"',
        "(pack)",
        "titel",
    ),
    ("menu-masters", 'name = "Salmon Toast"', 'nmae = "Salmon Toast"', "menu_card #1", "nmae"),
    (
        "menu-masters",
        'id = "produce-01"\ndeck = "produce-stand"',
        'id = "produce-01"\ndeck = "produce-stand"\nnote = "a note"',
        "ingredient_card #1",
        "note",
    ),
    ("picky-eaters", 'text = "Put on an', 'txet = "Put on an', "item #1", "txet"),
]


@pytest.mark.parametrize(("kind", "old", "new", "card", "field"), MISSPELT_KEYS)
def test_create_game_names_a_key_no_game_reads_in_an_organisers_pack(
    served: tuple[ThreadedServer, Targets], kind: str, old: str, new: str, card: str, field: str
) -> None:
    """Bon Appetit! and Menu Masters read only the keys they know: a misspelt one was
    dropped without a word, and the card played with it missing or refused for the field
    it left out.  A new pack with a key its game does not read is refused naming it,
    before the game's own checks (Picky Eaters' own check said the same in other words)."""
    server, _ = served
    error = pack_refused(server, kind, old, new, card, field)
    assert "is not a field of a" in (error.details() or "")


def test_a_stored_pack_with_a_key_its_game_does_not_read_still_loads() -> None:
    """Only new packs are held to their game's keys: a game recorded with such a pack
    (before the check) folds as it did, so its pack still loads."""
    for kind, old, new, _, _ in MISSPELT_KEYS:
        engine = games.engine(kind)
        if kind == "picky-eaters" or "pionts" in new or "nmae" in new or "bonsu" in new:
            continue  # a key the game needs, misspelt, leaves it missing: never loaded
        text = engine.default_pack_bytes().decode().replace(old, new, 1)
        engine.load_pack(text.encode())


def test_the_bundled_packs_hold_only_keys_their_games_read() -> None:
    for kind in games.SHIPPED:
        engine = games.engine(kind)
        assert engine.pack_keys is not None, kind
        unknown_pack_key(pack_source(engine.default_pack_bytes()), engine.pack_keys, kind)


def test_an_actor_is_told_what_it_may_be() -> None:
    """What-if's actor is a seat or the arbiter: a bad one was told "seat:N, spectator or
    arbiter", and ``spectator`` then refused as making no moves."""
    for text in ("seat:x", "bogus"):
        with pytest.raises(BadRequest) as bad:
            reads.parse_actor(text, 3)
        assert str(bad.value).endswith("is not seat:N (N in digits 0-9) or arbiter")
        assert bad.value.metadata["field"] == "actor"
    with pytest.raises(BadRequest, match="a spectator makes no moves"):
        reads.parse_actor("spectator", 3)
    assert reads.parse_actor("seat:2", 3) == "seat:2"
    with pytest.raises(BadRequest, match="spectator or arbiter"):
        reads.parse_viewer("bogus", 3)


def test_a_negative_from_seq_is_refused_as_a_negative_seq_is(
    served: tuple[ThreadedServer, Targets],
) -> None:
    """GetStateAt refused seq -1 while WatchGame and StreamReplay took from_seq -1 as the
    genesis: each now refuses it, naming from_seq; 0 and 1 still start at the genesis."""
    server, targets = served
    game = targets.running
    client = stub(server.address)
    replays = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
    streams: dict[str, Callable[[int], Iterator[Any]]] = {
        "WatchGame": lambda n: client.WatchGame(pb.WatchGameRequest(game_id=game, from_seq=n)),
        "StreamReplay": lambda n: replays.StreamReplay(
            rpb.StreamReplayRequest(game_id=game, from_seq=n)
        ),
    }
    for name, open_stream in streams.items():
        with pytest.raises(grpc.RpcError) as bad:
            next(iter(open_stream(-1)))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT, name
        assert error_info(bad.value).metadata["field"] == "from_seq", name
        for start in (0, 1):
            assert next(iter(open_stream(start))).event.seq == 1, name


def test_no_new_arbiter_takes_a_roles_name() -> None:
    """An arbiter named ``organiser`` made rulings the record told as the organiser's
    (``ruled_by: organiser``).  No new arbiter takes a role's name; one added before the
    check can still be named to revoke it."""
    for role in ("organiser", "arbiter", "server", "spectator", "anonymous"):
        with pytest.raises(ValueError, match="names a role in the record"):
            check_arbiter_name(role, new=True)
        assert check_arbiter_name(role) == role
    assert check_arbiter_name("organiser-2", new=True) == "organiser-2"
