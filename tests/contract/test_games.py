"""The contract every registered game keeps, run over every registered kind.

A game is covered by registering it (``replay.games.register``) with its kit
(``tests.contract.kits``): nothing here names a game.

- seeded random legal playouts under every ruleset version end, and their record (rows
  with hashes, as the service writes them) refolds to every recorded state hash and
  verifies; every command a position offers is accepted there;
- every rule of the catalogue that can refuse is cited by a refusal case of the kit, and
  each case refuses citing its rule; the others are marked as never refusing;
- every refusal of a well-formed command cites a refusing rule the fold lists for that
  command; a command that is not well formed names its field; after the end, every
  command cites the game's end rule and FL-GAME-CLOSED;
- views leak nothing: whatever the public view hides is shown to one seat at most (its
  owner), and a seat is shown only what the arbiter sees too;
- a finished game gives its outcome rows: one per game and per seat, and every row of the
  game's own tables fits its columns;
- the bundled pack with any one value changed to a value of another type, or left out,
  loads and sets up or is refused with a PackError (naming the card and field): nothing
  else is raised, so no organiser's pack is ever an INTERNAL error.
"""

from __future__ import annotations

import datetime
import json
import random
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import (
    ARBITER,
    SPECTATOR,
    Engine,
    Fact,
    MalformedCommand,
    PackError,
    RuleViolation,
    Viewer,
)
from feastlog.replay.games.fold import RECORD_RULES, Table
from feastlog.replay.record.audit import verify
from feastlog.replay.record.history import refold
from feastlog.replay.record.rng import Rng
from feastlog.service.store.projection import Ending, outcome_rows
from feastlog.v1 import record_pb2
from tests.contract.kits import KITS
from tests.recordutil import build

KINDS = games.kinds()
RULESETS = [(k, v) for k in KINDS for v in sorted(games.engine(k).spec.rulesets)]
SEATINGS = [
    (k, n)
    for k in KINDS
    for n in range(games.engine(k).spec.min_seats, games.engine(k).spec.max_seats + 1)
]
RECORDS = 2  # seeded records per kind and number of seats
PLAYOUTS = 3  # seeded games per kind and ruleset version
POSITIONS = 30  # positions tried per game, spread over it
MOST_COMMANDS = 5000  # a playout longer than this does not end
TESTS = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Playout:
    """A seeded random legal game: every table from the setup on, the facts of each step."""

    engine: Engine
    tables: list[Table]
    facts: list[list[Fact]]


def playout(kind: str, ruleset: str, game: int, seats: int | None = None) -> Playout:
    """One seeded random legal game, to its end."""
    engine = games.engine(kind)
    pack = engine.load_pack(engine.default_pack_bytes())
    names = ("Ann", "Bob", "Cy", "Dee", "Eve", "Flo")[: seats or KITS[kind].seats]
    genesis = record_pb2.Genesis(
        game_kind=kind,
        ruleset_version=ruleset,
        seats=[record_pb2.SeatInfo(name=n) for n in names],
    )
    table, facts = fold.start(genesis, bytes([game, 99]) * 16, pack)
    chooser = random.Random(game)
    tables, all_facts = [table], [facts]
    while not fold.is_over(engine, table):
        assert len(tables) < MOST_COMMANDS, f"{kind} did not end in {MOST_COMMANDS} commands"
        seat = chooser.choice(sorted(engine.to_act(table.game)))
        command = chooser.choice(engine.legal_commands(table.game, seat))
        wrapped = fold.wrap_command(engine.spec.command_field, command)
        table, facts = fold.step(engine, table, f"seat:{seat}", wrapped)
        tables.append(table)
        all_facts.append(facts)
    return Playout(engine, tables, all_facts)


def positions(played: Playout) -> list[Table]:
    """About ``POSITIONS`` tables spread over a game, the last included."""
    step = max(1, len(played.tables) // POSITIONS)
    return [*played.tables[::step], played.tables[-1]]


def test_every_registered_game_has_a_kit() -> None:
    assert set(KINDS) <= set(KITS), "a registered game brings its kit (tests.contract.kits)"


@pytest.mark.parametrize(("kind", "seats"), SEATINGS, ids=[f"{k}-{n}" for k, n in SEATINGS])
def test_seeded_playouts_end_and_their_records_refold_to_every_state_hash(
    kind: str, seats: int
) -> None:
    """The record as the service writes it (rows, hashes, seed reveal), folded again."""
    engine = games.engine(kind)
    for seed in range(1, RECORDS + 1):
        built = build(kind=kind, players=seats, seed_byte=seed * 10 + seats)
        assert built.rows[-1].kind == "seed_reveal", f"{kind} seed {seed} did not end"
        folded = refold(built.rows, built.seed, built.pack_bytes)
        assert [fold.state_hash(t) for t in folded.tables] == [r.state_hash for r in built.rows]
        report = verify(built.rows, built.pack_bytes)
        assert report.ok and report.states_checked, report.summary()
        result = fold.outcome(engine, folded.tables[-1])
        assert result is not None and len(result.points) == seats and result.winners


@pytest.mark.parametrize(("kind", "ruleset"), RULESETS, ids=[f"{k}-{v}" for k, v in RULESETS])
def test_every_command_a_position_offers_is_accepted_there(kind: str, ruleset: str) -> None:
    played = playout(kind, ruleset, 1)
    engine = played.engine
    for table in positions(played)[:-1]:
        for seat in sorted(engine.to_act(table.game)):
            offered = engine.legal_commands(table.game, seat)
            assert offered, f"seat {seat} is to act and is offered nothing"
            for command in random.Random(seat).sample(offered, min(5, len(offered))):
                fold.play(engine, table.game, seat, command)
        for seat in set(range(len(table.adjustments))) - engine.to_act(table.game):
            assert engine.legal_commands(table.game, seat) == []


def cited(text: str) -> set[str]:
    """The rule ids a text cites: as written (BA-BID-SIZE), or in a test's name
    (test_PE_DECK_REFILL_PE_I7_refill cites PE-DECK-REFILL and PE-I7, not PE-I)."""
    found: set[str] = set()
    for token in re.findall(r"(?<![A-Za-z0-9])[A-Z]{2}(?:[-_][A-Z0-9]+)+", text):
        parts = re.split(r"[-_]", token)
        found |= {
            "-".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 2, len(parts) + 1)
        }
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_every_rule_id_is_cited_by_the_games_tests(kind: str) -> None:
    """Each id of the catalogue, refusing or not, appears in the game's scenario tests."""
    text = "".join(p.read_text() for p in sorted(TESTS.rglob(KITS[kind].tests)))
    missing = sorted(set(games.engine(kind).spec.rules) - cited(text))
    assert text and not missing, f"rule ids without a test: {missing}"


@pytest.mark.parametrize("kind", KINDS)
def test_every_rule_is_cited_by_a_refusal_case_or_marked_as_never_refusing(kind: str) -> None:
    rules = games.engine(kind).spec.rules
    refusing = {rule_id for rule_id, rule in rules.items() if rule.refuses}
    assert set(KITS[kind].refusals()) == refusing


def _cases() -> Iterator[tuple[str, str]]:
    for kind in KINDS:
        for rule_id in KITS[kind].refusals() if kind in KITS else ():
            yield kind, rule_id


CASES = list(_cases())


@pytest.mark.parametrize(("kind", "rule_id"), CASES, ids=[f"{k}:{r}" for k, r in CASES])
def test_each_refusal_case_refuses_citing_its_rule(kind: str, rule_id: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        KITS[kind].refusals()[rule_id]()
    assert caught.value.rule_id == rule_id, caught.value
    assert caught.value.message and rule_id in games.engine(kind).spec.rules


@pytest.mark.parametrize(("kind", "ruleset"), RULESETS, ids=[f"{k}-{v}" for k, v in RULESETS])
def test_every_refusal_of_a_well_formed_command_cites_a_rule_the_fold_lists(
    kind: str, ruleset: str
) -> None:
    """Well-formed commands (right and wrong) at many positions of seeded games."""
    engine, kit = games.engine(kind), KITS[kind]
    refusing = {r.id for r in engine.spec.rules.values() if r.refuses} | set(RECORD_RULES)
    cited: set[str] = set()
    accepted = 0
    for game in range(PLAYOUTS):
        played = playout(kind, ruleset, game)
        rng = random.Random(game * 31 + len(kind))
        for table in positions(played)[:-1]:
            for seat in range(kit.seats):
                legal = engine.legal_commands(table.game, seat)
                for inner in kit.commands(table, legal, rng):
                    command = fold.wrap_command(engine.spec.command_field, inner)
                    try:
                        fold.step(engine, table, f"seat:{seat}", command)
                    except RuleViolation as refused:
                        assert refused.rule_id in refusing, (refused, inner)
                        assert refused.rule_id in fold.checked_rules(engine, command), refused
                        cited.add(refused.rule_id)
                        continue
                    except MalformedCommand as malformed:  # pragma: no cover - the failure
                        pytest.fail(f"well-formed {inner} refused as malformed: {malformed}")
                    accepted += 1
                    assert seat in engine.to_act(table.game)
        final = played.tables[-1]
        for inner in kit.commands(final, [], rng):
            with pytest.raises(RuleViolation) as after:
                fold.step(
                    engine, final, "seat:0", fold.wrap_command(engine.spec.command_field, inner)
                )
            assert after.value.rule_id == engine.spec.end_rule
            assert "FL-GAME-CLOSED" in after.value.message
    assert accepted > 0 and len(cited) >= 2, cited


@pytest.mark.parametrize("kind", KINDS)
def test_a_command_that_is_not_well_formed_names_its_field(kind: str) -> None:
    engine = games.engine(kind)
    table = playout(kind, engine.spec.ruleset_version, 0).tables[0]
    seat = min(engine.to_act(table.game))
    empty = record_pb2.Command()
    getattr(empty, engine.spec.command_field).SetInParent()  # the game's, with no action
    for command in (record_pb2.Command(), empty):
        with pytest.raises(MalformedCommand) as caught:
            fold.step(engine, table, f"seat:{seat}", command)
        assert caught.value.field and caught.value.message
    with pytest.raises(MalformedCommand) as caught:
        fold.step(engine, table, "seat:99", empty)
    assert caught.value.field == "actor"


def hidden(
    arbiter: Any, public: Any, path: tuple[Any, ...] = ()
) -> list[tuple[tuple[Any, ...], Any]]:
    """(path, value) of every part of the arbiter's view the public view lacks or shows
    otherwise."""
    if isinstance(arbiter, dict) and isinstance(public, dict):
        found = []
        for key, value in arbiter.items():
            if key not in public:
                found.append(((*path, key), value))
            else:
                found += hidden(value, public[key], (*path, key))
        return found
    if isinstance(arbiter, list) and isinstance(public, list) and len(arbiter) == len(public):
        found = []
        for i, (a, p) in enumerate(zip(arbiter, public, strict=True)):
            found += hidden(a, p, (*path, i))
        return found
    return [] if arbiter == public else [(path, arbiter)]


MISSING = object()


def at(view: Any, path: tuple[Any, ...]) -> Any:
    """The part of a view at ``path`` (MISSING where it has none)."""
    for step in path:
        if (isinstance(view, dict) and step in view) or (
            isinstance(view, list) and isinstance(step, int) and step < len(view)
        ):
            view = view[step]
        else:
            return MISSING
    return view


@pytest.mark.parametrize("kind", KINDS)
def test_views_leak_nothing(kind: str) -> None:
    """What the public view hides is shown to one seat at most; a seat sees only the truth."""
    engine = games.engine(kind)
    seats = range(KITS[kind].seats)
    checked = 0
    for game in range(PLAYOUTS):
        for table in positions(playout(kind, engine.spec.ruleset_version, game)):
            state = table.game
            arbiter, public = engine.view(state, ARBITER), engine.view(state, SPECTATOR)
            views = {s: engine.view(state, Viewer.of_seat(s)) for s in seats}
            for path, value in hidden(arbiter, public):
                seers = [s for s in seats if at(views[s], path) == value]
                assert len(seers) <= 1, f"{path} is shown to seats {seers}"
                checked += 1
            for seat, view in views.items():
                for path, value in hidden(view, public):
                    assert at(arbiter, path) == value, f"seat {seat} is shown {path} = {value}"
    assert checked > 0, "the public view hides nothing: a game with no secret"


@pytest.mark.parametrize("kind", KINDS)
def test_a_finished_game_gives_its_outcome_rows(kind: str) -> None:
    engine = games.engine(kind)
    own = {t.name: t.columns.count(",") + 1 for t in engine.projection.tables}
    filled: set[str] = set()
    for game in range(PLAYOUTS):
        played = playout(kind, engine.spec.ruleset_version, game)
        genesis = record_pb2.Genesis(
            game_id=f"g_{game}",
            game_kind=kind,
            seats=[record_pb2.SeatInfo(name=f"P{s}") for s in range(KITS[kind].seats)],
        )
        ending = Ending(genesis, played.tables[-1], played.facts, len(played.tables))
        rows = dict(outcome_rows(ending))
        assert len(rows["outcome_games"]) == 1
        assert len(rows["outcome_seats"]) == KITS[kind].seats
        for name, width in own.items():
            assert all(len(row) == width for row in rows.get(name, [])), name
            filled |= {name} if rows.get(name) else set()
    assert filled == set(own), f"tables never filled: {set(own) - filled}"
    label, query = engine.projection.figure
    assert label and query.upper().startswith("SELECT")


# A value of each TOML type, and extremes (checks once missed lists where names go, and
# counts without bound); LEFT_OUT removes the value's key instead.
ODD_VALUES: list[Any] = ["x", "", "x" * 600, -1, 2**62, True, 1.5, datetime.date(2020, 1, 1)]
ODD_VALUES += [[], [["x"]], [{}], {"a": "x"}]
LEFT_OUT = object()


def toml_value(value: Any) -> str:
    """A value as TOML (inline: arrays and tables on one line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON's escapes are TOML's
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return value.isoformat() if isinstance(value, datetime.date) else repr(value)


def toml_file(raw: dict[str, Any]) -> str:
    """A parsed pack written back: plain keys first, then each array of tables."""
    tables = {k: v for k, v in raw.items() if isinstance(v, list) and v and v[0] is not None}
    tables = {k: v for k, v in tables.items() if all(isinstance(t, dict) for t in v)}
    lines = [f"{toml_value(k)} = {toml_value(v)}" for k, v in raw.items() if k not in tables]
    for key, cards in tables.items():
        for card in cards:
            lines += [f"[[{toml_value(key)}]]"]
            lines += [f"{toml_value(k)} = {toml_value(v)}" for k, v in card.items()]
    return "\n".join(lines) + "\n"


def value_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path to every value inside ``value``, of a list only its first (so of an array
    of tables, the first card's)."""
    if isinstance(value, dict):
        steps = list(value.items())
    elif isinstance(value, list):
        steps = list(enumerate(value[:1]))
    else:
        return
    for step, inner in steps:
        yield (*path, step)
        yield from value_paths(inner, (*path, step))


def changed(raw: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """``raw`` with the value at ``path`` replaced (or left out), ``raw`` itself unchanged."""
    copy: dict[str, Any] = json.loads(json.dumps(raw, default=str))
    inner: Any = copy
    for step in path[:-1]:
        inner = inner[step]
    if value is LEFT_OUT:
        del inner[path[-1]]
    else:
        inner[path[-1]] = value
    return copy


@pytest.mark.parametrize("kind", KINDS)
def test_a_pack_with_any_value_changed_loads_and_sets_up_or_is_a_pack_error(kind: str) -> None:
    engine = games.engine(kind)
    raw = tomllib.loads(engine.default_pack_bytes().decode())
    assert engine.load_pack(toml_file(raw).encode()), "the bundled pack written back loads"
    names = [f"P{i}" for i in range(engine.spec.max_seats)]
    for path in value_paths(raw):
        for value in [*ODD_VALUES, LEFT_OUT]:
            try:
                pack = engine.load_pack(toml_file(changed(raw, path, value)).encode())
            except PackError as refused:
                assert refused.card and refused.field, (path, value)
                continue
            engine.setup(names, {}, pack, Rng(bytes(32)))


PACKAGE_FILES = {
    "__init__.py",
    "spec.py",
    "state.py",
    "moves.py",
    "flow.py",
    "view.py",
    "pack.py",
    "pack.toml",
    "projection.py",
}


def test_every_game_package_has_the_same_files_and_an_assembled_engine() -> None:
    """Each package under replay/games/ has the same modules (a game may add its own
    helpers beside them) and builds its engine with ``assemble`` from them."""
    folder = Path(games.__file__).resolve().parent
    packages = [p for p in sorted(folder.iterdir()) if (p / "__init__.py").exists()]
    assert packages, "no game packages found"
    for package in packages:
        found = {p.name for p in package.iterdir() if p.suffix in (".py", ".toml")}
        assert found >= PACKAGE_FILES, f"{package.name} lacks {sorted(PACKAGE_FILES - found)}"
        init = (package / "__init__.py").read_text()
        assert "ENGINE = assemble(SPEC," in init, f"{package.name} builds its engine by hand"
        assert package.name.replace("_", "-") in KINDS, f"{package.name} is not registered"
