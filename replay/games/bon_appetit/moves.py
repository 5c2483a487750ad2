"""Bon Appetit!: who bids, and the two moves, a bid and a tie-break bid.

Each move's checks run in the order listed, after the fold's generic ones (game over:
BA-END; seat to act: BA-TURN, see ``out_of_turn``).
"""

from __future__ import annotations

from collections.abc import Sequence

from feastlog.replay.games.bon_appetit.flow import seal
from feastlog.replay.games.bon_appetit.pack import COLOURS
from feastlog.replay.games.bon_appetit.state import State, bid_limit
from feastlog.replay.games.engine import MalformedCommand, Move, RuleViolation, how_many, in_words
from feastlog.replay.games.enums import not_a_value
from feastlog.v1 import bon_appetit_pb2 as pb

Gems = tuple[str, ...]

GEM_OF_ENUM: dict[int, str] = {
    pb.BON_APPETIT_GEM_BLUE: "blue",
    pb.BON_APPETIT_GEM_GREEN: "green",
    pb.BON_APPETIT_GEM_RED: "red",
    pb.BON_APPETIT_GEM_YELLOW: "yellow",
}
ENUM_OF_GEM = {colour: pb.BonAppetitGem.ValueType(enum) for enum, colour in GEM_OF_ENUM.items()}


def to_act(state: State) -> frozenset[int]:
    """The bidders who have not sealed their bid yet."""
    if state.over or state.auction is None:
        return frozenset()
    done = {s for s, _ in state.auction.sealed}
    return frozenset(s for s in state.auction.bidders if s not in done)


def out_of_turn(state: State, seat: int) -> RuleViolation:
    """BA-TURN: the seat is not tied for the dish, or has sealed its bid already."""
    auction = state.auction
    assert auction is not None  # the game is running
    name = state.players[seat].name if 0 <= seat < len(state.players) else f"seat {seat}"
    dish = auction.dish.name
    if seat in auction.bidders:
        if not state.players[seat].hand and (seat, ()) in auction.sealed:
            # BA-I9 sealed it: the seat sent nothing, so "already sealed" would puzzle it
            return RuleViolation(
                "BA-TURN", f"{name} has no gems to bid: a bid of 0 was sealed for the {dish}"
            )
        return RuleViolation("BA-TURN", f"{name} has already sealed a bid for the {dish}")
    tied = in_words([state.players[s].name for s in auction.bidders])
    return RuleViolation("BA-TURN", f"{name} is not tied for the {dish}; only {tied} bid again")


def _colours(raw: Sequence[int], field: str) -> Gems:
    """Gem enums as sorted colours; MalformedCommand for a value that is no colour."""
    gems = []
    for value in raw:
        if value not in GEM_OF_ENUM:
            raise MalformedCommand(
                field, not_a_value(pb.BonAppetitGem.DESCRIPTOR, value, "a gem colour")
            )
        gems.append(GEM_OF_ENUM[value])
    return tuple(sorted(gems))


def read_bid(state: State, bid: pb.BonAppetitBid) -> Gems:
    """A bid's gems as colours."""
    return _colours(bid.gems, "bid.gems")


def read_tie_break(state: State, bid: pb.BonAppetitTieBreakBid) -> Gems:
    """A tie-break bid's gems as colours."""
    return _colours(bid.gems, "tie_break_bid.gems")


def _dish(state: State) -> str:
    assert state.auction is not None  # the game is running
    return state.auction.dish.name


def bidding_phase(state: State, seat: int, gems: Gems) -> str | None:
    """BA-PHASES: an initial bid belongs to the bidding, before any tie-break round."""
    if state.auction is not None and state.auction.tie_round:
        return (
            f"the bids for the {_dish(state)} are revealed; the tied players now send a "
            "tie-break bid"
        )
    return None


def tie_break_phase(state: State, seat: int, gems: Gems) -> str | None:
    """BA-PHASES: a tie-break bid belongs to a tie-break round."""
    if state.auction is not None and not state.auction.tie_round:
        return f"no one is tied for the {_dish(state)}: send a bid"
    return None


def bid_size(state: State, seat: int, gems: Gems) -> str | None:
    """BA-BID-SIZE: at most 3 gems (4 with 2 players, or with option max_bid=four)."""
    limit = bid_limit(state)
    if len(gems) > limit:
        name = state.players[seat].name
        return f"{name} bids {len(gems)} gems; a bid holds at most {limit}"
    return None


def bid_colours(state: State, seat: int, gems: Gems) -> str | None:
    """BA-BID-COLOURS: a bid of up to 4 gems holds at most 3 colours."""
    if bid_limit(state) == 4 and len(set(gems)) > 3:
        name = state.players[seat].name
        return f"{name} bids 4 colours; a bid of up to 4 gems holds at most 3"
    return None


def own_gems(state: State, seat: int, gems: Gems) -> str | None:
    """BA-BID-OWN: every gem bid is in the bidder's hand."""
    name, hand = state.players[seat].name, state.players[seat].hand
    for colour in COLOURS:
        if gems.count(colour) > hand.count(colour):
            have = hand.count(colour)
            if not have:
                return f"{name} has no {colour} gem to bid"
            only = how_many(have, f"{colour} gem")
            return f"{name} has only {only} to bid, not {gems.count(colour)}"
    return None


MOVES = {
    "bid": Move(
        read_bid,
        (
            ("BA-PHASES", bidding_phase),
            ("BA-BID-SIZE", bid_size),
            ("BA-BID-COLOURS", bid_colours),
            ("BA-BID-OWN", own_gems),
        ),
        seal,
    ),
    "tie_break_bid": Move(
        read_tie_break,
        (("BA-PHASES", tie_break_phase), ("BA-BID-OWN", own_gems)),
        seal,
    ),
}
