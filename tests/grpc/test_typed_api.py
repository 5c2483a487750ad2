"""The typed twins on the wire: views, facts, game kinds and participants beside the strings."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from feastlog.cli.wire import as_dict
from feastlog.presentation import typed
from feastlog.replay import games
from feastlog.service.grpc.servicers.convert import KIND_OF_ENUM, participant, participant_text
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2, view_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests.serverutil import ThreadedServer, bearer, error_info, play_to_end, stub


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ThreadedServer]:
    running = ThreadedServer(tmp_path / "games.duckdb")
    yield running
    running.stop()


def same_facts(structs: object, facts: object) -> None:
    """Each typed Fact holds exactly what the Struct beside it does."""
    plain = [typed.without_nulls(as_dict(s)) for s in structs]  # type: ignore[attr-defined]
    assert [typed.fact_dict(f) for f in facts] == plain  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", list(view_pb2.GameKind.values())[1:])
def test_views_facts_kinds_and_participants_come_typed(server: ThreadedServer, kind: int) -> None:
    client = stub(server.address)
    created = client.CreateGame(
        pb.CreateGameRequest(kind=kind, players=["Ann", "Brian", "Celia"]),  # type: ignore[arg-type]
        metadata=bearer(server.key),
    )
    assert created.kind == kind
    game_id, tokens = created.game_id, [t.token for t in created.seat_tokens]
    play_to_end(client, game_id, tokens, seed=kind, stop_after=6)
    for token in (None, tokens[1], server.key):
        reply = client.GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(token))
        assert typed.view_dict(reply.typed_view) == typed.without_nulls(as_dict(reply.view))
        assert str(reply.typed_viewer.role) and reply.viewer in ("spectator", "seat:1", "arbiter")
        if reply.viewer == "seat:1":
            assert (reply.typed_viewer.role, reply.typed_viewer.seat) == (view_pb2.ROLE_SEAT, 1)
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
    stream = replay.StreamReplay(
        rpb.StreamReplayRequest(
            game_id=game_id, typed_viewer=view_pb2.Participant(role=view_pb2.ROLE_SEAT, seat=0)
        ),
        metadata=bearer(server.key),
    )
    events = [r.event for r in stream]
    assert len(events) >= 7
    for e in events:
        assert typed.view_dict(e.typed_view) == typed.without_nulls(as_dict(e.view))
        same_facts(e.facts, e.typed_facts)
        role = view_pb2.ROLE_SERVER if e.actor == "server" else view_pb2.ROLE_SEAT
        assert e.typed_actor.role == role
    assert events[-1].typed_view.WhichOneof("game") == typed_view_field(kind)
    listed = client.ListGames(pb.ListGamesRequest(kind=kind)).games  # type: ignore[arg-type]
    assert [g.game_id for g in listed] == [game_id] and listed[0].kind == kind


def typed_view_field(kind: int) -> str:
    """The TableView member of a game kind."""
    return {1: "bon_appetit", 2: "menu_masters", 3: "picky_eaters"}[kind]


def test_submit_rulings_what_if_and_rejections_are_typed(server: ThreadedServer) -> None:
    client = stub(server.address)
    created = client.CreateGame(
        pb.CreateGameRequest(game_kind="bon-appetit", players=["Ann", "Brian"]),
        metadata=bearer(server.key),
    )
    game_id, tokens = created.game_id, [t.token for t in created.seat_tokens]
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[0])
    )
    done = client.SubmitCommand(
        pb.SubmitCommandRequest(game_id=game_id, command_id="c1", command=legal.commands[0]),
        metadata=bearer(tokens[0]),
    )
    same_facts(done.facts, done.typed_facts)
    assert done.typed_facts[0].bon_appetit.WhichOneof("fact") == "bid_sealed"
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    ruling = audit.SubmitRuling(
        apb.SubmitRulingRequest(
            game_id=game_id,
            command_id=uuid.uuid4().hex,
            ruling=record_pb2.ArbiterCommand(reason="test", note=record_pb2.Note(text="hi")),
        ),
        metadata=bearer(server.key),
    )
    assert ruling.typed_facts[0].ruling.text == "hi"
    same_facts(ruling.facts, ruling.typed_facts)
    what_if = audit.WhatIf(
        apb.WhatIfRequest(
            game_id=game_id,
            seq=2,
            typed_actor=view_pb2.Participant(role=view_pb2.ROLE_SEAT, seat=1),
            command=legal.commands[0],
        ),
        metadata=bearer(server.key),
    )
    same_facts(what_if.facts, what_if.typed_facts)
    with pytest.raises(grpc.RpcError) as refused:
        client.SubmitCommand(
            pb.SubmitCommandRequest(game_id=game_id, command_id="c2", command=legal.commands[0]),
            metadata=bearer(tokens[0]),
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    rejections = audit.ListRejections(
        apb.ListRejectionsRequest(game_id=game_id), metadata=bearer(server.key)
    ).rejections
    assert (rejections[0].typed_actor.role, rejections[0].typed_actor.seat) == (
        view_pb2.ROLE_SEAT,
        0,
    )


def test_a_string_and_its_typed_twin_must_agree(server: ThreadedServer) -> None:
    client = stub(server.address)
    with pytest.raises(grpc.RpcError) as clash:
        client.CreateGame(
            pb.CreateGameRequest(
                game_kind="bon-appetit", kind=view_pb2.GAME_KIND_MENU_MASTERS, players=["A", "B"]
            ),
            metadata=bearer(server.key),
        )
    assert clash.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(clash.value).metadata["field"] == "kind"
    created = client.CreateGame(
        pb.CreateGameRequest(
            game_kind="bon-appetit", kind=view_pb2.GAME_KIND_BON_APPETIT, players=["A", "B"]
        ),
        metadata=bearer(server.key),
    )
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
    asked = view_pb2.Participant(role=view_pb2.ROLE_SEAT, seat=1)
    with pytest.raises(grpc.RpcError) as clash:
        replay.GetStateAt(
            rpb.GetStateAtRequest(game_id=created.game_id, viewer="seat:0", typed_viewer=asked),
            metadata=bearer(server.key),
        )
    assert error_info(clash.value).metadata["field"] == "typed_viewer"
    reply = replay.GetStateAt(
        rpb.GetStateAtRequest(game_id=created.game_id, typed_viewer=asked),
        metadata=bearer(server.key),
    )
    assert reply.viewer == "seat:1" and reply.typed_viewer == asked


def test_a_kind_no_game_has_is_refused_as_a_filter_too(server: ThreadedServer) -> None:
    """A misspelt kind filter is the caller's mistake, named, not an empty answer."""
    client = stub(server.address)
    with pytest.raises(grpc.RpcError) as refused:
        client.ListGames(pb.ListGamesRequest(game_kind="chess"))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "unknown game kind 'chess'" in str(refused.value.details())
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    with pytest.raises(grpc.RpcError) as refused:
        list(
            audit.VerifyAllGames(
                apb.VerifyAllGamesRequest(game_kind="chess"), metadata=bearer(server.key)
            )
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert client.ListGames(pb.ListGamesRequest(game_kind="bon-appetit")).games == []


def test_a_ruling_without_credentials_is_told_what_to_send(server: ThreadedServer) -> None:
    client = stub(server.address)
    created = client.CreateGame(
        pb.CreateGameRequest(game_kind="bon-appetit", players=["Ann", "Brian"]),
        metadata=bearer(server.key),
    )
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
    ruling = record_pb2.ArbiterCommand(reason="r", note=record_pb2.Note(text="n"))
    with pytest.raises(grpc.RpcError) as refused:
        audit.SubmitRuling(
            apb.SubmitRulingRequest(game_id=created.game_id, command_id="r1", ruling=ruling)
        )
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "the organiser's or an arbiter's key to rule" in str(refused.value.details())


@pytest.mark.parametrize(
    ("name", "role", "seat", "other"),
    [
        ("seat:2", view_pb2.ROLE_SEAT, 2, ""),
        ("seat:0 of game g_other", view_pb2.ROLE_SEAT, 0, "g_other"),
        ("spectator", view_pb2.ROLE_SPECTATOR, 0, ""),
        ("arbiter", view_pb2.ROLE_ARBITER, 0, ""),
        ("server", view_pb2.ROLE_SERVER, 0, ""),
        ("anonymous", view_pb2.ROLE_ANONYMOUS, 0, ""),
    ],
)
def test_every_actor_and_viewer_name_has_its_participant(
    name: str, role: int, seat: int, other: str
) -> None:
    found = participant(name)
    assert (found.role, found.seat, found.other_game_id) == (role, seat, other)
    if not other and role != view_pb2.ROLE_SERVER:  # what a request may name, back again
        assert participant_text("", found, "typed_viewer") == name


def test_every_game_kind_has_its_typed_twin() -> None:
    assert sorted(KIND_OF_ENUM.values()) == sorted(games.SHIPPED)
    assert {
        view_pb2.TableView.DESCRIPTOR.fields_by_name[games.engine(k).spec.command_field].name
        for k in games.SHIPPED
    } == set(view_pb2.TableView.DESCRIPTOR.fields_by_name)


def test_a_client_that_reads_typed_facts_gets_them_alone(server: ThreadedServer) -> None:
    """typed_facts_only leaves the Struct copy out (each fact encoded once); the typed facts
    are the same as a client that asks for both gets, and a retry answers the same way."""
    client = stub(server.address)
    created = client.CreateGame(
        pb.CreateGameRequest(game_kind="bon-appetit", players=["Ann", "Brian"]),
        metadata=bearer(server.key),
    )
    game_id, tokens = created.game_id, [t.token for t in created.seat_tokens]
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[0])
    )
    request = pb.SubmitCommandRequest(
        game_id=game_id, command_id="c1", command=legal.commands[0], typed_facts_only=True
    )
    alone = client.SubmitCommand(request, metadata=bearer(tokens[0]))
    assert len(alone.facts) == 0
    assert alone.typed_facts[0].bon_appetit.WhichOneof("fact") == "bid_sealed"
    request.typed_facts_only = False
    both = client.SubmitCommand(request, metadata=bearer(tokens[0]))
    assert both.replayed and not alone.replayed
    assert list(both.typed_facts) == list(alone.typed_facts)
    same_facts(both.facts, both.typed_facts)
