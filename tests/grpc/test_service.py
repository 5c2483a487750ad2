"""The service end to end: real servers on port 0, on a real DuckDB file and on PostgreSQL."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.service.app import commands
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import bon_appetit_pb2 as ba
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from tests.serverutil import (
    ProcessServer,
    ThreadedServer,
    bearer,
    create,
    error_info,
    play_to_end,
    stub,
    view_of,
    watch_all,
)

KEY = "org_test-organiser-key-0123456789abcdef"
PLAYERS = ["Ann", "Brian", "Celia"]


def replay_text(address: str) -> str:
    """``feastlog replay --server`` output for the only game."""
    client = stub(address)
    game_id = client.ListGames(pb.ListGamesRequest()).games[0].game_id
    result = CliRunner().invoke(
        cli, ["replay", game_id, "--server", address, "--organiser-key", KEY]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_three_seats_play_a_game_and_a_killed_server_refolds_it_identically(
    tmp_path: Path,
) -> None:
    db = tmp_path / "games.duckdb"
    server = ProcessServer(db, KEY)
    try:
        client = stub(server.address)
        game = create(client, KEY, "bon-appetit", PLAYERS)
        tokens = [t.token for t in game.seat_tokens]
        sent = play_to_end(client, game.game_id, tokens, seed=7)
        final = client.GetView(pb.GetViewRequest(game_id=game.game_id), metadata=bearer(KEY))
        assert view_of(final)["over"] is True
        assert view_of(final)["round"] == 12
        before = watch_all(client, game.game_id, KEY, final.seq)
        text_before = replay_text(server.address)
    finally:
        server.kill()
    assert sent >= 12  # seats with no gems have their 0 bid sealed for them (BA-I9)
    assert before[-1].kind == "seed_reveal"
    assert [e.seq for e in before] == list(range(1, final.seq + 1))

    server = ProcessServer(db, KEY)
    try:
        client = stub(server.address)
        again = client.GetView(pb.GetViewRequest(game_id=game.game_id), metadata=bearer(KEY))
        after = watch_all(client, game.game_id, KEY, again.seq)
        text_after = replay_text(server.address)
    finally:
        server.kill()
    assert again.seq == final.seq
    assert view_of(again) == view_of(final)
    assert [(e.hash, e.state_hash) for e in after] == [(e.hash, e.state_hash) for e in before]
    assert after == before
    assert text_after == text_before
    assert "Round 12" in text_after and "Seed revealed" in text_after


def test_kill_9_mid_game_loses_no_acknowledged_command(tmp_path: Path) -> None:
    db = tmp_path / "games.duckdb"
    server = ProcessServer(db, KEY)
    try:
        client = stub(server.address)
        game = create(client, KEY, "bon-appetit", PLAYERS)
        tokens = [t.token for t in game.seat_tokens]
        play_to_end(client, game.game_id, tokens, seed=3, stop_after=10)
        acknowledged = client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq
        hashes = [e.state_hash for e in watch_all(client, game.game_id, KEY, acknowledged)]
    finally:
        server.kill()
    server = ProcessServer(db, KEY)
    try:
        client = stub(server.address)
        assert client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq == acknowledged
        replayed = [e.state_hash for e in watch_all(client, game.game_id, KEY, acknowledged)]
        assert replayed == hashes
        play_to_end(client, game.game_id, tokens, seed=4)
        assert view_of(client.GetView(pb.GetViewRequest(game_id=game.game_id)))["over"]
    finally:
        server.kill()


def test_a_second_server_on_the_same_file_fails_at_start_with_a_clear_message(
    tmp_path: Path,
) -> None:
    db = tmp_path / "games.duckdb"
    server = ProcessServer(db, KEY)
    try:
        code = "from feastlog.cli.main import main; main()"
        second = subprocess.run(
            [sys.executable, "-c", code, "serve", "--db", str(db), "--port", "0"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 3  # cannot open the store (README: exit codes)
        assert second.stderr.splitlines() == [
            f"Error: {db} is in use by another feastlog process (DuckDB allows one writer "
            "per file): stop that server, or talk to it with --server"
        ]
    finally:
        server.terminate()


@pytest.fixture(scope="module")
def served(module_store: str) -> Iterator[ThreadedServer]:
    server = ThreadedServer(module_store)
    yield server
    server.stop()


def submit(
    served: ThreadedServer,
    game_id: str,
    token: str | None,
    command: record_pb2.Command,
    command_id: str = "",
    expected_seq: int | None = None,
) -> pb.SubmitCommandResponse:
    request = pb.SubmitCommandRequest(game_id=game_id, command_id=command_id, command=command)
    if expected_seq is not None:
        request.expected_seq = expected_seq
    reply: pb.SubmitCommandResponse = stub(served.address).SubmitCommand(
        request, metadata=bearer(token)
    )
    return reply


def bid(*gems: ba.BonAppetitGem.ValueType) -> record_pb2.Command:
    return record_pb2.Command(
        bon_appetit=ba.BonAppetitCommand(bid=ba.BonAppetitBid(gems=list(gems)))
    )


def refused(
    served: ThreadedServer,
    game_id: str,
    token: str | None,
    command: record_pb2.Command,
    code: grpc.StatusCode,
    **kw: object,
) -> dict[str, str]:
    """Submit, expect a refusal with ``code``; check nothing was appended and it was recorded."""
    client = stub(served.address)
    seq_before = client.GetView(pb.GetViewRequest(game_id=game_id)).seq
    store = served.running.db
    recorded_before = len(served.call(store.call(store.store.rejections, game_id)))
    with pytest.raises(grpc.RpcError) as caught:
        submit(served, game_id, token, command, **kw)  # type: ignore[arg-type]
    assert caught.value.code() == code, caught.value.details()
    info = error_info(caught.value)
    assert info.domain == "feastlog"
    assert client.GetView(pb.GetViewRequest(game_id=game_id)).seq == seq_before
    recorded = served.call(store.call(store.store.rejections, game_id))
    assert len(recorded) == recorded_before + 1
    assert recorded[-1].reason == info.reason
    assert recorded[-1].rule_id == info.metadata.get("rule_id", "")
    return {"reason": info.reason, **dict(info.metadata), "message": caught.value.details()}


def new_game(
    served: ThreadedServer, players: list[str] = PLAYERS, seed: bytes = bytes(range(32))
) -> tuple[str, list[str]]:
    game = create(stub(served.address), served.key, "bon-appetit", players, seed=seed)
    return game.game_id, [t.token for t in game.seat_tokens]


def hand(served: ThreadedServer, game_id: str, token: str) -> list[str]:
    view = view_of(
        stub(served.address).GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(token))
    )
    seat = next(s for s in view["seats"] if "hand" in s)
    return list(seat["hand"])


def test_malformed_command_is_invalid_argument(served: ThreadedServer) -> None:
    game_id, tokens = new_game(served)
    out = refused(
        served, game_id, tokens[0], record_pb2.Command(), grpc.StatusCode.INVALID_ARGUMENT
    )
    assert out["reason"] == "MALFORMED_COMMAND" and out["field"] == "command"
    out = refused(
        served,
        game_id,
        tokens[0],
        bid(ba.BON_APPETIT_GEM_UNSPECIFIED),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert out["reason"] == "MALFORMED_COMMAND" and "gems" in out["field"]


def test_bid_out_of_phase_cites_its_rule(served: ThreadedServer) -> None:
    game_id, tokens = new_game(served)
    tie_break = record_pb2.Command(
        bon_appetit=ba.BonAppetitCommand(tie_break_bid=ba.BonAppetitTieBreakBid())
    )
    out = refused(served, game_id, tokens[0], tie_break, grpc.StatusCode.FAILED_PRECONDITION)
    assert out["rule_id"] == "BA-PHASES"
    submit(served, game_id, tokens[1], bid())
    out = refused(served, game_id, tokens[1], bid(), grpc.StatusCode.FAILED_PRECONDITION)
    assert out["rule_id"] == "BA-TURN"


def test_gems_not_in_hand_are_refused(served: ThreadedServer) -> None:
    game_id, tokens = new_game(served)
    held = hand(served, game_id, tokens[0])
    colour = min(("blue", "green", "red", "yellow"), key=held.count)
    gem = ba.BonAppetitGem.Value("BON_APPETIT_GEM_" + colour.upper())
    out = refused(
        served,
        game_id,
        tokens[0],
        bid(*[gem] * (held.count(colour) + 1)),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert out["rule_id"] == "BA-BID-OWN"
    assert "Ann" in out["message"]


def test_too_many_gems_or_colours_are_refused(served: ThreadedServer) -> None:
    game_id, tokens = new_game(served)
    out = refused(
        served,
        game_id,
        tokens[0],
        bid(*[ba.BON_APPETIT_GEM_BLUE] * 4),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert out["rule_id"] == "BA-BID-SIZE"
    two_id, two_tokens = new_game(served, ["Ann", "Brian"])
    out = refused(
        served,
        two_id,
        two_tokens[0],
        bid(
            ba.BON_APPETIT_GEM_BLUE,
            ba.BON_APPETIT_GEM_GREEN,
            ba.BON_APPETIT_GEM_RED,
            ba.BON_APPETIT_GEM_YELLOW,
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert out["rule_id"] == "BA-BID-COLOURS"


def test_another_games_token_and_unknown_tokens(served: ThreadedServer) -> None:
    game_id, _ = new_game(served)
    _, other_tokens = new_game(served)
    out = refused(served, game_id, other_tokens[0], bid(), grpc.StatusCode.PERMISSION_DENIED)
    assert out["reason"] == "PERMISSION_DENIED"
    out = refused(served, game_id, served.key, bid(), grpc.StatusCode.PERMISSION_DENIED)
    assert "seat token" in out["message"]
    with pytest.raises(grpc.RpcError) as caught:
        submit(served, game_id, "seat_not-a-real-token", bid())
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_unknown_game_is_not_found(served: ThreadedServer) -> None:
    _, tokens = new_game(served)
    with pytest.raises(grpc.RpcError) as caught:
        submit(served, "g_nope", tokens[0], bid())
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert error_info(caught.value).reason == "GAME_NOT_FOUND"


def test_a_bid_after_the_game_ended_is_refused(served: ThreadedServer) -> None:
    """BA-END ("At the end of the round when the final Dish Card is bid for, the game
    ends."): the refusal's rule_id is the game's end rule; its message cites FL-GAME-CLOSED."""
    game_id, tokens = new_game(served)
    play_to_end(stub(served.address), game_id, tokens, seed=11)
    out = refused(served, game_id, tokens[0], bid(), grpc.StatusCode.FAILED_PRECONDITION)
    assert out["rule_id"] == "BA-END" and "FL-GAME-CLOSED" in out["message"]


def test_stale_expected_seq_is_aborted_and_retries_are_idempotent(
    served: ThreadedServer,
) -> None:
    game_id, tokens = new_game(served)
    first = submit(served, game_id, tokens[0], bid(), command_id="c-1", expected_seq=1)
    assert first.seq == 2 and not first.replayed
    again = submit(served, game_id, tokens[0], bid(), command_id="c-1")
    assert (again.seq, again.hash, again.replayed) == (2, first.hash, True)
    out = refused(served, game_id, tokens[1], bid(), grpc.StatusCode.ABORTED, expected_seq=1)
    assert out["reason"] == "STALE_EXPECTED_SEQ"
    held = hand(served, game_id, tokens[0])
    gem = ba.BonAppetitGem.Value("BON_APPETIT_GEM_" + held[0].upper())
    out = refused(
        served, game_id, tokens[0], bid(gem), grpc.StatusCode.ALREADY_EXISTS, command_id="c-1"
    )
    assert out["reason"] == "COMMAND_ID_REUSED"


def test_a_retried_ruling_appends_nothing_and_says_it_is_replayed(served: ThreadedServer) -> None:
    """A ruling sent again with its command_id is answered as first recorded, ``replayed``
    (docs/api.md), as a seat's retried command is; a new id records a new ruling."""
    game_id, _ = new_game(served)
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(served.address))
    note = record_pb2.ArbiterCommand(reason="table talk", note=record_pb2.Note(text="warned"))
    request = apb.SubmitRulingRequest(game_id=game_id, command_id="r-1", ruling=note)
    first = audit.SubmitRuling(request, metadata=bearer(served.key))
    again = audit.SubmitRuling(request, metadata=bearer(served.key))
    assert first.seq == 2 and not first.replayed
    assert (again.seq, again.hash, again.replayed) == (2, first.hash, True)
    request.command_id = "r-2"
    other = audit.SubmitRuling(request, metadata=bearer(served.key))
    assert other.seq == 3 and not other.replayed


def test_a_command_id_is_its_senders_own_and_cannot_be_probed(served: ThreadedServer) -> None:
    """Another seat's ids answer like unused ones: a stale probe is ABORTED either way."""
    game_id, tokens = new_game(served)
    submit(served, game_id, tokens[0], bid(), command_id="bid-none", expected_seq=1)
    used = refused(
        served,
        game_id,
        tokens[1],
        bid(),
        grpc.StatusCode.ABORTED,
        command_id="bid-none",
        expected_seq=1,
    )
    unused = refused(
        served,
        game_id,
        tokens[1],
        bid(),
        grpc.StatusCode.ABORTED,
        command_id="bid-blue",
        expected_seq=1,
    )
    assert used["reason"] == "STALE_EXPECTED_SEQ"
    assert used == unused  # word for word: nothing says the id was taken
    # the same id from another seat is that seat's own new command
    brian = submit(served, game_id, tokens[1], bid(), command_id="bid-none", expected_seq=2)
    assert brian.seq == 3 and not brian.replayed


def test_views_hide_other_hands_and_sealed_bids(served: ThreadedServer) -> None:
    game_id, tokens = new_game(served)
    held = hand(served, game_id, tokens[0])
    gem = ba.BonAppetitGem.Value("BON_APPETIT_GEM_" + held[0].upper())
    submit(served, game_id, tokens[0], bid(gem))
    client = stub(served.address)
    brian = view_of(client.GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(tokens[1])))
    ann_seen_by_brian = brian["seats"][0]
    assert "hand" not in ann_seen_by_brian and ann_seen_by_brian["has_bid"] is True
    assert held[0] not in str(ann_seen_by_brian.get("on_table", []))
    events = watch_all(client, game_id, tokens[1], 2)
    assert not events[1].HasField("command")  # Ann's sealed bid stays sealed for Brian
    spectator = view_of(client.GetView(pb.GetViewRequest(game_id=game_id)))
    assert all("hand" not in s for s in spectator["seats"])
    own = watch_all(client, game_id, tokens[0], 2)
    assert own[1].command.bon_appetit.bid.gems == [gem]


def test_watch_sends_stored_rows_then_live_ones(served: ThreadedServer) -> None:
    import threading

    game_id, tokens = new_game(served)
    client = stub(served.address)
    seen: list[pb.RecordEvent] = []
    stream = client.WatchGame(pb.WatchGameRequest(game_id=game_id, from_seq=1))

    def read() -> None:
        for reply in stream:
            seen.append(reply.event)
            if len(seen) == 3:
                stream.cancel()
                return

    reader = threading.Thread(target=read)
    reader.start()
    submit(served, game_id, tokens[0], bid())
    submit(served, game_id, tokens[1], bid())
    reader.join(timeout=30)
    assert [e.seq for e in seen] == [1, 2, 3]
    assert seen[0].kind == "genesis" and seen[0].genesis.game_id == game_id
    assert [e.actor for e in seen[1:]] == ["seat:0", "seat:1"]
    assert not seen[1].HasField("command")  # a spectator never sees a sealed bid
    assert all("hand" not in s for s in view_of(seen[2])["seats"])


def test_a_revoked_arbiters_open_stream_ends_with_the_revocation(served: ThreadedServer) -> None:
    """A named arbiter sees every hand; once the organiser revokes the key, a WatchGame
    stream opened before ends (UNAUTHENTICATED) without another row, not only new calls."""
    import queue
    import threading

    from feastlog.v1 import admin_service_pb2 as adpb
    from feastlog.v1 import admin_service_pb2_grpc as ad_grpc

    admin = ad_grpc.AdminServiceStub(grpc.insecure_channel(served.address))
    key = admin.AddArbiter(adpb.AddArbiterRequest(name="dana"), metadata=bearer(served.key)).key
    game_id, tokens = new_game(served)
    stream = stub(served.address).WatchGame(
        pb.WatchGameRequest(game_id=game_id, from_seq=1), metadata=bearer(key)
    )
    got: queue.Queue[object] = queue.Queue()

    def read() -> None:
        try:
            for reply in stream:
                got.put(reply.event)
        except grpc.RpcError as ended:
            got.put(ended)

    threading.Thread(target=read, daemon=True).start()
    first = got.get(timeout=30)
    assert isinstance(first, pb.RecordEvent) and first.seq == 1
    submit(served, game_id, tokens[0], bid())
    second = got.get(timeout=30)
    assert isinstance(second, pb.RecordEvent) and second.seq == 2
    assert all("hand" in seat for seat in view_of(second)["seats"])  # the arbiter's view
    admin.RevokeArbiter(adpb.RevokeArbiterRequest(name="dana"), metadata=bearer(served.key))
    ended = got.get(timeout=30)  # no new row: the revocation itself ends the stream
    assert isinstance(ended, grpc.RpcError), ended
    assert ended.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "revoked" in (ended.details() or "")
    submit(served, game_id, tokens[1], bid())
    assert got.empty()  # nothing after the revocation
    with pytest.raises(grpc.RpcError) as caught:
        stub(served.address).GetView(pb.GetViewRequest(game_id=game_id), metadata=bearer(key))
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_concurrent_commands_share_group_commits(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    server = ThreadedServer(tmp_path / "group.duckdb")
    try:
        client = stub(server.address)
        games = [create(client, server.key, "bon-appetit", PLAYERS) for _ in range(8)]
        commits_before = server.running.db.commits
        with ThreadPoolExecutor(max_workers=8) as pool:
            sent = list(
                pool.map(
                    lambda ig: play_to_end(
                        stub(server.address),
                        ig[1].game_id,
                        [t.token for t in ig[1].seat_tokens],
                        seed=ig[0],
                    ),
                    enumerate(games),
                )
            )
        rows = sum(client.GetView(pb.GetViewRequest(game_id=g.game_id)).seq - 1 for g in games)
        commits = server.running.db.commits - commits_before
    finally:
        server.stop()
    assert rows == sum(sent) + len(games)  # every command, plus each game's seed reveal
    assert commits < sum(sent), (commits, sum(sent))  # several rows went in one transaction


def test_finished_games_beyond_the_limit_are_folded_out_and_reload_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from feastlog.service.app import live

    monkeypatch.setattr(live, "FINISHED_KEPT", 2)
    server = ThreadedServer(tmp_path / "cache.duckdb")
    try:
        client = stub(server.address)
        finished = []
        for i in range(4):
            game = create(client, server.key, "bon-appetit", PLAYERS, seed=bytes([i + 1]) * 32)
            play_to_end(client, game.game_id, [t.token for t in game.seat_tokens], seed=i)
            finished.append(game.game_id)
        running = create(client, server.key, "bon-appetit", PLAYERS)
        assert server.running.app.live.loaded() == 3  # the 2 latest finished, and the running one
        first = finished[0]
        view = client.GetView(pb.GetViewRequest(game_id=first), metadata=bearer(server.key))
        rows = watch_all(client, first, server.key, view.seq)
        assert view_of(view)["over"] and rows[-1].kind == "seed_reveal"
        assert server.running.app.live.loaded() == 3
        assert client.GetView(pb.GetViewRequest(game_id=running.game_id)).seq == 1
    finally:
        server.stop()


def test_a_calls_credentials_are_resolved_once_and_the_servicer_acts_for_that_caller(
    served: ThreadedServer,
) -> None:
    """The guard resolves the bearer token; the servicer takes its caller, not a second
    look-up: one resolution per call, and each call acts for its own token."""
    game_id, tokens = new_game(served)
    credentials = served.running.app.credentials
    resolved = []
    real = credentials.caller

    def counting(metadata: object) -> object:
        found = real(metadata)  # type: ignore[arg-type]
        resolved.append(found)
        return found

    credentials.caller = counting  # type: ignore[method-assign,assignment]
    try:
        first = submit(served, game_id, tokens[0], bid(), command_id="ann-1")
        second = submit(served, game_id, tokens[1], bid(), command_id="brian-1")
    finally:
        credentials.caller = real  # type: ignore[method-assign]
    assert [(c.role, c.seat) for c in resolved] == [("seat", 0), ("seat", 1)]
    rows = served.call(served.running.db.call(served.running.db.store.rows, game_id))
    assert [(r.seq, r.actor) for r in rows[1:]] == [(first.seq, "seat:0"), (second.seq, "seat:1")]


def test_who_asks_and_which_game_come_before_the_games_state(served: ThreadedServer) -> None:
    """JoinGame with no token is UNAUTHENTICATED whatever the game's state (not 'already
    started'); VerifyGame and ExportRecord with no game id are INVALID_ARGUMENT naming
    game_id for any caller (a seat's token is not taken as another game's)."""
    from feastlog.v1 import audit_service_pb2 as apb
    from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
    from feastlog.v1 import replay_service_pb2 as rpb
    from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc

    game_id, tokens = new_game(served)  # started: no seat entropy
    with pytest.raises(grpc.RpcError) as caught:
        stub(served.address).JoinGame(pb.JoinGameRequest(game_id=game_id, entropy=b"x"))
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as caught:
        stub(served.address).JoinGame(
            pb.JoinGameRequest(game_id=game_id, entropy=b"x"), metadata=bearer(tokens[0])
        )
    assert error_info(caught.value).reason == "GAME_ALREADY_STARTED"
    channel = grpc.insecure_channel(served.address)
    calls: list[tuple[Any, Any]] = [
        (apb_grpc.AuditServiceStub(channel).VerifyGame, apb.VerifyGameRequest(game_id="")),
        (rpb_grpc.ReplayServiceStub(channel).ExportRecord, rpb.ExportRecordRequest(game_id="")),
    ]
    for call, request in calls:
        for token in (None, tokens[0], served.key):
            with pytest.raises(grpc.RpcError) as caught:
                call(request, metadata=bearer(token))
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (call, token)
            assert error_info(caught.value).metadata["field"] == "game_id"


def test_an_organisers_pack_is_read_while_other_calls_are_answered(
    served: ThreadedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CreateGame with the organiser's own pack reads and checks it off the event loop:
    here the check waits until another call has been answered, which could never happen
    if it held the loop (the call would time out and the game not be made)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from feastlog.replay.games import engine as engine_of
    from feastlog.service.app import commands

    answered = threading.Event()
    opened = commands.open_game

    def open_slowly(*args: Any) -> Any:
        assert answered.wait(timeout=20), "no other call was answered while the pack was read"
        return opened(*args)

    game_id, _ = new_game(served)
    monkeypatch.setattr(commands, "open_game", open_slowly)
    pack = engine_of("bon-appetit").default_pack_bytes()
    request = pb.CreateGameRequest(game_kind="bon-appetit", players=PLAYERS, content_pack=pack)
    with ThreadPoolExecutor(1) as pool:
        creating = pool.submit(
            stub(served.address).CreateGame, request, metadata=bearer(served.key), timeout=30
        )
        view = stub(served.address).GetView(pb.GetViewRequest(game_id=game_id), timeout=10)
        answered.set()
        assert view.seq >= 1 and creating.result(timeout=30).game_id


def test_games_dealt_from_one_pack_read_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """CreateGame reads a pack once (the bundled one, or an organiser's used for a whole
    round), not once a game: a Menu Masters pack took 12 ms of the event loop a game."""
    engine = games.engine("menu-masters")
    read: list[int] = []

    def counted(data: bytes) -> Any:
        read.append(len(data))
        return engine.load_pack(data)

    counting = dataclasses.replace(engine, load_pack=counted)
    monkeypatch.setattr(commands, "engine_of", lambda kind: counting)
    monkeypatch.setattr(fold, "_PACKS", {})
    own = engine.default_pack_bytes().replace(b'title = "', b'title = "Round 1: ', 1)
    for pack in (b"", b"", own, own, b""):
        opened = commands.open_game(
            "menu-masters", ["Ann", "Bo"], {}, b"", "", pack, False, "2026-12-01T10:00:00Z"
        )
        assert (
            opened.genesis.pack_sha256
            == hashlib.sha256(pack or engine.default_pack_bytes()).hexdigest()
        )
    assert read == [len(engine.default_pack_bytes()), len(own)]
