"""Bon Appetit!: setup, the automatic steps of a round, and scoring.

Each function takes a ``State`` and returns a new one with the facts of what happened:
sealing a bid triggers the reveal once every bidder has sealed, the reveal the auction's
end (a winner, a tie-break round or a removed dish), the end of a round the Cleanup draws
and the next dish, and the twelfth dish the scoring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from feastlog.replay.games.bon_appetit.pack import COLOURS, Pack
from feastlog.replay.games.bon_appetit.spec import (
    BAG_LABEL,
    DISH_DECK_LABEL,
    FIRST_SEAT_LABEL,
    GEM_CARD_LABEL,
)
from feastlog.replay.games.bon_appetit.state import (
    Auction,
    Player,
    State,
    bid_value,
    dish_card,
    values_of,
)
from feastlog.replay.games.engine import Fact, Outcome, evolve
from feastlog.replay.record.rng import Rng


def hand_size(seats: int) -> int:
    """Starting gems per player: 5 with 2-3 players, 4 with 4."""
    return 4 if seats == 4 else 5


def starting_bag(seats: int) -> tuple[str, ...]:
    """The bag after the Gem Card is set: 4 per colour, or 3 per colour with 2 players."""
    per_colour = 3 if seats == 2 else 4
    return tuple(sorted(c for c in COLOURS for _ in range(per_colour)))


def setup(
    seats: Sequence[str],
    options: Mapping[str, str],
    pack: Pack,
    rng: Rng,
    ruleset: str,
) -> tuple[State, list[Fact]]:
    """Gem Card, dishes, bag, starting hands, starting player; then round 1 begins."""
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
        gem_ability=options["gem_ability"],
        tie_break_value=options["tie_break_value"],
        max_bid=options["max_bid"],
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
    if options["first_seat"] == "random":
        first, rng = state.rng.uniform(FIRST_SEAT_LABEL, len(seats))
        state = evolve(state, first_seat=first, rng=rng)
    else:
        state = evolve(state, first_seat=int(options["first_seat"]))
    facts.append({"type": "first_player", "seat": state.first_seat, "how": options["first_seat"]})
    state, more = start_round(state)
    return state, facts + more


def start_round(state: State) -> tuple[State, list[Fact]]:
    """New Dish Phase: the rightmost Menu card goes to the middle; the row slides and refills."""
    dish, row = state.menu_row[-1], state.menu_row[:-1]
    deck = state.deck
    if deck:
        row, deck = (deck[0], *row), deck[1:]
    seats = tuple(range(len(state.players)))
    auction = Auction(dish, 0, seats, table=tuple(() for _ in seats))
    state = evolve(state, round=state.round + 1, menu_row=row, deck=deck, auction=auction)
    fact: Fact = {
        "type": "round_started",
        "round": state.round,
        "dish": dish_card(dish),
        "menu_row": [d.name for d in row],
        "deck_left": len(deck),
    }
    state, more = auto_bids(state)
    return state, [fact, *more]


def _put(state: State, seat: int, gems: tuple[str, ...], automatic: bool) -> tuple[State, Fact]:
    """The gems leave the hand for the closed fist; the fact says only that a bid is in."""
    auction = state.auction
    assert auction is not None
    hand = list(state.players[seat].hand)
    for gem in gems:
        hand.remove(gem)
    player = evolve(state.players[seat], hand=tuple(hand))
    players = tuple(player if i == seat else p for i, p in enumerate(state.players))
    sealed = tuple(sorted((*auction.sealed, (seat, tuple(sorted(gems))))))
    state = evolve(state, players=players, auction=evolve(auction, sealed=sealed))
    return state, {
        "type": "bid_sealed",
        "round": state.round,
        "seat": seat,
        "tie_round": auction.tie_round,
        "automatic": automatic,
    }


def _complete(state: State, facts: list[Fact]) -> tuple[State, list[Fact]]:
    """Reveal once every bidder of the bidding round has sealed a bid (BA-REVEAL)."""
    auction = state.auction
    assert auction is not None
    if len(auction.sealed) < len(auction.bidders):
        return state, facts
    state, more = reveal(state)
    return state, facts + more


def seal(state: State, seat: int, gems: tuple[str, ...]) -> tuple[State, list[Fact]]:
    """A seat seals its bid; the last bid in triggers the reveal and what follows."""
    state, fact = _put(state, seat, gems, automatic=False)
    return _complete(state, [fact])


def auto_bids(state: State) -> tuple[State, list[Fact]]:
    """BA-I9: bidders with no gem in hand seal an empty bid at once."""
    auction = state.auction
    assert auction is not None
    facts: list[Fact] = []
    for seat in auction.bidders:
        if not state.players[seat].hand:
            state, fact = _put(state, seat, (), automatic=True)
            facts.append(fact)
    return _complete(state, facts)


def reveal(state: State) -> tuple[State, list[Fact]]:
    """All bids are in: reveal them, value them, and find the winner, a tie or no winner."""
    auction = state.auction
    assert auction is not None
    table = list(auction.table)
    bids = []
    for seat, gems in auction.sealed:
        counted = gems
        if auction.tie_round and state.tie_break_value == "cumulative":
            counted = tuple(sorted(table[seat] + gems))
        bids.append(bid_value(state, seat, counted, auction.dish))
        table[seat] = table[seat] + gems
    totals = {b["seat"]: b["total"] for b in bids}
    top = max(totals.values())
    tied = [s for s, t in totals.items() if t == top]
    initial = auction.initial
    if auction.tie_round == 0:
        initial = tuple(dict(auction.sealed).get(s, ()) for s in range(len(state.players)))
    added = any(gems for _, gems in auction.sealed)
    auction = evolve(auction, sealed=(), table=tuple(table), initial=initial)
    state = evolve(state, auction=auction)
    facts: list[Fact] = [
        {
            "type": "bids_revealed",
            "round": state.round,
            "tie_round": auction.tie_round,
            "dish": auction.dish.name,
            "bids": bids,
            "highest": top,
            # a bid of 0 loses (BA-ZERO-LOSES): bids all at 0 are no tie (BA-ALL-ZERO)
            "tied": tied if len(tied) > 1 and top > 0 else [],
            "all_zero": top == 0,
        }
    ]
    if auction.tie_round == 0 and top == 0:
        more = remove_dish(state, "all_zero", "every bid was 0")
    elif auction.tie_round and not added:
        more = remove_dish(state, "tie_unresolved", "no tied player added a gem")
    elif len(tied) == 1:
        more = win(state, tied[0])
    elif not any(state.players[s].hand for s in tied):
        more = remove_dish(state, "tie_unresolved", "the tied players have no gems left")
    else:
        tie = evolve(auction, tie_round=auction.tie_round + 1, bidders=tuple(tied))
        state = evolve(state, auction=tie)
        start: Fact = {
            "type": "tie_break_started",
            "round": state.round,
            "tie_round": tie.tie_round,
            "seats": tied,
            "value": top,
        }
        state, auto = auto_bids(state)
        more = (state, [start, *auto])
    return more[0], facts + more[1]


def _take_back(state: State, keep_out: int | None) -> State:
    """Every seat but ``keep_out`` takes the gems it bid back into its hand."""
    auction = state.auction
    assert auction is not None
    players = tuple(
        p if i == keep_out else evolve(p, hand=tuple(sorted(p.hand + auction.table[i])))
        for i, p in enumerate(state.players)
    )
    return evolve(state, players=players)


def win(state: State, seat: int) -> tuple[State, list[Fact]]:
    """The winner takes the dish, pays every gem put down; the Gem Card moves (BA-I2)."""
    auction = state.auction
    assert auction is not None
    paid = auction.table[seat]
    before = state.gem_values
    after = tuple(
        max(1, v - 1) if c in paid else min(4, v + 1) for c, v in zip(COLOURS, before, strict=True)
    )
    state = _take_back(state, seat)
    winner = evolve(state.players[seat], dishes=(*state.players[seat].dishes, auction.dish))
    players = tuple(winner if i == seat else p for i, p in enumerate(state.players))
    state = evolve(
        state,
        players=players,
        gem_values=after,
        last_winner=seat,
        bag=tuple(sorted(state.bag + paid)),
    )
    facts: list[Fact] = [
        {
            "type": "dish_won",
            "round": state.round,
            "seat": seat,
            "dish": dish_card(auction.dish),
            "paid": list(paid),
            "bag_count": len(state.bag),
        },
        {
            "type": "gem_values_changed",
            "round": state.round,
            "before": values_of(before),
            "after": values_of(after),
            "paid_colours": sorted(set(paid)),
        },
    ]
    state, more = end_round(state, auction)
    return state, facts + more


def remove_dish(state: State, reason: str, why: str) -> tuple[State, list[Fact]]:
    """No one wins: the dish goes back to the box, everyone takes their gems back."""
    auction = state.auction
    assert auction is not None
    state = evolve(_take_back(state, None), removed=(*state.removed, auction.dish))
    fact: Fact = {
        "type": "dish_removed",
        "round": state.round,
        "dish": dish_card(auction.dish),
        "reason": reason,
        "why": why,
        "gem_values": values_of(state.gem_values),
    }
    state, more = end_round(state, auction)
    return state, [fact, *more]


def end_round(state: State, auction: Auction) -> tuple[State, list[Fact]]:
    """Cleanup Phase (or the end of the game when the Menu row is empty)."""
    state = evolve(state, auction=None)
    if not state.menu_row:
        return game_over(state)
    state, facts = cleanup(state, auction.initial or ())
    state, more = start_round(state)
    return state, facts + more


def draw_order(state: State) -> list[int]:
    """Clockwise from the left of the last winner, or from the starting player (BA-I5)."""
    n = len(state.players)
    start = state.first_seat if state.last_winner is None else (state.last_winner + 1) % n
    return [(start + i) % n for i in range(n)]


def draw_gem(state: State, seat: int, reason: str) -> tuple[State, list[Fact]]:
    """One gem from the bag into a seat's hand: a private fact and a public one."""
    gem, bag, rng = state.rng.draw(BAG_LABEL, state.bag)
    player = state.players[seat]
    player = evolve(player, hand=tuple(sorted((*player.hand, gem))))
    players = tuple(player if i == seat else p for i, p in enumerate(state.players))
    state = evolve(state, players=players, bag=bag, rng=rng)
    return state, [
        {"type": "gems_drawn", "seat": seat, "gems": [gem], "reason": reason, "private_to": seat},
        {"type": "drew", "seat": seat, "count": 1, "reason": reason, "bag_count": len(bag)},
    ]


def cleanup(state: State, initial: Sequence[tuple[str, ...]]) -> tuple[State, list[Fact]]:
    """Each seat whose initial bid was 0 draws 1 gem, in draw order, while the bag lasts."""
    order = draw_order(state)
    eligible = [s for s in order if not initial[s]]
    drawn: list[int] = []
    facts: list[Fact] = []
    for seat in eligible:
        if not state.bag:
            break
        state, more = draw_gem(state, seat, "cleanup")
        facts += more
        drawn.append(seat)
    missed = [s for s in eligible if s not in drawn]
    head: Fact = {
        "type": "cleanup",
        "round": state.round,
        "order": order,
        "eligible": eligible,
        "drawn": drawn,
        "missed": missed,
        "bag_count": len(state.bag),
    }
    return state, [head, *facts]


def hand_worth(state: State, seat: int) -> int:
    """The current Gem Card value of the gems a seat has left (BA-I7)."""
    values = values_of(state.gem_values)
    return sum(values[g] for g in state.players[seat].hand)


def standings(state: State) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Points, gem worth (the tie-break) and winners (all who share the best)."""
    seats = range(len(state.players))
    points = tuple(sum(d.points for d in state.players[s].dishes) for s in seats)
    worth = tuple(hand_worth(state, s) for s in seats)
    best = max(zip(points, worth, strict=True))
    winners = tuple(s for s in seats if (points[s], worth[s]) == best)
    return points, worth, winners


def game_over(state: State) -> tuple[State, list[Fact]]:
    """Score the dishes; break ties by gems left; still tied, share the victory."""
    state = evolve(state, over=True)
    points, worth, winners = standings(state)
    top = [s for s in range(len(points)) if points[s] == max(points)]
    decided = "points" if len(top) == 1 else ("gems" if len(winners) == 1 else "shared")
    table = [
        {
            "seat": s,
            "dishes": [d.name for d in p.dishes],
            "points": points[s],
            "gems": list(p.hand),
            "gem_worth": worth[s],
        }
        for s, p in enumerate(state.players)
    ]
    return state, [
        {
            "type": "game_over",
            "round": state.round,
            "points": list(points),
            "tiebreak": list(worth),
            "winners": list(winners),
            "decided_by": decided,
            "gem_values": values_of(state.gem_values),
            "scoring": table,
        }
    ]


def outcome(state: State) -> Outcome:
    """Points on won dishes; the tie-break is the worth of the gems left (BA-I7)."""
    points, worth, winners = standings(state)
    return Outcome(points, winners, worth)


def is_over(state: State) -> bool:
    """Whether the game has ended."""
    return bool(state.over)
