"""Ruleset versions: the audit accepts every version this build folds, and only those."""

from __future__ import annotations

from pathlib import Path

import pytest

from feastlog.replay import games
from feastlog.replay.record.audit import RULE, verify
from feastlog.replay.record.history import genesis_of, record_version
from feastlog.replay.record.rows import ZERO_HASH, make_row
from feastlog.v1 import record_pb2
from tests.replay.test_fixtures import FIXTURES, load


def test_golden_records_span_every_ruleset_version_this_build_folds() -> None:
    found = {
        (genesis_of(load(p)[0][0]).game_kind, genesis_of(load(p)[0][0]).ruleset_version)
        for p in FIXTURES
    }
    # the games this build ships have golden records; a test-only game has none
    expected = {(kind, v) for kind in games.SHIPPED for v in games.engine(kind).spec.rulesets}
    assert found == expected


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_the_audit_verifies_a_record_of_every_ruleset_version(path: Path) -> None:
    rows, _, pack = load(path)
    report = verify(rows, pack)
    assert report.ok, report.summary()
    assert report.states_checked and report.commands_checked == sum(
        r.kind == "command" for r in rows
    )


def test_the_audit_refuses_a_ruleset_version_this_build_does_not_fold() -> None:
    engine = games.engine("menu-masters")
    pack = engine.default_pack_bytes()
    rows, _, _ = load(next(p for p in FIXTURES if "menu-masters" in p.name))
    genesis = record_pb2.Genesis()
    genesis.CopyFrom(genesis_of(rows[0]))
    genesis.ruleset_version = "9"
    first = rows[0]
    body = genesis.SerializeToString(deterministic=True)
    forged = make_row(
        first.game_id,
        1,
        "genesis",
        "server",
        body,
        first.recorded_at,
        ZERO_HASH,
        "",
        version=record_version(genesis),
    )
    report = verify([forged], pack)
    assert report.first_kinds == (RULE,)
    assert "ruleset menu-masters 9 is unknown" in report.summary()
