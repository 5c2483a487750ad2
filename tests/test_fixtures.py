"""Golden records in tests/fixtures/ refold to exactly their recorded hashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.fold import state_hash
from replay.history import genesis_of, refold, revealed_seed
from replay.record import ZERO_HASH, Row
from replay.rng import seed_commitment

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))


def load(path: Path) -> tuple[list[Row], bytes, bytes]:
    data = json.loads(path.read_text())
    rows = [Row(**{**r, "body": bytes.fromhex(r["body"])}) for r in data["rows"]]
    return rows, bytes.fromhex(data["server_seed"]), data["pack"].encode("utf-8")


def test_there_are_golden_records() -> None:
    kinds = {p.name.split("-")[0] for p in FIXTURES}
    assert "bon" in kinds
    assert len(FIXTURES) >= 3


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_golden_record_refolds_to_its_recorded_hashes(path: Path) -> None:
    rows, seed, pack = load(path)
    genesis = genesis_of(rows[0])
    pytest.importorskip(f"replay.{genesis.game_kind.replace('-', '_')}")
    assert rows[0].prev_hash == ZERO_HASH
    for before, row in zip([None, *rows], rows, strict=False):
        assert row.prev_hash == (before.hash if before else ZERO_HASH)
        assert row.expected_hash() == row.hash, f"chain broken at seq {row.seq}"
    assert revealed_seed(rows) == seed
    assert seed_commitment(seed) == genesis.seed_commitment
    folded = refold(rows, seed, pack)
    for row, table in zip(rows, folded.tables, strict=True):
        assert state_hash(table) == row.state_hash, f"state differs at seq {row.seq}"
