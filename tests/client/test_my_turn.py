"""``my_turn`` against a real server, for both clients: a seat that may act is answered
at once; a seat that may not waits while the other moves and is answered when it may
(its legal commands and its view at one seq), also across a dropped connection; and a
seat waiting when the game ends is answered with the end."""

from __future__ import annotations

import asyncio
import random
import signal
import threading
from pathlib import Path

from feastlog.client import AsyncClient, Client, FeastlogError, Turn
from tests.client.test_client_library import KEY, free_port, serve
from tests.serverutil import ThreadedServer

SEED = bytes(range(32))
STALE = "STALE_EXPECTED_SEQ"


def test_a_seat_waits_for_its_turn_and_for_the_end(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        with Client(server.address, organiser_key=server.key) as organiser:
            made = organiser.create_game("bon-appetit", ["Ann", "Brian"], seed=SEED)
            ann, brian = (Client(server.address, token=t) for t in made.tokens)
            # both bid at seq 1: each may act now, answered at once
            now = brian.my_turn(made.game_id)
            assert now.legal.seq == now.view.seq == 1 and now.legal.commands and not now.over
            brian.submit(made.game_id, now.legal.commands[0], expected_seq=1)
            assert not brian.legal(made.game_id).commands  # Brian has bid: Ann's turn
            # Brian waits while Ann bids
            answered: list[Turn] = []
            waiting = threading.Thread(target=lambda: answered.append(brian.my_turn(made.game_id)))
            waiting.start()
            waiting.join(1.0)
            assert waiting.is_alive() and not answered  # still waiting: nothing to send yet
            ann_turn = ann.my_turn(made.game_id)
            done = ann.submit(made.game_id, ann_turn.legal.commands[0], ann_turn.legal.seq)
            waiting.join(30)
            assert not waiting.is_alive()
            turn = answered[0]
            assert turn.legal.seq == turn.view.seq >= done.seq
            assert turn.legal.commands and not turn.over
            assert turn.legal.commands == brian.legal(made.game_id).commands
            # each seat plays by my_turn alone to the end; each is answered with the end
            ends = play_to_the_end(server.address, made.game_id, made.tokens)
            assert [end.over for end in ends] == [True, True]
            assert all(not end.legal.commands for end in ends)
            assert ends[0].view.table["scores"] == ends[1].view.table["scores"]
            # once over, it is answered at once with the end
            assert ann.my_turn(made.game_id).over
            assert organiser.verify(made.game_id).ok
            ann.close()
            brian.close()
    finally:
        server.stop()


def play_to_the_end(address: str, game_id: str, tokens: list[str]) -> list[Turn]:
    """Each seat in its own thread: wait for its turn, send a command, until the end."""
    ends: dict[int, Turn] = {}
    failures: list[BaseException] = []

    def seat(number: int) -> None:
        rng = random.Random(number)
        try:
            with Client(address, token=tokens[number]) as me:
                while not (turn := me.my_turn(game_id)).over:
                    try:
                        me.submit(game_id, rng.choice(turn.legal.commands), turn.legal.seq)
                    except FeastlogError as stale:  # the other seat's row came between
                        if stale.reason != STALE:
                            raise
                ends[number] = turn
        except BaseException as failure:
            failures.append(failure)

    threads = [threading.Thread(target=seat, args=(n,)) for n in range(len(tokens))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures
    return [ends[n] for n in range(len(tokens))]


def test_the_async_client_waits_for_its_turn_and_for_the_end(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")

    async def seat(client: AsyncClient, game_id: str, number: int) -> Turn:
        rng = random.Random(number)
        while not (turn := await client.my_turn(game_id)).over:
            try:
                await client.submit(game_id, rng.choice(turn.legal.commands), turn.legal.seq)
            except FeastlogError as stale:
                if stale.reason != STALE:
                    raise
        return turn

    async def main() -> None:
        async with AsyncClient(server.address, organiser_key=server.key) as organiser:
            made = await organiser.create_game("bon-appetit", ["Ann", "Brian"], seed=SEED)
            ann, brian = (AsyncClient(server.address, token=t) for t in made.tokens)
            first = await brian.my_turn(made.game_id)
            await brian.submit(made.game_id, first.legal.commands[0], expected_seq=1)
            # Brian waits while Ann bids
            waiting = asyncio.ensure_future(brian.my_turn(made.game_id))
            await asyncio.sleep(1.0)
            assert not waiting.done()
            ann_turn = await ann.my_turn(made.game_id)
            done = await ann.submit(made.game_id, ann_turn.legal.commands[0], ann_turn.legal.seq)
            turn = await asyncio.wait_for(waiting, 30)
            assert turn.legal.seq == turn.view.seq >= done.seq
            assert turn.legal.commands and not turn.over
            # both play by my_turn to the end, each answered with the end
            ends = await asyncio.wait_for(
                asyncio.gather(seat(ann, made.game_id, 0), seat(brian, made.game_id, 1)), 120
            )
            assert [end.over for end in ends] == [True, True]
            assert all(not end.legal.commands for end in ends)
            assert (await ann.my_turn(made.game_id)).over
            await ann.close()
            await brian.close()

    try:
        asyncio.run(main())
    finally:
        server.stop()


def test_a_seat_waits_for_its_turn_across_a_dropped_connection(tmp_path: Path) -> None:
    db, port = tmp_path / "feastlog.duckdb", free_port()
    address = f"127.0.0.1:{port}"
    proc = serve(db, port)
    try:
        with Client(address, organiser_key=KEY) as organiser:
            made = organiser.create_game("bon-appetit", ["Ann", "Brian"], seed=SEED)
        ann = Client(address, token=made.tokens[0], retries=12)
        brian = Client(address, token=made.tokens[1], retries=12)
        first = brian.my_turn(made.game_id)
        brian.submit(made.game_id, first.legal.commands[0], expected_seq=1)
        answered: list[Turn] = []
        waiting = threading.Thread(target=lambda: answered.append(brian.my_turn(made.game_id)))
        waiting.start()
        waiting.join(1.0)
        assert waiting.is_alive()  # following the game's rows, then the connection drops
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc = serve(db, port)
        turn = ann.my_turn(made.game_id)
        ann.submit(made.game_id, turn.legal.commands[0], expected_seq=turn.legal.seq)
        waiting.join(60)
        assert answered and answered[0].legal.commands and not answered[0].over
        assert answered[0].legal.seq == answered[0].view.seq == turn.legal.seq + 1
        for closing in (ann, brian):
            closing.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
