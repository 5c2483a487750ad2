"""The case file as the caller (and every other seat, and a spectator) sees it leaks
nothing before the reveal: the leak scanner (tests/leakscan.py) over its bytes, for each
game kind, with a control that the scanner finds the arbiter's case file handed to a seat."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import json_format

from feastlog.replay.games.engine import ARBITER, SPECTATOR, Viewer
from feastlog.replay.table import casefile
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import table_service_pb2 as tpb
from feastlog.v1 import table_service_pb2_grpc as tpb_grpc
from tests.leakscan import Driver, Receipt, Secrets, leaks
from tests.serverutil import ThreadedServer, bearer

KINDS = ("bon-appetit", "menu-masters", "picky-eaters")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedServer]:
    running = ThreadedServer(tmp_path_factory.mktemp("caseleak") / "games.duckdb")
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_the_case_file_as_each_seat_sees_it_leaks_nothing(
    server: ThreadedServer, kind: str
) -> None:
    driver = Driver(server, kind, 3, seed=9)
    table = tpb_grpc.TableServiceStub(grpc.insecure_channel(server.address))
    for _ in range(8):  # a few moves, sealed ones among them
        view = driver.client.game.GetView(pb.GetViewRequest(game_id=driver.game_id))
        seat = int(sorted(json_format.MessageToDict(view.view)["to_act"])[0])
        assert not driver.submit(Viewer.of_seat(seat))
    called = table.CallArbiter(
        tpb.CallArbiterRequest(game_id=driver.game_id, about_seq=driver.seq, claim="check it"),
        metadata=bearer(driver.tokens[1]),
    )
    driver.seq = int(called.call)
    receipts = []
    for viewer in (*[Viewer.of_seat(s) for s in range(3)], SPECTATOR, ARBITER):
        token = driver.key if viewer == ARBITER else driver.token(viewer)
        found = table.GetCaseFile(
            tpb.GetCaseFileRequest(game_id=driver.game_id, call=called.call),
            metadata=bearer(token),
        )
        assert casefile.check(json.loads(found.bundle)) == []
        observer = Viewer.of_seat(0) if viewer == ARBITER else viewer
        receipts.append(Receipt(observer, driver.seq, f"GetCaseFile as {viewer}", found.bundle))
    last_hidden = driver.play(probe_every=10_000, sweep_every=10_000)
    secrets = Secrets(driver.finish(max(last_hidden, driver.seq)))
    own, arbiters = receipts[:4], receipts[4]
    assert leaks(secrets, own) == []
    # control: the arbiter's case file handed to seat 0 is found (hidden cards, sealed
    # commands, command ids), so the scan above looked at something
    assert leaks(secrets, [arbiters]) != []
