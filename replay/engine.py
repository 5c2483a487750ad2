"""The protocol every rules engine follows, and the values they share.

An engine is a module-level object with the game's facts (kind, ruleset versions, seat
counts, rule catalogue, RNG labels, option defaults) and pure functions:

- ``setup(seats, options, pack, rng, ruleset) -> (state, facts)``
- ``apply(state, seat, command) -> (state, facts)``, raising ``RuleViolation`` or
  ``MalformedCommand``; automatic steps run inside the ``apply`` that triggers them
- ``to_act(state)``, ``legal_commands(state, seat)``, ``is_over(state)``,
  ``outcome(state)``, ``view(state, viewer)``, ``command_public(command)``,
  ``narrate(fact, names)``

``command`` is the game's own protobuf message (for example ``BonAppetitCommand``): the
rules read it directly.  State is plain frozen dataclasses holding an ``Rng``.
Facts are JSON-able dicts with a ``"type"``; a fact with ``"private_to": k`` is seen only
by seat ``k`` (and the arbiter) until the game ends (``replay.visibility`` decides).

Ruleset versions: a recorded game always folds under the ruleset version its genesis
names.  ``rulesets`` maps every version this build folds to that version's option
defaults; ``ruleset_version`` is the one new games are recorded with.  A version that
changes play gets a new number, and the state of the older versions keeps its shape (so
their recorded state hashes still match).

``legal_commands`` lists every legal command, up to ``LEGAL_CAP`` of them: an engine
stops enumerating after ``LEGAL_CAP + 1`` and ``capped`` cuts the list and says whether
it is partial.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf.message import Message

from replay.rng import Rng

Fact = dict[str, Any]

# The most commands a ListLegalCommands answer lists; beyond it the answer says "partial".
LEGAL_CAP = 1000


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
        if text.startswith("seat:") and text[5:].isdigit():
            return Viewer.of_seat(int(text[5:]))
        raise ValueError(f"unknown viewer {text!r}: use seat:N, spectator or arbiter")


SPECTATOR = Viewer("spectator")
ARBITER = Viewer("arbiter")


@dataclass(frozen=True)
class Outcome:
    """The result of a finished game: points per seat and the winning seats (ties share)."""

    points: tuple[int, ...]
    winners: tuple[int, ...]
    tiebreak: tuple[int, ...] = ()  # the tie-break figure per seat, where the game has one


class Engine(Protocol):
    """What the fold, the service and the CLI need from a rules engine."""

    kind: str
    title: str
    ruleset_version: str  # the version new games are recorded with
    rulesets: Mapping[str, Mapping[str, str]]  # every version folded -> its option defaults
    min_seats: int
    max_seats: int
    seats_rule: str  # the rule id a wrong number of seats breaks
    end_rule: str  # the rule id a command after the game's end breaks
    rules: Mapping[str, Rule]
    rng_labels: tuple[str, ...]
    option_defaults: Mapping[str, str]  # the options of ``ruleset_version``
    command_field: str  # the field of feastlog.v1.Command holding this game's commands

    def default_pack_bytes(self) -> bytes:
        """The bundled content pack, as bytes (hashed into the genesis row)."""

    def load_pack(self, data: bytes) -> Any:
        """Parse and validate a content pack; raise ``PackError`` naming the bad card."""

    def setup(
        self,
        seats: Sequence[str],
        options: Mapping[str, str],
        pack: Any,
        rng: Rng,
        ruleset: str,
    ) -> tuple[Any, list[Fact]]:
        """The state at the start of a game under ``ruleset``, and the facts of setting up."""

    def apply(self, state: Any, seat: int, command: Message) -> tuple[Any, list[Fact]]:
        """Check ``command`` by ``seat`` against the rules and apply it."""

    def to_act(self, state: Any) -> frozenset[int]:
        """The seats that may send a command now."""

    def legal_commands(self, state: Any, seat: int) -> list[Message]:
        """Every command ``seat`` may send now, sorted; at most ``LEGAL_CAP + 1`` of them."""

    def is_over(self, state: Any) -> bool:
        """Whether the game has ended."""

    def outcome(self, state: Any) -> Outcome:
        """Points and winners (meaningful once the game is over)."""

    def view(self, state: Any, viewer: Viewer) -> dict[str, Any]:
        """The state as ``viewer`` may see it, as JSON-able data."""

    def command_public(self, command: Message) -> bool:
        """Whether the command itself may be shown to others before the game ends."""

    def narrate(self, fact: Fact, names: Sequence[str]) -> str | None:
        """One line of plain words for a fact, or None for facts not worth a line."""

    def checks(self, command: Message) -> tuple[str, ...]:
        """The rule ids ``apply`` checks for this kind of command, in the order it checks."""
