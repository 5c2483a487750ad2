"""Menu Masters: the facts of the game, first: seats, options, RNG labels, the rule catalogue.

Rulebook: shared/rulebooks/menu-masters.txt, for 2 to 6 chefs.  Ids ``MM-I1`` .. ``MM-I6``
are the readings of DESIGN section 8; ``MM-I7`` .. ``MM-I9`` are readings this engine adds.
A rule no command can break (setup, flow, scoring) is marked ``refuses=False``.

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

- ``4`` (new games): as ``3``, but a CompleteMenus command names only Menus the chef
  sees when it is sent (MM-MENU-SOURCE): the Menu that replaces a completed community
  Menu comes off the face-down deck and is completed by a later command.  Rulesets 1 to
  3 let the same command name it, so which rule refused a guess told whether the guessed
  Menu was the top of the deck.
- ``3``: as ``2``, but the end of a table whose stores are all empty is
  judged from public information only (each chef's basket against the community Menus
  and, while the chef holds secret Menus, any Menu not yet seen), so whether play goes
  on never tells where a hidden Menu is; and a whole round with every store empty and no
  Menu completed ends the game, so a table that cannot move stops (MM-I7).
- ``2``: a chef at the top of a line who cannot pay, or whose store has sold
  out, still has the turn: they may complete Menus, then leave (MM-I3); the turn passes
  by itself when nothing is possible in it, judged from public information only
  (``menus.nothing_to_do``).  The game ends by the rulebook (the round of a third
  Menu), or after a clean-up once no Menu left can be completed with the cards left
  (MM-I7; with every store empty, judged from each chef's secret Menus and the Menu
  deck); ``round_limit`` is off unless the organiser sets it.
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

from collections.abc import Mapping

from feastlog.replay.games.engine import Option, Rule, Spec, catalogue
from feastlog.replay.games.menu_masters.pack import DECKS
from feastlog.v1 import menu_masters_pb2 as pb

KIND = "menu-masters"
STORES = (*DECKS, "supermarket")  # purchase order; index + 1 is the proto Store value
STORE_TITLES = ("Produce Stand", "Butcher Shop", "Bakery", "Supermarket")
DECK_LABELS = tuple(f"{KIND}/{deck}-deck" for deck in DECKS)
FIRST_SEAT_LABEL = f"{KIND}/first-seat"
MENU_LABEL = f"{KIND}/menu-deck"

PAWNS = 4
START_COINS = 6
BANK_PER_CHEF = 2
BOX_COINS = 48
WINDOW = 3
SECRET_MENUS = 2
COMMUNITY_MENUS = 3
MENUS_TO_END = 3
BASKET = 6
SUPERMARKET_CHEFS = 4

OPTIONS = (
    Option("first_seat", ("random",), "MM-OPTIONS", "MM-SETUP-FIRST-CHEF", open_value="seat"),
    Option("round_limit", ("off",), "MM-OPTIONS", "MM-I7", open_value="rounds"),
)
# Every ruleset version this build folds, with its option defaults (ruleset 1: a limit of 30).
RULESETS: Mapping[str, Mapping[str, str]] = {
    "1": {"first_seat": "random", "round_limit": "30"},
    "2": {"first_seat": "random", "round_limit": "off"},
    "3": {"first_seat": "random", "round_limit": "off"},
    "4": {"first_seat": "random", "round_limit": "off"},
}

_S, _P, _B, _M, _C, _E = (
    "Setup",
    "Step 1: Place Pawns",
    "Step 2: Purchase Ingredients",
    "Completing Menus",
    "Step 3: Clean Up",
    "Scoring and Winning the Game",
)
RULES: Mapping[str, Rule] = catalogue(
    Rule(
        "MM-SETUP-STORES",
        _S,
        "Stores in order Produce Stand, Butcher Shop, Bakery; each deck shuffled separately; "
        "3 cards face up in each window.",
        refuses=False,
    ),
    Rule(
        "MM-SETUP-SUPERMARKET",
        _S,
        "With 4+ chefs the Supermarket is added, holding 1 card from each of the other three "
        "decks.",
        refuses=False,
    ),
    Rule(
        "MM-SETUP-COINS",
        _S,
        "Each chef has 4 Chef Caps and 6 coins; the bank holds 2 coins per chef; the rest of "
        "the 48 coins go back in the box.",
        refuses=False,
    ),
    Rule(
        "MM-SETUP-MENUS",
        _S,
        "Menus shuffled; 2 secret Menus dealt to each chef; 3 community Menus face up.",
        refuses=False,
    ),
    Rule(
        "MM-SETUP-FIRST-CHEF",
        _S,
        "One chef receives the First Chef token (option first_seat: random or a seat).",
        refuses=False,
    ),
    Rule(
        "MM-OPTIONS",
        "feastlog record",
        "The rule options are first_seat and round_limit, each with its listed values.",
    ),
    Rule(
        "MM-GAME-OVER",
        _E,
        "No command is taken once the game is over.",
    ),
    Rule(
        "MM-TURN-ORDER",
        "Playing the Game",
        "Only the chef whose turn it is may act.",
    ),
    Rule(
        "MM-STEP",
        "Playing the Game",
        "Pawns are placed in Step 1; buying, leaving lines, Menus and discards belong to Step 2.",
    ),
    Rule(
        "MM-PLACE-ORDER",
        _P,
        "From the First Chef clockwise, chefs place 1 Chef Cap at a time until all 4 are placed.",
        refuses=False,
    ),
    Rule(
        "MM-PLACE-LINE",
        _P,
        "To buy, a Chef Cap joins a store's line at the bottom of its stack; no limit on the line.",
        refuses=False,
    ),
    Rule(
        "MM-PLACE-OWN",
        _P,
        "A Chef Cap on a store's deck owns it for the round; one owner per store; a chef may "
        "own several.",
    ),
    Rule(
        "MM-PLACE-COIN",
        _P,
        "Once per round a Chef Cap may collect 1 coin from the bank, only while the bank has "
        "coins.",
    ),
    Rule(
        "MM-PURCHASE-ORDER",
        _B,
        "Stores resolve in order: Produce Stand, Butcher Shop, Bakery, Supermarket.",
        refuses=False,
    ),
    Rule(
        "MM-PURCHASE-FIFO",
        _B,
        "The Chef Cap on top of the stack buys first: first in, first out.",
        refuses=False,
    ),
    Rule(
        "MM-PURCHASE-ONE",
        _B,
        "One ingredient per turn: any card in that store's window.",
    ),
    Rule(
        "MM-PURCHASE-COST",
        _B,
        "The cost is the number of pawns in the stack at that moment, whoever's they are.",
    ),
    Rule(
        "MM-COINS-OWNER",
        _B,
        "Coins spent go on the store deck to its owner, who collects them at clean-up.",
        refuses=False,
    ),
    Rule(
        "MM-COINS-NEXT-ROUND",
        _P,
        "Coins earned or collected this round cannot be spent until the next round.",
        refuses=False,
    ),
    Rule(
        "MM-COINS-UNOWNED",
        _C,
        "Coins spent at an unowned store: with 2 chefs they stay for the store's next owner; "
        "otherwise back to the bank.",
        refuses=False,
    ),
    Rule(
        "MM-LEAVE-LINE",
        _B,
        "On their turn, before buying, a chef may take their Chef Cap out of the line without"
        " buying.",
    ),
    Rule(
        "MM-SOLD-OUT",
        _B,
        "When the store's 3 ingredients are sold it is sold out; the rest of the line may not"
        " buy there this round.",
    ),
    Rule(
        "MM-BASKET-SIZE",
        _B,
        "At most 6 ingredients in a basket: a 7th forces a Menu to be completed or a card "
        "discarded.",
    ),
    Rule(
        "MM-DISCARD",
        _B,
        "Only with a 7th card may a chef discard; a discard is shuffled back into its store deck.",
    ),
    Rule(
        "MM-MENU-SOURCE",
        _M,
        "A chef completes Menus from their own secret hand or the community row (from "
        "ruleset 4, as the row stands when the command is sent: a Menu revealed to "
        "replace a completed one is completed by a later command).",
    ),
    Rule(
        "MM-MENU-INGREDIENTS",
        _M,
        "Every ingredient on the Menu is fulfilled once, by cards in the chef's basket, each "
        "card used once.",
    ),
    Rule(
        "MM-MENU-REPLACE",
        _M,
        "A completed community Menu is replaced at once from the Menu deck; secret Menus are "
        "not replaced.",
        refuses=False,
    ),
    Rule(
        "MM-POWER-FOOD",
        "Power Foods",
        "Two cards of the same ingredient fulfil any ingredient of that store; the higher "
        "star value scores.",
    ),
    Rule(
        "MM-CLEANUP-OWNERS",
        _C,
        "Owners pick up their Chef Cap and collect the coins spent at their store.",
        refuses=False,
    ),
    Rule(
        "MM-CLEANUP-COIN",
        _C,
        "Chefs who took a bank coin pick up their Chef Cap and the coin.",
        refuses=False,
    ),
    Rule(
        "MM-CLEANUP-RESTOCK",
        _C,
        "Stores are restocked from their decks; the Supermarket gets 1 card from each deck.",
        refuses=False,
    ),
    Rule("MM-CLEANUP-FIRST-CHEF", _C, "The First Chef token passes clockwise.", refuses=False),
    Rule(
        "MM-END-THIRD-MENU",
        _E,
        "When a chef completes 3 Menus, all chefs finish the round and then score.",
        refuses=False,
    ),
    Rule(
        "MM-SCORE",
        _E,
        "Score the stars of ingredients used in completed Menus (dual cards: the matching "
        "ingredient); leftovers score nothing.",
        refuses=False,
    ),
    Rule(
        "MM-TIE",
        _E,
        "Tied chefs: the most coins wins; still tied, they share the victory.",
        refuses=False,
    ),
    Rule(
        "MM-I1",
        "Contents",
        "2 to 6 chefs; the Supermarket is used with 4 or more; with 3 or more chefs unowned "
        "coins return to the bank.",
        True,
    ),
    Rule(
        "MM-I2",
        _P,
        "A chef may not own a store where they stand in line, nor join a line where they own.",
        True,
    ),
    Rule(
        "MM-I3",
        _B,
        "Each pawn is one purchase turn; cost is the stack size then. Ruleset 2: a chef who "
        "cannot pay, or whose store has sold out, still has the turn: they may complete "
        "Menus, then leave; a turn in which nothing is possible (judged from public "
        "information) passes by itself. Ruleset 1: such a chef left the line without a turn.",
        True,
        refuses=False,
    ),
    Rule(
        "MM-I4",
        _M,
        "Menus are completed on the chef's own purchase turn, before or after buying "
        "(FinishPurchaseTurn ends it after buying).",
        True,
    ),
    Rule(
        "MM-I5",
        "Power Foods",
        "A dual card fulfils one of its two ingredients; a Power Food is two cards that both "
        "show the same ingredient.",
        True,
    ),
    Rule(
        "MM-I6",
        _E,
        "After the round of a third Menu (clean-up included) the game is scored.",
        True,
        refuses=False,
    ),
    Rule(
        "MM-I7",
        _E,
        "Ruleset 3: the game also ends after a clean-up once no Menu left can be completed "
        "with the cards left, judged from public information (while a store has cards, all "
        "ingredient cards in play count; then each chef's own basket, for the community "
        "Menus and, while the chef holds secret Menus, any Menu not yet seen), or once a "
        "whole round has passed with every store empty and no Menu completed, or after "
        "round round_limit if the organiser sets one (off by default). Ruleset 2 judged a "
        "table with every store empty from each chef's own secret Menus and the Menu deck. "
        "Ruleset 1: it ended when no Menu or no ingredient was left, or after round_limit "
        "(default 30).",
        True,
        refuses=False,
    ),
    Rule(
        "MM-I8",
        _P,
        "A chef with nowhere to place a Chef Cap (owns every store, no coin to take) keeps it"
        " off the board this round.",
        True,
        refuses=False,
    ),
    Rule(
        "MM-I9",
        _C,
        "A store deck that runs out leaves its window short; a store with an empty window is "
        "sold out.",
        True,
        refuses=False,
    ),
)


SPEC = Spec(
    kind=KIND,
    title="Menu Masters",
    rulebook="shared/rulebooks/menu-masters.txt",
    min_seats=2,
    max_seats=6,
    seats_rule="MM-I1",
    end_rule="MM-GAME-OVER",
    turn_rules=("MM-TURN-ORDER",),
    options_rule="MM-OPTIONS",
    ruleset_version="4",
    rulesets=RULESETS,
    options=OPTIONS,
    rng_labels=(*DECK_LABELS, FIRST_SEAT_LABEL, MENU_LABEL),
    rules=RULES,
    command_field="menu_masters",
    command_type=pb.MenuMastersCommand,
)
