"""Picky Eaters: setup, the automatic steps of a round, and scoring.

Each round reveals a Guest, fills the Market, deals (from the first player, PE-I8); seats
over 10 cards then discard down together (phase ``discard-down``), then one action each
in turn (phase ``play``).  When all have passed the Market is discarded, the first player
card moves clockwise and the next round starts; after round 5 the game is scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from feastlog.replay.games.engine import Fact, Outcome, evolve
from feastlog.replay.games.picky_eaters.pack import EXTRA_SEASONING, SPRINKLE_OF_HERBS, Pack
from feastlog.replay.games.picky_eaters.spec import (
    CATEGORY_POINTS,
    FIRST_SEAT,
    FOOD_DECK,
    GUEST_DECK,
    HERBS_POINTS,
    NOTCH_DOWN,
    RECIPE_POINTS,
    RESHUFFLE,
    ROUNDS,
    SILVERWARE_POINTS,
    WHEN_EMPTY,
)
from feastlog.replay.games.picky_eaters.state import (
    DISCARD_DOWN,
    OVER,
    PLAY,
    PlacedRecipe,
    Player,
    State,
    StateV2,
    StateV3,
    deal_size,
    has_effect,
    market_size,
    over_hand_limit,
)
from feastlog.replay.record.rng import Rng


def setup(
    seats: Sequence[str],
    options: Mapping[str, str],
    pack: Pack,
    rng: Rng,
    ruleset: str,
) -> tuple[State, list[Fact]]:
    """Shuffle both decks, give out the first player card and start round 1."""
    n = len(seats)
    variant = options["small_table_variant"] == "on"
    blocks = options["hot_plate_blocks_items"] == "on"
    food, rng = rng.shuffle(FOOD_DECK, pack.food_cards)
    guests, rng = rng.shuffle(GUEST_DECK, sorted(pack.guest_of))
    if options["first_seat"] == "random":
        first, rng = rng.uniform(FIRST_SEAT, n)
    else:
        first = int(options["first_seat"])
    # each ruleset keeps the state shape its games were recorded with
    shape: dict[str, Any] = {}
    made: type[State] = State
    if ruleset != "1":
        shape["deck_refill"] = options["deck_refill"]
        made = StateV2
    if ruleset not in ("1", "2"):
        shape["ruleset"] = int(ruleset)
        made = StateV3
    state = made(
        **shape,
        pack_source=pack.source,
        players=tuple(Player(name) for name in seats),
        small_table_variant=variant,
        hot_plate_blocks_items=blocks,
        first_seat=first,
        first_player=first,
        round=0,
        phase=PLAY,
        turn=first,
        food_deck=food,
        discard=(),
        market=(),
        guest_deck=guests,
        guests=(),
        rng=rng,
    )
    fact: Fact = {
        "type": "game_started",
        "seats": list(seats),
        "first_seat": first,
        "market_size": market_size(n, variant),
        "deal_size": deal_size(n, variant),
        "pack": pack.id,
    }
    state, facts = start_round(state)
    return state, [fact, *facts]


def set_player(state: State, seat: int, **changes: Any) -> State:
    players = list(state.players)
    players[seat] = evolve(players[seat], **changes)
    return evolve(state, players=tuple(players))


def reshuffle(state: State) -> tuple[State, Fact]:
    """The discard pile, sorted, shuffled into a new Food deck."""
    deck, rng = state.rng.shuffle(RESHUFFLE, sorted(state.discard))
    state = evolve(state, food_deck=deck, discard=(), rng=rng)
    return state, {"type": "deck_reshuffled", "cards": len(deck)}


def refill_when_empty(state: State, facts: list[Fact]) -> tuple[State, list[Fact]]:
    """PE-DECK-REFILL ("if the Food Deck is ever empty"): at the end of a command that left
    the deck empty, the discard pile becomes the deck at once (option deck_refill).

    From ruleset 3, not once the game is over (PE-GAME-END): the last pass of round 5
    discards the Market, and a game that has ended shuffles nothing.  Ruleset 2 did, and
    its games keep folding as they were recorded.
    """
    if state.phase == OVER and state.version >= 3:
        return state, facts
    if state.refill == WHEN_EMPTY and not state.food_deck and state.discard:
        state, refill = reshuffle(state)
        return state, [*facts, refill]
    return state, facts


def draw(state: State, count: int) -> tuple[State, tuple[str, ...], list[Fact]]:
    """Up to ``count`` cards off the Food deck, refilling it from the discard pile.

    A deck found empty when a card must be drawn is refilled first (both readings); with
    ``when_empty`` the card that empties the deck refills it at once (PE-DECK-REFILL).
    """
    drawn: list[str] = []
    facts: list[Fact] = []
    while len(drawn) < count:
        if not state.food_deck:
            if not state.discard:
                break
            state, fact = reshuffle(state)
            facts.append(fact)
        drawn.append(state.food_deck[0])
        state = evolve(state, food_deck=state.food_deck[1:])
        if state.refill == WHEN_EMPTY and not state.food_deck and state.discard:
            state, fact = reshuffle(state)
            facts.append(fact)
    return state, tuple(drawn), facts


def next_turn(state: State, facts: list[Fact]) -> tuple[State, list[Fact]]:
    """The next player clockwise who has not passed; when all have, the round ends."""
    n = len(state.players)
    for step in range(1, n + 1):
        seat = (state.turn + step) % n
        if not state.players[seat].passed:
            return evolve(state, turn=seat), facts
    return end_round(state, facts)


def end_round(state: State, facts: list[Fact]) -> tuple[State, list[Fact]]:
    facts = [*facts, {"type": "market_discarded", "cards": list(state.market)}]
    state = evolve(state, discard=(*state.discard, *state.market), market=())
    facts.append({"type": "round_ended", "round": state.round})
    if state.round >= ROUNDS:
        state = evolve(state, phase=OVER)
        return state, [*facts, game_over_fact(state)]
    first = (state.first_player + 1) % len(state.players)
    state = evolve(state, first_player=first, turn=first)
    facts.append({"type": "first_player_moved", "seat": first})
    state, more = start_round(state)
    return state, facts + more


def start_round(state: State) -> tuple[State, list[Fact]]:
    """Reveal a Guest, fill the Market, deal, then discard down or play."""
    n, pack = len(state.players), state.pack
    number = state.round + 1
    guest = pack.guest_of[state.guest_deck[0]]
    state = evolve(
        state,
        round=number,
        guest_deck=state.guest_deck[1:],
        guests=(*state.guests, guest.card),
        players=tuple(evolve(p, passed=False) for p in state.players),
    )
    facts: list[Fact] = [
        {"type": "round_started", "round": number, "first_player": state.first_player},
        {
            "type": "guest_revealed",
            "round": number,
            "guest": guest.card,
            "name": guest.name,
            "role": guest.role,
            "favorite": list(guest.favorite),
            "like": list(guest.like),
            "dislike": list(guest.dislike),
            "restriction": list(guest.restriction),
        },
    ]
    state, market, refill = draw(state, market_size(n, state.small_table_variant))
    state = evolve(state, market=market)
    facts += [
        *refill,
        {
            "type": "market_filled",
            "cards": list(market),
            "names": [pack.name_of(c) for c in market],
        },
    ]
    for step in range(n):
        seat = (state.first_player + step) % n
        state, cards, refill = draw(state, deal_size(n, state.small_table_variant))
        hand = tuple(sorted((*state.players[seat].hand, *cards)))
        state = set_player(state, seat, hand=hand)
        facts += refill
        facts.append({"type": "dealt", "seat": seat, "count": len(cards), "hand_size": len(hand)})
        facts.append(
            {"type": "cards_dealt", "seat": seat, "cards": list(cards), "private_to": seat}
        )
    if over_hand_limit(state):
        return evolve(state, phase=DISCARD_DOWN, turn=state.first_player), facts
    state = evolve(state, phase=PLAY, turn=state.first_player)
    return state, [*facts, {"type": "play_started", "round": number, "seat": state.turn}]


def score_recipe(pack: Pack, recipe: PlacedRecipe, guests: tuple[str, ...]) -> dict[str, Any]:
    """One Recipe's score line: base, each listing Guest (after Extra Seasoning), herbs."""
    name = pack.recipe_of[recipe.card].name
    notches = has_effect(pack, recipe, EXTRA_SEASONING)
    lines: list[dict[str, Any]] = []
    for card in guests:
        guest = pack.guest_of[card]
        listed = guest.category(name)
        if listed is None:
            continue
        counted = listed
        for _ in range(notches):
            counted = NOTCH_DOWN[counted]
        points = CATEGORY_POINTS[counted]
        lines.append(
            {
                "guest": card,
                "name": guest.name,
                "listed": listed,
                "counted": counted,
                "points": points,
            }
        )
    favorites = sum(1 for line in lines if line["counted"] == "favorite")
    herbs = HERBS_POINTS * favorites * has_effect(pack, recipe, SPRINKLE_OF_HERBS)
    total = RECIPE_POINTS + sum(int(line["points"]) for line in lines) + herbs
    return {
        "recipe": recipe.card,
        "name": name,
        "items": list(recipe.items),
        "base": RECIPE_POINTS,
        "guests": lines,
        "herbs": herbs,
        "points": total,
    }


def score_table(state: State) -> list[dict[str, Any]]:
    """The final scoring table: per player, per Recipe, per Guest."""
    table: list[dict[str, Any]] = []
    for seat, player in enumerate(state.players):
        recipes = [score_recipe(state.pack, r, state.guests) for r in player.recipes]
        silverware: list[dict[str, Any]] = [
            {"item": card, "points": SILVERWARE_POINTS * len(player.recipes)}
            for card in player.silverware
        ]
        points = sum(int(r["points"]) for r in recipes) + sum(int(s["points"]) for s in silverware)
        table.append(
            {
                "seat": seat,
                "name": player.name,
                "recipes": recipes,
                "silverware": silverware,
                "points": points,
            }
        )
    return table


def tiebreak(state: State) -> tuple[int, ...]:
    """Each seat's place in the first round's turn order: later (higher) wins a tie."""
    n = len(state.players)
    return tuple((seat - state.first_seat) % n for seat in range(n))


def game_over_fact(state: State) -> Fact:
    """The game_over fact: points, winners and the full scoring table."""
    table = score_table(state)
    points = [int(row["points"]) for row in table]
    order = tiebreak(state)
    best = max(zip(points, order, strict=True))
    winners = [s for s in range(len(points)) if (points[s], order[s]) == best]
    return {
        "type": "game_over",
        "points": points,
        "winners": winners,
        "tiebreak": list(order),
        "table": table,
    }


def outcome(state: State) -> Outcome:
    """Points per seat; the winner breaks ties by the later place in round 1's order."""
    fact = game_over_fact(state)
    return Outcome(tuple(fact["points"]), tuple(fact["winners"]), tiebreak(state))


def is_over(state: State) -> bool:
    """Whether the game has ended."""
    return bool(state.phase == OVER)
