"""Bon Appetit!: the rules engine (rulebook: shared/rulebooks/bon-appetit.txt).

Facts first:
- 2-4 players; 13 Dish Cards (12 auctioned, 1 removed unseen); 20 gems, 5 per colour
  (blue, green, red, yellow): 4 sit on the Gem Card as markers, 16 go in the bag (12 with
  2 players: 3 per colour; the other 4 stay in the box and are not counted).
- 12 rounds.  Each round: New Dish, sealed simultaneous Bids (``Bid``), tie-break rounds
  among the tied (``TieBreakBid``), Gem Value Adjustment, Cleanup draws.
- Hidden information: the gems in hand (their number is public, BA-I8), sealed bids until
  revealed, the deck order and the dish removed unseen.

RNG labels, in the order they are first consumed:
1. ``bon-appetit/gem-card``: the four marker gems (blue, green, red, yellow) are drawn one
   by one from a bag of one per colour (``Rng.draw``); the k-th drawn is worth k.
2. ``bon-appetit/dish-deck``: ``shuffle`` of the pack's 13 dishes in file order; index 0
   is removed unseen, 1..3 are laid in the Menu row with the first drawn rightmost
   (BA-I11), 4.. are the deck, drawn from the front.
3. ``bon-appetit/bag``: every draw from the bag (``Rng.draw``): the starting hands, seat by
   seat in seat order, all of a seat's gems before the next seat's; later the cleanup draws.
4. ``bon-appetit/first-seat``: ``uniform(n)`` when option first_seat is "random".

Options: ``first_seat`` ("random" or a seat number), ``gem_ability`` ("per_bid" default or
"per_gem", BA-I3), ``tie_break_value`` ("alone" default or "cumulative": a tie-break bid
is valued together with the gems the seat already has on the table, BA-I1), ``max_bid``
("rulebook" default: 0-3 gems, 0-4 of at most 3 colours with 2 players; or "four": 0-4
gems of at most 3 colours at any player count, as the Fugu Platter example shows, BA-I13).

A seat with no gem in hand sends nothing: its bid of 0 is sealed automatically (BA-I9).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from google.protobuf.message import Message

from feastlog.v1 import bon_appetit_pb2 as pb
from replay import bon_appetit_pack as packs
from replay.bon_appetit_catalogue import RULES
from replay.bon_appetit_pack import COLOURS, Dish, Pack
from replay.bon_appetit_rules import (
    BAG_LABEL,
    KIND,
    Auction,
    Player,
    State,
    dish_card,
    draw_gem,
    held,
    seal,
    standings,
    start_round,
    values_of,
)
from replay.engine import Fact, MalformedCommand, Outcome, Rule, RuleViolation, Viewer
from replay.rng import Rng

GEM_CARD_LABEL = f"{KIND}/gem-card"
DISH_DECK_LABEL = f"{KIND}/dish-deck"
FIRST_SEAT_LABEL = f"{KIND}/first-seat"
RNG_LABELS = (GEM_CARD_LABEL, DISH_DECK_LABEL, BAG_LABEL, FIRST_SEAT_LABEL)
OPTION_DEFAULTS: Mapping[str, str] = {
    "first_seat": "random",
    "gem_ability": "per_bid",
    "tie_break_value": "alone",
    "max_bid": "rulebook",
}
# Ruleset versions this build folds, each with its option defaults (one so far).
RULESET = "1"
RULESETS: Mapping[str, Mapping[str, str]] = {"1": OPTION_DEFAULTS}
OPTION_CHOICES = {
    "gem_ability": ("per_bid", "per_gem"),
    "tie_break_value": ("alone", "cumulative"),
    "max_bid": ("rulebook", "four"),
}
OPTION_RULES = {
    "first_seat": "BA-SETUP-FIRST",
    "gem_ability": "BA-I3",
    "tie_break_value": "BA-I1",
    "max_bid": "BA-I13",
}
GEM_OF_ENUM = {
    pb.BON_APPETIT_GEM_BLUE: "blue",
    pb.BON_APPETIT_GEM_GREEN: "green",
    pb.BON_APPETIT_GEM_RED: "red",
    pb.BON_APPETIT_GEM_YELLOW: "yellow",
}
ENUM_OF_GEM = {colour: enum for enum, colour in GEM_OF_ENUM.items()}
BID_CHECKS = ("BA-END", "BA-PHASES", "BA-TURN", "BA-BID-SIZE", "BA-BID-COLOURS", "BA-BID-OWN")
TIE_CHECKS = ("BA-END", "BA-PHASES", "BA-TURN", "BA-BID-OWN")


def hand_size(seats: int) -> int:
    """Starting gems per player: 5 with 2-3 players, 4 with 4."""
    return 4 if seats == 4 else 5


def bid_limit(state: State) -> int:
    """Most gems in an initial bid: 3, or 4 with 2 players (or with option max_bid=four)."""
    return 4 if len(state.players) == 2 or state.max_bid == "four" else 3


def starting_bag(seats: int) -> tuple[str, ...]:
    """The bag after the Gem Card is set: 4 per colour, or 3 per colour with 2 players."""
    per_colour = 3 if seats == 2 else 4
    return tuple(sorted(c for c in COLOURS for _ in range(per_colour)))


def _options(seats: int, options: Mapping[str, str]) -> dict[str, str]:
    """The options with defaults filled in, each checked."""
    merged = {**OPTION_DEFAULTS, **options}
    for name, value in merged.items():
        rule = OPTION_RULES.get(name)
        if rule is None:
            raise RuleViolation("BA-OPTIONS", f"Bon Appetit! has no option {name!r}")
        if name == "first_seat":
            ok = value == "random" or (value.isdigit() and int(value) < seats)
        else:
            ok = value in OPTION_CHOICES[name]
        if not ok:
            raise RuleViolation("BA-OPTIONS", f"option {name} cannot be {value!r} ({rule})")
    return merged


def setup(
    seats: Sequence[str],
    options: Mapping[str, str],
    pack: Pack,
    rng: Rng,
    ruleset: str = RULESET,
) -> tuple[State, list[Fact]]:
    """Gem Card, dishes, bag, starting hands, starting player; then round 1 begins."""
    if ruleset not in RULESETS:
        raise ValueError(f"Bon Appetit! has no ruleset {ruleset!r}")
    if not 2 <= len(seats) <= 4:
        raise RuleViolation("BA-SEATS", f"Bon Appetit! is for 2 to 4 players, not {len(seats)}")
    chosen = _options(len(seats), options)
    markers: tuple[str, ...] = COLOURS
    order = []
    for _ in COLOURS:
        colour, markers, rng = rng.draw(GEM_CARD_LABEL, markers)
        order.append(colour)
    gem_values = tuple(order.index(c) + 1 for c in COLOURS)
    deck, rng = rng.shuffle(DISH_DECK_LABEL, pack.dishes)
    menu_row = tuple(reversed(deck[1:4]))
    facts: list[Fact] = [
        {"type": "gem_card_set", "order": order, "gem_values": values_of(gem_values)},
        {
            "type": "dishes_prepared",
            "menu_row": [d.name for d in menu_row],
            "deck_count": len(deck) - 4,
            "removed_unseen": 1,
        },
    ]
    state = State(
        players=tuple(Player(name, ()) for name in seats),
        gem_ability=chosen["gem_ability"],
        tie_break_value=chosen["tie_break_value"],
        max_bid=chosen["max_bid"],
        gem_values=gem_values,
        bag=starting_bag(len(seats)),
        deck=deck[4:],
        menu_row=menu_row,
        set_aside=deck[:1],
        removed=(),
        round=0,
        first_seat=0,
        last_winner=None,
        auction=None,
        over=False,
        rng=rng,
    )
    facts.append({"type": "bag_filled", "count": len(state.bag)})
    for seat in range(len(seats)):
        for _ in range(hand_size(len(seats))):
            state, more = draw_gem(state, seat, "setup")
            facts += more
    if chosen["first_seat"] == "random":
        first, rng = state.rng.uniform(FIRST_SEAT_LABEL, len(seats))
        state = replace(state, first_seat=first, rng=rng)
    else:
        state = replace(state, first_seat=int(chosen["first_seat"]))
    facts.append({"type": "first_player", "seat": state.first_seat, "how": chosen["first_seat"]})
    state, more = start_round(state)
    return state, facts + more


def _gems(command: pb.BonAppetitCommand) -> tuple[str, tuple[str, ...]]:
    """The action's name and its gems as colours; MalformedCommand for nonsense."""
    which = command.WhichOneof("action")
    if which is None:
        raise MalformedCommand("action", "the command holds neither a bid nor a tie-break bid")
    raw = command.bid.gems if which == "bid" else command.tie_break_bid.gems
    gems = []
    for value in raw:
        if value not in GEM_OF_ENUM:
            raise MalformedCommand(f"{which}.gems", f"{value} is not a gem colour")
        gems.append(GEM_OF_ENUM[value])
    return which, tuple(sorted(gems))


def _names(colours: Sequence[str]) -> str:
    """Gems in words: "2 blue and 1 yellow"."""
    counts = [f"{colours.count(c)} {c}" for c in COLOURS if c in colours]
    if not counts:
        return "no gems"
    return counts[0] if len(counts) == 1 else ", ".join(counts[:-1]) + " and " + counts[-1]


def apply(state: State, seat: int, command: pb.BonAppetitCommand) -> tuple[State, list[Fact]]:
    """Check a bid or a tie-break bid in the order of ``checks`` and apply it."""
    which, gems = _gems(command)
    if not 0 <= seat < len(state.players):
        raise MalformedCommand("seat", f"there is no seat {seat} in this game")
    name = state.players[seat].name
    if state.over or state.auction is None:
        raise RuleViolation("BA-END", "the game is over: every dish has been bid for")
    auction = state.auction
    dish = auction.dish.name
    if which == "bid" and auction.tie_round:
        raise RuleViolation(
            "BA-PHASES",
            f"the bids for the {dish} are revealed; the tied players now send a tie-break bid",
        )
    if which == "tie_break_bid" and not auction.tie_round:
        raise RuleViolation("BA-PHASES", f"no one is tied for the {dish}: send a bid")
    if seat not in auction.bidders:
        tied = " and ".join(state.players[s].name for s in auction.bidders)
        raise RuleViolation("BA-TURN", f"{name} is not tied for the {dish}; only {tied} bid again")
    if any(s == seat for s, _ in auction.sealed):
        raise RuleViolation("BA-TURN", f"{name} has already sealed a bid for the {dish}")
    if which == "bid":
        limit = bid_limit(state)
        if len(gems) > limit:
            raise RuleViolation(
                "BA-BID-SIZE", f"{name} bids {len(gems)} gems; a bid holds at most {limit}"
            )
        if limit == 4 and len(set(gems)) > 3:
            raise RuleViolation(
                "BA-BID-COLOURS", f"{name} bids 4 colours; a bid of up to 4 gems holds at most 3"
            )
    hand = state.players[seat].hand
    for colour in COLOURS:
        if gems.count(colour) > hand.count(colour):
            have = hand.count(colour)
            raise RuleViolation(
                "BA-BID-OWN",
                f"{name} has no {colour} gem to bid"
                if not have
                else f"{name} has only {have} {colour} gem{'' if have == 1 else 's'} to bid, "
                f"not {gems.count(colour)}",
            )
    return seal(state, seat, gems)


def checks(command: pb.BonAppetitCommand) -> tuple[str, ...]:
    """The rule ids ``apply`` checks for this kind of command, in order."""
    return TIE_CHECKS if command.WhichOneof("action") == "tie_break_bid" else BID_CHECKS


def to_act(state: State) -> frozenset[int]:
    """The bidders who have not sealed their bid yet."""
    if state.over or state.auction is None:
        return frozenset()
    done = {s for s, _ in state.auction.sealed}
    return frozenset(s for s in state.auction.bidders if s not in done)


def _command(which: str, gems: Sequence[str]) -> pb.BonAppetitCommand:
    """A command message from colours."""
    enums = [ENUM_OF_GEM[g] for g in gems]
    if which == "bid":
        return pb.BonAppetitCommand(bid=pb.BonAppetitBid(gems=enums))
    return pb.BonAppetitCommand(tie_break_bid=pb.BonAppetitTieBreakBid(gems=enums))


def legal_commands(state: State, seat: int) -> list[pb.BonAppetitCommand]:
    """Every legal bid (all sub-multisets of the hand that fit), sorted by their bytes."""
    if seat not in to_act(state):
        return []
    auction = state.auction
    assert auction is not None
    hand = state.players[seat].hand
    which = "tie_break_bid" if auction.tie_round else "bid"
    ranges = [range(hand.count(c) + 1) for c in COLOURS]
    out = []
    for counts in itertools.product(*ranges):
        gems = [c for c, k in zip(COLOURS, counts, strict=True) for _ in range(k)]
        if which == "bid":
            if len(gems) > bid_limit(state):
                continue
            if sum(1 for k in counts if k) > 3:
                continue
        out.append(_command(which, gems))
    return sorted(out, key=lambda m: m.SerializeToString(deterministic=True))


def is_over(state: State) -> bool:
    """Whether the twelfth dish has been bid for."""
    return state.over


def outcome(state: State) -> Outcome:
    """Points on won dishes; the tie-break is the worth of the gems left (BA-I7)."""
    points, worth, winners = standings(state)
    return Outcome(points, winners, worth)


def _phase(state: State) -> str:
    """The phase in words for views."""
    if state.over or state.auction is None:
        return "over"
    return "tie_break" if state.auction.tie_round else "bidding"


def _seat_view(state: State, seat: int, viewer: Viewer) -> dict[str, Any]:
    """One seat as ``viewer`` may see it."""
    player = state.players[seat]
    auction = state.auction
    out: dict[str, Any] = {
        "seat": seat,
        "name": player.name,
        "gem_count": held(state, seat),
        "dishes": [dish_card(d) for d in player.dishes],
        "points": sum(d.points for d in player.dishes),
    }
    if auction is not None:
        sealed = dict(auction.sealed)
        out["bidding"] = seat in auction.bidders
        out["has_bid"] = seat in sealed
        out["on_table"] = list(auction.table[seat])
        if viewer.sees_seat(seat) and seat in sealed:
            out["sealed_bid"] = list(sealed[seat])
    if viewer.sees_seat(seat) or state.over:
        out["hand"] = list(player.hand)
    return out


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """The table as ``viewer`` may see it; the arbiter also sees deck, bag and set-aside."""
    auction: Auction | None = state.auction
    out: dict[str, Any] = {
        "kind": KIND,
        "round": state.round,
        "rounds": 12,
        "phase": _phase(state),
        "over": state.over,
        "to_act": sorted(to_act(state)),
        "gem_values": values_of(state.gem_values),
        "menu_row": [dish_card(d) for d in state.menu_row],
        "dish": dish_card(auction.dish) if auction else None,
        "tie_round": auction.tie_round if auction else 0,
        "deck_count": len(state.deck),
        "bag_count": len(state.bag),
        "removed": [d.name for d in state.removed],
        "removed_unseen": len(state.set_aside),
        "first_seat": state.first_seat,
        "last_winner": state.last_winner,
        "options": {
            "gem_ability": state.gem_ability,
            "tie_break_value": state.tie_break_value,
            "max_bid": state.max_bid,
        },
        "seats": [_seat_view(state, s, viewer) for s in range(len(state.players))],
    }
    if viewer.role == "arbiter" or state.over:
        out["deck"] = [d.name for d in state.deck]
        out["set_aside"] = [d.name for d in state.set_aside]
        out["bag"] = list(state.bag)
    if state.over:
        points, worth, winners = standings(state)
        out["scores"] = list(points)
        out["gem_worth"] = list(worth)
        out["winners"] = list(winners)
    return out


def command_public(command: Message) -> bool:
    """Bids and tie-break bids are sealed: never shown before the game ends."""
    return False


def _bid_line(bid: Fact, names: Sequence[str]) -> str:
    """One bid of a reveal in words, with its breakdown."""
    gems = bid["gems"]
    if not gems:
        return f"{names[bid['seat']]} 0 (no gems)"
    parts = [f"{_names(gems)} = {bid['base']}"]
    parts += [f"+{a['bonus']} {a['colour']} ({a['dish']})" for a in bid["gem_abilities"]]
    parts += [f"+{a['bonus']} for {a['for']} ({a['dish']})" for a in bid["dish_abilities"]]
    return f"{names[bid['seat']]} {' '.join(parts)} -> {bid['total']}"


def _values(values: Mapping[str, int]) -> str:
    """The Gem Card in words."""
    return ", ".join(f"{c} {values[c]}" for c in COLOURS)


def narrate(fact: Fact, names: Sequence[str]) -> str | None:
    """One line of plain English for a fact, or None."""
    kind = fact["type"]
    who = names[fact["seat"]] if "seat" in fact and isinstance(fact["seat"], int) else ""
    if kind == "gem_card_set":
        return f"The Gem Card is set: {_values(fact['gem_values'])}."
    if kind == "dishes_prepared":
        return f"One dish is removed unseen; the Menu row shows {', '.join(fact['menu_row'])}."
    if kind == "first_player":
        return f"{who} is the starting player."
    if kind == "round_started":
        dish = fact["dish"]
        return (
            f"Round {fact['round']}: the {dish['name']} ({dish['type']}, {dish['points']} "
            f"points; {dish['ability']}) is up for auction."
        )
    if kind == "bid_sealed":
        extra = " (no gems in hand)" if fact["automatic"] else ""
        return f"{who} seals a bid{extra}."
    if kind == "bids_revealed":
        label = "Tie-break bids" if fact["tie_round"] else "Bids"
        line = f"{label} revealed: " + "; ".join(_bid_line(b, names) for b in fact["bids"]) + "."
        if fact.get("all_zero"):
            line += " No tied player adds a gem." if fact["tie_round"] else " Every bid is 0."
        elif fact["tied"]:
            line += (
                f" Tied at {fact['highest']}: " + ", ".join(names[s] for s in fact["tied"]) + "."
            )
        return line
    if kind == "tie_break_started":
        return (
            f"Tie-break round {fact['tie_round']}: "
            + " and ".join(names[s] for s in fact["seats"])
            + " bid again."
        )
    if kind == "dish_won":
        return f"{who} wins the {fact['dish']['name']}, paying {_names(fact['paid'])}."
    if kind == "dish_removed":
        return f"No one wins the {fact['dish']['name']} ({fact['why']}): it is removed."
    if kind == "gem_values_changed":
        return f"Gem values now: {_values(fact['after'])} (were {_values(fact['before'])})."
    if kind == "drew" and fact["reason"] == "cleanup":
        return f"{who} draws a gem from the bag."
    if kind == "cleanup" and fact["missed"]:
        return "The bag is empty: " + ", ".join(names[s] for s in fact["missed"]) + " draw nothing."
    if kind == "game_over":
        scores = ", ".join(f"{names[s]} {p}" for s, p in enumerate(fact["points"]))
        won = " and ".join(names[s] for s in fact["winners"])
        how = {"points": "", "gems": " on the gems left", "shared": " (shared victory)"}
        return (
            f"Game over: {scores}. {won} win{'s' if len(fact['winners']) == 1 else ''}"
            f"{how[fact['decided_by']]}."
        )
    return None


class BonAppetitEngine:
    """The Engine object of Bon Appetit!; methods delegate to the module's functions."""

    kind = KIND
    title = "Bon Appetit!"
    ruleset_version = RULESET
    rulesets = RULESETS
    min_seats = 2
    max_seats = 4
    seats_rule = "BA-SEATS"
    end_rule = "BA-END"
    rules: Mapping[str, Rule] = RULES
    rng_labels = RNG_LABELS
    option_defaults = OPTION_DEFAULTS
    command_field = "bon_appetit"

    def default_pack_bytes(self) -> bytes:
        """The bundled pack file."""
        return packs.default_pack_bytes()

    def load_pack(self, data: bytes) -> Pack:
        """Parse and validate a pack."""
        return packs.load_pack(data)

    def setup(
        self,
        seats: Sequence[str],
        options: Mapping[str, str],
        pack: Pack,
        rng: Rng,
        ruleset: str = RULESET,
    ) -> tuple[State, list[Fact]]:
        """The state after setup and round 1's new dish."""
        return setup(seats, options, pack, rng, ruleset)

    def apply(self, state: State, seat: int, command: Message) -> tuple[State, list[Fact]]:
        """Check and apply a command."""
        if not isinstance(command, pb.BonAppetitCommand):
            raise MalformedCommand("command", "not a Bon Appetit! command")
        return apply(state, seat, command)

    def to_act(self, state: State) -> frozenset[int]:
        """Seats that may bid now."""
        return to_act(state)

    def legal_commands(self, state: State, seat: int) -> list[Message]:
        """Every legal command for ``seat``."""
        return list(legal_commands(state, seat))

    def is_over(self, state: State) -> bool:
        """Whether the game has ended."""
        return is_over(state)

    def outcome(self, state: State) -> Outcome:
        """Points, winners and the gem tie-break."""
        return outcome(state)

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """The state as ``viewer`` may see it."""
        return view(state, viewer)

    def command_public(self, command: Message) -> bool:
        """Sealed: False."""
        return command_public(command)

    def narrate(self, fact: Fact, names: Sequence[str]) -> str | None:
        """One line for a fact."""
        return narrate(fact, names)

    def checks(self, command: Message) -> tuple[str, ...]:
        """Rule ids checked for this command, in order."""
        if not isinstance(command, pb.BonAppetitCommand):
            return ()
        return checks(command)


ENGINE = BonAppetitEngine()

__all__ = ["ENGINE", "RULES", "Dish", "State"]
