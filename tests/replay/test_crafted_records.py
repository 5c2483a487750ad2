"""Crafted and damaged exported records (an audit's files): ``verify``, ``import`` and an
offline ``replay`` of the file answer in one line with the exit code the README gives,
never 70 ("a bug in feastlog").

A file that is no readable record (a field of the wrong type, a seq no int64 holds, JSON
nested past any parser) is refused with exit 3 naming the field; a readable record that
cannot be folded (a reveal that does not decode, a pack that does not load, a genesis that
cannot be set up) does not verify: exit 1, the fault named.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from feastlog.cli.errors import FAILED, UNREACHABLE
from feastlog.cli.main import cli
from feastlog.replay.record.audit import verify
from feastlog.replay.record.export import export_record, to_text
from feastlog.replay.record.history import genesis_of
from feastlog.replay.record.rows import FORMAT_2, Row, seal
from tests.recordutil import Built, build

Document = dict[str, Any]


@functools.cache
def finished() -> Built:
    """One finished two-seat Bon Appetit! game, in the current record format."""
    return build(players=2, seed_byte=9)


def exported(rows: list[Row], pack_bytes: bytes) -> Document:
    """The export document of the rows, claiming the result they fold to."""
    document: Document = json.loads(to_text(export_record(rows, pack_bytes)))
    return document


def resealed(rows: list[Row]) -> list[Row]:
    """The rows chained again, as someone who chose the seed can (every hash and commitment
    recomputed), so that only the fold can tell what is wrong."""
    out: list[Row] = []
    for row in rows:
        out.append(seal(row, out[-1].hash if out else "00" * 32, FORMAT_2, finished().seed))
    return out


def with_genesis(document: Document, edit: Callable[[Any], None], reseal: bool) -> None:
    """The document with its genesis edited (and every row resealed, or left broken)."""
    genesis = genesis_of(finished().rows[0])
    edit(genesis)
    rows = list(finished().rows)
    rows[0] = replace(rows[0], body=genesis.SerializeToString(deterministic=True))
    if reseal:
        document["rows"] = export_record(resealed(rows), finished().pack_bytes)["rows"]
    else:
        document["rows"][0]["body"] = rows[0].body.hex()


def set_at(path: str, value: Any) -> Callable[[Document], None]:
    """An edit setting the field at ``path`` (``rows.1.prev_hash``) to ``value``."""

    def edit(document: Document) -> None:
        *outer, last = [int(key) if key.isdigit() else key for key in path.split(".")]
        where: Any = document
        for key in outer:
            where = where[key]
        where[last] = value

    return edit


def deep_pack(document: Document) -> None:
    """A content pack nested past the recursion limit, its sha256 in the genesis."""
    text = 'id = "p"\na = ' + "[" * 5000 + "]" * 5000 + "\n"
    sha256 = hashlib.sha256(text.encode()).hexdigest()
    document["content_pack"] = {"text": text, "sha256": sha256}
    with_genesis(document, lambda genesis: setattr(genesis, "pack_sha256", sha256), False)


def one_seat(document: Document) -> None:
    """A genesis with one seat, every row resealed: no game can be set up from it."""
    with_genesis(document, lambda genesis: genesis.seats.__delitem__(slice(1, None)), True)


def entropy_of_one_seat(document: Document) -> None:
    """Seat entropy for one seat of two, empty (so the seed is the server's), resealed."""
    with_genesis(document, lambda genesis: genesis.seat_entropy.append(b""), True)


def reveal_body(document: Document) -> None:
    """The seed reveal's body is no SeedReveal."""
    document["rows"][-1]["body"] = "00"


def no_winners(document: Document) -> None:
    del document["result"]["winners"]


Edit = Callable[[Document], None]
# Files that are no readable record (exit 3): what is wrong, the edit, what the line names.
NOT_RECORDS: dict[str, tuple[Edit, str]] = {
    "server_seed zz": (set_at("server_seed", "zz"), "server_seed is not a hex string"),
    "server_seed 5": (set_at("server_seed", 5), "server_seed is not a hex string"),
    "result x": (set_at("result", "x"), "result is not an object"),
    "result without winners": (no_winners, "result.winners is missing"),
    "result points 1.5": (set_at("result.points.0", 1.5), "result.points[0] is not a whole"),
    "prev_hash 1.5": (set_at("rows.1.prev_hash", 1.5), "rows[1].prev_hash is not a hex string"),
    "prev_hash with spaces": (set_at("rows.1.prev_hash", "ab " * 32), "rows[1].prev_hash"),
    "seq 2**70": (set_at("rows.1.seq", 2**70), "rows[1].seq is not from 1 to 2**63 - 1"),
    "seq true": (set_at("rows.1.seq", True), "rows[1].seq is not a whole number"),
    "kind unknown": (set_at("rows.1.kind", "ruling"), "rows[1].kind 'ruling' is not one of"),
    "actor a lone surrogate": (set_at("rows.1.actor", "\ud800"), "rows[1].actor is not UTF-8"),
    "body odd hex": (set_at("rows.0.body", "0"), "rows[0].body is not a hex string"),
    "pack neither text nor hex": (set_at("content_pack", {"sha256": ""}), "neither or both"),
    "version true": (set_at("version", True), "not a feastlog-record file of version"),
}
# Readable records that cannot be folded (exit 1): the fault verify names.
NOT_VERIFYING: dict[str, tuple[Edit, str]] = {
    "seed-reveal body 00": (reveal_body, "seed: the seed reveal does not decode"),
    "deeply nested pack": (deep_pack, "pack: the content pack does not load"),
    "a genesis that cannot be set up": (one_seat, "rule: Bon Appetit! is for 2 to 4 players"),
    "seat entropy for one seat of two": (entropy_of_one_seat, "seat entropy for 1 seat, not"),
    "no rows": (set_at("rows", []), "missing: the record does not start with its genesis row"),
}
# JSON nested past any parser, alone or on the first of several lines (as export --all's)
DEEP = {"JSON nested 100,000 deep": "", "JSON nested 100,000 deep, then more lines": "\n{}\n"}
CASES = [*NOT_RECORDS, *DEEP, *NOT_VERIFYING]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every crafted file, and the record it was made from (``good``)."""
    folder = tmp_path_factory.mktemp("crafted")
    built = finished()
    good = exported(list(built.rows), built.pack_bytes)
    made = {"good": folder / "good.json"}
    made["good"].write_text(to_text(good))
    for number, (case, (edit, _)) in enumerate({**NOT_RECORDS, **NOT_VERIFYING}.items()):
        document = copy.deepcopy(good)
        edit(document)
        made[case] = folder / f"crafted_{number}.json"
        made[case].write_text(json.dumps(document))
    for number, (case, more) in enumerate(DEEP.items()):
        made[case] = folder / f"deep_{number}.json"
        made[case].write_text("[" * 100_000 + "]" * 100_000 + more)
    return made


def run(*args: str) -> Result:
    """Invoke the CLI with nothing from the environment."""
    env = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": ""}
    return CliRunner(env=env).invoke(cli, list(args))


def one_line(result: Result) -> str:
    """The one line a failed command printed (its error, or verify's report)."""
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def expected(case: str) -> tuple[int, str]:
    """Verify's exit code for a case and what its line names."""
    if case in DEEP:
        return UNREACHABLE, "its JSON is nested too deeply"
    if case in NOT_RECORDS:
        return UNREACHABLE, NOT_RECORDS[case][1]
    return FAILED, NOT_VERIFYING[case][1]


def test_the_record_the_cases_are_made_from_verifies_imports_and_replays(
    files: dict[str, Path], tmp_path: Path
) -> None:
    assert run("verify", str(files["good"])).exit_code == 0
    assert run("replay", str(files["good"])).exit_code == 0
    assert run("import", str(files["good"]), "--db", str(tmp_path / "in.duckdb")).exit_code == 0


@pytest.mark.parametrize("case", CASES)
def test_verify_names_what_is_wrong_with_a_crafted_record(
    files: dict[str, Path], case: str
) -> None:
    code, names = expected(case)
    done = run("verify", str(files[case]))
    assert done.exit_code == code, done.output
    line = one_line(done)
    assert names in line
    if code == UNREACHABLE:
        assert line.startswith(f"Error: {files[case]}: not a")
    else:
        assert "FAILED at seq" in line


@pytest.mark.parametrize("case", CASES)
def test_import_refuses_a_crafted_record_and_says_why(
    files: dict[str, Path], case: str, tmp_path: Path
) -> None:
    target = tmp_path / "in.duckdb"
    done = run("import", str(files[case]), "--db", str(target))
    assert done.exit_code == FAILED, done.output
    assert "1 of 1 record failed; nothing imported" in done.output
    assert expected(case)[1] in done.output and "Traceback" not in done.output
    assert not target.exists()


@pytest.mark.parametrize("case", CASES)
def test_an_offline_replay_of_a_crafted_record_is_refused_in_one_line(
    files: dict[str, Path], case: str, tmp_path: Path
) -> None:
    code, names = expected(case)
    for html in ((), ("--html", str(tmp_path / "page.html"))):
        done = run("replay", str(files[case]), *html)
        assert done.exit_code == code, done.output
        line = one_line(done)
        if code == UNREACHABLE:
            assert names in line
        else:
            assert "not a record that replays" in line


def test_rows_no_file_could_hold_are_faults_of_the_record() -> None:
    """``verify`` on rows as a store hands them: a prev_hash that is not hex and a seq no
    uint64 holds (a salt takes one) are faults where they show, never an exception."""
    rows = list(finished().rows)
    rows[3] = replace(rows[3], prev_hash="zz")
    report = verify(rows, finished().pack_bytes)
    assert (report.first_bad_seq, report.first_kinds) == (4, ("hash",))
    rows = list(finished().rows)
    rows[5] = replace(rows[5], seq=2**64)
    report = verify(rows, finished().pack_bytes)
    assert (report.first_bad_seq, report.first_kinds) == (6, ("reordered",))
    assert any(f.kind == "hash" and f.seq == 2**64 for f in report.faults)


def _named(edit: Callable[[Any], None]) -> Document:
    """The finished record with its genesis's names edited, every row carried along (its
    game id too) and sealed again: a record consistent in every hash, verified OK."""
    genesis = genesis_of(finished().rows[0])
    edit(genesis)
    rows = [replace(r, game_id=genesis.game_id) for r in finished().rows]
    rows[0] = replace(rows[0], body=genesis.SerializeToString(deterministic=True))
    return exported(resealed(rows), finished().pack_bytes)


def _seats(*names: str) -> Document:
    """The record of a game played by seats of these names (they are in every state hash,
    so the game is played with them, not edited in)."""
    built = build(players=len(names), seed_byte=9, names=names)
    return exported(list(built.rows), built.pack_bytes)


def _genesis(edit: Callable[[Any], None]) -> Callable[[], Document]:
    return lambda: _named(edit)


NAMED: dict[str, tuple[Callable[[], Document], str]] = {
    "a game id with an escape": (
        _genesis(lambda g: setattr(g, "game_id", "g_\x1b[2J")),
        "its game id holds U+001B",
    ),
    "an empty game id": (_genesis(lambda g: setattr(g, "game_id", "")), "its game id is empty"),
    "a game id of 5,000 characters": (
        _genesis(lambda g: setattr(g, "game_id", "g" * 5000)),
        "its game id is over 64 characters",
    ),
    "a tournament id with a bidi override": (
        _genesis(lambda g: setattr(g, "tournament_id", "cup\u202e")),
        "its tournament id holds U+202E",
    ),
    "a seat without a name": (lambda: _seats(" ", "Ben"), "its seat 0's name is empty"),
    "a seat name with a NUL": (lambda: _seats("Ana", "B\x00b"), "its seat 1's name holds U+0000"),
    "two seats of one name": (lambda: _seats("Ana", "Ana"), "two seats have one name"),
}


@pytest.mark.parametrize("case", NAMED)
def test_import_refuses_names_no_server_makes(case: str, tmp_path: Path) -> None:
    """A record its author made consistent in every hash verifies, but one naming its game,
    tournament or seats as CreateGame never would is not imported: those names would reach
    every list and terminal that shows games."""
    made, names = NAMED[case]
    path = tmp_path / "named.json"
    path.write_text(to_text(made()))
    assert run("verify", str(path)).exit_code == 0
    target = tmp_path / "in.duckdb"
    done = run("import", str(path), "--db", str(target))
    assert done.exit_code == FAILED, done.output
    assert names in done.output and "1 of 1 record failed; nothing imported" in done.output
    assert "\x1b" not in done.output and "\x00" not in done.output
    assert not target.exists()
