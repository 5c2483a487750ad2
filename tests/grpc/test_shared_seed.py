"""Duplicate tables: games dealt from one supplied seed stay private until all have ended.

An organiser supplies one seed to several tables (README: duplicate tournaments), so they
play the same deal.  Once one table ends its seed is revealed, and with it (and with the
hands it ended with, its export, its every row as any viewer) the deal of the tables still
playing.  So a finished game whose seed was supplied stays as private as a running one, for
everyone but the arbiter, while another game dealt from the same seed runs or waits for
seat entropy (``replay.record.visibility.Release``); its result is public as soon as it ends.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from google.protobuf.message import Message

from feastlog.cli.main import cli
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.record.visibility import (
    HELD,
    RUNNING,
    Dealt,
    Hidden,
    Release,
    behind_screen,
    look_as,
    seed_out,
)
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from feastlog.v1 import replay_service_pb2 as rpb
from feastlog.v1 import replay_service_pb2_grpc as rpb_grpc
from tests.serverutil import ThreadedServer, bearer, play_to_end, stub, view_of, watch_all

PLAYERS = ["Ana", "Ben", "Cy"]
SEED = bytes(range(100, 132))


@pytest.fixture
def served(store_target: str) -> Iterator[ThreadedServer]:
    server = ThreadedServer(store_target)
    yield server
    server.stop()


def _new(
    served: ThreadedServer, seed: bytes, kind: str = "bon-appetit", **options: Any
) -> tuple[str, list[str]]:
    request = pb.CreateGameRequest(game_kind=kind, players=PLAYERS, seed=seed, **options)
    game = stub(served.address).CreateGame(request, metadata=bearer(served.key))
    return game.game_id, [t.token for t in game.seat_tokens]


def _close(served: ThreadedServer, game_id: str) -> None:
    ruling = record_pb2.ArbiterCommand(
        reason="duplicate round over", close_game=record_pb2.CloseGame()
    )
    request = apb.SubmitRulingRequest(game_id=game_id, command_id=uuid.uuid4().hex, ruling=ruling)
    apb_grpc.AuditServiceStub(grpc.insecure_channel(served.address)).SubmitRuling(
        request, metadata=bearer(served.key)
    )


def _shows_seed(messages: list[Message]) -> bool:
    """Whether any of these replies carries the seed (as hex in words, or its bytes)."""
    return any(
        SEED.hex() in str(m) or SEED in m.SerializeToString(deterministic=True) for m in messages
    )


def _everything(served: ThreadedServer, game_id: str, token: str | None) -> list[Message]:
    """Every reply about a game a caller with ``token`` (None: a spectator) may get."""
    client, meta = stub(served.address), bearer(token)
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(served.address))
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(served.address))
    last = client.GetView(pb.GetViewRequest(game_id=game_id), metadata=meta)
    got: list[Message] = [last]
    got += [
        r.event
        for r in replay.StreamReplay(rpb.StreamReplayRequest(game_id=game_id), metadata=meta)
    ]
    got.append(replay.GetStateAt(rpb.GetStateAtRequest(game_id=game_id), metadata=meta))
    got += watch_all(client, game_id, token, last.seq)
    got.append(audit.VerifyGame(apb.VerifyGameRequest(game_id=game_id), metadata=meta))
    got.append(audit.ListRejections(apb.ListRejectionsRequest(game_id=game_id), metadata=meta))
    return got


def _refused(call: Any, *args: Any, metadata: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call(*args, metadata=metadata)
    return caught.value


def test_a_finished_table_stays_private_while_its_duplicate_plays(served: ThreadedServer) -> None:
    """Table A ends while table B (same supplied seed) plays: no spectator or seat of A
    gets A's seed, the hands A ended with, another viewer's replay, A's export or an
    explanation; the arbiter gets all, and the result is public.  Once B ends, A is public."""
    client = stub(served.address)
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(served.address))
    audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(served.address))
    table_a, tokens_a = _new(served, SEED)
    table_b, tokens_b = _new(served, SEED)
    play_to_end(client, table_a, tokens_a, seed=5)
    play_to_end(client, table_b, tokens_b, seed=6, stop_after=2)  # B runs on

    for who in (None, tokens_a[0]):
        seen = _everything(served, table_a, who)
        assert not _shows_seed(seen), who
        now = view_of(seen[0])
        assert now["over"] and now["scores"] and now["winners"]  # the result is public
        shown_hands = [s for s in now["seats"] if "hand" in s]
        assert len(shown_hands) == (0 if who is None else 1)  # its own hand at most
        assert "set_aside" not in now and "bag" not in now
        meta = bearer(who)
        export = _refused(
            replay.ExportRecord, rpb.ExportRecordRequest(game_id=table_a), metadata=meta
        )
        assert export.code() == grpc.StatusCode.PERMISSION_DENIED
        assert HELD in (export.details() or "")
        explain = _refused(
            audit.ExplainEvent, apb.ExplainEventRequest(game_id=table_a, seq=2), metadata=meta
        )
        assert explain.code() == grpc.StatusCode.PERMISSION_DENIED
        other = _refused(
            replay.GetStateAt,
            rpb.GetStateAtRequest(game_id=table_a, seq=2, viewer="seat:1"),
            metadata=meta,
        )
        assert other.code() == grpc.StatusCode.PERMISSION_DENIED

    # the arbiter sees behind the screen, as while A ran
    key = bearer(served.key)
    assert _shows_seed(_everything(served, table_a, served.key))
    held = replay.ExportRecord(rpb.ExportRecordRequest(game_id=table_a), metadata=key)
    assert held.complete and SEED.hex().encode() in held.content
    listed = client.ListGames(pb.ListGamesRequest())
    assert {g.game_id: g.over for g in listed.games}[table_a]

    # B ends (closed by the arbiter): A's record, and B's, are public
    _close(served, table_b)
    for game_id in (table_a, table_b):
        seen = _everything(served, game_id, None)
        assert _shows_seed(seen), game_id
        assert all("hand" in s for s in view_of(seen[0])["seats"])
        public = replay.ExportRecord(rpb.ExportRecordRequest(game_id=game_id))
        assert public.complete and SEED.hex().encode() in public.content


@pytest.mark.parametrize("kind", ["bon-appetit", "menu-masters", "picky-eaters"])
def test_the_last_move_of_a_duplicate_table_tells_its_sender_no_more(
    served: ThreadedServer, kind: str
) -> None:
    """The seat whose command ends table A while B plays gets the facts a running game's
    seat gets (none private to another seat, no seed), and the game_over result."""
    client = stub(served.address)
    table_a, tokens_a = _new(served, SEED, kind)
    _new(served, SEED, kind)
    sent = 0
    while True:
        view = view_of(client.GetView(pb.GetViewRequest(game_id=table_a)))
        seat = int(view["to_act"][0])
        legal = client.ListLegalCommands(
            pb.ListLegalCommandsRequest(game_id=table_a), metadata=bearer(tokens_a[seat])
        ).commands
        request = pb.SubmitCommandRequest(
            game_id=table_a, command_id=f"c{sent}", command=legal[sent % len(legal)]
        )
        reply = client.SubmitCommand(request, metadata=bearer(tokens_a[seat]))
        sent += 1
        owners = {
            int(f.fields["private_to"].number_value)
            for f in reply.facts
            if "private_to" in f.fields
        }
        assert owners <= {seat}
        if reply.game_over:
            break
    assert not _shows_seed([reply])
    assert any(f.fields["type"].string_value == "game_over" for f in reply.facts)


def test_a_duplicate_waiting_for_seat_entropy_holds_a_finished_table_back(
    served: ThreadedServer,
) -> None:
    """A table created with seat entropy and the same supplied seed has not begun, but its
    deal is the seed and the entropy its seats will send: it holds the finished one back
    too, until it is voided (or plays and ends)."""
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(served.address))
    table_a, _ = _new(served, SEED)
    waiting, _ = _new(served, SEED, seat_entropy=True)
    _close(served, table_a)
    refused = _refused(replay.ExportRecord, rpb.ExportRecordRequest(game_id=table_a), metadata=())
    assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
    _close(served, waiting)
    assert replay.ExportRecord(rpb.ExportRecordRequest(game_id=table_a)).complete


def test_a_game_with_its_own_seed_is_public_at_its_end(served: ThreadedServer) -> None:
    """A game dealt from a seed of the server's own (or a supplied seed no other game
    shares) is public once it ends, whatever else runs."""
    client = stub(served.address)
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(served.address))
    own, _ = _new(served, b"")
    alone, _ = _new(served, bytes(32))
    _new(served, SEED)  # runs on
    for game_id in (own, alone):
        _close(served, game_id)
        assert replay.ExportRecord(rpb.ExportRecordRequest(game_id=game_id)).complete
        view = view_of(client.GetView(pb.GetViewRequest(game_id=game_id)))
        assert all("hand" in s for s in view["seats"])


def test_release_says_why_a_finished_game_is_still_hidden() -> None:
    """The policy's words: 'while the game runs', or, held back, until its duplicates end."""
    assert Release(over=True).public and not Release(over=False).public
    assert not Release(over=True, held=True).public
    with pytest.raises(Hidden, match=RUNNING):
        behind_screen(SPECTATOR, Release(False), "export its record")
    with pytest.raises(Hidden, match=HELD):
        behind_screen(Viewer.of_seat(0), Release(True, held=True), "export its record")
    behind_screen(ARBITER, Release(True, held=True), "export its record")
    with pytest.raises(Hidden, match=HELD):
        look_as(SPECTATOR, ARBITER, Release(True, held=True))
    assert look_as(SPECTATOR, ARBITER, Release(True)) == ARBITER


def test_store_counts_the_duplicates_not_ended(tmp_path: Path) -> None:
    """``twins_running`` counts the other games of the same seed with no seed reveal."""
    server = ThreadedServer(tmp_path / "twins.duckdb")
    try:
        a, _ = _new(server, SEED)
        b, _ = _new(server, SEED)
        _new(server, SEED, seat_entropy=True)
        _new(server, bytes(32))

        def twins(game_id: str) -> int:
            found: int = server.call(
                server.running.db.read(lambda store: store.twins_running(game_id))
            )
            return found

        assert twins(a) == 2
        _close(server, b)
        assert twins(a) == 1 and twins(b) == 2
    finally:
        server.stop()


def test_the_web_pages_of_a_held_table_show_no_seed(tmp_path: Path) -> None:
    """The spectator's replay page and its live events (``serve --http``) of a finished
    table whose duplicate still plays carry no seed; once the duplicate ends they do."""
    from tests.webutil import WebServer, request

    server = WebServer(tmp_path / "pages.duckdb")
    try:
        table_a, _ = _new(server, SEED)
        table_b, _ = _new(server, SEED)
        _close(server, table_a)
        page = request(server, "GET", f"/games/{table_a}")
        events = request(server, "GET", f"/games/{table_a}/events")
        assert page.status == 200 and events.status == 200
        assert "seed_reveal" in events.body  # the stream went to the end
        assert SEED.hex() not in page.body and SEED.hex() not in events.body
        _close(server, table_b)
        page = request(server, "GET", f"/games/{table_a}")
        events = request(server, "GET", f"/games/{table_a}/events")
        assert SEED.hex() in page.body and SEED.hex() in events.body
    finally:
        server.stop()


def test_a_game_made_later_from_a_seed_already_out_holds_the_others_again(
    served: ThreadedServer,
) -> None:
    """A seed whose games have all ended is out (README: supply a fresh one).  A game made
    with it later holds those records back again while it runs, the folded game's view and
    the stored record's export alike (one decision on every path)."""
    client = stub(served.address)
    replay = rpb_grpc.ReplayServiceStub(grpc.insecure_channel(served.address))
    table_a, _ = _new(served, SEED)
    _close(served, table_a)
    assert replay.ExportRecord(rpb.ExportRecordRequest(game_id=table_a)).complete
    public = view_of(client.GetView(pb.GetViewRequest(game_id=table_a)))
    assert all("hand" in s for s in public["seats"])
    late, _ = _new(served, SEED)
    refused = _refused(replay.ExportRecord, rpb.ExportRecordRequest(game_id=table_a), metadata=())
    assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
    view = view_of(client.GetView(pb.GetViewRequest(game_id=table_a)))
    assert not any("hand" in s for s in view["seats"])
    _close(served, late)
    assert replay.ExportRecord(rpb.ExportRecordRequest(game_id=table_a)).complete


def test_seed_out_is_the_first_game_that_ended_with_none_of_its_seed_running() -> None:
    """A seed is out once a game dealt from it ended while no other game of it was running
    (its record was public then); held back till the last ends, it is not."""
    at = "2026-12-01T10:{:02d}:00.000000Z".format
    a, b, c = Dealt("g_a", at(0), at(30)), Dealt("g_b", at(5), at(20)), Dealt("g_c", at(40))
    assert seed_out([]) is None
    assert seed_out([c]) is None  # running
    assert seed_out([a]) == a
    assert seed_out([a, b]) == a  # b ended first, held by a; a ended alone
    assert seed_out([Dealt("g_a", at(0)), b]) is None  # b ended while a ran: a runs on
    late = Dealt("g_d", at(25), at(50))  # made while a ran, ended after it
    assert seed_out([Dealt("g_a", at(0), at(30)), late]) == late
    assert seed_out([b, c]) == b  # c was made after b had ended: b's record was public


def test_create_game_warns_of_a_seed_a_finished_game_made_public(served: ThreadedServer) -> None:
    """A duplicate made while its twins run (or are held back) gets no warning; a game made
    from a seed whose record went public does, naming that game, and is made all the same."""
    client = stub(served.address)

    def created(seed: bytes) -> pb.CreateGameResponse:
        request = pb.CreateGameRequest(game_kind="bon-appetit", players=PLAYERS, seed=seed)
        reply: pb.CreateGameResponse = client.CreateGame(request, metadata=bearer(served.key))
        return reply

    first = created(SEED)
    second = created(SEED)
    assert not first.warnings and not second.warnings
    _close(served, first.game_id)  # held back: the second still runs
    third = created(SEED)
    assert not third.warnings
    for game in (second, third):
        _close(served, game.game_id)
    late = created(SEED)
    assert len(late.warnings) == 1 and third.game_id in late.warnings[0], late.warnings
    assert "anyone who read that record knows this game's deal" in late.warnings[0]
    assert late.seed_commitment == first.seed_commitment
    assert not created(b"").warnings and not created(bytes(32)).warnings


def test_new_prints_the_warning_on_standard_error(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "warned.duckdb")
    try:
        done, _ = _new(server, SEED)
        _close(server, done)
        runner = CliRunner()
        args = ["new", "bon-appetit", "--players", "Ann,Bo", "--seed", SEED.hex()]
        connection = ["--server", server.address, "--organiser-key", server.key]
        made = runner.invoke(cli, [*args, *connection, "--json"])
        assert made.exit_code == 0, made.output
        assert json.loads(made.stdout)["warnings"] and done in made.stderr
        assert made.stderr.startswith("warning: this seed was revealed when game")
        fresh = runner.invoke(cli, ["new", "bon-appetit", "--players", "Ann,Bo", *connection])
        assert fresh.exit_code == 0 and fresh.stderr == ""
    finally:
        server.stop()
