"""The store process forwards the port by name: every method of every capability
(``port.METHODS``) reaches the child and answers as the DuckDB store in this process
does, on the channel it belongs to; the child refuses any other name, and every adapter
serves every capability."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Generator
from pathlib import Path
from typing import Any

import pytest

from feastlog.replay.proof.signed import Cosignature, TreeHead
from feastlog.service.store import Batch, NewGame, Rejection, projection
from feastlog.service.store.duckdb import Store
from feastlog.service.store.memory import MemoryStore
from feastlog.service.store.port import CAPABILITIES, METHODS, EventStore, methods
from feastlog.service.store.postgres import PgStore
from feastlog.service.store.process import ProcessStore, StoreClient, games_to_register
from feastlog.service.store.process.client import FORWARDED, LOOKUPS, OWN, Channel
from feastlog.service.store.records import Written
from feastlog.v1 import record_pb2
from tests.recordutil import build, games_batch

AT = "2026-12-02T00:00:00Z"


def token_of(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


async def awaited(answer: Awaitable[Written]) -> Written:
    return await answer


def exercise(store: EventStore) -> list[tuple[str, Any]]:
    """Call every method of the port on ``store``, some by keyword, a generator for an
    iterable; what each answered (a scan: the games it gave), in order.  Ends closed."""
    answers: list[tuple[str, Any]] = []

    def call(method: str, /, *args: Any, **kwargs: Any) -> Any:
        result = getattr(store, method)(*args, **kwargs)
        if isinstance(result, Generator):
            result = list(result)
        answers.append((method, result))
        return result

    ended, running = build(players=3, seed_byte=12), build(players=2, seed_byte=12, stop_after=4)
    one, two = ended.rows[0].game_id, running.rows[0].game_id
    call("write", games_batch([ended]))
    batch = games_batch([running])
    commit = store.commit
    if commit is None:  # in process: the writer runs ``write``
        answers.append(("commit", store.write(batch)))
    else:
        answers.append(("commit", asyncio.run(awaited(commit(batch))).first))
    waiting = build(players=2, seed_byte=11, stop_after=0)
    genesis = record_pb2.Genesis.FromString(waiting.rows[0].body)
    draft = NewGame(
        None,
        [(n, token_of(n)) for n in waiting.names],
        waiting.seed,
        genesis.pack_sha256,
        genesis.game_kind,
        genesis.pack_id,
        waiting.pack_bytes,
        waiting.rows[0].game_id,
        waiting.rows[0].body,
    )
    refused = Rejection(
        two, 3, "seat:0", "r0", b"\x01", "FAILED_PRECONDITION", "RULE_VIOLATION", "X", "no", AT
    )
    store.write(Batch(games=[draft], entropy=[(waiting.rows[0].game_id, 1, b"one")]))
    store.write(Batch(rejections=[refused]))
    reader = store.reader()  # its own connection
    answers.append(("reader", reader.game_ids()))
    call("checkpoint", 1 << 40)  # a smaller log than asked: left as it is
    call("load", one)
    call("load", "g_nobody")
    call("rows", two)
    call("rows_after", one, 3)
    call("last_seq", game_id=one)
    call("game_ids")
    call("count_games")
    call("count_games", game_kind="bon-appetit")
    call("scan")
    call("scan", (0, 2))
    call("scan_numbered", share=(0, 1))  # the store's own ``fetch``
    call("pending")
    call("pending_game", waiting.rows[0].game_id)
    call("rejections", two)
    call("listed", limit=1)
    call("listed", "bon-appetit", before=0)
    call("known_games", (one, "g_nobody"))
    call("tournament_games", "")
    call("twins_running", one)
    call("dealt_from", ended.seed)
    call("projection_current")
    call("stats")
    call("standings", tournament_id="")
    call("rebuild_projection", (projection.rows_of_stored(g) for g in list(store.scan())))
    call("seat_of_token", token_of(ended.names[1]))
    call("add_arbiter", name="ann", digest=token_of("arb_ann"), at=AT)
    call("add_arbiter", "ann", token_of("arb_other"), AT)  # she holds one
    call("revoke_arbiter", "ann", AT)
    call("add_arbiter", "bea", token_of("arb_bea"), AT)
    call("arbiter_of_key", token_of("arb_bea"))
    call("arbiter_of_key", token_of("arb_ann"))
    call("arbiters")
    call("leaves", 0)
    call("leaves", 2, limit=3)
    call("leaf_position", one, 2)
    call("rows_from", 1, 4)
    head = TreeHead(2, "ee" * 32, AT, "ab" * 32, "ff" * 64)
    call("add_tree_head", head)
    call("tree_heads")
    call("tree_heads", size=2)
    call("add_cosignature", Cosignature.of(head, "12" * 32, AT))
    call("cosignatures", 2)
    call("add_server_key", "ab" * 32, AT)
    call("server_keys")
    call("add_seat_code", token_of("sl_a"), one, 0)
    call("seat_of_code", token_of("sl_a"))
    call("take_seat_code", token_of("sl_a"), one, token_of("ss_a"), most=10)
    call("seat_of_session", token_of("ss_a"))
    call("end_seat_session", token_of("ss_a"))
    call("adopt_seat_links", [(token_of("sl_b"), two, 1)], sessions=[(token_of("ss_b"), two, 0)])
    reader.close()  # as the server closes it: before the store
    call("close")
    return answers


def test_every_method_of_every_capability_is_forwarded_and_answers_as_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, Channel]] = []
    ask = Channel.ask

    def recording(channel: Channel, name: str, /, *args: Any, **kwargs: Any) -> Any:
        asked.append((name, channel))
        return ask(channel, name, *args, **kwargs)

    monkeypatch.setattr(Channel, "ask", recording)
    here = exercise(Store(str(tmp_path / "here.duckdb")))
    assert asked == []
    there = ProcessStore(str(tmp_path / "there.duckdb"), games_to_register() or ())
    forwarded = exercise(there)
    assert forwarded == here
    assert {name for name, _ in here} == set(METHODS)  # none left out of the exercise
    sent = {name for name, _ in asked}
    assert sent >= set(FORWARDED) and not sent & {"reader", "commit"}  # those: the client's
    assert {name for name, channel in asked if channel is there._lookups} == LOOKUPS


def test_a_name_outside_the_port_is_refused_by_the_client_and_by_the_child(
    tmp_path: Path,
) -> None:
    assert set(FORWARDED) | OWN == set(METHODS)
    store = ProcessStore(str(tmp_path / "games.duckdb"), games_to_register() or ())
    try:
        assert not hasattr(store, "vacuum")
        for name in ("vacuum", "reader", "commit", "open", "_close_scan", "__class__", "store"):
            with pytest.raises(ValueError, match=f"the store has no method {name!r} to call"):
                store._channel.ask(name)
        assert store.game_ids() == []  # still serving
    finally:
        store.close()


def test_the_capabilities_name_each_method_once_and_every_adapter_serves_them() -> None:
    assert len(METHODS) == len(set(METHODS))
    assert methods(EventStore) == ()  # it adds none of its own
    members = {name for name in dir(EventStore) if not name.startswith("_")}
    assert members == set(METHODS)  # (and its attributes, which no class holds)
    assert all(capability in EventStore.__mro__ for capability in CAPABILITIES)
    for adapter in (Store, PgStore, MemoryStore, StoreClient, ProcessStore):
        assert [name for name in METHODS if not hasattr(adapter, name)] == [], adapter
