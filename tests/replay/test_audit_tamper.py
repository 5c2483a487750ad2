"""Tampering with a stored record in the DuckDB file is caught, and the audit names the seq
and the kind of fault (DESIGN section 2: any edit, insertion, deletion or reordering), in
every record format: format 1 (the row hash covers the command bytes) and format 2 (the
command and its command_id enter the chain through a salted commitment)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.replay.record.audit import verify
from feastlog.replay.record.rows import VERSIONS, seal
from feastlog.v1 import bon_appetit_pb2 as ba
from feastlog.v1 import record_pb2
from tests.recordutil import Built, build, store_games

GAME = "g_test033"


@functools.cache
def built_in(version: int) -> Built:
    """One finished 3-seat Bon Appetit! game, in record format ``version``."""
    return build(players=3, seed_byte=3, version=version)


@pytest.fixture(params=VERSIONS, ids=[f"format{v}" for v in VERSIONS])
def built(request: pytest.FixtureRequest) -> Built:
    """The game in each record format."""
    return built_in(request.param)


def version_of(built: Built) -> int:
    return record_pb2.Genesis.FromString(built.rows[0].body).record_version or 1


def stored_file(tmp_path: Path, built: Built) -> Path:
    """A DuckDB file holding the game and one other of the same format."""
    path = tmp_path / "games.duckdb"
    store_games(path, [built, build(players=2, seed_byte=5, version=version_of(built))])
    return path


def audit(path: Path, *args: str) -> tuple[int, Any]:
    """``feastlog audit ... --json`` offline on the file."""
    result = CliRunner().invoke(cli, ["audit", *args, "--db", str(path), "--json"])
    if not result.stdout.strip():
        return result.exit_code, {}
    reports = json.loads(result.stdout)["reports"]
    return result.exit_code, reports if "--all" in args else reports[0]


# Runs one SQL statement (``?`` for each parameter) on the stored game's database.
Run = Callable[..., None]


def sql(path: Path, statement: str, *params: object) -> None:
    """Run one statement on the file, as someone with write access to it would."""
    con = duckdb.connect(str(path))
    try:
        con.execute(statement, list(params))
    finally:
        con.close()


def test_an_untouched_file_verifies(tmp_path: Path, built: Built) -> None:
    path = stored_file(tmp_path, built)
    code, found = audit(path, "--all")
    assert code == 0
    assert isinstance(found, list) and all(r["ok"] for r in found) and len(found) == 2


def _edit_command_bytes(run: Run, built: Built) -> int:
    seq = 8
    body = bytearray(built.rows[seq - 1].body)
    body[-1] ^= 0x01
    run("UPDATE events SET body = ? WHERE game_id = ? AND seq = ?", bytes(body), GAME, seq)
    return seq


def _delete_row(run: Run, built: Built) -> int:
    run("DELETE FROM events WHERE game_id = ? AND seq = 12", GAME)
    return 12


def _swap_rows(run: Run, built: Built) -> int:
    for a, b in ((6, -6), (7, 6), (-6, 7)):
        run("UPDATE events SET seq = ? WHERE game_id = ? AND seq = ?", b, GAME, a)
    return 6


def _change_state_hash(run: Run, built: Built) -> int:
    run("UPDATE events SET state_hash = ? WHERE game_id = ? AND seq = 9", "ab" * 32, GAME)
    return 9


def _reveal_other_seed(run: Run, built: Built) -> int:
    other = record_pb2.SeedReveal(server_seed=b"\x07" * 32).SerializeToString()
    run("UPDATE events SET body = ? WHERE game_id = ? AND kind = 'seed_reveal'", other, GAME)
    return len(built.rows)


def _edit_command_id(run: Run, built: Built) -> int:
    seq = 10
    run("UPDATE events SET command_id = 'x' WHERE game_id = ? AND seq = ?", GAME, seq)
    return seq


def _edit_commitment(run: Run, built: Built) -> int:
    seq = 11
    run("UPDATE events SET commitment = ? WHERE game_id = ? AND seq = ?", "cd" * 32, GAME, seq)
    return seq


TAMPERING: dict[str, tuple[Callable[[Run, Built], int], str]] = {
    "edit one command's bytes": (_edit_command_bytes, "hash"),
    "delete a row": (_delete_row, "missing"),
    "swap two rows": (_swap_rows, "reordered"),
    "change a state hash": (_change_state_hash, "state"),
    "reveal a different seed": (_reveal_other_seed, "seed"),
    "edit one command's command_id": (_edit_command_id, "hash"),
}
# Format 2 only: the row's commitment itself (format 1 rows have none).
TAMPERING_2 = {"edit one command's commitment": (_edit_commitment, "hash")}


CASES = [(1, case) for case in sorted(TAMPERING)]
CASES += [(2, case) for case in sorted({**TAMPERING, **TAMPERING_2})]


@pytest.mark.parametrize(("version", "case"), CASES, ids=[f"format{v}-{c}" for v, c in CASES])
def test_tampering_in_the_duckdb_file_is_named_by_seq_and_kind(
    tmp_path: Path, version: int, case: str
) -> None:
    built = built_in(version)
    path = stored_file(tmp_path, built)
    tamper, kind = {**TAMPERING, **TAMPERING_2}[case]
    seq = tamper(functools.partial(sql, path), built)
    code, found = audit(path, GAME)
    assert code == 1
    assert found["ok"] is False
    assert found["first_bad_seq"] == seq
    assert kind in found["first_kinds"]
    code_all, reports = audit(path, "--all")
    assert code_all == 1
    assert [r["ok"] for r in reports] == [False, True]


def test_a_resealed_illegal_bid_is_caught_as_a_rule_fault(built: Built) -> None:
    """Someone who re-computes every hash after the edit is still caught by the rules."""
    rows = list(built.rows)
    seq = next(i + 1 for i, r in enumerate(rows) if r.actor == "seat:0" and i > 3)
    greedy = record_pb2.Command(
        bon_appetit=ba.BonAppetitCommand(
            bid=ba.BonAppetitBid(gems=[ba.BON_APPETIT_GEM_RED] * 3 + [ba.BON_APPETIT_GEM_BLUE])
        )
    )
    version = version_of(built)
    rows[seq - 1] = seal(
        rows[seq - 1].__class__(**{**vars(rows[seq - 1]), "body": greedy.SerializeToString()}),
        rows[seq - 2].hash,
        version,
        built.seed,  # after the reveal anyone can re-commit with the salt: the rules still catch it
    )
    for i in range(seq, len(rows)):
        rows[i] = seal(rows[i], rows[i - 1].hash, version, built.seed)
    report = verify(rows, built.pack_bytes)
    assert report.first_bad_seq == seq
    assert report.first_kinds == ("rule",)
    assert report.faults[0].rule_id.startswith("BA-")


def test_a_claimed_score_that_differs_is_a_score_fault(built: Built) -> None:
    from feastlog.replay.games.engine import Outcome

    claimed = Outcome((99, 0, 0), (0,))
    report = verify(built.rows, built.pack_bytes, claimed=claimed)
    assert report.first_kinds == ("score",)
    assert report.first_bad_seq == len(built.rows)


def test_a_running_format_2_record_checks_its_links_now_and_its_commands_at_the_reveal() -> None:
    """Before the reveal only links can be checked (an edited body waits for the seed); an
    edited commitment breaks the chain at once; with the seed the body is caught."""
    running = build(players=3, seed_byte=4, stop_after=10)
    report = verify(running.rows, running.pack_bytes)
    assert report.ok and not report.states_checked
    assert "commitments of 10 command rows not opened: the seed is not revealed" in report.notes
    seq = 6
    edited = list(running.rows)
    edited[seq - 1] = replace(edited[seq - 1], body=b"\x22\x00" + edited[seq - 1].body[2:])
    assert verify(edited, running.pack_bytes).ok  # nothing public can tell, by design
    found = verify(edited, running.pack_bytes, server_seed=running.seed)
    assert (found.first_bad_seq, found.first_kinds[0]) == (seq, "hash")
    assert "commitment" in found.faults[0].message
    recommitted = list(running.rows)
    recommitted[seq - 1] = replace(recommitted[seq - 1], commitment="00" * 32)
    broken = verify(recommitted, running.pack_bytes)
    assert (broken.first_bad_seq, broken.first_kinds) == (seq, ("hash",))


def test_the_summary_counts_its_rows_in_words(built: Built) -> None:
    whole = verify(built.rows, built.pack_bytes)
    assert whole.ok and f": OK, {len(built.rows)} rows, record format" in whole.summary()
    started = verify(built.rows[:1], built.pack_bytes)  # the genesis alone: a game just made
    assert started.summary() == (
        f"{built.rows[0].game_id}: OK, 1 row, record format {version_of(built)} "
        "(chain only: seed not revealed)"
    )
