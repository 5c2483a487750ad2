"""``feastlog play`` in pseudo-terminals through a real server (``feastlog serve`` in its
own process): two seats at once, each a ``play`` of its own answering whenever it is
asked, a whole game of each kind, and never a move refused as stale.

The terminals are forked by a launcher with no gRPC in it (``tests/terminalutil.py``):
this process makes gRPC calls, and a terminal forked from it beside gRPC's threads ended
once in a while with ``epoll_wait error: Bad file descriptor``.

Both plays run at once and follow each other, but the test's answers go one at a time: a
seat is answered only once the last answer has come to something (a row recorded, or the
next question). Answered 0.05 s after the other seat's answer was typed, a seat's
WatchGame had not always brought the row that answer made on a busy machine (1 run of 8),
and ``play`` tried the stale seq once before sending the move again: a race no client
can see coming, not the stale try this test is about (one sent at a seq ``play`` knew
had moved on)."""

from __future__ import annotations

import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pexpect
import pytest

from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from tests import terminalutil
from tests.serverutil import ProcessServer, bearer, create, stub

KEY = "org_test-play-terminal-key-0123456789abcd"
CODE = "from feastlog.cli.main import main; main()"
MOVE = r"your move \(number, a command as JSON, or call SEQ CLAIM\): "
CARD = r"card \(number\): "
WHICH = r"which \(number\): "
OVER = r"game over; [^\r\n]*\r?\n"
RECORDED = r"recorded at seq \d+\r?\n"
WAITING = r"waiting for the others"
PROMPTS: list[Any] = [MOVE, CARD, WHICH, OVER, pexpect.EOF, RECORDED, WAITING]
ANSWER_SECONDS = 5.0  # the longest the other seat waits for an answer to come to something
GAME_SECONDS = 240  # a bound, not a speed: a game takes seconds


def numbers(text: str, indent: int) -> list[int]:
    """The numbers of the last menu in ``text`` whose entries have this indent."""
    found = re.findall(rf"(?m)^ {{{indent}}}(\d+)\. ", text.replace("\r", ""))
    last: list[int] = []
    for number in map(int, found):
        last = [number] if number in (0, 1) else [*last, number]
    return last


def seat(address: str, game_id: str, token: str) -> terminalutil.Terminal:
    """One seat's ``feastlog play``, in a terminal of its own."""
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": ""}
    return terminalutil.spawn(
        [sys.executable, "-c", CODE, "play", game_id, "--token", token, "--server", address],
        env=env,
        dimensions=(60, 400),
        timeout=30,
    )


@pytest.mark.parametrize(
    ("kind", "seed"), [("bon-appetit", 1), ("menu-masters", 2), ("picky-eaters", 3)]
)
def test_two_seats_play_a_whole_game_at_once_with_no_stale_refusal(
    tmp_path: Path, kind: str, seed: int
) -> None:
    server = ProcessServer(tmp_path / "feastlog.duckdb", KEY)
    try:
        made = create(stub(server.address), KEY, kind, ["Ann", "Brian"], seed=bytes([seed]) * 32)
        terminals = [seat(server.address, made.game_id, t.token) for t in made.seat_tokens]
        told = ["", ""]
        over = [False, False]
        menus: list[list[int]] = [[], []]
        rng = random.Random(seed)
        moves = 0
        deadline = time.monotonic() + GAME_SECONDS
        answering: int | None = None  # the seat whose last answer has not come to anything
        answered = 0.0
        while not all(over):
            assert time.monotonic() < deadline, told[0][-2000:] + told[1][-2000:]
            if time.monotonic() - answered > ANSWER_SECONDS:
                answering = None  # typed ahead: taken at the seat's next prompt
            for index, terminal in enumerate(terminals):
                if over[index] or answering not in (None, index):
                    continue
                try:
                    got = terminal.expect(PROMPTS, timeout=0.05)
                except pexpect.TIMEOUT:
                    continue
                before = terminal.before or ""
                told[index] += before + (terminal.after if isinstance(terminal.after, str) else "")
                answering, answered = (index, time.monotonic()) if got < 3 else (None, answered)
                if got >= 5:  # recorded, or waiting: the other seat may be answered now
                    continue
                if got == 0:  # asked again after a wrong answer: the menu drawn before
                    menus[index] = numbers(before, 2) or menus[index]
                    terminal.sendline(str(rng.choice(menus[index])))
                    moves += 1
                elif got == 1:
                    options = numbers(before, 4)
                    terminal.sendline(
                        str(
                            0
                            if 0 in options and rng.random() < 0.5
                            else rng.choice([o for o in options if o] or [0])
                        )
                    )
                elif got == 2:
                    terminal.sendline("1")
                else:
                    over[index] = True
        for terminal in terminals:
            terminal.expect(pexpect.EOF, timeout=30)
            terminal.close()
            assert terminal.exitstatus == 0
        Path(os.environ.get("PLAY_DUMP", os.devnull)).write_text(told[0])
        for text in told:
            assert "game over; scores" in text
            assert "refused" not in text and "not sent" not in text, text[-3000:]
            assert "STALE" not in text and "ABORTED" not in text
        # the tables were drawn in words: Picky Eaters' cards by their names
        if kind == "picky-eaters":
            assert "ingredient-" not in told[0] and "recipe-" not in told[0], told[0][-3000:]
        audit = apb_grpc.AuditServiceStub(grpc.insecure_channel(server.address))
        stored = audit.ListRejections(
            apb.ListRejectionsRequest(game_id=made.game_id), metadata=bearer(KEY)
        )
        stale = [r for r in stored.rejections if r.reason == "STALE_EXPECTED_SEQ"]
        assert moves > 10 and stale == [], [r.message for r in stored.rejections]
    finally:
        server.terminate()
