"""Seat entropy (DESIGN section 3): every seat mixes its own bytes into the seed."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from feastlog.replay.fold import state_hash
from feastlog.replay.history import refold
from feastlog.replay.rng import derive_seed
from feastlog.service.store import Store
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from tests.serverutil import (
    ThreadedServer,
    bearer,
    error_info,
    play_to_end,
    stub,
    view_of,
    watch_all,
)

SEED = bytes(range(32))
PLAYERS = ["Ann", "Brian", "Celia"]


def create(client: object, key: str, seat_entropy: bool) -> pb.CreateGameResponse:
    request = pb.CreateGameRequest(
        game_kind="bon-appetit", players=PLAYERS, seed=SEED, seat_entropy=seat_entropy
    )
    reply: pb.CreateGameResponse = client.CreateGame(request, metadata=bearer(key))  # type: ignore[attr-defined]
    return reply


def join(client: object, game_id: str, token: str, entropy: bytes) -> pb.JoinGameResponse:
    request = pb.JoinGameRequest(game_id=game_id, entropy=entropy)
    reply: pb.JoinGameResponse = client.JoinGame(request, metadata=bearer(token))  # type: ignore[attr-defined]
    return reply


def refused(call: object, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    assert caught.value.code() == code, caught.value.details()
    return error_info(caught.value).reason


def test_a_game_waits_for_every_seats_entropy_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "games.duckdb"
    server = ThreadedServer(db)
    client = stub(server.address)
    game = create(client, server.key, seat_entropy=True)
    gid, tokens = game.game_id, [t.token for t in game.seat_tokens]
    reason = refused(
        lambda: client.GetView(pb.GetViewRequest(game_id=gid)), grpc.StatusCode.FAILED_PRECONDITION
    )
    assert reason == "WAITING_FOR_SEAT_ENTROPY"
    listed = {g.game_id: g for g in client.ListGames(pb.ListGamesRequest()).games}
    assert listed[gid].waiting_for_entropy and listed[gid].last_seq == 0
    assert list(listed[gid].players) == PLAYERS
    first = join(client, gid, tokens[0], b"ann's dice")
    assert (first.started, list(first.waiting_for)) == (False, [1, 2])
    with pytest.raises(grpc.RpcError) as waiting:  # the ErrorInfo names seats as JoinGame does
        client.GetView(pb.GetViewRequest(game_id=gid))
    assert error_info(waiting.value).metadata["waiting_for"] == "1,2"
    again = join(client, gid, tokens[0], b"ann's dice")  # a retry changes nothing
    assert list(again.waiting_for) == [1, 2]
    reason = refused(lambda: join(client, gid, tokens[0], b"other"), grpc.StatusCode.ALREADY_EXISTS)
    assert reason == "ENTROPY_ALREADY_SENT"
    refused(lambda: join(client, gid, server.key, b"x"), grpc.StatusCode.PERMISSION_DENIED)
    refused(lambda: join(client, gid, tokens[1], b""), grpc.StatusCode.INVALID_ARGUMENT)
    server.stop()

    server = ThreadedServer(db)  # the wait survives a restart
    client = stub(server.address)
    assert list(join(client, gid, tokens[1], b"brian").waiting_for) == [2]
    done = join(client, gid, tokens[2], b"celia")
    assert done.started and list(done.waiting_for) == []
    reason = refused(
        lambda: join(client, gid, tokens[2], b"late"), grpc.StatusCode.FAILED_PRECONDITION
    )
    assert reason == "GAME_ALREADY_STARTED"
    listed = {g.game_id: g for g in client.ListGames(pb.ListGamesRequest()).games}
    assert not listed[gid].waiting_for_entropy and listed[gid].last_seq == 1
    play_to_end(client, gid, tokens, seed=1)
    final = client.GetView(pb.GetViewRequest(game_id=gid))
    assert view_of(final)["over"]
    genesis = watch_all(client, gid, None, 1)[0].genesis
    assert list(genesis.seat_entropy) == [b"ann's dice", b"brian", b"celia"]
    server.stop()

    store = Store(str(db), read_only=True)
    stored = store.load(gid)
    store.close()
    assert stored is not None
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    assert [state_hash(t) for t in folded.tables] == [r.state_hash for r in stored.rows]
    assert folded.tables[0].game.rng.seed == derive_seed(SEED, [b"ann's dice", b"brian", b"celia"])


def test_entropy_changes_the_deal_from_the_same_server_seed(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "games.duckdb")
    try:
        client = stub(server.address)
        plain = create(client, server.key, seat_entropy=False)
        mixed = create(client, server.key, seat_entropy=True)
        for seat, token in enumerate(mixed.seat_tokens):
            join(client, mixed.game_id, token.token, bytes([seat]) * 8)
        views = [
            view_of(
                client.GetView(pb.GetViewRequest(game_id=g.game_id), metadata=bearer(server.key))
            )
            for g in (plain, mixed)
        ]
        assert plain.seed_commitment == mixed.seed_commitment  # the same server seed
        deals = [(v["menu_row"], [s.get("hand") for s in v["seats"]]) for v in views]
        assert deals[0] != deals[1]
        genesis = record_pb2.Genesis.FromString(
            watch_all(client, plain.game_id, None, 1)[0].genesis.SerializeToString()
        )
        assert list(genesis.seat_entropy) == []
    finally:
        server.stop()
