"""Picky Eaters, the rules engine (rulebook: shared/rulebooks/picky-eaters.txt).

2 to 6 players (PE-I1) prepare Recipes for 5 picky Guests over 5 rounds.  Hidden
information: each hand (others see counts) and the two decks (only the arbiter sees them).
Market, Recipes in play, Items on them, revealed Guests and the discard pile are public.

RNG labels, in the order they are consumed:

1. ``picky-eaters/food-deck``: shuffle of the Food deck (ingredients, recipes, items) at
   setup, from the pack's card ids sorted;
2. ``picky-eaters/guest-deck``: shuffle of the Guest deck at setup, from guest ids sorted;
3. ``picky-eaters/first-seat``: ``uniform(n)`` for the first player when the option
   ``first_seat`` is ``random``;
4. ``picky-eaters/reshuffle``: each refill of the Food deck: the discard pile, sorted
   by card id, is shuffled and becomes the deck.  When, depends on ``deck_refill``:
   ``when_empty`` (ruleset 2 default, PE-DECK-REFILL as printed: "If the Food Deck is
   ever empty, shuffle the discard pile to form a new Food Deck"): whenever the deck is
   empty and the discard pile is not, at once — while cards are drawn, right after the
   card that empties the deck, and otherwise at the end of the command that left it so;
   ``on_draw`` (PE-I7, ruleset 1's only reading): only when a card must be drawn from an
   empty deck.

Ruleset versions: ``2`` (new games) adds the option ``deck_refill`` (default
``when_empty``); ``1`` always refilled on a draw.  Refusals are the same in both.

Options: ``first_seat`` (``random`` or a seat number), ``small_table_variant`` (``on``: the
2- and 3-player Market of 6 and deal of 6), ``hot_plate_blocks_items`` (``off``; ``on``: a
Recipe with Hot Plate takes no opponent's Item, PE-I2), ``deck_refill`` (``when_empty``
or ``on_draw``; ruleset 2).

Flow: each round reveals a Guest, fills the Market, deals (from the first player, PE-I8);
seats over 10 cards then send ``discard_down`` (phase ``discard-down``, together); then one
action each in turn (phase ``play``).  A player who takes an 11th card sends
``discard_down`` before the next player acts (PE-I6).  When all have passed the Market is
discarded, the first player card moves clockwise and the next round starts; after round 5
the game is scored.

``legal_commands`` gives every legal command up to ``LEGAL_CAP`` (see
``picky_eaters_moves``): Pass, every Market card, every Item on every Recipe it may go
on, every pair to discard to draw, every way to prepare each Recipe in hand (each set of
ingredient cards, each 3-for-1, each Recipe it may replace), and every set of cards to
discard down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from feastlog.v1 import picky_eaters_pb2 as pb
from replay.engine import Fact, MalformedCommand, Outcome, RuleViolation, Viewer
from replay.picky_eaters_checks import CHECKS, check_command, to_act
from replay.picky_eaters_moves import legal_commands
from replay.picky_eaters_pack import Pack, default_pack_bytes, load_pack
from replay.picky_eaters_rules import (
    DISCARD_DOWN,
    HAND_LIMIT,
    ON_DRAW,
    OVER,
    PLAY,
    ROUNDS,
    RULES,
    WHEN_EMPTY,
    PlacedRecipe,
    Player,
    State,
    StateV2,
    deal_size,
    game_over_fact,
    market_size,
    score_table,
    tiebreak,
)
from replay.picky_eaters_view import narrate, view
from replay.rng import Rng

KIND = "picky-eaters"
FOOD_DECK = f"{KIND}/food-deck"
GUEST_DECK = f"{KIND}/guest-deck"
FIRST_SEAT = f"{KIND}/first-seat"
RESHUFFLE = f"{KIND}/reshuffle"
OPTION_DEFAULTS: Mapping[str, str] = {
    "first_seat": "random",
    "small_table_variant": "on",
    "hot_plate_blocks_items": "off",
    "deck_refill": WHEN_EMPTY,
}
# Every ruleset version this build folds, with its option defaults.
RULESET = "2"
RULESETS: Mapping[str, Mapping[str, str]] = {
    "1": {k: v for k, v in OPTION_DEFAULTS.items() if k != "deck_refill"},
    "2": OPTION_DEFAULTS,
}


def setup(
    seats: Sequence[str],
    options: Mapping[str, str],
    pack: Pack,
    rng: Rng,
    ruleset: str = RULESET,
) -> tuple[State, list[Fact]]:
    """Shuffle both decks, give out the first player card and start round 1."""
    n = len(seats)
    if ruleset not in RULESETS:
        raise ValueError(f"Picky Eaters has no ruleset {ruleset!r}")
    if not 2 <= n <= 6:
        raise RuleViolation("PE-I1", f"Picky Eaters is for 2 to 6 players, not {n}")
    opts = {**RULESETS[ruleset], **options}
    unknown = sorted(set(opts) - set(RULESETS[ruleset]))
    if unknown:
        raise MalformedCommand(f"options.{unknown[0]}", f"ruleset {ruleset} has no such option")
    variant = _switch(opts, "small_table_variant")
    blocks = _switch(opts, "hot_plate_blocks_items")
    food, rng = rng.shuffle(FOOD_DECK, pack.food_cards)
    guests, rng = rng.shuffle(GUEST_DECK, sorted(pack.guest_of))
    if opts["first_seat"] == "random":
        first, rng = rng.uniform(FIRST_SEAT, n)
    elif opts["first_seat"].isdigit() and int(opts["first_seat"]) < n:
        first = int(opts["first_seat"])
    else:
        raise MalformedCommand("options.first_seat", "use 'random' or a seat number")
    shape: dict[str, Any] = {}
    if ruleset != "1":  # ruleset 1 keeps the state shape its games were recorded with
        if opts["deck_refill"] not in (WHEN_EMPTY, ON_DRAW):
            raise MalformedCommand("options.deck_refill", "use 'when_empty' or 'on_draw'")
        shape["deck_refill"] = opts["deck_refill"]
    state = (StateV2 if shape else State)(
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
    state, facts = _start_round(state)
    return state, [fact, *facts]


def _switch(options: Mapping[str, str], key: str) -> bool:
    value = options[key]
    if value not in ("on", "off"):
        raise MalformedCommand(f"options.{key}", "use 'on' or 'off'")
    return value == "on"


def apply(state: State, seat: int, command: pb.PickyEatersCommand) -> tuple[State, list[Fact]]:
    """Check the command in the fixed order of ``checks`` and apply it."""
    action = check_command(state, seat, command)
    state, facts = _act(state, seat, command, action)
    if state.refill == WHEN_EMPTY and not state.food_deck and state.discard:
        state, refill = _reshuffle(state)  # PE-DECK-REFILL: "if the Food Deck is ever empty"
        facts = [*facts, refill]
    return state, facts


def _act(
    state: State, seat: int, command: pb.PickyEatersCommand, action: str
) -> tuple[State, list[Fact]]:
    """Carry out a checked command, with every automatic step it triggers."""
    if action == "take_from_market":
        return _take(state, seat, command.take_from_market.card)
    if action == "prepare_recipe":
        return _prepare(state, seat, command.prepare_recipe)
    if action == "play_item":
        return _play_item(state, seat, command.play_item)
    if action == "discard_to_draw":
        return _discard_to_draw(state, seat, list(command.discard_to_draw.cards))
    if action == "discard_down":
        return _discard_down(state, seat, list(command.discard_down.cards))
    state = _set_player(state, seat, passed=True)
    facts: list[Fact] = [{"type": "passed", "seat": seat, "round": state.round}]
    return _next_turn(state, facts)


def _take(state: State, seat: int, card: str) -> tuple[State, list[Fact]]:
    hand = state.players[seat].hand
    state = _set_player(state, seat, hand=tuple(sorted((*hand, card))))
    state = replace(state, market=tuple(c for c in state.market if c != card))
    size = len(hand) + 1
    fact: Fact = {
        "type": "took_from_market",
        "seat": seat,
        "card": card,
        "card_name": state.pack.name_of(card),
        "hand_size": size,
        "market_left": len(state.market),
    }
    if size > HAND_LIMIT:
        return state, [{**fact, "must_discard": size - HAND_LIMIT}]
    return _next_turn(state, [fact])


def _prepare(
    state: State, seat: int, prep: pb.PickyEatersPrepareRecipe
) -> tuple[State, list[Fact]]:
    pack, player = state.pack, state.players[seat]
    substitute = [c for s in prep.substitutions for c in s.cards]
    spent = [*prep.ingredients, *substitute]
    hand = tuple(c for c in player.hand if c not in {prep.recipe, *spent})
    recipes, thrown = list(player.recipes), list(spent)
    replaced_items: list[str] = []
    if prep.replaces:
        index = next(i for i, r in enumerate(recipes) if r.card == prep.replaces)
        replaced_items = list(recipes[index].items)
        thrown += [prep.replaces, *replaced_items]
        recipes[index] = PlacedRecipe(prep.recipe)
    else:
        recipes.append(PlacedRecipe(prep.recipe))
    state = _set_player(state, seat, hand=hand, recipes=tuple(recipes))
    state = replace(state, discard=(*state.discard, *thrown))
    sub = prep.substitutions[0] if prep.substitutions else None
    fact: Fact = {
        "type": "recipe_prepared",
        "seat": seat,
        "recipe": prep.recipe,
        "recipe_name": pack.name_of(prep.recipe),
        "ingredients": list(prep.ingredients),
        "ingredient_names": [pack.name_of(c) for c in prep.ingredients],
        "substitution": ({"ingredient": sub.ingredient, "cards": list(sub.cards)} if sub else None),
        "replaced": prep.replaces or None,
        "replaced_name": pack.name_of(prep.replaces) if prep.replaces else None,
        "replaced_items": replaced_items,
        "discarded": thrown,
        "slots_used": state.players[seat].slots_used,
    }
    return _next_turn(state, [fact])


def _play_item(state: State, seat: int, play: pb.PickyEatersPlayItem) -> tuple[State, list[Fact]]:
    pack, player = state.pack, state.players[seat]
    state = _set_player(state, seat, hand=tuple(c for c in player.hand if c != play.item))
    owner = None
    if not play.recipe:
        state = _set_player(state, seat, silverware=(*player.silverware, play.item))
    else:
        owner = next(
            s for s, p in enumerate(state.players) if any(r.card == play.recipe for r in p.recipes)
        )
        recipes = tuple(
            PlacedRecipe(r.card, tuple(sorted((*r.items, play.item))))
            if r.card == play.recipe
            else r
            for r in state.players[owner].recipes
        )
        state = _set_player(state, owner, recipes=recipes)
    fact: Fact = {
        "type": "item_played",
        "seat": seat,
        "item": play.item,
        "item_name": pack.name_of(play.item),
        "recipe": play.recipe or None,
        "recipe_name": pack.name_of(play.recipe) if play.recipe else None,
        "recipe_owner": owner,
    }
    return _next_turn(state, [fact])


def _discard_to_draw(state: State, seat: int, cards: list[str]) -> tuple[State, list[Fact]]:
    hand = tuple(c for c in state.players[seat].hand if c not in cards)
    state = replace(_set_player(state, seat, hand=hand), discard=(*state.discard, *cards))
    facts: list[Fact] = [{"type": "discarded_to_draw", "seat": seat, "cards": cards}]
    state, drawn, refill = _draw(state, 1)
    state = _set_player(state, seat, hand=tuple(sorted((*hand, *drawn))))
    facts += refill
    facts.append({"type": "drew", "seat": seat, "count": len(drawn)})
    facts += [{"type": "card_drawn", "seat": seat, "card": c, "private_to": seat} for c in drawn]
    return _next_turn(state, facts)


def _discard_down(state: State, seat: int, cards: list[str]) -> tuple[State, list[Fact]]:
    hand = tuple(c for c in state.players[seat].hand if c not in cards)
    state = replace(_set_player(state, seat, hand=hand), discard=(*state.discard, *cards))
    facts: list[Fact] = [{"type": "discarded_down", "seat": seat, "cards": cards}]
    if state.phase == PLAY:
        return _next_turn(state, facts)
    if not to_act(state):
        state = replace(state, phase=PLAY, turn=state.first_player)
        facts.append({"type": "play_started", "round": state.round, "seat": state.turn})
    return state, facts


def _set_player(state: State, seat: int, **changes: Any) -> State:
    players = list(state.players)
    players[seat] = replace(players[seat], **changes)
    return replace(state, players=tuple(players))


def _reshuffle(state: State) -> tuple[State, Fact]:
    """The discard pile, sorted, shuffled into a new Food deck."""
    deck, rng = state.rng.shuffle(RESHUFFLE, sorted(state.discard))
    state = replace(state, food_deck=deck, discard=(), rng=rng)
    return state, {"type": "deck_reshuffled", "cards": len(deck)}


def _draw(state: State, count: int) -> tuple[State, tuple[str, ...], list[Fact]]:
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
            state, fact = _reshuffle(state)
            facts.append(fact)
        drawn.append(state.food_deck[0])
        state = replace(state, food_deck=state.food_deck[1:])
        if state.refill == WHEN_EMPTY and not state.food_deck and state.discard:
            state, fact = _reshuffle(state)
            facts.append(fact)
    return state, tuple(drawn), facts


def _next_turn(state: State, facts: list[Fact]) -> tuple[State, list[Fact]]:
    """The next player clockwise who has not passed; when all have, the round ends."""
    n = len(state.players)
    for step in range(1, n + 1):
        seat = (state.turn + step) % n
        if not state.players[seat].passed:
            return replace(state, turn=seat), facts
    return _end_round(state, facts)


def _end_round(state: State, facts: list[Fact]) -> tuple[State, list[Fact]]:
    facts = [*facts, {"type": "market_discarded", "cards": list(state.market)}]
    state = replace(state, discard=(*state.discard, *state.market), market=())
    facts.append({"type": "round_ended", "round": state.round})
    if state.round >= ROUNDS:
        state = replace(state, phase=OVER)
        return state, [*facts, game_over_fact(state)]
    first = (state.first_player + 1) % len(state.players)
    state = replace(state, first_player=first, turn=first)
    facts.append({"type": "first_player_moved", "seat": first})
    state, more = _start_round(state)
    return state, facts + more


def _start_round(state: State) -> tuple[State, list[Fact]]:
    """Reveal a Guest, fill the Market, deal, then discard down or play."""
    n, pack = len(state.players), state.pack
    number = state.round + 1
    guest = pack.guest_of[state.guest_deck[0]]
    state = replace(
        state,
        round=number,
        guest_deck=state.guest_deck[1:],
        guests=(*state.guests, guest.card),
        players=tuple(replace(p, passed=False) for p in state.players),
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
    state, market, refill = _draw(state, market_size(n, state.small_table_variant))
    state = replace(state, market=market)
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
        state, cards, refill = _draw(state, deal_size(n, state.small_table_variant))
        hand = tuple(sorted((*state.players[seat].hand, *cards)))
        state = _set_player(state, seat, hand=hand)
        facts += refill
        facts.append({"type": "dealt", "seat": seat, "count": len(cards), "hand_size": len(hand)})
        facts.append(
            {"type": "cards_dealt", "seat": seat, "cards": list(cards), "private_to": seat}
        )
    if to_act(replace(state, phase=DISCARD_DOWN)):
        return replace(state, phase=DISCARD_DOWN, turn=state.first_player), facts
    state = replace(state, phase=PLAY, turn=state.first_player)
    return state, [*facts, {"type": "play_started", "round": number, "seat": state.turn}]


def is_over(state: State) -> bool:
    """Whether all players have passed in round 5."""
    return state.phase == OVER


def outcome(state: State) -> Outcome:
    """Points per seat; the winner breaks ties by the later place in round 1's order."""
    fact = game_over_fact(state)
    return Outcome(tuple(fact["points"]), tuple(fact["winners"]), tiebreak(state))


def command_public(command: pb.PickyEatersCommand) -> bool:
    """Every Picky Eaters command is public: only what is drawn is private (a fact)."""
    return True


def checks(command: pb.PickyEatersCommand) -> tuple[str, ...]:
    """The rule ids ``apply`` checks for this kind of command, in order."""
    return CHECKS.get(command.WhichOneof("action") or "", ())


class PickyEatersEngine:
    """The Picky Eaters engine object the registry loads."""

    kind = KIND
    title = "Picky Eaters"
    ruleset_version = RULESET
    rulesets = RULESETS
    min_seats = 2
    max_seats = 6
    seats_rule = "PE-I1"
    end_rule = "PE-GAME-END"
    rules = RULES
    rng_labels = (FOOD_DECK, GUEST_DECK, FIRST_SEAT, RESHUFFLE)
    option_defaults = OPTION_DEFAULTS
    command_field = "picky_eaters"

    def default_pack_bytes(self) -> bytes:
        """The bundled pack."""
        return default_pack_bytes()

    def load_pack(self, data: bytes) -> Pack:
        """Parse and validate a pack."""
        return load_pack(data)

    def setup(
        self,
        seats: Sequence[str],
        options: Mapping[str, str],
        pack: Pack,
        rng: Rng,
        ruleset: str = RULESET,
    ) -> tuple[State, list[Fact]]:
        """The state after setup and round 1's deal."""
        return setup(seats, options, pack, rng, ruleset)

    def apply(self, state: State, seat: int, command: Any) -> tuple[State, list[Fact]]:
        """Check and apply one command."""
        return apply(state, seat, command)

    def to_act(self, state: State) -> frozenset[int]:
        """Seats that may act now."""
        return to_act(state)

    def legal_commands(self, state: State, seat: int) -> list[Any]:
        """Every legal command, sorted (up to LEGAL_CAP + 1)."""
        return legal_commands(state, seat)

    def is_over(self, state: State) -> bool:
        """Whether the game has ended."""
        return is_over(state)

    def outcome(self, state: State) -> Outcome:
        """Points, winners and tie-break."""
        return outcome(state)

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """What ``viewer`` may see."""
        return view(state, viewer)

    def command_public(self, command: Any) -> bool:
        """Whether others may see the command."""
        return command_public(command)

    def narrate(self, fact: Fact, names: Sequence[str]) -> str | None:
        """One line for a fact."""
        return narrate(fact, names)

    def checks(self, command: Any) -> tuple[str, ...]:
        """The rule ids checked for this command."""
        return checks(command)

    def scores(self, state: State) -> list[dict[str, Any]]:
        """The scoring table (per player, recipe and guest), at any time."""
        return score_table(state)


ENGINE = PickyEatersEngine()
