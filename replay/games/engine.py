"""What every rules engine is made of, and the values the engines share.

A game is a package under ``replay/games/`` (the same files for every game: spec, state,
moves, flow, view, pack, projection).  Its engine is a value, ``Engine``, built from the
game's ``Spec`` (facts first: seats, ruleset versions, options, RNG labels, the rule
catalogue) and its pure functions.  Nothing here forwards calls: the fold
(``replay/games/fold.py``) calls the functions the engine holds.

- ``Engine.setup`` checks the seats and the options against the spec (``SetupRefused``,
  with the rule id), then calls the game's own setup;
- a command is the game's own protobuf message (for example ``BonAppetitCommand``), a
  oneof ``action``; each action is a ``Move``: how its message is read (``MalformedCommand``
  names the bad field), its checks in the order they run, each a rule id with a function
  that returns the refusal in the players' words (or None), and its effect, which returns
  the new state and the facts (automatic steps run inside the effect that triggers them);
- the generic checks (game closed, actor's role, seat to act) run once, in the fold,
  before the move's own (see ``replay.games.fold.play``).

State is plain frozen dataclasses holding an ``Rng``.  Facts are JSON-able dicts with a
``"type"``; a fact with ``"private_to": k`` is seen only by seat ``k`` (and the arbiter)
until the game ends (``replay.record.visibility`` decides).

Ruleset versions: a recorded game always folds under the ruleset version its genesis
names.  ``Spec.rulesets`` maps every version this build folds to that version's option
defaults; ``Spec.ruleset_version`` is the one new games are recorded with.  A version that
changes play gets a new number, and the state of the older versions keeps its shape (so
their recorded state hashes still match).

``Engine.legal_commands`` lists every legal command, up to ``LEGAL_CAP`` of them: an
engine stops enumerating after ``LEGAL_CAP + 1`` and ``capped`` cuts the list and says
whether it is partial.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from google.protobuf.message import Message

from feastlog.replay.games.text import plain_number
from feastlog.replay.record.rng import Rng

T = TypeVar("T")


def evolve(value: T, **changes: Any) -> T:
    """A copy of a frozen state dataclass with fields changed.

    Like ``dataclasses.replace`` but without re-running ``__init__``: folding, audits and
    the playout tests replace state fields millions of times, and this is several times
    faster.  Only for the games' state dataclasses and the fold's ``Table`` (plain fields,
    no ``__post_init__``, no fields left out of ``__init__``).
    """
    fields = value.__dict__
    new = object.__new__(type(value))
    made = new.__dict__
    made.update(fields)
    made.update(changes)
    if len(made) != len(fields):  # a name that is not a field was added
        unknown = sorted(changes.keys() - fields.keys())
        raise TypeError(f"{type(value).__name__} has no field {unknown[0]}")
    return new


Fact = dict[str, Any]
FactsByRow = Sequence[Sequence[Fact]]

# The most commands a ListLegalCommands answer lists; beyond it the answer says "partial".
LEGAL_CAP = 1000


def in_words(parts: Sequence[str]) -> str:
    """Parts of a sentence joined as a player says them: ``Ann``, ``Ann and Bob``,
    ``Ann, Bob and Cy``."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def how_many(count: int, noun: str) -> str:
    """A count and its noun in agreement: ``1 card``, ``3 cards``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def capped(commands: Sequence[Message]) -> tuple[list[Message], bool]:
    """At most ``LEGAL_CAP`` commands, and whether more were found (the list is partial)."""
    return list(commands[:LEGAL_CAP]), len(commands) > LEGAL_CAP


@dataclass(frozen=True)
class Rule:
    """One rule of a rulebook: its id, where it comes from, and a one-line paraphrase."""

    id: str
    section: str
    text: str
    interpretation: bool = False  # True for a reading of an ambiguity (DESIGN section 8)
    # False for a rule no command can break (setup, flow, scoring): no refusal cites it
    refuses: bool = True


def catalogue(*rules: Rule) -> Mapping[str, Rule]:
    """A rule catalogue keyed by id; ids must be unique."""
    out: dict[str, Rule] = {}
    for rule in rules:
        if rule.id in out:
            raise ValueError(f"duplicate rule id {rule.id}")
        out[rule.id] = rule
    return out


class RuleViolation(Exception):
    """A command that breaks a rule: the rule id and the reason in the players' words."""

    def __init__(self, rule_id: str, message: str) -> None:
        super().__init__(f"{rule_id}: {message}")
        self.rule_id = rule_id
        self.message = message


class SetupRefused(RuleViolation):
    """A game that cannot be set up as asked: the rule, and the genesis field at fault
    (``players`` or ``options``)."""

    def __init__(self, rule_id: str, field: str, message: str) -> None:
        super().__init__(rule_id, message)
        self.field = field


class WrongRole(RuleViolation):
    """A ruling from a seat, or a move from the arbiter (FL-ARBITER-ONLY)."""


class MalformedCommand(Exception):
    """A command that is not well formed (missing or unknown field): the field and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class PackError(Exception):
    """A content pack that does not validate: the card and field at fault."""

    def __init__(self, card: str, field: str, message: str) -> None:
        super().__init__(f"card {card!r}, field {field!r}: {message}")
        self.card = card
        self.field = field
        self.message = message


# A pack's bounds, the same in every game.  Its tables and arrays nest 4 deep (the file,
# an array of cards, a card, a list on it): deeper is refused before anything walks it.
# A name or id is named in commands, whose strings are at most 128 characters
# (``service.app.bounds``; a Picky Eaters card id adds ``ingredient-`` and a number to a
# name); other words (a note, a card's text, a title) are shown, never sent back.
PACK_NESTING = 10
PACK_NAME = 64
PACK_TEXT = 500
_TOO_DEEP = f"tables and arrays nest more than {PACK_NESTING} deep"

# What of TOML's syntax makes a file nest: brackets, and the dots of a dotted key (each
# part a table), a word or string between each two.  Strings and comments are matched
# whole, so nothing in them counts; one left open ends at its line's end (or the file's),
# so that no piece is read twice.
_NESTING_PIECES = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*(?:"{3,5})?'
    r"|'''(?:[^']|'(?!''))*(?:'{3,5})?"
    r'|"(?:[^"\\\n]|\\[^\n])*"?'
    r"|'[^'\n]*'?"
    r"|#[^\n]*"
    r"|[\[\]{}.=,\n]"
    r"|[^\s\[\]{}.=,#\"']+",
    re.DOTALL,
)


def pack_source(data: bytes) -> dict[str, Any]:
    """A content pack file read as TOML, with a non-empty id string at the top: what every
    game's ``load_pack`` starts from.  PackError on the pack itself (card ``(pack)``,
    field ``(file)`` or ``id``) when it is not, when its tables and arrays nest more than
    PACK_NESTING deep, or when it holds a number longer than Python reads."""
    try:
        text = data.decode("utf-8")
        # tomllib recurses into each inline array or table, and takes time and memory
        # growing with the square of a dotted key's parts: neither reaches it
        if _nests_deeper_in_text(text, PACK_NESTING):
            raise PackError("(pack)", "(file)", _TOO_DEEP)
        raw = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as bad:
        raise PackError("(pack)", "(file)", f"not a TOML file: {bad}") from None
    except ValueError:  # int() refuses a number of more digits than this (4300 by default)
        digits = sys.get_int_max_str_digits()
        raise PackError("(pack)", "(file)", f"a number has more than {digits} digits") from None
    except RecursionError:  # the text's check missed nesting the reader recursed into
        raise PackError("(pack)", "(file)", _TOO_DEEP) from None
    if _nests_deeper(raw, PACK_NESTING):  # a header's, a key's and a value's together
        raise PackError("(pack)", "(file)", _TOO_DEEP)
    pack_id = raw.get("id")
    if not isinstance(pack_id, str) or not pack_id.strip():
        raise PackError("(pack)", "id", "the pack needs an id: a non-empty string at the top")
    bounded("(pack)", "id", pack_id)
    return raw


# The keys a game's packs may hold, as each pack module declares them in ``PACK_KEYS``:
# for each key, None (a value the game reads as it is) or the keys of the table it holds,
# or of each table of the array of tables it holds.
PackKeys = Mapping[str, "PackKeys | None"]


def unknown_pack_key(
    raw: Mapping[str, Any], keys: PackKeys, title: str, card: str = "(pack)", field: str = ""
) -> None:
    """PackError naming the first key of a parsed pack that ``keys`` does not list (the
    card as ``pack_text`` names it: ``dish #3`` for the third table of ``[[dish]]``).

    A game reads only the keys it knows, so a misspelt one (``pionts``) would otherwise
    be dropped without a word and the card played with its default or refused for a
    missing field far from the typo.
    """
    for key, value in raw.items():
        named = f"{field}.{key}" if field else str(key)
        if key not in keys:
            known = ", ".join(sorted(keys))
            raise PackError(card, named, f"is not a field of a {title} pack (fields here: {known})")
        inner = keys[key]
        if inner is None:
            continue
        if isinstance(value, dict):
            unknown_pack_key(value, inner, title, card, named)
        elif isinstance(value, list) and card == "(pack)":
            for i, table in enumerate(value):
                if isinstance(table, dict):
                    unknown_pack_key(table, inner, title, f"{key} #{i + 1}")


def bounded(card: str, field: str, value: Any, most: int = PACK_NAME) -> Any:
    """``value`` when it is no string (its own check says what it must be) or a string of
    at most ``most`` characters; else PackError naming the card and field."""
    if isinstance(value, str) and len(value) > most:
        raise PackError(card, field, f"is longer than {most} characters")
    return value


def _nests_deeper_in_text(text: str, most: int) -> bool:
    """Whether one bracket or one dotted key of a TOML text nests more than ``most`` deep,
    in one pass (a valid file it finds so nests at least that deep once read)."""
    depth = dots = 0
    after_dot = False
    for piece in _NESTING_PIECES.finditer(text):
        char = text[piece.start()]
        if char == ".":
            dots += 1
            if dots >= most:
                return True
        elif not after_dot:  # anything but the next part of a dotted key ends it
            dots = 0
        if char in "[{":
            depth += 1
            if depth > most:
                return True
        elif char in "]}":
            depth -= 1
        after_dot = char == "."
    return False


def _nests_deeper(raw: dict[str, Any], most: int) -> bool:
    """Whether tables and arrays nest more than ``most`` deep (the file's table is 1): one
    level at a time, without recursion."""
    level: list[Any] = [raw]
    for _ in range(most):
        level = [
            inner
            for outer in level
            for inner in (outer.values() if isinstance(outer, dict) else outer)
            if isinstance(inner, dict | list)
        ]
        if not level:
            return False
    return True


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a seat, a spectator, or the arbiter."""

    role: str  # "seat", "spectator" or "arbiter"
    seat: int | None = None

    @staticmethod
    def of_seat(seat: int) -> Viewer:
        """The viewer for seat ``seat``."""
        return Viewer("seat", seat)

    def sees_seat(self, seat: int) -> bool:
        """Whether this viewer may see seat ``seat``'s hidden things."""
        return self.role == "arbiter" or (self.role == "seat" and self.seat == seat)

    def __str__(self) -> str:
        return f"seat:{self.seat}" if self.role == "seat" else self.role

    @staticmethod
    def parse(text: str) -> Viewer:
        """``seat:N``, ``spectator`` or ``arbiter``."""
        if text in ("spectator", "arbiter"):
            return Viewer(text)
        seat = plain_number(text[5:]) if text.startswith("seat:") else None
        if seat is not None:
            return Viewer.of_seat(seat)
        raise ValueError(f"unknown viewer {text!r}: use seat:N, spectator or arbiter")


SPECTATOR = Viewer("spectator")
ARBITER = Viewer("arbiter")


@dataclass(frozen=True)
class Outcome:
    """The result of a finished game: points per seat and the winning seats (ties share)."""

    points: tuple[int, ...]
    winners: tuple[int, ...]
    tiebreak: tuple[int, ...] = ()  # the tie-break figure per seat, where the game has one


# -- a game's facts ----------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """A rule option: the values it takes, the rule a bad value breaks, what it chooses."""

    name: str
    choices: tuple[str, ...]  # the values it takes, beside those ``open_value`` accepts
    rule: str  # the rule id cited for a value it does not take
    reading: str = ""  # the rule or reading it chooses between (for example BA-I3)
    # values beyond ``choices``: "seat" (a seat number of the game) or "rounds" (1 or more)
    open_value: str = ""

    def takes(self, value: str, seats: int) -> bool:
        """Whether ``value`` is a value of this option in a game of ``seats`` seats."""
        if value in self.choices:
            return True
        number = plain_number(value)
        if self.open_value == "seat":
            return number is not None and number < seats
        if self.open_value == "rounds":
            return number is not None and number >= 1
        return False

    def values(self) -> str:
        """The values it takes, in words."""
        extra = {"seat": "a seat number", "rounds": "a number of rounds"}.get(self.open_value)
        return " or ".join([*self.choices, *([extra] if extra else [])])


@dataclass(frozen=True)
class Spec:
    """A game's facts: seats, rulesets and options, RNG labels, the rule catalogue."""

    kind: str  # "bon-appetit"
    title: str  # "Bon Appetit!"
    rulebook: str  # the rulebook file the catalogue cites
    min_seats: int
    max_seats: int
    seats_rule: str  # the rule id a wrong number of seats breaks
    end_rule: str  # the rule id a command after the game's end breaks
    turn_rules: tuple[str, ...]  # the rule ids a command from a seat not to act may cite
    options_rule: str  # the rule id an option the ruleset does not have breaks
    ruleset_version: str  # the version new games are recorded with
    rulesets: Mapping[str, Mapping[str, str]]  # every version folded -> its option defaults
    options: tuple[Option, ...]
    rng_labels: tuple[str, ...]  # in the order they are first consumed
    rules: Mapping[str, Rule]
    command_field: str  # the field of feastlog.v1.Command holding this game's commands
    command_type: type[Message]  # the game's command message, a oneof "action"

    @property
    def option_defaults(self) -> Mapping[str, str]:
        """The options of the ruleset new games are recorded with, and their defaults."""
        return self.rulesets[self.ruleset_version]

    def option(self, name: str) -> Option | None:
        """The option called ``name``, or None."""
        return next((o for o in self.options if o.name == name), None)


# -- a game's moves ----------------------------------------------------------------------

# A check: (state, seat, the move's arguments) -> the refusal in the players' words, or None.
Check = Callable[[Any, int, Any], str | None]
Effect = Callable[[Any, int, Any], tuple[Any, list[Fact]]]


@dataclass(frozen=True)
class Move:
    """One action: how its message is read, its checks in the order they run, its effect.

    ``read(state, message)`` returns the move's arguments (the message itself, or values
    read from it) or raises ``MalformedCommand`` naming the field; each check is the rule
    id it enforces and a function returning the refusal (None when the rule holds); the
    effect returns the new state and the facts, automatic steps included.
    """

    read: Callable[[Any, Any], Any]
    checks: tuple[tuple[str, Check], ...]
    effect: Effect

    def check(self, state: Any, seat: int, args: Any) -> None:
        """Run the checks in order; the first that refuses raises ``RuleViolation``."""
        for rule_id, check in self.checks:
            refusal = check(state, seat, args)
            if refusal:
                raise RuleViolation(rule_id, refusal)

    @property
    def rule_ids(self) -> tuple[str, ...]:
        """The rule ids of the checks, in order, each once."""
        return tuple(dict.fromkeys(rule_id for rule_id, _ in self.checks))


def as_is(state: Any, message: Any) -> Any:
    """A ``read`` for a message with nothing to check before the rules."""
    return message


# -- a game's outcome rows ---------------------------------------------------------------


@dataclass(frozen=True)
class ProjectionTable:
    """A game's own outcome table: its name, its SQL columns, its rows from a game's facts.

    ``rows(game_id, facts)`` reads the facts of a finished game, row by row of the record.
    """

    name: str
    columns: str
    rows: Callable[[str, FactsByRow], list[list[Any]]]


@dataclass(frozen=True)
class Projection:
    """A game's outcome tables and its headline figure (a label and SQL giving a number)."""

    tables: tuple[ProjectionTable, ...]
    figure: tuple[str, str]


# -- the engine --------------------------------------------------------------------------

Setup = Callable[[Sequence[str], Mapping[str, str], Any, Rng, str], tuple[Any, list[Fact]]]


@dataclass(frozen=True)
class Engine:
    """A game's rules engine: its spec and its pure functions.

    ``setup(seats, options, pack, rng, ruleset)`` runs after the seats and options passed
    ``Engine.setup``'s checks; ``to_act(state)`` are the seats that may send a command;
    ``out_of_turn(state, seat)`` is the refusal for a seat that may not; ``commands(state,
    seat)`` lists a seat's legal commands (at most ``LEGAL_CAP + 1``), sorted by their
    bytes, for a seat to act.
    """

    spec: Spec
    prepare: Setup
    moves: Mapping[str, Move]
    to_act: Callable[[Any], frozenset[int]]
    out_of_turn: Callable[[Any, int], RuleViolation]
    commands: Callable[[Any, int], Sequence[Any]]
    is_over: Callable[[Any], bool]
    outcome: Callable[[Any], Outcome]
    view: Callable[[Any, Viewer], dict[str, Any]]
    command_public: Callable[[Message], bool]  # may others see it before the game ends?
    narrate: Callable[[Fact, Sequence[str]], str | None]
    load_pack: Callable[[bytes], Any]  # PackError naming the bad card and field
    default_pack_bytes: Callable[[], bytes]  # hashed into the genesis row
    projection: Projection
    # every key a new pack may hold (``unknown_pack_key``); None: the game's load_pack
    # refuses unknown keys itself
    pack_keys: PackKeys | None = None

    def setup(
        self,
        seats: Sequence[str],
        options: Mapping[str, str],
        pack: Any,
        rng: Rng,
        ruleset: str | None = None,
    ) -> tuple[Any, list[Fact]]:
        """The state at the start of a game under ``ruleset`` (by default the version new
        games are recorded with), and the facts of setting up.

        ``SetupRefused`` for a number of seats the game does not take, an option its ruleset
        does not have or a value an option does not take; ValueError for a ruleset this
        build does not fold (the fold checks the genesis first).
        """
        spec = self.spec
        ruleset = ruleset or spec.ruleset_version
        if ruleset not in spec.rulesets:
            raise ValueError(f"{spec.title} has no ruleset {ruleset!r}")
        if not spec.min_seats <= len(seats) <= spec.max_seats:
            raise SetupRefused(
                spec.seats_rule,
                "players",
                f"{spec.title} is for {spec.min_seats} to {spec.max_seats} players, "
                f"not {len(seats)}",
            )
        chosen = {**spec.rulesets[ruleset], **options}
        for name, value in chosen.items():
            option = spec.option(name)
            if option is None or name not in spec.rulesets[ruleset]:
                raise SetupRefused(
                    spec.options_rule,
                    "options",
                    f"{spec.title} ruleset {ruleset} has no option {name!r}",
                )
            if not option.takes(value, len(seats)):
                reading = f" ({option.reading})" if option.reading else ""
                raise SetupRefused(
                    option.rule,
                    "options",
                    f"option {name} cannot be {value!r}: use {option.values()}{reading}",
                )
        return self.prepare(seats, chosen, pack, rng, ruleset)

    def read(self, state: Any, command: Message) -> tuple[Move, Any]:
        """The move a command makes and its arguments; ``MalformedCommand`` if not well formed."""
        if not isinstance(command, self.spec.command_type):
            raise MalformedCommand("command", f"not a {self.spec.title} command")
        action = command.WhichOneof("action")
        if action is None:
            raise MalformedCommand("action", "the command is empty: choose an action")
        move = self.moves.get(action)
        if move is None:
            raise MalformedCommand("action", f"{self.spec.title} has no action {action}")
        return move, move.read(state, getattr(command, action))

    def checks(self, command: Message) -> tuple[str, ...]:
        """The rule ids of the move's own checks for ``command``, in the order they run."""
        if not isinstance(command, self.spec.command_type):
            return ()
        move = self.moves.get(command.WhichOneof("action") or "")
        return move.rule_ids if move else ()

    def legal_commands(self, state: Any, seat: int) -> list[Any]:
        """Every command ``seat`` may send now, sorted; none for a seat not to act."""
        if seat not in self.to_act(state):
            return []
        return list(self.commands(state, seat))


def assemble(
    spec: Spec,
    *,
    flow: ModuleType,
    moves: ModuleType,
    view: ModuleType,
    pack: ModuleType,
    projection: ModuleType,
) -> Engine:
    """A game package's engine, from its modules and the names every package gives them.

    ``flow``: setup, is_over, outcome; ``moves``: MOVES, to_act, out_of_turn; ``view``:
    legal_commands, view, command_public, narrate; ``pack``: load_pack,
    default_pack_bytes, PACK_KEYS; ``projection``: PROJECTION (see docs/architecture.md).
    """
    return Engine(
        spec=spec,
        prepare=flow.setup,
        moves=moves.MOVES,
        to_act=moves.to_act,
        out_of_turn=moves.out_of_turn,
        commands=view.legal_commands,
        is_over=flow.is_over,
        outcome=flow.outcome,
        view=view.view,
        command_public=view.command_public,
        narrate=view.narrate,
        load_pack=pack.load_pack,
        default_pack_bytes=pack.default_pack_bytes,
        projection=projection.PROJECTION,
        pack_keys=pack.PACK_KEYS,
    )
