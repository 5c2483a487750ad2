"""A tournament's format (fixed at creation, in its genesis options) and its rule catalogue.

The format is a flat map of strings, every key spelled out in the genesis (an option left
out takes its default, as a game's options do): the games' kind, ruleset, options and
pack, the table sizes, the rounds, the pairing system, the points by place, the bye's
points, the tiebreak order, late entry, what happens at time, and seat entropy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from feastlog.replay.games import UnknownGameKind
from feastlog.replay.games import engine as engine_of
from feastlog.replay.games.engine import Rule, SetupRefused, catalogue
from feastlog.replay.games.text import plain_number
from feastlog.replay.table import clocks

KIND = "tournament"  # the reserved game kind of a tournament's genesis
ID_PREFIX = "t_"

RULES = catalogue(
    Rule("TOUR-FORMAT", "format", "A format option takes one of the values it documents."),
    Rule("TOUR-TABLE-SIZE", "format", "Every table size is one the tournament's game seats."),
    Rule(
        "TOUR-ROLE",
        "organiser",
        "Only the organiser creates a tournament; the organiser or a named arbiter runs it.",
    ),
    Rule("TOUR-NAME", "players", "A player's name is plain text, 1 to 40 characters."),
    Rule("TOUR-REGISTER-TWICE", "players", "A player registers once."),
    Rule(
        "TOUR-REGISTER-CLOSED",
        "players",
        "Players register before round 1, or between rounds when the format allows late entry.",
    ),
    Rule("TOUR-PLAYER-UNKNOWN", "players", "A command names a registered player."),
    Rule("TOUR-DROPPED", "players", "A player who dropped is not dropped again, nor seated."),
    Rule(
        "TOUR-PAIR-UNFINISHED",
        "rounds",
        "A round is paired only once every table of the round before has its result.",
    ),
    Rule("TOUR-ROUNDS", "rounds", "No more rounds are paired than the format has."),
    Rule("TOUR-PAIR-PLAYERS", "rounds", "A round needs players enough for one table."),
    Rule(
        "TOUR-PAIR-DERIVED",
        "pairing",
        "A proposed Swiss pairing is the one derived from the seed, standings and history.",
        refuses=False,
    ),
    Rule(
        "TOUR-FIXED-PODS", "pairing", "Fixed pods seat every active player once, at allowed sizes."
    ),
    Rule("TOUR-NO-PROPOSAL", "pairing", "Swaps, fixes and publishing need a proposed round."),
    Rule("TOUR-SWAP", "pairing", "A swap exchanges two different players of the proposal."),
    Rule("TOUR-FIX", "pairing", "A fixed seat is a seat of the proposed round."),
    Rule("TOUR-PUBLISHED", "pairing", "A published round is not changed."),
    Rule(
        "TOUR-TOKENS",
        "pairing",
        "A published round's seat tokens are given again only as the server first made them.",
    ),
    Rule(
        "TOUR-CLOCK",
        "clock",
        "The clock starts once per published round, before extensions and the call.",
    ),
    Rule("TOUR-TABLE", "clock", "A table number is one of the round's tables."),
    Rule("TOUR-PENALTY", "penalties", "A penalty is a warning, a game loss or a disqualification."),
    Rule(
        "TOUR-REASON", "penalties", "Swaps, fixes, extensions, penalties and drops give a reason."
    ),
    Rule(
        "TOUR-RESULT", "results", "A table's result comes once, from its game's end.", refuses=False
    ),
    Rule("TOUR-END", "end", "A tournament ends once its last round is complete; nothing follows."),
)

PAIRINGS = ("swiss", "fixed", "round_robin")
AT_TIME = ("close", "void")
TIEBREAKS = ("game_points", "opponents_average", "wins", "par")
PENALTIES = ("warning", "game_loss", "disqualification")
MAX_ROUNDS = 30
MAX_TABLE = 8
# A round's clock (the format's round_minutes, or the minutes StartClock names) and one
# extension of it, in minutes: the bounds StartClock, ExtendClock and the format share.
ROUND_MINUTES = (1, 24 * 60)
EXTENSION_MINUTES = (1, 240)

DEFAULTS: Mapping[str, str] = {
    "game_kind": "bon-appetit",
    "table_sizes": "3-4",
    "rounds": "4",
    "pairing": "swiss",
    "place_points": "4,2,1,0",
    "bye_points": "2",
    "tiebreaks": "game_points,opponents_average,wins",
    "late_entry": "true",
    "at_time": "close",
    "round_minutes": "50",
    "seat_entropy": "false",
    "duplicate": "false",
}
GAME_OPTION = "game."  # a key "game.<name>" is the option <name> of every table's game


@dataclass(frozen=True)
class Format:
    """A tournament's format, read from its genesis options."""

    game_kind: str
    ruleset_version: str
    smallest: int
    largest: int
    rounds: int
    pairing: str
    place_points: tuple[int, ...]
    bye_points: int
    tiebreaks: tuple[str, ...]
    late_entry: bool
    at_time: str
    round_minutes: int
    seat_entropy: bool
    game_options: tuple[tuple[str, str], ...]
    duplicate: bool = False  # every table of a round dealt from the round's one seed

    def sizes(self) -> range:
        """The table sizes allowed, smallest first."""
        return range(self.smallest, self.largest + 1)

    def options(self) -> dict[str, str]:
        """The format as genesis options, every key spelled out."""
        out = {
            "game_kind": self.game_kind,
            "ruleset_version": self.ruleset_version,
            "table_sizes": f"{self.smallest}-{self.largest}"
            if self.smallest != self.largest
            else str(self.smallest),
            "rounds": str(self.rounds),
            "pairing": self.pairing,
            "place_points": ",".join(map(str, self.place_points)),
            "bye_points": str(self.bye_points),
            "tiebreaks": ",".join(self.tiebreaks),
            "late_entry": str(self.late_entry).lower(),
            "at_time": self.at_time,
            "round_minutes": str(self.round_minutes),
            "seat_entropy": str(self.seat_entropy).lower(),
            "duplicate": str(self.duplicate).lower(),
        }
        out.update({GAME_OPTION + k: v for k, v in self.game_options})
        return out


def _refuse(field: str, message: str, rule: str = "TOUR-FORMAT") -> SetupRefused:
    return SetupRefused(rule, field, message)


def _number(options: Mapping[str, str], key: str, low: int, high: int) -> int:
    found = plain_number(options[key])
    if found is None or not low <= found <= high:
        raise _refuse(key, f"{key} is a whole number from {low} to {high}, not {options[key]!r}")
    return found


def _flag(options: Mapping[str, str], key: str) -> bool:
    if options[key] not in ("true", "false"):
        raise _refuse(key, f"{key} is true or false, not {options[key]!r}")
    return options[key] == "true"


def _sizes(text: str, low: int, high: int, title: str) -> tuple[int, int]:
    first, dash, last = text.partition("-")
    smallest, largest = plain_number(first), plain_number(last if dash else first)
    if smallest is None or largest is None or smallest > largest:
        raise _refuse("table_sizes", f"table_sizes is a size or a range (3-4), not {text!r}")
    if smallest < low or largest > min(high, MAX_TABLE):
        raise _refuse(
            "table_sizes",
            f"{title} seats {low} to {high} players: "
            f"a table of {smallest if smallest < low else largest} cannot play",
            "TOUR-TABLE-SIZE",
        )
    return smallest, largest


def _seat_clocks(game_options: Mapping[str, str], seats: int) -> None:
    """The tables' seat clocks (``game.clock``, ``game.clock_timeout``: the table's own
    options, which every table's game takes as a game created alone does), checked as a
    game's setup checks them: TOUR-FORMAT naming the option, in the clock's words."""
    table = {k: v for k, v in game_options.items() if k in clocks.OPTIONS}
    try:
        clocks.parse(table, seats, "1970-01-01T00:00:00Z")
    except SetupRefused as refused:
        named = "clock_timeout" if refused.message.startswith("clock_timeout") else "clock"
        raise _refuse(GAME_OPTION + named, f"{refused.rule_id}: {refused.message}") from None


def read_format(options: Mapping[str, str]) -> Format:
    """The format named by options (defaults for those left out); SetupRefused naming the
    option and the rule (TOUR-FORMAT, TOUR-TABLE-SIZE) for one it cannot take."""
    unknown = sorted(
        k
        for k in options
        if k not in DEFAULTS and k != "ruleset_version" and not k.startswith(GAME_OPTION)
    )
    if unknown:
        raise _refuse(unknown[0], f"{unknown[0]!r} is not a tournament option")
    merged = {**DEFAULTS, **options}
    try:
        engine = engine_of(merged["game_kind"])
    except UnknownGameKind:
        raise _refuse("game_kind", f"{merged['game_kind']!r} is not a game kind") from None
    spec = engine.spec
    ruleset = merged.get("ruleset_version", spec.ruleset_version)
    if ruleset not in spec.rulesets:
        raise _refuse("ruleset_version", f"{spec.title} has no ruleset {ruleset!r}")
    smallest, largest = _sizes(merged["table_sizes"], spec.min_seats, spec.max_seats, spec.title)
    if merged["pairing"] not in PAIRINGS:
        raise _refuse(
            "pairing", f"pairing is one of {', '.join(PAIRINGS)}, not {merged['pairing']!r}"
        )
    given = merged["place_points"].split(",")
    if "place_points" not in options:  # the default, with 0 for each place beyond the fourth
        given += ["0"] * (largest - len(given))
    points = tuple(plain_number(p) for p in given)
    if len(points) < largest or any(p is None or p > 1000 for p in points):
        raise _refuse(
            "place_points",
            f"place_points gives whole points for each of the {largest} places, first place first",
        )
    bye = plain_number(merged["bye_points"])
    if bye is None or bye > 1000:
        raise _refuse("bye_points", "bye_points is a whole number of points")
    tiebreaks = tuple(t for t in merged["tiebreaks"].split(",") if t)
    if any(t not in TIEBREAKS for t in tiebreaks) or len(set(tiebreaks)) != len(tiebreaks):
        raise _refuse(
            "tiebreaks", f"tiebreaks are some of {', '.join(TIEBREAKS)}, in order, each once"
        )
    if merged["at_time"] not in AT_TIME:
        raise _refuse("at_time", f"at_time is one of {', '.join(AT_TIME)}")
    game_options = tuple(
        sorted((k[len(GAME_OPTION) :], v) for k, v in merged.items() if k.startswith(GAME_OPTION))
    )
    for name, value in game_options:
        option = spec.option(name)
        if name not in clocks.OPTIONS and (option is None or not option.takes(value, largest)):
            raise _refuse(GAME_OPTION + name, f"{spec.title} has no option {name} = {value!r}")
    _seat_clocks(dict(game_options), largest)
    duplicate = _flag(merged, "duplicate")
    if duplicate and (smallest != largest or _flag(merged, "seat_entropy")):
        raise _refuse(
            "duplicate",
            "duplicate rounds deal every table the same cards: one table size, no seat entropy",
        )
    return Format(
        duplicate=duplicate,
        game_kind=spec.kind,
        ruleset_version=ruleset,
        smallest=smallest,
        largest=largest,
        rounds=_number(merged, "rounds", 1, MAX_ROUNDS),
        pairing=merged["pairing"],
        place_points=tuple(p for p in points if p is not None),
        bye_points=bye,
        tiebreaks=tiebreaks,
        late_entry=_flag(merged, "late_entry"),
        at_time=merged["at_time"],
        round_minutes=_number(merged, "round_minutes", *ROUND_MINUTES),
        seat_entropy=_flag(merged, "seat_entropy"),
        game_options=game_options,
    )
