"""Seat links kept in the store: a link made through one node is taken through another
and its session honoured by both, a code is spent once whichever node is asked, unused
codes and open sessions outlive a restart (DuckDB and PostgreSQL), and the file an older
server kept beside a DuckDB database is taken into the store once, then removed."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from feastlog.service.app import seatlinks
from feastlog.service.app.seatlinks import SeatLinks, SeatOf, digest
from feastlog.service.store.port import MEMORY, open_store
from feastlog.service.store.writer import Database
from feastlog.service.web.seat import csrf_token
from tests.presentation.test_seat_page import NAMES, seat_link, take
from tests.serverutil import create, stub
from tests.webutil import WebServer, request


def code_of(path: str) -> str:
    """The one-time code in a link's path."""
    return parse_qs(urlparse(path).query)["code"][0]


def seated(server: WebServer, game_id: str, jar: str) -> str:
    """Who the seat's page shows this cookie as (its viewer id), or its status."""
    page = request(server, "GET", f"/games/{game_id}/seat", cookie=jar)
    if page.status != 200:
        return str(page.status)
    data = json.loads(page.body.split('id="feastlog-data">', 1)[1].split("</script>", 1)[0])
    return str(data["viewer"]["id"])


def test_a_link_made_on_one_node_is_taken_on_another_and_honoured_on_both(
    postgres: str,
) -> None:
    a, b = WebServer(postgres), WebServer(postgres)
    try:
        game = create(stub(a.address), a.key, "bon-appetit", NAMES, seed=bytes([98]) * 32)
        gid = game.game_id
        made = seat_link(a, gid, 1)
        opened = request(b, "GET", made.path)  # the confirmation page, on the other node
        assert opened.status == 200 and "Brian" in opened.body
        jar = take(b, made.path)
        assert seated(a, gid, jar) == seated(b, gid, jar) == "seat:1"
        for node in (a, b):  # spent, for every node
            again = request(node, "POST", urlparse(made.path).path, {"code": code_of(made.path)})
            assert again.status == 410 and "set-cookie" not in again.headers
            assert request(node, "GET", made.path).status == 410
        raced = seat_link(b, gid, 2)  # both nodes asked for one code at once: one seats it
        form = {"code": code_of(raced.path)}
        with ThreadPoolExecutor(2) as pool:
            replies = list(
                pool.map(lambda n: request(n, "POST", urlparse(raced.path).path, form), (a, b))
            )
        assert sorted(r.status for r in replies) == [303, 410]
        replaced = seat_link(a, gid, 0)
        newer = seat_link(b, gid, 0)  # a new link through the other node replaces it
        assert request(a, "GET", replaced.path).status == 410
        assert seated(a, gid, take(a, newer.path)) == "seat:0"
        forget = {"csrf": csrf_token(jar.split("=", 1)[1])}
        assert request(b, "POST", f"/games/{gid}/seat/forget", forget, jar).status == 303
        assert request(a, "GET", f"/games/{gid}/seat/legal", cookie=jar).status == 401
    finally:
        a.stop()
        b.stop()


def test_unused_codes_and_open_sessions_outlive_a_restart(store_target: str) -> None:
    first = WebServer(store_target)
    try:
        game = create(stub(first.address), first.key, "bon-appetit", NAMES, seed=bytes([99]) * 32)
        taken, unused = seat_link(first, game.game_id, 0), seat_link(first, game.game_id, 1)
        jar = take(first, taken.path)
    finally:
        first.stop()
    again = WebServer(store_target)  # a server started anew on the same store
    try:
        assert seated(again, game.game_id, jar) == "seat:0"
        assert seated(again, game.game_id, take(again, unused.path)) == "seat:1"
        spent = request(again, "POST", urlparse(taken.path).path, {"code": code_of(taken.path)})
        assert spent.status == 410
    finally:
        again.stop()


def test_an_older_servers_file_of_links_is_taken_into_the_store_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "games.duckdb"
    first = WebServer(db)
    try:
        game = create(stub(first.address), first.key, "menu-masters", NAMES, seed=bytes([89]) * 32)
    finally:
        first.stop()
    code, session = "sl_" + "a" * 32, "ss_" + "b" * 32
    kept = tmp_path / "games.duckdb.seat-links"  # as an older server wrote it
    kept.write_text(
        json.dumps(
            {
                "codes": {digest(code): [game.game_id, 0]},
                "sessions": {digest(session): [game.game_id, 2]},
            }
        )
    )
    os.chmod(kept, 0o600)
    with caplog.at_level(logging.INFO, logger="feastlog"):
        again = WebServer(db)
    try:
        said = [r.getMessage() for r in caplog.records if kept.name in r.getMessage()]
        assert len(said) == 1, said
        assert "1 seat link codes and 1 sessions taken into the store" in said[0]
        assert "removed" in said[0] and code not in said[0] and session not in said[0]
        assert not kept.exists()
        assert seated(again, game.game_id, f"feastlog_token={session}") == "seat:2"
        path = f"/games/{game.game_id}/seat/link?code={code}"
        assert seated(again, game.game_id, take(again, path)) == "seat:0"
    finally:
        again.stop()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="feastlog"):
        third = WebServer(db)  # nothing to take in now; the code taken stays spent
    try:
        assert not [r for r in caplog.records if kept.name in r.getMessage()]
        assert request(third, "GET", path).status == 410
        assert seated(third, game.game_id, f"feastlog_token={session}") == "seat:2"
    finally:
        third.stop()


def test_a_server_alone_on_its_store_remembers_no_session_the_store_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sessions looked up are remembered on a store no other process writes: a session
    ended, or dropped past the bound by a newer one, is refused at once all the same."""
    monkeypatch.setattr(seatlinks, "MOST_SESSIONS", 2)

    async def run() -> None:
        db = Database(open_store(MEMORY))
        links = SeatLinks(db)
        sessions = []
        for seat in range(3):
            session = await links.redeem(await links.mint("g_1", seat), "g_1")
            assert session is not None
            assert await links.seat_of_session(session) == SeatOf("g_1", seat)  # remembered
            sessions.append(session)
        assert [await links.seat_of_session(s) for s in sessions] == [
            None,  # dropped by the third
            SeatOf("g_1", 1),
            SeatOf("g_1", 2),
        ]
        await links.close(sessions[2])
        assert await links.seat_of_session(sessions[2]) is None
        assert await links.seat_of_session(sessions[1]) == SeatOf("g_1", 1)
        await db.close()

    asyncio.run(run())
