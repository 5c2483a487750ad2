"""docs/record-format.md answers every question a verifier written from it alone has asked,
and ``feastlog verify`` does what each answer says: records built or altered to turn on
one answer, accepted or refused exactly as the page says.

- the header: every field but ``rows`` is held to the rows; a ``version`` or ``game_id``
  other than the genesis's, an erased result (``null``) on a finished game, a result on
  a running one, other winners: each refused (exit 1), naming the field and both values;
  an offline ``replay`` or audit of the file checks the same (one function);
- the ``game_id`` in every row's hashed fields and salt is the genesis's, not the file's;
- ``uint32_be(len(game_id))`` counts UTF-8 bytes;
- hex is lower-case only (an upper-case digit: no record, exit 3);
- Menu Masters: which turn passes by itself (MM-I3, judged from public information);
- Picky Eaters: when, within one command, ``when_empty`` refills the Food deck.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import hmac
import json
import struct
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from feastlog.cli.errors import FAILED, OK, UNREACHABLE
from feastlog.cli.main import cli
from feastlog.replay.games.engine import evolve
from feastlog.replay.games.menu_masters import flow as mm_flow
from feastlog.replay.games.menu_masters import menus as mm_menus
from feastlog.replay.games.menu_masters import moves as mm_moves
from feastlog.replay.games.picky_eaters import flow as pe_flow
from feastlog.replay.games.picky_eaters import moves as pe_moves
from feastlog.replay.record.audit import verify
from feastlog.replay.record.export import export_record, to_text, verify_document
from feastlog.replay.record.history import genesis_of, refold
from feastlog.replay.record.rows import (
    COMMAND,
    FORMAT_1,
    FORMAT_2,
    ZERO_HASH,
    Row,
    commitment_of,
    seal,
)
from feastlog.service.app.auth import ORGANISER
from feastlog.service.app.offline import answer, open_offline
from feastlog.v1 import record_pb2
from tests.recordutil import Built, build, store_games

Document = dict[str, Any]


@functools.cache
def finished(version: int = FORMAT_2) -> Built:
    """A finished two-seat Bon Appetit! game (23 rows in format 2)."""
    return build(players=2, seed_byte=9, version=version)


def exported(rows: list[Row], pack_bytes: bytes) -> Document:
    document: Document = json.loads(to_text(export_record(rows, pack_bytes)))
    return document


def finished_document(version: int = FORMAT_2) -> Document:
    return exported(finished(version).rows, finished(version).pack_bytes)


def run(*args: str) -> Result:
    """The CLI with nothing from the environment."""
    env = {"FEASTLOG_ORGANISER_KEY": "", "FEASTLOG_SERVER": ""}
    return CliRunner(env=env).invoke(cli, list(args))


def verified(tmp_path: Path, document: Document, name: str = "game.json") -> tuple[int, Any]:
    """``feastlog verify FILE --json`` of the document: its exit code and its report (or,
    for a file that is no record, its one line)."""
    path = tmp_path / name
    path.write_text(json.dumps(document))
    done = run("verify", str(path), "--json")
    if done.exit_code == UNREACHABLE:
        return done.exit_code, done.output.strip()
    return done.exit_code, json.loads(done.output)["reports"][0]


def faults(report: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(f["seq"], f["kind"], f["message"]) for f in report["faults"]]


def resealed(rows: list[Row], seed: bytes, version: int = FORMAT_2) -> list[Row]:
    """The rows chained again with every hash and commitment recomputed (as whoever holds
    the seed can), so that only what a test changed can tell."""
    out: list[Row] = []
    for row in rows:
        out.append(seal(row, out[-1].hash if out else ZERO_HASH, version, seed))
    return out


# -- the header ---------------------------------------------------------------------------


def test_the_record_as_exported_verifies(tmp_path: Path) -> None:
    for version in (FORMAT_1, FORMAT_2):
        code, report = verified(tmp_path, finished_document(version))
        assert code == OK and report["ok"], report


def test_an_erased_result_on_a_finished_game_is_refused(tmp_path: Path) -> None:
    """The issue's record: a finished, seed-revealed Bon Appetit! game, ``result: null``."""
    document = finished_document()
    claimed = document["result"]
    assert claimed is not None and document["server_seed"] is not None
    document["result"] = None
    code, report = verified(tmp_path, document)
    assert code == FAILED
    last = len(document["rows"])
    points = ", ".join(str(p) for p in claimed["points"])
    winner = f"winner seat {claimed['winners'][0]}"
    assert faults(report) == [
        (
            last,
            "score",
            f"the claimed result (null) is not the record's (points {points}; {winner})",
        )
    ]


def test_a_wrong_winner_or_points_are_refused_naming_both(tmp_path: Path) -> None:
    document = finished_document()
    right = document["result"]
    assert len(right["winners"]) == 1
    wrong = copy.deepcopy(document)
    wrong["result"]["winners"] = [1 - right["winners"][0]]
    code, report = verified(tmp_path, wrong)
    assert code == FAILED and [f[1] for f in faults(report)] == ["score"]
    message = faults(report)[0][2]
    assert f"winner seat {1 - right['winners'][0]}) is not the record's" in message
    assert message.endswith(f"winner seat {right['winners'][0]})")
    wrong = copy.deepcopy(document)
    wrong["result"]["points"][0] += 1
    assert verified(tmp_path, wrong)[0] == FAILED


def test_a_result_on_a_running_game_is_refused(tmp_path: Path) -> None:
    running = build(players=2, seed_byte=9, stop_after=6)
    document = exported(running.rows, running.pack_bytes)
    assert document["result"] is None and document["server_seed"] is None
    code, report = verified(tmp_path, document)
    assert code == OK and report["ok"] and not report["states_checked"]
    document["result"] = {"points": [0, 0], "winners": [0]}
    code, report = verified(tmp_path, document)
    assert code == FAILED
    assert faults(report) == [
        (
            len(running.rows),
            "score",
            "the claimed result (points 0, 0; winner seat 0) is not the record's "
            "(null: the game is running, no seed reveal)",
        )
    ]


def _ruled(ruling: record_pb2.ArbiterCommand) -> Built:
    """A game the arbiter ends with ``ruling`` after seq 5."""
    return build(players=2, seed_byte=9, rulings={5: ruling})


@pytest.mark.parametrize(
    ("ruling", "why"),
    [
        (record_pb2.ArbiterCommand(reason="a fire", void_game=record_pb2.VoidGame()), "voided"),
        (
            record_pb2.ArbiterCommand(reason="time", close_game=record_pb2.CloseGame()),
            "closed it before it ended",
        ),
    ],
    ids=["void", "closed early"],
)
def test_a_void_or_closed_early_game_has_a_null_result_and_no_other(
    tmp_path: Path, ruling: record_pb2.ArbiterCommand, why: str
) -> None:
    ended = _ruled(ruling)
    document = exported(ended.rows, ended.pack_bytes)
    assert document["server_seed"] is not None and document["result"] is None
    code, report = verified(tmp_path, document)
    assert code == OK and report["ok"] and report["states_checked"]
    document["result"] = {"points": [0, 0], "winners": [0, 1]}
    code, report = verified(tmp_path, document)
    assert code == FAILED and [f[1] for f in faults(report)] == ["score"]
    assert why in faults(report)[0][2]


@pytest.mark.parametrize(("version", "said"), [(FORMAT_2, 1), (FORMAT_1, 2)])
def test_a_header_version_other_than_the_genesiss_is_refused(
    tmp_path: Path, version: int, said: int
) -> None:
    """The rows are read under the genesis's version: only the header is faulted."""
    document = finished_document(version)
    assert document["version"] == version
    document["version"] = said
    code, report = verified(tmp_path, document)
    assert code == FAILED
    assert faults(report) == [
        (1, "hash", f"the file's version is {said}, the record's is {version}")
    ]
    document["version"] = 3  # no version this build reads: no record at all
    code, line = verified(tmp_path, document)
    assert code == UNREACHABLE and "not a feastlog-record file of version 1 or 2" in line


@pytest.mark.parametrize(
    ("field", "value", "kind"),
    [
        ("game_id", "g_0000000000000000", "hash"),
        ("game_kind", "picky-eaters", "hash"),
        ("ruleset_version", "2", "hash"),
        ("content_pack.sha256", "ab" * 32, "pack"),
        ("server_seed", "cd" * 32, "seed"),
    ],
)
def test_every_other_header_field_is_held_to_the_rows(
    tmp_path: Path, field: str, value: str, kind: str
) -> None:
    """One fault, naming the field and both values; nothing else (the rows still verify)."""
    document = finished_document()
    outer, _, inner = field.partition(".")
    where = document[outer] if inner else document
    was = where[inner or outer]
    where[inner or outer] = value
    code, report = verified(tmp_path, document)
    assert code == FAILED
    seq = len(document["rows"]) if field == "server_seed" else 1
    assert faults(report) == [
        (seq, kind, f"the file's {field} is {value!r}, the record's is {was!r}")
    ]


def test_an_offline_replay_and_audit_of_the_file_check_the_header_too(tmp_path: Path) -> None:
    """One check, whoever asks: ``verify``, ``replay FILE`` and the offline reads' audit."""
    document = finished_document()
    document["result"] = None
    path = tmp_path / "erased.json"
    path.write_text(json.dumps(document))
    assert run("verify", str(path)).exit_code == FAILED
    replayed = run("replay", str(path))
    assert replayed.exit_code == FAILED and "does not verify" in replayed.output
    assert "the claimed result (null)" in replayed.output
    audited = answer(open_offline(str(path)).replays.verify(ORGANISER, ""))
    assert audited == verify_document(json.dumps(document)) and not audited.ok


# -- which game id, counted how -----------------------------------------------------------


def _genesis_named(rows: list[Row], game_id: str) -> list[Row]:
    """The rows with their genesis naming ``game_id`` (the rows' own ids left as they are)."""
    genesis = genesis_of(rows[0])
    genesis.game_id = game_id
    return [replace(rows[0], body=genesis.SerializeToString(deterministic=True)), *rows[1:]]


def test_the_game_id_hashed_and_salted_is_the_genesiss_not_the_files(tmp_path: Path) -> None:
    """A record chained and salted under the file's game id, its genesis naming another,
    does not verify however its header reads; chained under the genesis's, it does."""
    built = finished()
    under_file = resealed(_genesis_named(built.rows, "g_genesis"), built.seed)
    assert {r.game_id for r in under_file} == {built.rows[0].game_id}  # hashed with it
    document = exported(under_file, built.pack_bytes)
    document["game_id"] = built.rows[0].game_id  # the header agrees with the rows, not the genesis
    code, report = verified(tmp_path, document)
    assert code == FAILED
    assert (1, "hash", "the row's hash does not match its content") in faults(report)
    assert all(r.seq in {f[0] for f in faults(report)} for r in under_file)  # every row
    named = _genesis_named(built.rows, "g_genesis")
    under_genesis = resealed([replace(r, game_id="g_genesis") for r in named], built.seed)
    document = exported(under_genesis, built.pack_bytes)
    assert document["game_id"] == "g_genesis"
    assert verified(tmp_path, document)[0] == OK


def test_a_stored_row_kept_under_another_game_id_is_refused() -> None:
    """A store has no header: its rows are held to their genesis's game id."""
    built = finished()
    rows = list(built.rows)
    rows[4] = replace(rows[4], game_id="g_elsewhere")
    report = verify(resealed(rows, built.seed), built.pack_bytes)
    assert not report.ok and report.first_bad_seq == 5
    message = f"the row's game_id is 'g_elsewhere', its genesis's is {built.rows[0].game_id!r}"
    assert report.faults[0].message == message


def test_audit_of_a_store_holds_its_rows_to_their_genesiss_game_id(tmp_path: Path) -> None:
    """``feastlog audit`` of a DuckDB file: a game whose genesis names another game than
    the one its rows are kept (and chained) under does not verify."""
    built = finished()
    rows = resealed(_genesis_named(built.rows, "g_other"), built.seed)
    moved = Built(rows, built.seed, built.pack_bytes, built.table, built.names)
    path = tmp_path / "games.duckdb"
    store_games(path, [moved])
    done = run("audit", built.rows[0].game_id, "--db", str(path))
    assert done.exit_code == FAILED
    said = f"the row's game_id is {built.rows[0].game_id!r}, its genesis's is 'g_other'"
    assert f"FAILED at seq 1: hash: {said}" in done.output


def _salted_by_characters(rows: list[Row], seed: bytes) -> list[Row]:
    """The rows committed with ``uint32_be`` of the game id's length in characters."""
    out: list[Row] = []
    for row in rows:
        if row.kind == COMMAND:
            name = row.game_id.encode("utf-8")
            msg = b"row-salt" + struct.pack(">I", len(row.game_id)) + name
            salt = hmac.new(seed, msg + struct.pack(">Q", row.seq), hashlib.sha256).digest()
            row = replace(row, commitment=commitment_of(salt, row.body, row.command_id))
        linked = replace(row, prev_hash=out[-1].hash if out else ZERO_HASH)
        out.append(replace(linked, hash=linked.expected_hash(FORMAT_2)))
    return out


def test_the_salts_length_of_the_game_id_counts_utf8_bytes(tmp_path: Path) -> None:
    """``g_é`` is 3 characters and 4 bytes: committed with 4, the record verifies; with
    3, every command row's commitment fails to open (its chain links are intact)."""
    built = build(players=2, seed_byte=9, game_id="g_é")
    document = exported(built.rows, built.pack_bytes)
    assert document["game_id"] == "g_é" and len("g_é".encode()) == 4
    assert verified(tmp_path, document)[0] == OK
    by_characters = _salted_by_characters(list(built.rows), built.seed)
    code, report = verified(tmp_path, exported(by_characters, built.pack_bytes))
    assert code == FAILED
    commands = [r.seq for r in built.rows if r.kind == COMMAND]
    assert [(f[0], f[1]) for f in faults(report)] == [(seq, "hash") for seq in commands]
    assert all("does not match the commitment" in f[2] for f in faults(report))
    ascii_id = finished()  # where bytes and characters agree, the two are one record
    assert _salted_by_characters(list(ascii_id.rows), ascii_id.seed) == ascii_id.rows


# -- hex, lower-case only -----------------------------------------------------------------

Edit = Callable[[Document], str]


def _upper(path: str) -> Edit:
    """Upper-case the hex field at ``path`` (``rows.3.body``); returns its name in the file."""

    def edit(document: Document) -> str:
        *outer, last = [int(k) if k.isdigit() else k for k in path.split(".")]
        where: Any = document
        for key in outer:
            where = where[key]
        assert where[last] != where[last].upper()
        where[last] = where[last].upper()
        return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in [*outer, last])[1:]

    return edit


def _pack_as_hex(document: Document) -> str:
    pack = document["content_pack"]
    pack["hex"] = pack.pop("text").encode("utf-8").hex().upper()
    return "content_pack.hex"


UPPER: dict[str, Edit] = {
    field: _upper(field)
    for field in (
        "rows.3.body",
        "rows.3.prev_hash",
        "rows.3.hash",
        "rows.3.state_hash",
        "rows.3.commitment",
    )
}


def _seed_in_upper_case(document: Document) -> str:
    document["server_seed"] = "AB" * 32  # (the game's own, 09…09, has no letter)
    return "server_seed"


UPPER["server_seed"] = _seed_in_upper_case
UPPER["content_pack.hex"] = _pack_as_hex


@pytest.mark.parametrize("field", UPPER)
def test_hex_in_upper_case_is_no_record(tmp_path: Path, field: str) -> None:
    """Every export writes lower-case hex; upper-case is refused as the field's type (exit
    3, naming it), not read as the same bytes (a body or pack in upper case verified OK)."""
    document = finished_document()
    name = UPPER[field](document)
    code, line = verified(tmp_path, document)
    assert code == UNREACHABLE
    assert f"{name} is not a hex string (lower-case, two a byte)" in line


def test_lower_case_hex_of_the_pack_verifies(tmp_path: Path) -> None:
    document = finished_document()
    pack = document["content_pack"]
    pack["hex"] = pack.pop("text").encode("utf-8").hex()
    assert verified(tmp_path, document)[0] == OK


# -- Menu Masters: a turn in which nothing is possible (MM-I3) ----------------------------


@functools.cache
def menu_masters(seed_byte: int) -> Built:
    """A two-chef Menu Masters game of the current ruleset, random legal moves."""
    return build(kind="menu-masters", players=2, seed_byte=seed_byte)


def _own_menus_only(state: Any, seat: int) -> bool:
    """A reading MM-I3 refuses: the chef's own secret Menus, which only they can see."""
    chef = state.chefs[seat]
    return not mm_menus._any_completable(state, chef.basket, [*state.community, *chef.menus])


def _unseen_menus_always(state: Any, seat: int) -> bool:
    """A reading the page refuses: every unseen Menu, even for a chef holding none."""
    chef = state.chefs[seat]
    unseen = [*state.community, *mm_menus.unseen_menus(state)]
    return not mm_menus._any_completable(state, chef.basket, unseen)


def nothing_to_do(monkeypatch: pytest.MonkeyPatch, reading: Callable[[Any, int], bool]) -> None:
    """The fold with another reading of "nothing is possible" (the engine's flow and moves
    both ask it)."""
    monkeypatch.setattr(mm_flow, "nothing_to_do", reading)
    monkeypatch.setattr(mm_moves, "nothing_to_do", reading)


def _facts_at(built: Built, seq: int) -> tuple[Any, list[dict[str, Any]]]:
    """The game's state after row ``seq`` and the facts of that row."""
    folded = refold(built.rows, built.seed, built.pack_bytes)
    return folded.tables[seq - 1].game, [dict(f) for f in folded.facts[seq - 1]]


def test_a_chef_with_secret_menus_keeps_a_turn_an_unseen_menu_makes_possible(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seq 69 of this record: Brian cannot pay at the Produce Stand; neither the community
    row nor his own secret Menu can be fulfilled from his basket, but a Menu nobody has
    seen can, and he holds a secret Menu: the turn is his (he leaves the line at seq 70).
    A verifier that judged his own secret Menus (private) would pass it: state at 69."""
    built = menu_masters(1)
    state, facts = _facts_at(built, 69)
    started = [f for f in facts if f["type"] == "turn_started"]
    assert started == [
        {"type": "turn_started", "seat": 1, "store": "produce-stand", "cost": 1}
        | {"cannot_buy": "cannot_pay"}
    ]
    assert state.chefs[1].menus and _own_menus_only(state, 1)
    assert not mm_menus.nothing_to_do(state, 1)
    assert verify(built.rows, built.pack_bytes).ok
    with monkeypatch.context() as patched:
        nothing_to_do(patched, _own_menus_only)
        other = verify(built.rows, built.pack_bytes)
    assert (other.first_bad_seq, other.first_kinds) == (69, ("state",))


def test_a_chef_with_no_secret_menu_is_judged_on_the_community_row_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seq 156 of this record: Brian, holding no secret Menu, cannot pay at the Bakery; a
    Menu nobody has seen could be fulfilled from his basket, but no community Menu: he
    leaves the line by himself.  A verifier that weighed the unseen Menus for him too
    would give him the turn: state at 156."""
    built = menu_masters(23)
    state, facts = _facts_at(built, 156)
    left = [f for f in facts if f["type"] == "left_line"]
    assert left == [
        {"type": "left_line", "seat": 1, "store": "bakery", "reason": "cannot_pay"}
        | {"cost": 1, "coins": 0, "nothing_to_do": True}
    ]
    assert not state.chefs[1].menus and not _unseen_menus_always(state, 1)
    assert verify(built.rows, built.pack_bytes).ok
    with monkeypatch.context() as patched:
        nothing_to_do(patched, _unseen_menus_always)
        other = verify(built.rows, built.pack_bytes)
    assert (other.first_bad_seq, other.first_kinds) == (156, ("state",))


# -- Picky Eaters: when_empty, within one command -----------------------------------------


@functools.cache
def picky_eaters(seed_byte: int) -> Built:
    """A two-player Picky Eaters game of the current ruleset (deck_refill when_empty)."""
    built = build(kind="picky-eaters", players=2, seed_byte=seed_byte)
    assert dict(genesis_of(built.rows[0]).options)["deck_refill"] == "when_empty"
    return built


def _draw_never_refills(state: Any, count: int) -> tuple[Any, tuple[str, ...], list[Any]]:
    """A reading the page refuses: a draw takes what the deck holds; only the command's
    end refills it."""
    drawn: list[str] = []
    while len(drawn) < count and state.food_deck:
        drawn.append(state.food_deck[0])
        state = evolve(state, food_deck=state.food_deck[1:])
    return state, tuple(drawn), []


def _no_refill_at_the_end(state: Any, facts: list[Any]) -> tuple[Any, list[Any]]:
    """With ``_draw_on_draw``: ``on_draw``'s timing under ``when_empty``."""
    return state, facts


def _draw_on_draw(state: Any, count: int) -> tuple[Any, tuple[str, ...], list[Any]]:
    """Refill only when a card must be drawn from an empty deck (PE-I7)."""
    drawn: list[str] = []
    facts: list[Any] = []
    while len(drawn) < count:
        if not state.food_deck:
            if not state.discard:
                break
            state, fact = pe_flow.reshuffle(state)
            facts.append(fact)
        drawn.append(state.food_deck[0])
        state = evolve(state, food_deck=state.food_deck[1:])
    return state, tuple(drawn), facts


def refilling(monkeypatch: pytest.MonkeyPatch, draw: Any, at_the_end: Any = None) -> None:
    """The fold with another timing of the refill (flow and moves both draw and refill)."""
    for module in (pe_flow, pe_moves):
        monkeypatch.setattr(module, "draw", draw)
        if at_the_end is not None:
            monkeypatch.setattr(module, "refill_when_empty", at_the_end)


def test_a_deal_that_runs_the_deck_out_goes_on_from_the_reshuffled_pile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seq 81 of this record: the pass that ends round 4; the round-5 Market (6) and
    Brian's deal (6) leave 4 cards, Ann's deal takes them, the pile (117 cards) is shuffled
    into the deck at once, and her deal goes on from it: 6 cards, 115 left.  A verifier
    that left the refill to the command's end would deal her 4: state at 81."""
    built = picky_eaters(1)
    folded = refold(built.rows, built.seed, built.pack_bytes)
    before, after = folded.tables[79].game, folded.tables[80].game
    assert (len(before.food_deck), len(before.discard)) == (16, 117)
    kinds = [f["type"] for f in folded.facts[80]]
    assert kinds.index("deck_reshuffled") < len(kinds) - 1 - kinds[::-1].index("dealt")
    deals = [f for f in folded.facts[80] if f["type"] == "dealt"]
    assert [d["count"] for d in deals] == [6, 6]
    assert (len(after.food_deck), len(after.discard)) == (115, 0)
    assert verify(built.rows, built.pack_bytes).ok
    with monkeypatch.context() as patched:
        refilling(patched, _draw_never_refills)
        other = verify(built.rows, built.pack_bytes)
    assert (other.first_bad_seq, other.first_kinds) == (81, ("state",))


def test_a_discard_to_draw_that_empties_the_deck_refills_it_with_its_own_two_cards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seq 84 of this record: Brian discards two cards to draw one with one card left in
    the deck: the two go on the pile, he draws the last card, and the pile, those two
    with it (119 cards), becomes the deck at once.  A verifier that waited for the next
    draw (``on_draw``'s timing) would leave the deck empty: state at 84."""
    built = picky_eaters(5)
    folded = refold(built.rows, built.seed, built.pack_bytes)
    before, after = folded.tables[82].game, folded.tables[83].game
    assert (len(before.food_deck), len(before.discard)) == (1, 117)
    assert [f["type"] for f in folded.facts[83]][:3] == [
        "discarded_to_draw",
        "deck_reshuffled",
        "drew",
    ]
    assert (len(after.food_deck), len(after.discard)) == (119, 0)
    assert verify(built.rows, built.pack_bytes).ok
    with monkeypatch.context() as patched:
        refilling(patched, _draw_on_draw, _no_refill_at_the_end)
        other = verify(built.rows, built.pack_bytes)
    assert (other.first_bad_seq, other.first_kinds) == (84, ("state",))
    with monkeypatch.context() as patched:  # refilled at the next card or at the end: the same
        refilling(patched, _draw_on_draw)
        assert verify(built.rows, built.pack_bytes).ok
