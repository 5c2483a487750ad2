"""Menu Masters: the rule catalogue, one id per rule of the rulebook and per reading.

Rulebook: shared/rulebooks/menu-masters.txt.  Ids ``MM-I1`` .. ``MM-I6`` are the readings
of DESIGN section 8; ``MM-I7`` .. ``MM-I9`` are readings this engine adds.  A rule no
command can break (setup, flow, scoring) is marked ``refuses=False``.
"""

from __future__ import annotations

from collections.abc import Mapping

from replay.engine import Rule, catalogue

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
        "A chef completes Menus from their own secret hand or the community row.",
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
        "Ruleset 2: the game also ends after a clean-up once no Menu left can be completed "
        "with the cards left (while a store has cards, all ingredient cards in play count; "
        "then only each chef's own basket), or after round round_limit if the organiser "
        "sets one (off by default). Ruleset 1: it ended when no Menu or no ingredient was "
        "left, or after round_limit (default 30).",
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
