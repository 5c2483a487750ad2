"""Golden records refold to exactly their recorded hashes, in every record format.

``tests/fixtures/`` holds games recorded in the current format (2: salted commitments);
``tests/fixtures/v1/`` holds games recorded in format 1 by earlier builds, byte for byte
as they were written: they must keep verifying and refolding for ever.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from feastlog.replay import games
from feastlog.replay.games.fold import state_hash
from feastlog.replay.record.audit import verify
from feastlog.replay.record.history import genesis_of, record_version, refold, revealed_seed
from feastlog.replay.record.rng import seed_commitment
from feastlog.replay.record.rows import CURRENT_VERSION, FORMAT_1, ZERO_HASH, Row, row_salt

HERE = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURES = sorted(HERE.glob("*.json"))
FORMAT_1_FIXTURES = sorted((HERE / "v1").glob("*.json"))
EVERY = FIXTURES + FORMAT_1_FIXTURES


def load(path: Path) -> tuple[list[Row], bytes, bytes]:
    data = json.loads(path.read_text())
    rows = [Row(**{**r, "body": bytes.fromhex(r["body"])}) for r in data["rows"]]
    return rows, bytes.fromhex(data["server_seed"]), data["pack"].encode("utf-8")


def test_there_are_golden_records_in_every_format() -> None:
    for found in (FIXTURES, FORMAT_1_FIXTURES):
        kinds = {p.name.split("-")[0] for p in found}
        assert {"bon", "menu", "picky"} <= kinds
    assert {record_version(genesis_of(load(p)[0][0])) for p in FIXTURES} == {CURRENT_VERSION}
    assert {record_version(genesis_of(load(p)[0][0])) for p in FORMAT_1_FIXTURES} == {FORMAT_1}


@pytest.mark.parametrize("path", EVERY, ids=[f"{p.parent.name}/{p.stem}" for p in EVERY])
def test_golden_record_refolds_to_its_recorded_hashes(path: Path) -> None:
    rows, seed, pack = load(path)
    genesis = genesis_of(rows[0])
    version = record_version(genesis)
    assert genesis.game_kind in games.kinds()
    assert rows[0].prev_hash == ZERO_HASH
    for before, row in zip([None, *rows], rows, strict=False):
        assert row.prev_hash == (before.hash if before else ZERO_HASH)
        assert row.expected_hash(version) == row.hash, f"chain broken at seq {row.seq}"
    assert revealed_seed(rows) == seed
    assert seed_commitment(seed) == genesis.seed_commitment
    folded = refold(rows, seed, pack)
    for row, table in zip(rows, folded.tables, strict=True):
        assert state_hash(table) == row.state_hash, f"state differs at seq {row.seq}"
    report = verify(rows, pack)
    assert report.ok, report.summary()
    assert report.record_version == version and report.states_checked


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_format_2_commands_open_their_commitments_only_with_the_revealed_seed(
    path: Path,
) -> None:
    rows, seed, _ = load(path)
    commands = [r for r in rows if r.kind == "command"]
    assert commands
    for row in commands:
        assert row.opens(row_salt(seed, row.game_id, row.seq))
        assert not row.opens(b"")  # no salt: the public row tests no guess
    for row in rows:
        if row.kind != "command":
            assert row.opens(b"")  # genesis and reveal: anyone checks them at once


@pytest.mark.parametrize("path", FORMAT_1_FIXTURES, ids=[p.stem for p in FORMAT_1_FIXTURES])
def test_a_format_1_golden_record_and_its_format_2_twin_fold_to_the_same_states(
    path: Path,
) -> None:
    """The format changes only how rows are hashed: same seed, same bots, same states."""
    old, _, _ = load(path)
    new, _, _ = load(HERE / path.name)
    assert [r.state_hash for r in old] == [r.state_hash for r in new]
    assert [r.body for r in old[1:]] == [r.body for r in new[1:]]
    assert all(r.commitment == "" for r in old) and all(r.commitment for r in new)
