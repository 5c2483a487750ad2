"""Bon Appetit!: the state of a game, and small pure helpers on it.

Everything here is pure: functions take a ``State`` and return values; the automatic steps
of a round are in ``flow``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from feastlog.replay.games.bon_appetit.pack import COLOURS, Dish, describe_ability
from feastlog.replay.games.engine import Fact
from feastlog.replay.record.rng import Rng

MARKER_GEMS = len(COLOURS)  # one gem of each colour sits on the Gem Card


@dataclass(frozen=True)
class Player:
    """A seat: name, the gems in hand (sorted colours) and the dishes won."""

    name: str
    hand: tuple[str, ...]
    dishes: tuple[Dish, ...] = ()


@dataclass(frozen=True)
class Auction:
    """The auction of the dish in the middle of the table."""

    dish: Dish
    tie_round: int  # 0 for the initial bidding, k for the k-th tie-break round
    bidders: tuple[int, ...]  # the seats bidding in this round: all, or the tied
    sealed: tuple[tuple[int, tuple[str, ...]], ...] = ()  # (seat, gems), not yet revealed
    table: tuple[tuple[str, ...], ...] = ()  # per seat: revealed gems lying on the table
    initial: tuple[tuple[str, ...], ...] | None = None  # per seat: the initial bid, revealed


@dataclass(frozen=True)
class State:
    """The whole game: seats, Gem Card, bag, dishes, the auction and the Rng."""

    players: tuple[Player, ...]
    gem_ability: str  # "per_bid" or "per_gem" (BA-I3)
    tie_break_value: str  # "alone" or "cumulative" (BA-I1)
    max_bid: str  # "rulebook" or "four" (BA-I13)
    gem_values: tuple[int, ...]  # by COLOURS
    bag: tuple[str, ...]
    deck: tuple[Dish, ...]
    menu_row: tuple[Dish, ...]  # left to right; the rightmost is auctioned next
    set_aside: tuple[Dish, ...]  # removed unseen at setup
    removed: tuple[Dish, ...]  # removed during play, face up
    round: int
    first_seat: int
    last_winner: int | None
    auction: Auction | None
    over: bool
    rng: Rng


def values_of(gem_values: Sequence[int]) -> dict[str, int]:
    """The Gem Card as a colour -> value mapping."""
    return dict(zip(COLOURS, gem_values, strict=True))


def gem_count(state: State) -> int:
    """All gems in play: bag, hands, bids sealed or on the table, and the Gem Card markers."""
    total = len(state.bag) + MARKER_GEMS + sum(len(p.hand) for p in state.players)
    if state.auction is not None:
        total += sum(len(g) for _, g in state.auction.sealed)
        total += sum(len(g) for g in state.auction.table)
    return total


def held(state: State, seat: int) -> int:
    """The gems a seat holds in both hands (sealed bid included): the public hand size."""
    sealed = state.auction.sealed if state.auction else ()
    return len(state.players[seat].hand) + sum(len(g) for s, g in sealed if s == seat)


def dish_card(dish: Dish) -> Fact:
    """A dish as facts and views show it."""
    return {
        "name": dish.name,
        "type": dish.type,
        "points": dish.points,
        "ability": describe_ability(dish.ability),
    }


def bid_limit(state: State) -> int:
    """Most gems in an initial bid: 3, or 4 with 2 players (or with option max_bid=four)."""
    return 4 if len(state.players) == 2 or state.max_bid == "four" else 3


def bid_value(state: State, seat: int, gems: Sequence[str], dish: Dish) -> Fact:
    """A bid's value with its breakdown: gem values, gem abilities, dish abilities, total."""
    values = values_of(state.gem_values)
    base = sum(values[g] for g in gems)
    gem_abilities: list[Fact] = []
    dish_abilities: list[Fact] = []
    for owned in state.players[seat].dishes:
        ability = owned.ability
        count = sum(1 for g in gems if g == ability.target)
        if ability.kind == "gem" and count:
            times = count if state.gem_ability == "per_gem" else 1
            gem_abilities.append(
                {"dish": owned.name, "colour": ability.target, "bonus": ability.bonus * times}
            )
        hits = (ability.kind == "dish_type" and dish.type == ability.target) or (
            ability.kind == "dish_name" and dish.name == ability.target
        )
        if hits and gems:
            dish_abilities.append(
                {"dish": owned.name, "for": ability.target, "bonus": ability.bonus}
            )
    total = base + sum(a["bonus"] for a in gem_abilities + dish_abilities)
    return {
        "seat": seat,
        "gems": list(gems),
        "gem_values": {c: values[c] for c in sorted(set(gems))},
        "base": base,
        "gem_abilities": gem_abilities,
        "dish_abilities": dish_abilities,
        "total": total,
    }
