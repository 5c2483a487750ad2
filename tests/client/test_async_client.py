"""``AsyncClient`` offers every call ``Client`` does, by the same names and arguments: both
take them from one place (``feastlog.client.sync``'s ``Conveniences``); and they work, awaited,
against a real server."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from feastlog.client import AsyncClient, Client, FeastlogError
from feastlog.client.methods import streamed, unary
from feastlog.client.sync import Conveniences
from tests.serverutil import ThreadedServer

SEED = bytes(range(32))


def offered(client: type) -> set[str]:
    """The public names a client class offers (its calls, and run, stream, close…)."""
    return {name for name in dir(client) if not name.startswith("_")}


def conveniences() -> dict[str, object]:
    """Every call both clients offer, as ``Conveniences`` declares it."""
    found: dict[str, object] = {}
    for name, value in vars(Conveniences).items():
        if isinstance(value, unary | streamed):
            found[name] = value
    return found


def test_the_two_clients_offer_the_same_calls() -> None:
    assert offered(AsyncClient) == offered(Client)
    declared = conveniences()
    assert {"inclusion_proof", "pair_round", "feed", "games", "health", "my_turn"} <= set(declared)
    for name, declared_as in declared.items():
        # one declaration, not a copy each: the same object, the same signature
        assert vars(Client).get(name) is None and vars(AsyncClient).get(name) is None
        assert inspect.getattr_static(Client, name) is declared_as
        assert inspect.getattr_static(AsyncClient, name) is declared_as
    # what is left is how each waits: written for each, by the same names
    own = {name for name in vars(Client) if not name.startswith("_")}
    assert own == {name for name in vars(AsyncClient) if not name.startswith("_")}
    assert own == {"opened", "close", "run", "stream", "paged", "resumed", "awaited"}


def test_an_async_call_is_awaited_and_a_stream_iterated_async(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")

    async def main() -> None:
        async with AsyncClient(server.address, organiser_key=server.key) as organiser:
            viewing = organiser.view("g_none")
            assert inspect.isawaitable(viewing)
            try:
                await viewing
            except FeastlogError as missing:
                assert missing.status == "NOT_FOUND"
            assert inspect.isasyncgen(organiser.games())

    try:
        asyncio.run(main())
    finally:
        server.stop()


def test_async_calls_against_a_server(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")

    async def main() -> list[str]:
        async with AsyncClient(server.address, organiser_key=server.key) as organiser:
            assert (await organiser.health()).status == 1  # SERVING
            made = [
                await organiser.create_game("bon-appetit", ["Ann", "Brian"], seed=SEED)
                for _ in range(3)
            ]
            listed = [g.game_id async for g in organiser.games(kind="bon-appetit")]
            assert set(listed) == {m.game_id for m in made}
            assert len([g async for g in organiser.games(most=2)]) == 2
            # a spectator's view beside a seat's
            async with AsyncClient(server.address, token=made[0].tokens[0]) as ann:
                seated = await ann.view(made[0].game_id)
                assert seated.viewer == "seat:0" and (await ann.legal(made[0].game_id)).commands
            info = await organiser.server_info()
            assert info.tree_size >= 3
            proof = await organiser.inclusion_proof(made[0].game_id, 1, info.tree_size)
            assert proof.tree_size == info.tree_size and proof.row_hash
            # the tournament calls, as Client's
            started = await organiser.create_tournament(
                {"game_kind": "bon-appetit", "rounds": "1", "table_sizes": "2"}, ["Ann", "Brian"]
            )
            tid = started.tournament.tournament_id
            await organiser.register_player(tid, "Celia")
            now = await organiser.get_tournament(tid)
            assert [p.name for p in now.tournament.players] == ["Ann", "Brian", "Celia"]
            paired = await organiser.pair_round(tid)
            assert len(paired.tournament.rounds) == 1
            return listed

    try:
        listed = asyncio.run(main())
        with Client(server.address, organiser_key=server.key) as blocking:
            # the same list, in the same (the server's) order
            assert [g.game_id for g in blocking.games(kind="bon-appetit")] == listed
    finally:
        server.stop()
