"""Every game kind through the real service: a whole game, and nothing private leaks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from feastlog.replay import games
from feastlog.v1 import game_service_pb2 as pb
from tests.serverutil import ThreadedServer, create, play_to_end, stub, view_of, watch_all

PLAYERS = {"bon-appetit": 3, "menu-masters": 4, "picky-eaters": 3}  # else the fewest seats


def players(kind: str) -> int:
    """How many seats the tests give a game of ``kind``."""
    return PLAYERS.get(kind, games.engine(kind).spec.min_seats)


NAMES = ["Ann", "Brian", "Celia", "Dev", "Eve", "Farid"]


@pytest.fixture(scope="module")
def served(module_store: str) -> Iterator[ThreadedServer]:
    server = ThreadedServer(module_store)
    yield server
    server.stop()


@pytest.mark.parametrize("kind", games.kinds())
def test_a_whole_game_through_the_service(served: ThreadedServer, kind: str) -> None:
    client = stub(served.address)
    game = create(client, served.key, kind, NAMES[: players(kind)], seed=bytes([5]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    sent = play_to_end(client, game.game_id, tokens, seed=5)
    final = view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))
    assert final["over"] is True and sent > 0
    assert len(final["scores"]) == players(kind) and final["winners"]


@pytest.mark.parametrize("kind", games.kinds())
def test_a_seat_never_sees_another_seats_secrets_mid_game(
    served: ThreadedServer, kind: str
) -> None:
    client = stub(served.address)
    count = players(kind)
    game = create(client, served.key, kind, NAMES[:count], seed=bytes([6]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    play_to_end(client, game.game_id, tokens, seed=6, stop_after=15)
    now = client.GetView(pb.GetViewRequest(game_id=game.game_id))
    assert not view_of(now)["over"]
    engine = games.engine(kind)
    for seat, token in enumerate(tokens):
        for event in watch_all(client, game.game_id, token, now.seq):
            for fact in event.facts:
                owner = fact.fields.get("private_to")
                assert owner is None or int(owner.number_value) == seat, (kind, seat, fact)
            if event.HasField("command") and event.actor != f"seat:{seat}":
                inner = getattr(event.command, engine.spec.command_field)
                assert engine.command_public(inner)
    for event in watch_all(client, game.game_id, None, now.seq):
        assert all("private_to" not in f.fields for f in event.facts)
    arbiter = watch_all(client, game.game_id, served.key, now.seq)
    assert any("private_to" in f.fields for e in arbiter for f in e.facts)


TURN_RULES = {"menu-masters": "MM-TURN-ORDER", "picky-eaters": "PE-TURN-ORDER"}


@pytest.mark.parametrize("kind", sorted(TURN_RULES))
def test_bad_input_is_refused_with_its_status_and_rule_and_appends_nothing(
    served: ThreadedServer, kind: str
) -> None:
    import grpc

    from feastlog.v1 import bon_appetit_pb2, record_pb2
    from tests.serverutil import bearer, error_info

    engine = games.engine(kind)
    client = stub(served.address)
    game = create(client, served.key, kind, NAMES[: players(kind)], seed=bytes([8]) * 32)
    tokens = [t.token for t in game.seat_tokens]
    view = view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))
    mover = int(view["to_act"][0])
    waiting = next(s for s in range(len(tokens)) if s not in view["to_act"])
    legal = client.ListLegalCommands(
        pb.ListLegalCommandsRequest(game_id=game.game_id), metadata=bearer(tokens[mover])
    ).commands[0]
    ba_empty = bon_appetit_pb2.BonAppetitCommand()
    empty = record_pb2.Command()
    getattr(empty, engine.spec.command_field).SetInParent()
    cases = [
        (tokens[waiting], legal, grpc.StatusCode.FAILED_PRECONDITION, TURN_RULES[kind]),
        (tokens[mover], empty, grpc.StatusCode.INVALID_ARGUMENT, ""),
        (
            tokens[mover],
            record_pb2.Command(bon_appetit=ba_empty),
            grpc.StatusCode.INVALID_ARGUMENT,
            "",
        ),
    ]
    db = served.running.db
    for token, command, code, rule_id in cases:
        with pytest.raises(grpc.RpcError) as caught:
            client.SubmitCommand(
                pb.SubmitCommandRequest(game_id=game.game_id, command=command),
                metadata=bearer(token),
            )
        assert caught.value.code() == code, caught.value.details()
        info = error_info(caught.value)
        assert info.metadata.get("rule_id", "") == rule_id
        assert client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq == 1
        recorded = served.call(db.call(db.store.rejections, game.game_id))
        assert recorded[-1].rule_id == rule_id and recorded[-1].status == code.name
    assert len(served.call(db.call(db.store.rejections, game.game_id))) == len(cases)


@pytest.mark.parametrize(
    "kind, option",
    [
        ("bon-appetit", "gem_ability"),
        ("menu-masters", "round_limit"),
        ("picky-eaters", "small_table_variant"),
    ],
)
def test_a_bad_rule_option_value_is_invalid_argument(
    served: ThreadedServer, kind: str, option: str
) -> None:
    import grpc

    from tests.serverutil import error_info

    client = stub(served.address)
    with pytest.raises(grpc.RpcError) as caught:
        options: dict[str, str] = {option: "bogus"}
        create(client, served.key, kind, NAMES[:2], b"", **options)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info = error_info(caught.value)
    assert info.reason == "BAD_REQUEST" and info.metadata["field"] == "options"
    assert option in (caught.value.details() or "")


@pytest.mark.parametrize("kind", games.kinds())
@pytest.mark.parametrize("count", [1, 7])
def test_a_wrong_number_of_seats_is_a_bad_request_citing_the_seats_rule(
    served: ThreadedServer, kind: str, count: int
) -> None:
    """PE-I1 "2 to 6 players (6 player aids)", MM-I1 "2 to 6 chefs", BA-SEATS "2 to 4
    players": the refusal is BAD_REQUEST on the players field, with the engine's rule id."""
    import grpc

    from tests.serverutil import error_info

    engine = games.engine(kind)
    client = stub(served.address)
    with pytest.raises(grpc.RpcError) as caught:
        create(client, served.key, kind, [f"P{k}" for k in range(count)])
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info = error_info(caught.value)
    assert info.reason == "BAD_REQUEST" and info.metadata["field"] == "players"
    assert (
        info.metadata["rule_id"] == engine.spec.seats_rule
        and engine.spec.seats_rule in engine.spec.rules
    )
    assert f"{engine.spec.min_seats} to {engine.spec.max_seats} players, not {count}" in (
        caught.value.details() or ""
    )


def test_list_legal_commands_is_whole_or_says_it_is_partial(
    served: ThreadedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every legal command up to LEGAL_CAP; beyond it the first LEGAL_CAP and partial=true."""
    from dataclasses import replace

    from feastlog.replay.games.engine import LEGAL_CAP
    from tests.serverutil import bearer

    client = stub(served.address)
    game = create(client, served.key, "bon-appetit", NAMES[:3], seed=bytes([9]) * 32)
    token = game.seat_tokens[0].token
    request = pb.ListLegalCommandsRequest(game_id=game.game_id)
    whole = client.ListLegalCommands(request, metadata=bearer(token))
    live = served.call(served.running.app.live.get(game.game_id))
    engine = games.engine("bon-appetit")
    assert not whole.partial
    expected = engine.legal_commands(live.table.game, 0)
    assert [c.bon_appetit for c in whole.commands] == expected
    real = engine.commands
    many = replace(
        engine, commands=lambda state, seat: (list(real(state, seat)) * LEGAL_CAP)[: LEGAL_CAP + 1]
    )
    monkeypatch.setattr(live, "engine", many)
    capped = client.ListLegalCommands(request, metadata=bearer(token))
    assert capped.partial and len(capped.commands) == LEGAL_CAP


def test_the_cap_is_documented_where_client_developers_read() -> None:
    """The proto comment and docs/api.md state LEGAL_CAP, the number the service applies."""
    from pathlib import Path

    from feastlog.replay.games.engine import LEGAL_CAP

    root = Path(__file__).resolve().parents[2]
    proto = (root / "proto" / "feastlog" / "v1" / "game_service.proto").read_text()
    assert f"up to {LEGAL_CAP} of them" in proto and f"a cap of {LEGAL_CAP} commands" in proto
    assert f"the first {LEGAL_CAP + 1} the engine finds" in proto
    assert f"up to {LEGAL_CAP} " in (root / "docs" / "api.md").read_text()
