"""Enum values: a client that sends 0 (an unset value, or a name its build does not know)
is told which enum and which field, and feastlog's own JSON takes the short names."""

from __future__ import annotations

from pathlib import Path

import pytest

from feastlog.client import Client, FeastlogError
from feastlog.client.commands import command_from_json
from feastlog.v1 import bon_appetit_pb2, menu_masters_pb2, record_pb2
from tests.serverutil import ThreadedServer


def test_a_zero_gem_is_refused_naming_the_enum_and_the_field(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "feastlog.duckdb")
    try:
        with Client(server.address, organiser_key=server.key) as organiser:
            made = organiser.create_game("bon-appetit", ["Ann", "Brian"])
        ann = Client(server.address, token=made.tokens[0])
        zero = record_pb2.Command()
        zero.bon_appetit.bid.gems.append(bon_appetit_pb2.BON_APPETIT_GEM_UNSPECIFIED)
        with pytest.raises(FeastlogError) as refused:
            ann.submit(made.game_id, zero)
        assert refused.value.status == "INVALID_ARGUMENT"
        assert refused.value.field == "bid.gems"
        said = refused.value.message
        assert "feastlog.v1.BonAppetitGem" in said and "BON_APPETIT_GEM_RED" in said, said
        assert "a name its build does not know" in said and "red" in said
        ann.close()
    finally:
        server.stop()


def test_commands_in_json_take_the_short_names() -> None:
    text = '{"bon_appetit": {"bid": {"gems": ["red", "BON_APPETIT_GEM_BLUE", "Green"]}}}'
    gems = list(command_from_json(text).bon_appetit.bid.gems)
    assert gems == [
        bon_appetit_pb2.BON_APPETIT_GEM_RED,
        bon_appetit_pb2.BON_APPETIT_GEM_BLUE,
        bon_appetit_pb2.BON_APPETIT_GEM_GREEN,
    ]
    pawn = command_from_json(
        '{"menuMasters": {"placePawn": {"store": "butcher shop", "placement": "own"}}}'
    ).menu_masters.place_pawn
    assert pawn.store == menu_masters_pb2.MENU_MASTERS_STORE_BUTCHER_SHOP
    assert pawn.placement == menu_masters_pb2.MENU_MASTERS_PLACEMENT_OWN
    with pytest.raises(FeastlogError) as unknown:
        command_from_json('{"bon_appetit": {"bid": {"gems": ["purple"]}}}')
    assert unknown.value.reason == "UNKNOWN_ENUM_NAME"
    assert unknown.value.field == "bon_appetit.bid.gems"
    assert "feastlog.v1.BonAppetitGem" in unknown.value.message
    assert "blue, green, red, yellow" in unknown.value.message
    with pytest.raises(FeastlogError) as unset:  # 0 is no value to name
        command_from_json('{"bon_appetit": {"bid": {"gems": ["unspecified"]}}}')
    assert unset.value.reason == "UNKNOWN_ENUM_NAME"
