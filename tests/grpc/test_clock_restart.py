"""A clock's deadline that passed while no server ran is met when a server starts again.

A ``feastlog serve`` process is killed with ``kill -9`` while a seat's clock runs
(``clock=move:5``: five seconds a move), and started again on the same file once that
seat's time is gone: its time-out row (``ClockEvent``, actor ``server``) is written
within a second of the start, before anybody moves or reads the game
(``AtTable.resume``).  The clock runs on the machine's time here (a process), so this
test waits out the five seconds; ``test_clock_server.py`` moves a ``ManualClock``.
"""

from __future__ import annotations

import time
from pathlib import Path

from feastlog.service.store.port import open_store
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2
from tests.serverutil import ProcessServer, create, stub

KEY = "org_clock-restart-organiser-key-0123456789"
MOVE_SECONDS = 5  # the least a clock takes (replay/table/clocks.py LIMITS)


def test_a_seat_whose_time_ran_out_while_the_server_was_down_times_out_at_start(
    tmp_path: Path,
) -> None:
    path = tmp_path / "games.duckdb"
    server = ProcessServer(path, KEY)
    try:
        client = stub(server.address)
        made = time.monotonic()
        game = create(client, KEY, "bon-appetit", ["Ann", "Brian"], clock=f"move:{MOVE_SECONDS}")
        assert client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq == 1
    finally:
        server.kill()  # while both seats' clocks run (the sealed bids are simultaneous)
    assert time.monotonic() - made < MOVE_SECONDS, "the clock ran out before the kill"
    time.sleep(max(0.0, made + MOVE_SECONDS + 0.5 - time.monotonic()))

    spawned = time.monotonic()
    server = ProcessServer(path, KEY)
    started = time.monotonic()  # it listens: the store is open and the application started
    try:
        client = stub(server.address)
        while client.GetView(pb.GetViewRequest(game_id=game.game_id)).seq < 2:
            assert time.monotonic() - started < 10, "no time-out row after a restart"
            time.sleep(0.02)
        took = time.monotonic() - started
    finally:
        server.kill()
    print(f"\nstarted in {started - spawned:.2f} s; the time-out row {took:.2f} s after")
    assert took < 1.0, f"the time-out row came {took:.2f} s after the start"
    store = open_store(str(path))
    try:
        rows = store.rows(game.game_id)
    finally:
        store.close()
    timeout = rows[1]
    assert (timeout.actor, timeout.kind) == ("server", "command")
    command = record_pb2.Command.FromString(timeout.body)
    assert command.WhichOneof("game") == "clock" and command.clock.timeout.seat in (0, 1)
