"""Menu Masters (rulebook: shared/rulebooks/menu-masters.txt), for 2 to 6 chefs.

Rounds of three steps: Place Pawns (one Chef Cap at a time, clockwise from the First
Chef: join a store's line, own a store, or collect a bank coin), Purchase Ingredients
(stores in order, first in first out, cost = pawns in the stack), Clean Up (owners and
coin collectors collect, stores restock, the First Chef token passes).  Menus are
completed from the basket on the chef's own purchase turn; the round in which a chef
completes a third Menu is the last; stars of the ingredients used score.

Commands (``feastlog.v1.MenuMastersCommand``): PlacePawn, PurchaseIngredient, LeaveLine,
CompleteMenus, DiscardIngredient, FinishPurchaseTurn.  A purchase turn (MM-I4): the chef
at the top of a line may complete Menus, then buys (PurchaseIngredient) or leaves
(LeaveLine, which ends the turn); after buying they may complete more Menus and end with
FinishPurchaseTurn, or, holding a 7th card, must complete a Menu or discard (a discard
ends the turn).  The turn never ends by itself after a purchase, so whether a chef could
complete a secret Menu is never revealed.  An empty window is a sold-out store (MM-I9).

Ruleset versions (a game folds under the version its genesis names):

- ``2`` (new games): a chef at the top of a line who cannot pay, or whose store has sold
  out, still has the turn: they may complete Menus, then leave (MM-I3); the turn passes
  by itself when nothing is possible in it, judged from public information only
  (``menu_masters_possible``).  The game ends by the rulebook (the round of a third
  Menu), or after a clean-up once no Menu left can be completed with the cards left
  (MM-I7); ``round_limit`` is off unless the organiser sets it.
- ``1``: such a chef left the line without a turn (a sold-out store's whole line at
  once); the game also ended when no Menu or no ingredient was left, or after round 30
  (``round_limit``).

Randomness, so that a deal can be re-derived from this text alone (DESIGN section 3).
Decks are sequences, top first; drawing takes the top card.  RNG labels, in the order
first consumed:

1. ``menu-masters/produce-stand-deck``, ``menu-masters/butcher-shop-deck``,
   ``menu-masters/bakery-deck``: at setup, each store's cards in pack file order are
   shuffled with their deck's label; the top 3 go to the window (in that order), the
   rest is the deck.  With 4 or more chefs the Supermarket window then takes the top
   card of the Produce Stand, Butcher Shop and Bakery decks, in that order.
2. ``menu-masters/first-seat``: ``uniform(n)`` for the First Chef, only with
   ``first_seat = random``.
3. ``menu-masters/menu-deck``: the Menus in pack file order are shuffled; secret Menus
   are dealt one at a time clockwise from the First Chef, twice round, from the top;
   the next 3 are the community row, the rest the Menu deck.  A completed community
   Menu is replaced at once by the top of the Menu deck, in the same place of the row.
4. Discards: a discarded card goes to the bottom of its store's deck (the deck as it is
   then, top first, with the card appended last), and that whole sequence is shuffled
   with the deck's label, continuing that label's stream where it stopped.  This is the
   only later use of the deck labels.

Restocking at clean-up draws from the top of each deck, Produce Stand, Butcher Shop,
Bakery in turn, until the window holds 3 (a short deck leaves it short, MM-I9); with 4
or more chefs the Supermarket then takes the top card of each of those decks, in that
order, whose store has no card in the Supermarket window.

Options: ``first_seat`` (``random`` or a seat number), ``round_limit`` (``off``, or the
game ends after the clean-up of this round at the latest, MM-I7; default ``off``; ruleset
1: ``30``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from google.protobuf.message import Message

from feastlog.v1 import menu_masters_pb2 as pb
from replay import menu_masters_flow as flow
from replay import menu_masters_view as views
from replay.engine import Fact, Outcome, RuleViolation, Viewer
from replay.menu_masters_catalogue import RULES
from replay.menu_masters_pack import DECKS, Pack, default_pack_bytes, load_pack
from replay.menu_masters_state import (
    BANK_PER_CHEF,
    BOX_COINS,
    COMMUNITY_MENUS,
    DECK_LABELS,
    FIRST_SEAT_LABEL,
    KIND,
    MENU_LABEL,
    OVER,
    PAWNS,
    PLACE,
    SECRET_MENUS,
    START_COINS,
    SUPERMARKET_CHEFS,
    WINDOW,
    Chef,
    State,
    StateV2,
    StoreBoard,
)
from replay.rng import Rng

OPTION_DEFAULTS: Mapping[str, str] = {"first_seat": "random", "round_limit": "off"}
# Every ruleset version this build folds, with its option defaults (ruleset 1: a limit of 30).
RULESET = "2"
RULESETS: Mapping[str, Mapping[str, str]] = {
    "1": {"first_seat": "random", "round_limit": "30"},
    "2": OPTION_DEFAULTS,
}
MIN_SEATS, MAX_SEATS = 2, 6

_COMMON = ("MM-GAME-OVER", "MM-TURN-ORDER", "MM-STEP")
CHECKS: Mapping[str, tuple[str, ...]] = {
    "place_pawn": (*_COMMON, "MM-PLACE-ORDER", "MM-I1", "MM-I2", "MM-PLACE-OWN", "MM-PLACE-COIN"),
    "purchase": (
        *_COMMON,
        "MM-PURCHASE-FIFO",
        "MM-PURCHASE-ONE",
        "MM-SOLD-OUT",
        "MM-PURCHASE-COST",
    ),
    "leave_line": (*_COMMON, "MM-PURCHASE-FIFO", "MM-LEAVE-LINE"),
    "complete_menus": (
        *_COMMON,
        "MM-I4",
        "MM-MENU-SOURCE",
        "MM-I5",
        "MM-POWER-FOOD",
        "MM-MENU-INGREDIENTS",
    ),
    "discard": (*_COMMON, "MM-DISCARD"),
    "finish_turn": (*_COMMON, "MM-I4", "MM-BASKET-SIZE"),
}


def _option_seat(options: Mapping[str, str], seats: int, rng: Rng) -> tuple[int, Rng]:
    """The First Chef: drawn with uniform(n), or the seat the option names."""
    value = options.get("first_seat", "random")
    if value == "random":
        return rng.uniform(FIRST_SEAT_LABEL, seats)
    if not value.isdigit() or int(value) >= seats:
        raise ValueError(f"first_seat must be 'random' or a seat 0..{seats - 1}, not {value!r}")
    return int(value), rng


def _round_limit(options: Mapping[str, str], ruleset: str) -> int:
    """The option round_limit as a number of rounds; 0 for "off" (no limit)."""
    limit = options.get("round_limit", RULESETS[ruleset]["round_limit"])
    if limit == "off":
        return 0
    if not limit.isdigit() or int(limit) < 1:
        raise ValueError(f"round_limit must be 'off' or a positive number, not {limit!r}")
    return int(limit)


def setup(
    seats: Sequence[str],
    options: Mapping[str, str],
    pack: Pack,
    rng: Rng,
    ruleset: str = RULESET,
) -> tuple[State, list[Fact]]:
    """Stores, decks, windows, coins, First Chef and Menus, as the rulebook's Setup says."""
    n = len(seats)
    if ruleset not in RULESETS:
        raise ValueError(f"Menu Masters has no ruleset {ruleset!r}")
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise RuleViolation("MM-I1", f"Menu Masters is for 2 to 6 chefs, not {n}")
    limit = _round_limit(options, ruleset)
    decks = []
    for deck, label in zip(DECKS, DECK_LABELS, strict=True):
        shuffled, rng = rng.shuffle(label, [c.id for c in pack.cards if c.deck == deck])
        decks.append(shuffled)
    stores = [StoreBoard(d[WINDOW:], d[:WINDOW], (), None, 0) for d in decks]
    if n >= SUPERMARKET_CHEFS:
        window = tuple(s.deck[0] for s in stores)
        stores = [replace(s, deck=s.deck[1:]) for s in stores]
        stores.append(StoreBoard((), window, (), None, 0))
    first, rng = _option_seat(options, n, rng)
    menu_deck, rng = rng.shuffle(MENU_LABEL, [m.id for m in pack.menus])
    order = [(first + k) % n for k in range(n)] * SECRET_MENUS
    hands: list[list[str]] = [[] for _ in range(n)]
    for k, seat in enumerate(order):
        hands[seat].append(menu_deck[k])
    menu_deck = menu_deck[len(order) :]
    community, menu_deck = menu_deck[:COMMUNITY_MENUS], menu_deck[COMMUNITY_MENUS:]
    chefs = tuple(
        Chef(name, START_COINS, PAWNS, False, (), tuple(hands[s]), ())
        for s, name in enumerate(seats)
    )
    bank = BANK_PER_CHEF * n
    fields = (
        pack, limit, rng, 1, PLACE, first, first, chefs, tuple(stores), bank,
        BOX_COINS - (START_COINS + BANK_PER_CHEF) * n, menu_deck, community, None, None, "",
    )  # fmt: skip
    # ruleset 1 keeps the state shape its games were recorded with
    state = State(*fields) if ruleset == "1" else StateV2(*fields, ruleset=int(ruleset))
    facts: list[Fact] = [
        {
            "type": "setup",
            "chefs": n,
            "first_chef": first,
            "windows": {views.store_name(i): list(s.window) for i, s in enumerate(stores)},
            "community": list(community),
            "coins": [START_COINS] * n,
            "bank": bank,
            "box": state.box,
        }
    ]
    for seat, hand in enumerate(hands):
        facts.append({"type": "menus_dealt", "seat": seat, "menus": hand, "private_to": seat})
        facts.append({"type": "menus_dealt", "seat": seat, "count": len(hand)})
    facts.append({"type": "round_started", "round": 1, "first_chef": first})
    return state, facts


def apply(state: State, seat: int, command: Message) -> tuple[State, list[Fact]]:
    """Check ``command`` by chef ``seat`` and apply it, with every automatic step."""
    if not isinstance(command, pb.MenuMastersCommand):
        raise TypeError("a Menu Masters game takes MenuMastersCommand messages")
    action = command.WhichOneof("action")
    if action is None:
        raise views.malformed("action", "the command is empty: choose an action")
    if state.step == OVER:
        raise RuleViolation("MM-GAME-OVER", f"the game is over ({state.end.replace('_', ' ')})")
    if seat not in to_act(state):
        raise RuleViolation("MM-TURN-ORDER", views.whose_turn(state, seat))
    return flow.HANDLERS[action](state, seat, getattr(command, action))


def to_act(state: State) -> frozenset[int]:
    """The chef who may act: the one placing a pawn, or the one whose purchase turn it is."""
    if state.step == PLACE and state.placing is not None:
        return frozenset({state.placing})
    if state.turn is not None:
        return frozenset({state.turn.seat})
    return frozenset()


def outcome(state: State) -> Outcome:
    """Stars per chef; the most stars wins, then the most coins, then all tied share."""
    return flow.outcome(state)


class MenuMastersEngine:
    """The Menu Masters rules engine (see the module docstring)."""

    kind = KIND
    title = "Menu Masters"
    ruleset_version = RULESET
    rulesets = RULESETS
    min_seats = MIN_SEATS
    max_seats = MAX_SEATS
    seats_rule = "MM-I1"
    end_rule = "MM-GAME-OVER"
    rules = RULES
    rng_labels = (*DECK_LABELS, FIRST_SEAT_LABEL, MENU_LABEL)
    option_defaults = OPTION_DEFAULTS
    command_field = "menu_masters"

    def default_pack_bytes(self) -> bytes:
        """The bundled pack replay/packs/menu_masters.toml."""
        return default_pack_bytes()

    def load_pack(self, data: bytes) -> Pack:
        """Parse and validate a pack (PackError names the bad card and field)."""
        return load_pack(data)

    def setup(
        self,
        seats: Sequence[str],
        options: Mapping[str, str],
        pack: Any,
        rng: Rng,
        ruleset: str = RULESET,
    ) -> tuple[State, list[Fact]]:
        """The state after Setup."""
        return setup(seats, options, pack, rng, ruleset)

    def apply(self, state: Any, seat: int, command: Message) -> tuple[State, list[Fact]]:
        """Check and apply a command."""
        return apply(state, seat, command)

    def to_act(self, state: Any) -> frozenset[int]:
        """The seats that may act."""
        return to_act(state)

    def legal_commands(self, state: Any, seat: int) -> list[Message]:
        """Every legal command, sorted (up to LEGAL_CAP + 1: Menus can combine many ways)."""
        return views.legal_commands(state, seat, to_act(state))

    def is_over(self, state: Any) -> bool:
        """Whether the game has ended."""
        return bool(state.step == OVER)

    def outcome(self, state: Any) -> Outcome:
        """Stars, winners and the coin tie-break."""
        return outcome(state)

    def view(self, state: Any, viewer: Viewer) -> dict[str, Any]:
        """What ``viewer`` may see."""
        return views.view(state, viewer, sorted(to_act(state)))

    def command_public(self, command: Message) -> bool:
        """Every Menu Masters command is played in the open."""
        return True

    def narrate(self, fact: Fact, names: Sequence[str]) -> str | None:
        """One line of plain English for a fact."""
        return views.narrate(fact, names)

    def checks(self, command: Message) -> tuple[str, ...]:
        """The rule ids apply() checks for this kind of command, in order."""
        action = (
            command.WhichOneof("action") if isinstance(command, pb.MenuMastersCommand) else None
        )
        return CHECKS.get(action or "", ())


ENGINE = MenuMastersEngine()
