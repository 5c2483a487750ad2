"""Seat entropy (DESIGN section 3): every seat mixes its own bytes into the seed."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay.games.fold import state_hash
from feastlog.replay.record.history import refold
from feastlog.replay.record.rng import derive_seed
from feastlog.service.store.port import open_store
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
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


def refused(call: object, code: grpc.StatusCode | None) -> str:
    """The ErrorInfo reason a call fails with (and its code, unless None)."""
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    if code is not None:
        assert caught.value.code() == code, caught.value.details()
    return error_info(caught.value).reason


def assert_dealt_from(target: str | Path, gid: str, entropy: list[bytes]) -> None:
    """The stored game no longer waits, refolds to its own state hashes, and was dealt from
    SEED with ``entropy`` (DESIGN section 3)."""
    store = open_store(str(target), read_only=True)
    try:
        stored = store.load(gid)
        assert store.pending_game(gid) is None
    finally:
        store.close()
    assert stored is not None
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    assert [state_hash(t) for t in folded.tables] == [r.state_hash for r in stored.rows]
    assert folded.tables[0].game.rng.seed == derive_seed(SEED, entropy)


def test_a_game_waits_for_every_seats_entropy_across_a_restart(store_target: str) -> None:
    db = store_target
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

    assert_dealt_from(db, gid, [b"ann's dice", b"brian", b"celia"])


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


def test_a_waiting_game_is_failed_precondition_to_every_read(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "games.duckdb")
    try:
        client = stub(server.address)
        game = create(client, server.key, seat_entropy=True)
        gid, tokens = game.game_id, [t.token for t in game.seat_tokens]
        join(client, gid, tokens[1], b"brian's dice")
        audits = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
        replays = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
        org = bearer(server.key)
        for call in (
            lambda: audits.VerifyGame(apb.VerifyGameRequest(game_id=gid), metadata=org),
            lambda: replays.ExportRecord(rpb.ExportRecordRequest(game_id=gid), metadata=org),
            lambda: client.GetView(pb.GetViewRequest(game_id=gid), metadata=org),
            lambda: audits.ListRejections(apb.ListRejectionsRequest(game_id=gid), metadata=org),
        ):
            with pytest.raises(grpc.RpcError) as caught:
                call()
            assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            info = error_info(caught.value)
            assert info.reason == "WAITING_FOR_SEAT_ENTROPY"
            assert info.metadata["waiting_for"] == "0,2"
            assert "seat 0 (Ann) and seat 2 (Celia)" in (caught.value.details() or "")
        # an unknown game is still NOT_FOUND
        unknown = refused(
            lambda: audits.VerifyGame(apb.VerifyGameRequest(game_id="g_nope"), metadata=org),
            grpc.StatusCode.NOT_FOUND,
        )
        assert unknown == "GAME_NOT_FOUND"
    finally:
        server.stop()


@pytest.mark.parametrize("ruling", ["void_game", "close_game"])
def test_the_arbiter_ends_a_game_a_seat_never_joined(store_target: str, ruling: str) -> None:
    server = ThreadedServer(store_target)
    try:
        client = stub(server.address)
        audits = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
        replays = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(server.address))
        org = bearer(server.key)
        game = create(client, server.key, seat_entropy=True)
        gid, tokens = game.game_id, [t.token for t in game.seat_tokens]
        join(client, gid, tokens[0], b"ann's dice")
        end = record_pb2.ArbiterCommand(reason="Celia never came")
        getattr(end, ruling).SetInParent()
        note = record_pb2.ArbiterCommand(reason="r", note=record_pb2.Note(text="n"))
        # a seat cannot end it, nor may a ruling other than void or close come first
        for metadata, command in ((bearer(tokens[0]), end), (org, note)):
            request = apb.SubmitRulingRequest(game_id=gid, command_id="x", ruling=command)
            code = refused(lambda r=request, m=metadata: audits.SubmitRuling(r, metadata=m), None)
            assert code in ("PERMISSION_DENIED", "WAITING_FOR_SEAT_ENTROPY")
        request = apb.SubmitRulingRequest(game_id=gid, command_id="end", ruling=end)
        done = audits.SubmitRuling(request, metadata=org)
        assert done.game_over and done.seq == 2  # genesis 1, the ruling 2, the reveal 3
        assert audits.SubmitRuling(request, metadata=org).seq == 2  # a retry appends nothing
        listed = {g.game_id: g for g in client.ListGames(pb.ListGamesRequest()).games}
        assert listed[gid].over and not listed[gid].waiting_for_entropy
        assert listed[gid].last_seq == 3
        late = refused(lambda: join(client, gid, tokens[2], b"late"), None)
        assert late == "GAME_ALREADY_STARTED"
        report = audits.VerifyGame(apb.VerifyGameRequest(game_id=gid)).report
        assert report.ok and report.over and report.rows == 3 and not report.winners
        export = replays.ExportRecord(rpb.ExportRecordRequest(game_id=gid))  # public now
        assert export.complete
        rows = watch_all(client, gid, None, 3)
        assert [r.kind for r in rows] == ["genesis", "command", "seed_reveal"]
        assert list(rows[0].genesis.seat_entropy) == [b"ann's dice", b"", b""]
        assert rows[1].command.arbiter.WhichOneof("ruling") == ruling
        assert rows[1].command.arbiter.ruled_by == "organiser"
        assert rows[2].facts[0]["server_seed"] == SEED.hex()  # what any game's end reveals
    finally:
        server.stop()
    assert_dealt_from(store_target, gid, [b"ann's dice", b"", b""])


def test_offline_a_waiting_game_is_told_so_too(tmp_path: Path) -> None:
    db = tmp_path / "games.duckdb"
    server = ThreadedServer(db)
    try:
        game = create(stub(server.address), server.key, seat_entropy=True)
    finally:
        server.stop()
    for args in (["audit"], ["replay"], ["export", "-o", str(tmp_path / "x.json")]):
        result = CliRunner().invoke(cli, [*args[:1], game.game_id, *args[1:], "--db", str(db)])
        assert result.exit_code == 4, result.output
        assert "waiting for seat entropy from seat 0 (Ann), seat 1 (Brian) and seat 2" in (
            result.output
        )
