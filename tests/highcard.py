"""High Card, a test-only fourth game: the proof that a game is a spec and functions.

Rulebook (this docstring): 2 to 6 seats.  The pack's cards, numbered 1 to ``cards``, are
shuffled with the label ``high-card/deck``; the first 8 per seat and 2 more lie face
down in slots ``slot-1``, ``slot-2``...  Round and round in seat order each seat takes one
slot's card (HC-TURN, HC-TAKE) and alone sees it until the end; once every seat holds 8,
the seat holding the highest card wins (HC-HIGHEST), or with option ``wins=lowest`` the
one holding the lowest (HC-LOWEST).

A command is the Picky Eaters message ``take_from_market`` (its ``card`` names the slot):
``feastlog.v1.Command``'s oneof cannot take a new message without changing record.proto,
and taking a card from the table is what that message says.  The tests register it
(``tests/conftest.py``); nothing in service/ or cli/ names it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from google.protobuf.message import Message

from feastlog.replay.games import fold
from feastlog.replay.games.engine import (
    Engine,
    Fact,
    FactsByRow,
    MalformedCommand,
    Move,
    Option,
    Outcome,
    PackError,
    Projection,
    ProjectionTable,
    Rule,
    RuleViolation,
    Spec,
    Viewer,
    catalogue,
    pack_source,
)
from feastlog.replay.record.rng import Rng
from feastlog.v1 import picky_eaters_pb2 as pb
from tests.contract.kits import Kit

PACK = b'id = "high-card-52"\ncards = 52\n'
HAND = 8
SPEC = Spec(
    kind="high-card",
    title="High Card",
    rulebook="tests/highcard.py",
    min_seats=2,
    max_seats=6,
    seats_rule="HC-SEATS",
    end_rule="HC-END",
    turn_rules=("HC-TURN",),
    options_rule="HC-OPTIONS",
    ruleset_version="1",
    rulesets={"1": {"wins": "highest"}},
    options=(Option("wins", ("highest", "lowest"), "HC-OPTIONS", "HC-LOWEST"),),
    rng_labels=("high-card/deck",),
    rules=catalogue(
        Rule("HC-SEATS", "Seats", "High Card is for 2 to 6 players."),
        Rule("HC-OPTIONS", "Options", "The one option is wins: highest or lowest."),
        Rule("HC-DEAL", "Deal", "8 shuffled cards a seat and 2 lie face down.", refuses=False),
        Rule("HC-TURN", "Play", "Round and round in seat order, each seat takes one card."),
        Rule("HC-TAKE", "Play", "A seat takes a card still lying on the table."),
        Rule("HC-END", "End", "Once every seat holds 8 cards, nothing more is taken."),
        Rule("HC-HIGHEST", "End", "The seat holding the highest card wins.", refuses=False),
        Rule("HC-LOWEST", "Options", "Or the lowest (wins=lowest).", True, refuses=False),
    ),
    command_field="picky_eaters",
    command_type=pb.PickyEatersCommand,
)


@dataclass(frozen=True)
class HighCard:
    """The table: the card in each slot (0 once taken), each seat's cards."""

    slots: tuple[int, ...]
    held: tuple[tuple[int, ...], ...]
    lowest_wins: bool
    rng: Rng


@dataclass(frozen=True)
class Deck:
    """A pack: its id and how many cards the deck holds."""

    id: str
    cards: int


def load_pack(data: bytes) -> Deck:
    """The pack's id and size; PackError naming the bad field."""
    raw = pack_source(data)  # TOML with an id: every game's pack starts from it
    if not isinstance(raw.get("cards"), int) or not 50 <= raw["cards"] <= 99:
        raise PackError("(pack)", "cards", "cards is a whole number from 50 to 99")
    return Deck(raw["id"], raw["cards"])


def setup(
    seats: Sequence[str], options: Mapping[str, str], pack: Deck, rng: Rng, ruleset: str
) -> tuple[HighCard, list[Fact]]:
    """Shuffle the deck and lay 8 cards a seat and 2 face down (HC-DEAL)."""
    deck, rng = rng.shuffle("high-card/deck", list(range(1, pack.cards + 1)))
    slots = tuple(deck[: HAND * len(seats) + 2])
    state = HighCard(slots, ((),) * len(seats), options["wins"] == "lowest", rng)
    return state, [{"type": "dealt", "slots": len(slots)}]


def is_over(state: HighCard) -> bool:
    """Whether every seat holds 8 cards."""
    return all(len(cards) == HAND for cards in state.held)


def to_act(state: HighCard) -> frozenset[int]:
    """The first seat holding the fewest cards, while the game runs."""
    fewest = min(len(cards) for cards in state.held)
    waiting = [s for s, cards in enumerate(state.held) if len(cards) == fewest < HAND]
    return frozenset(waiting[:1])


def read_slot(state: HighCard, take: pb.PickyEatersTakeFromMarket) -> int:
    """The slot's index; MalformedCommand for a slot the table does not have."""
    number = take.card.removeprefix("slot-")
    if not (take.card.startswith("slot-") and number.isdigit()):
        raise MalformedCommand("take_from_market.card", f"{take.card!r} is not a slot")
    if not 1 <= int(number) <= len(state.slots):
        raise MalformedCommand("take_from_market.card", f"there is no {take.card}")
    return int(number) - 1


def still_there(state: HighCard, seat: int, slot: int) -> str | None:
    """HC-TAKE: the slot still holds a card."""
    return None if state.slots[slot] else f"the card of slot-{slot + 1} is taken"


def take(state: HighCard, seat: int, slot: int) -> tuple[HighCard, list[Fact]]:
    """The seat takes the card; it alone sees it until the end."""
    card = state.slots[slot]
    slots = tuple(0 if i == slot else c for i, c in enumerate(state.slots))
    held = tuple((*cards, card) if s == seat else cards for s, cards in enumerate(state.held))
    state = replace(state, slots=slots, held=held)
    facts: list[Fact] = [
        {"type": "took", "seat": seat, "slot": slot + 1},
        {"type": "card_seen", "seat": seat, "card": named(card), "private_to": seat},
    ]
    if is_over(state):
        result = outcome(state)
        facts.append({"type": "game_over", "best": list(result.points)})
        facts[-1]["winners"] = list(result.winners)
    return state, facts


def named(card: int) -> str:
    """A card as views and facts name it: "card-07" (a number alone tells no text apart)."""
    return f"card-{card:02d}"


def outcome(state: HighCard) -> Outcome:
    """HC-HIGHEST, HC-LOWEST: each seat's best card; the best of them wins."""
    if state.lowest_wins:  # points stay "more is better": the lowest card scores most
        points = tuple(100 - min(cards) for cards in state.held)
    else:
        points = tuple(max(cards) for cards in state.held)
    return Outcome(points, tuple(s for s, p in enumerate(points) if p == max(points)))


def view(state: HighCard, viewer: Viewer) -> dict[str, Any]:
    """Taken or face down; a seat's cards to itself (and the arbiter), all at the end."""
    over = is_over(state)
    out: dict[str, Any] = {
        "kind": "high-card",
        "over": over,
        "to_act": sorted(to_act(state)),
        "slots": ["face down" if c else "taken" for c in state.slots],
        "seats": [
            {"seat": s, "count": len(cards)}
            | ({"cards": [named(c) for c in cards]} if over or viewer.sees_seat(s) else {})
            for s, cards in enumerate(state.held)
        ],
    }
    if viewer.role == "arbiter" or over:
        out["deck"] = [named(c) if c else "taken" for c in state.slots]
    if over:
        result = outcome(state)
        out["scores"], out["winners"] = list(result.points), list(result.winners)
    return out


def legal(state: HighCard, seat: int) -> list[pb.PickyEatersCommand]:
    """Every slot still holding a card, sorted by the command's bytes."""
    out = [
        pb.PickyEatersCommand(take_from_market=pb.PickyEatersTakeFromMarket(card=f"slot-{i + 1}"))
        for i, rank in enumerate(state.slots)
        if rank
    ]
    return sorted(out, key=lambda c: c.SerializeToString(deterministic=True))


def narrate(fact: Fact, names: Sequence[str]) -> str | None:
    """One line a fact."""
    if fact["type"] == "took":
        return f"{names[fact['seat']]} takes the card of slot-{fact['slot']}."
    if fact["type"] == "game_over":
        return "Best: " + ", ".join(f"{n} {b}" for n, b in zip(names, fact["best"], strict=True))
    return None


def best_cards(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """outcome_high_cards: each seat's best card at the end, and whether it won."""
    return [
        [game_id, seat, best, seat in f["winners"]]
        for row in facts
        for f in row
        if f["type"] == "game_over"
        for seat, best in enumerate(f["best"])
    ]


ENGINE = Engine(
    spec=SPEC,
    prepare=setup,
    moves={"take_from_market": Move(read_slot, (("HC-TAKE", still_there),), take)},
    to_act=to_act,
    out_of_turn=lambda state, seat: RuleViolation("HC-TURN", f"it is not seat {seat}'s turn"),
    commands=legal,
    is_over=is_over,
    outcome=outcome,
    view=view,
    command_public=lambda command: True,
    narrate=narrate,
    load_pack=load_pack,
    default_pack_bytes=lambda: PACK,
    projection=Projection(
        (
            ProjectionTable(
                "outcome_high_cards",
                "game_id VARCHAR, seat INTEGER, best INTEGER, won BOOLEAN",
                best_cards,
            ),
        ),
        ("average winning card", "SELECT avg(best) FROM outcome_high_cards WHERE won"),
    ),
)


# -- its kit for the contract tests -----------------------------------------------------


def take_slot(slot: int) -> pb.PickyEatersCommand:
    """The command taking the card of ``slot-N``."""
    return pb.PickyEatersCommand(take_from_market=pb.PickyEatersTakeFromMarket(card=f"slot-{slot}"))


def refusals() -> dict[str, Callable[[], object]]:
    """One refused command or setup per refusing rule."""
    deck, rng = load_pack(PACK), Rng(bytes(32))
    start, _ = ENGINE.setup(("Ann", "Bob"), {}, deck, rng)
    taken, _ = fold.play(ENGINE, start, 0, take_slot(1))
    over = start
    for turn in range(2 * HAND):
        over, _ = fold.play(ENGINE, over, turn % 2, take_slot(turn + 1))
    return {
        "HC-SEATS": lambda: ENGINE.setup(("Ann",), {}, deck, rng),
        "HC-OPTIONS": lambda: ENGINE.setup(("Ann", "Bob"), {"wins": "middle"}, deck, rng),
        "HC-TURN": lambda: fold.play(ENGINE, start, 1, take_slot(1)),
        "HC-TAKE": lambda: fold.play(ENGINE, taken, 1, take_slot(1)),
        "HC-END": lambda: fold.play(ENGINE, over, 0, take_slot(2 * HAND + 1)),
    }


def commands(table: fold.Table, legal: list[Any], rng: random.Random) -> Iterator[Message]:
    """Every slot of the table, taken or not."""
    for slot in range(len(table.game.slots)):
        yield take_slot(slot + 1)


KIT = Kit(2, refusals, commands, "test_fourth_game.py")
