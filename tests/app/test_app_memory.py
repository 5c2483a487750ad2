"""The application's use cases on the store in memory: no database, no server, no file.

The application is wired as ``create_server`` wires it (a ``Database`` writer over the
store, the credentials looking seat tokens and arbiter keys up in it), over a
``MemoryStore``, and each use case is called directly: what a servicer would call.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.tournament.outcomes import result_of, standings
from feastlog.service.app.application import Application
from feastlog.service.app.auth import Caller, Credentials
from feastlog.service.app.errors import CommandIdReused, StaleSeq, Unauthenticated
from feastlog.service.app.games import Accepted, Created
from feastlog.service.store.memory import MemoryStore
from feastlog.service.store.port import MEMORY, open_store
from feastlog.service.store.writer import Database
from feastlog.v1 import bon_appetit_pb2 as ba
from feastlog.v1 import record_pb2

KEY = "org_app-on-memory-organiser-key-0123456789"
PLAYERS = ["Ann", "Brian", "Celia"]
CUP = "cup-2026"


@dataclass
class App:
    """An application over a store in memory, and the callers the tests act as."""

    app: Application
    store: MemoryStore
    credentials: Credentials

    @property
    def organiser(self) -> Caller:
        return self.caller(KEY)

    def caller(self, token: str) -> Caller:
        """The caller a bearer token names, resolved as the guard resolves it."""
        return self.credentials.caller([("authorization", f"Bearer {token}")])


def on_memory(scenario: Callable[[App], Awaitable[None]]) -> None:
    """Run ``scenario`` on an application over a new store in memory (wired as
    ``service.grpc.server.create_server`` wires it), then drain and close it."""

    async def main() -> None:
        store = open_store(MEMORY)
        assert isinstance(store, MemoryStore)
        db = Database(store)
        db.start()
        credentials = Credentials(
            KEY, store.seat_of_token, store.arbiter_of_key, remember_arbiters=not store.shared
        )
        app = Application(db, credentials)
        await app.start()
        try:
            await scenario(App(app, store, credentials))
        finally:
            await app.drain()
            await db.close()

    asyncio.run(main())


@pytest.fixture(autouse=True)
def no_file_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test runs in an empty folder, which it leaves empty: the store made no file."""
    monkeypatch.chdir(tmp_path)
    yield
    assert list(tmp_path.iterdir()) == []


def bid(*gems: ba.BonAppetitGem.ValueType) -> record_pb2.Command:
    return record_pb2.Command(
        bon_appetit=ba.BonAppetitCommand(bid=ba.BonAppetitBid(gems=list(gems)))
    )


async def new_game(on: App, seed: int = 1, tournament_id: str = CUP) -> Created:
    return await on.app.games.create(
        on.organiser, "bon-appetit", PLAYERS, {}, bytes([seed]) * 32, tournament_id
    )


async def play_to_end(on: App, created: Created, rng: random.Random) -> int:
    """Random legal commands, from a random seat to act, until the game is over; how many."""
    game_id = created.genesis.game_id
    seats = [on.caller(token) for token in created.tokens]
    sent = 0
    while True:
        for seat in rng.sample(seats, len(seats)):
            legal = await on.app.replays.legal(seat, game_id)
            if legal.commands:
                command = rng.choice(legal.commands)
                done = await on.app.games.submit(seat, game_id, f"bot-{sent}", legal.seq, command)
                sent += 1
                break
        else:
            raise AssertionError(f"{game_id} is not over but no seat has a legal command")
        if done.game_over:
            return sent


def test_a_game_is_created_played_to_its_end_and_verified() -> None:
    async def scenario(on: App) -> None:
        created = await new_game(on)
        game_id = created.genesis.game_id
        assert [s.name for s in created.genesis.seats] == PLAYERS and len(created.tokens) == 3
        assert on.caller(created.tokens[1]) == Caller("seat", game_id, 1)
        sent = await play_to_end(on, created, random.Random(7))
        stored = on.store.load(game_id)
        assert stored is not None and stored.rows[-1].kind == "seed_reveal"
        assert len(stored.rows) == sent + 2  # the genesis, every command, the seed reveal
        report = await on.app.replays.verify(on.organiser, game_id)
        assert report.over and report.faults == () and report.commands_checked == sent
        now = await on.app.replays.view(on.caller(created.tokens[0]), game_id)
        assert now.seq == len(stored.rows) and now.view["over"] is True

    on_memory(scenario)


def test_refusals_are_answered_with_their_rule_and_recorded() -> None:
    async def scenario(on: App) -> None:
        created = await new_game(on)
        game_id, ann, brian = created.genesis.game_id, *map(on.caller, created.tokens[:2])
        tie_break = record_pb2.Command(
            bon_appetit=ba.BonAppetitCommand(tie_break_bid=ba.BonAppetitTieBreakBid())
        )
        with pytest.raises(RuleViolation) as out_of_phase:
            await on.app.games.submit(ann, game_id, "tie", None, tie_break)
        assert out_of_phase.value.rule_id == "BA-PHASES"
        await on.app.games.submit(brian, game_id, "b-1", None, bid())
        with pytest.raises(RuleViolation) as twice:
            await on.app.games.submit(brian, game_id, "b-2", None, bid())
        assert twice.value.rule_id == "BA-TURN"
        recorded = await on.app.replays.rejections(on.organiser, game_id)
        assert [(r.actor, r.command_id, r.rule_id) for r in recorded] == [
            ("seat:0", "tie", "BA-PHASES"),
            ("seat:1", "b-2", "BA-TURN"),
        ]
        assert [r.after_seq for r in recorded] == [1, 2]
        assert {r.reason for r in recorded} == {"RULE_VIOLATION"}
        assert on.store.last_seq(game_id) == 2  # nothing refused was appended
        # a seat sees its own refusals only while the game runs
        seen = await on.app.replays.rejections(ann, game_id)
        assert [r.command_id for r in seen] == ["tie"]

    on_memory(scenario)


def test_a_retry_is_answered_once_and_a_stale_seq_is_refused() -> None:
    async def scenario(on: App) -> None:
        created = await new_game(on)
        game_id, ann, brian = created.genesis.game_id, *map(on.caller, created.tokens[:2])
        first = await on.app.games.submit(ann, game_id, "c-1", 1, bid())
        assert (first.row.seq, first.replayed) == (2, False)
        again = await on.app.games.submit(ann, game_id, "c-1", 1, bid())
        assert (again.row, again.replayed) == (first.row, True)  # the same row, not a second
        assert on.store.last_seq(game_id) == 2
        with pytest.raises(StaleSeq) as stale:
            await on.app.games.submit(brian, game_id, "c-2", 1, bid())
        assert stale.value.metadata["last_seq"] == "2"
        held = (await on.app.replays.view(ann, game_id)).view
        gems = next(s["hand"] for s in held["seats"] if "hand" in s)
        other = bid(ba.BonAppetitGem.Value("BON_APPETIT_GEM_" + gems[0].upper()))
        with pytest.raises(CommandIdReused):
            await on.app.games.submit(ann, game_id, "c-1", None, other)  # the id, another command
        recorded = await on.app.replays.rejections(on.organiser, game_id)
        assert [(r.command_id, r.reason) for r in recorded] == [
            ("c-2", "STALE_EXPECTED_SEQ"),
            ("c-1", "COMMAND_ID_REUSED"),
        ]
        brian_now = await on.app.games.submit(brian, game_id, "c-2", 2, bid())
        assert (brian_now.row.seq, brian_now.replayed) == (3, False)

    on_memory(scenario)


def test_standings_stats_and_the_list_follow_the_games_that_end() -> None:
    async def scenario(on: App) -> None:
        played = [await new_game(on, seed) for seed in (1, 2)]
        running = await new_game(on, 3)
        other = await new_game(on, 4, tournament_id="another-cup")
        for number, created in enumerate(played):
            await play_to_end(on, created, random.Random(number))
        table = await on.app.replays.standings(on.organiser, CUP)
        assert (table.finished, table.running) == (2, 1)
        # the projection's standings are the rules' own, from each game's final table
        folded = [await on.app.live.get(c.genesis.game_id) for c in played]
        assert table.lines == standings(result_of(g.genesis, g.table) for g in folded)
        assert sum(line.wins for line in table.lines) == 2
        assert {line.name for line in table.lines} == set(PLAYERS)
        assert all(line.games == 2 for line in table.lines)
        (kind,) = await on.app.replays.stats(on.organiser, CUP)
        assert (kind.game_kind, kind.games, kind.figure) == (
            "bon-appetit",
            2,
            "average winning bid",
        )
        assert kind.value is not None and kind.value > 0
        assert sum(kind.win_rate_by_seat) >= 1  # each game has a winner (or several)
        assert (
            await on.app.replays.stats(on.organiser, "another-cup") == []
        )  # its game has not ended
        page = await on.app.replays.games(on.organiser, page_size=3)
        ids = [c.genesis.game_id for c in (other, running, played[1])]
        assert [line.game_id for line in page.games] == ids  # newest first
        assert [line.over for line in page.games] == [False, False, True]
        rest = await on.app.replays.games(
            on.organiser, page_size=3, page_token=page.next_page_token
        )
        assert [line.game_id for line in rest.games] == [played[0].genesis.game_id]
        assert rest.next_page_token == ""

    on_memory(scenario)


def test_a_named_arbiter_rules_until_revoked() -> None:
    async def scenario(on: App) -> None:
        created = await new_game(on)
        game_id = created.genesis.game_id
        key = await on.app.arbiters.add_arbiter(on.organiser, "ref")
        ref = on.caller(key)
        assert ref == Caller("arbiter", name="ref", key_sha256=ref.key_sha256)
        ruling = record_pb2.ArbiterCommand(reason="dispute", void_game=record_pb2.VoidGame())
        done: Accepted = await on.app.games.rule(ref, game_id, "void-1", ruling)
        assert done.game_over and done.row.actor == "arbiter"
        assert await on.app.arbiters.list_arbiters(on.organiser) == [
            ("ref", on.store.arbiters()[0][1], "")
        ]
        await on.app.arbiters.revoke_arbiter(on.organiser, "ref")
        with pytest.raises(Unauthenticated):
            on.caller(key)
        table = await on.app.replays.standings(
            on.organiser, CUP
        )  # a void game counts as played, no points
        assert table.finished == 1 and all(line.points == 0 for line in table.lines)

    on_memory(scenario)


def test_the_application_on_memory_loads_no_database_driver() -> None:
    """A game created and played a little through the application alone: neither DuckDB's
    driver nor PostgreSQL's is ever imported."""
    code = (
        "import asyncio, random, sys\n"
        "from tests.app import test_app_memory as t\n"
        "async def scenario(on):\n"
        "    created = await t.new_game(on)\n"
        "    seat = on.caller(created.tokens[0])\n"
        "    await on.app.games.submit(seat, created.genesis.game_id, 'c', 1, t.bid())\n"
        "t.on_memory(scenario)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('duckdb', 'psycopg')))\n"
    )
    root = Path(__file__).resolve().parents[2]
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    )
    assert ran.stdout.strip() == "[]"
