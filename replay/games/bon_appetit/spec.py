"""Bon Appetit!: the facts of the game, first: seats, options, RNG labels, the rule catalogue.

Rulebook: shared/rulebooks/bon-appetit.txt.  Ids ``BA-I1`` .. ``BA-I8`` are the readings of
DESIGN section 8; ``BA-I9`` .. ``BA-I13`` are readings this engine adds.

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

from collections.abc import Mapping

from feastlog.replay.games.engine import Option, Rule, Spec, catalogue
from feastlog.v1 import bon_appetit_pb2 as pb

KIND = "bon-appetit"
ROUNDS = 12
GEM_CARD_LABEL = f"{KIND}/gem-card"
DISH_DECK_LABEL = f"{KIND}/dish-deck"
BAG_LABEL = f"{KIND}/bag"
FIRST_SEAT_LABEL = f"{KIND}/first-seat"

OPTIONS = (
    Option("first_seat", ("random",), "BA-OPTIONS", "BA-SETUP-FIRST", open_value="seat"),
    Option("gem_ability", ("per_bid", "per_gem"), "BA-OPTIONS", "BA-I3"),
    Option("tie_break_value", ("alone", "cumulative"), "BA-OPTIONS", "BA-I1"),
    Option("max_bid", ("rulebook", "four"), "BA-OPTIONS", "BA-I13"),
)
# Ruleset versions this build folds, each with its option defaults (one so far).
RULESETS: Mapping[str, Mapping[str, str]] = {
    "1": {
        "first_seat": "random",
        "gem_ability": "per_bid",
        "tie_break_value": "alone",
        "max_bid": "rulebook",
    },
}

RULES: Mapping[str, Rule] = catalogue(
    Rule(
        "BA-SEATS",
        "Setup: Receive starting gems",
        "Bon Appetit! is for 2 to 4 players (the starting gems are given for 2, 3 and 4).",
    ),
    Rule(
        "BA-SETUP-GEM-CARD",
        "Setup: Set up the Gem Card",
        "Draw one gem of each colour from the bag: the first drawn is worth 1, ... the fourth 4.",
        refuses=False,
    ),
    Rule(
        "BA-SETUP-DISHES",
        "Setup: Prepare the Dish Cards",
        "Shuffle the 13 dishes, remove 1 unseen, lay 3 face up in the Menu row.",
        refuses=False,
    ),
    Rule(
        "BA-SETUP-BAG",
        "Setup: Receive starting gems",
        "The other 16 gems go in the bag (3 of each colour, 12, with 2 players).",
        refuses=False,
    ),
    Rule(
        "BA-SETUP-HANDS",
        "Setup: Receive starting gems",
        "Each player secretly draws 5 gems (4 with 4 players) and keeps them in hand.",
        refuses=False,
    ),
    Rule(
        "BA-SETUP-FIRST",
        "Setup: Choose the starting player",
        "A starting player is chosen (option first_seat: at random, or a given seat).",
        refuses=False,
    ),
    Rule(
        "BA-OPTIONS",
        "feastlog record",
        "The rule options are first_seat, gem_ability, tie_break_value and max_bid, each "
        "with its listed values.",
    ),
    Rule(
        "BA-HIDDEN-GEMS",
        "Setup: Receive starting gems",
        "Gems in hand are secret: others see how many, never which.",
        refuses=False,
    ),
    Rule(
        "BA-ROUNDS",
        "Playing the Game",
        "The game lasts 12 rounds, one dish auctioned each round.",
        refuses=False,
    ),
    Rule(
        "BA-PHASES",
        "Playing the Game",
        "A round runs New Dish, Bidding (with tie-breaks), Gem Value Adjustment, Cleanup; "
        "a command must fit the current phase.",
    ),
    Rule(
        "BA-NEW-DISH",
        "1. New Dish Phase",
        "The rightmost Menu card goes to the middle, the others slide right, a new card "
        "fills the row while the deck lasts.",
        refuses=False,
    ),
    Rule(
        "BA-TURN",
        "2. Bidding Phase",
        "Bids are simultaneous and sealed: each bidder seals one bid per bidding round.",
    ),
    Rule("BA-BID-SIZE", "2. Bidding Phase", "A bid is 0-3 gems (with 2 players 0-4 gems)."),
    Rule(
        "BA-BID-COLOURS",
        "2. Bidding Phase",
        "With 2 players (or any number with max_bid four) a bid holds gems of at most 3 "
        "different colours.",
    ),
    Rule("BA-BID-OWN", "2. Bidding Phase", "A player bids only gems from their own hand."),
    Rule(
        "BA-REVEAL",
        "2. Bidding Phase",
        "When everyone has bid, all bids are revealed.",
        refuses=False,
    ),
    Rule(
        "BA-BID-VALUE",
        "2. Bidding Phase",
        "A bid is worth the sum of the current Gem Card values of its gems.",
        refuses=False,
    ),
    Rule(
        "BA-HIGHEST-WINS",
        "2. Bidding Phase",
        "The highest bid wins the auction and takes the dish.",
        refuses=False,
    ),
    Rule("BA-ZERO-LOSES", "Bidding 0 Gems", "A bid of 0 gems loses the auction.", refuses=False),
    Rule("BA-ALL-ZERO", "Bidding 0 Gems", "If every bid is 0, the dish is removed.", refuses=False),
    Rule(
        "BA-TIE",
        "Resolving Ties",
        "Players tied for the highest bid leave their bids on the table and bid again "
        "from their hand; the highest second bid wins.",
        refuses=False,
    ),
    Rule(
        "BA-TIE-UNRESOLVED",
        "Resolving Ties",
        "A tie that cannot be resolved removes the dish; no one wins.",
        refuses=False,
    ),
    Rule(
        "BA-GEM-ABILITY",
        "Special Abilities",
        "A gem ability makes a colour worth more, only for the dish's owner.",
        refuses=False,
    ),
    Rule(
        "BA-DISH-ABILITY",
        "Special Abilities",
        "A dish ability adds value when bidding for a dish type or a named dish, only with "
        "at least 1 gem bid.",
        refuses=False,
    ),
    Rule(
        "BA-LOSERS-KEEP",
        "3. Gem Value Adjustment Phase",
        "Everyone but the winner keeps the gems they bid.",
        refuses=False,
    ),
    Rule(
        "BA-VALUE-DOWN",
        "3. Gem Value Adjustment Phase",
        "Each colour the winner paid goes down 1 on the Gem Card (minimum 1).",
        refuses=False,
    ),
    Rule(
        "BA-VALUE-UP",
        "3. Gem Value Adjustment Phase",
        "Each colour the winner did not pay goes up 1 on the Gem Card (maximum 4).",
        refuses=False,
    ),
    Rule(
        "BA-PAY-TO-BAG",
        "3. Gem Value Adjustment Phase",
        "The winner returns the gems they paid to the bag.",
        refuses=False,
    ),
    Rule(
        "BA-CLEANUP-DRAW",
        "4. Cleanup Phase",
        "Clockwise from the left of the last auction winner, each player whose initial bid "
        "was 0 draws 1 gem, until all have drawn or the bag is empty.",
        refuses=False,
    ),
    Rule(
        "BA-CLEANUP-INITIAL-ONLY",
        "4. Cleanup Phase",
        "Only initial bids of 0 count: a 0 in a tie-break earns no draw.",
        refuses=False,
    ),
    Rule(
        "BA-CLEANUP-LAST",
        "4. Cleanup Phase",
        "With no dish left in the Menu row there is no cleanup: the game ends.",
        refuses=False,
    ),
    Rule(
        "BA-END",
        "Game End",
        "The game ends after the final dish is bid for; no command is taken after.",
    ),
    Rule(
        "BA-SCORE",
        "Game End",
        "Each player scores the points of the dishes in front of them; the highest wins.",
        refuses=False,
    ),
    Rule(
        "BA-TIEBREAK-GEMS",
        "Game End",
        "A tie goes to the tied player with the most valuable gems remaining.",
        refuses=False,
    ),
    Rule(
        "BA-SHARED-VICTORY", "Game End", "Still tied, the players share the victory.", refuses=False
    ),
    Rule(
        "BA-I1",
        "DESIGN 8",
        "Tie-break: the tied bid again from their hand (any number of "
        "gems); the new bid is compared alone (option tie_break_value: alone | cumulative); "
        "rounds repeat among the still tied; a round adding no gem, or no tied player with "
        "gems, leaves the tie unresolved.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I2",
        "DESIGN 8",
        "The winner pays every gem they put down (first and tie-break "
        "bids); those colours go down, the others up; the losers take theirs back.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I3",
        "DESIGN 8",
        "A gem ability adds its bonus once to a bid holding at least one "
        "gem of its colour (option gem_ability: per_bid | per_gem).",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I4",
        "DESIGN 8",
        "Dish abilities apply to tie-break bids too, again only with at least one gem.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I5",
        "DESIGN 8",
        "With no winner yet, cleanup draws start with the starting player.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I6",
        "DESIGN 8",
        "Gem values change only when someone wins the dish.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I7",
        "DESIGN 8",
        "The final tie-break sums the current Gem Card values of the gems left in hand.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I8",
        "DESIGN 8",
        "Hand sizes are public, colours are not; a sealed bid still "
        "counts in its bidder's hand size until it is revealed.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I9",
        "feastlog reading",
        "A bidder with no gem in hand cannot choose: their bid "
        "of 0 is sealed automatically and they are not waited for.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I10",
        "feastlog reading",
        "Seat order is clockwise: the left of seat k is k+1; "
        "cleanup draws are made automatically (drawing is never worse).",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I11",
        "feastlog reading",
        "At setup the first of the 3 dishes drawn lies "
        "rightmost (auctioned first); the new card of each round enters at the left.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I12",
        "feastlog reading",
        "Abilities of several owned dishes add up; a dish's own "
        "ability never helps in the auction for it.",
        True,
        refuses=False,
    ),
    Rule(
        "BA-I13",
        "feastlog reading",
        "The Fugu Platter example shows a 4-gem bid with 3 players against the 0-3 rule: the "
        "rule wins by default (option max_bid: rulebook | four, four following the example).",
        True,
        refuses=False,
    ),
)


SPEC = Spec(
    kind=KIND,
    title="Bon Appetit!",
    rulebook="shared/rulebooks/bon-appetit.txt",
    min_seats=2,
    max_seats=4,
    seats_rule="BA-SEATS",
    end_rule="BA-END",
    turn_rules=("BA-TURN",),
    options_rule="BA-OPTIONS",
    ruleset_version="1",
    rulesets=RULESETS,
    options=OPTIONS,
    rng_labels=(GEM_CARD_LABEL, DISH_DECK_LABEL, BAG_LABEL, FIRST_SEAT_LABEL),
    rules=RULES,
    command_field="bon_appetit",
    command_type=pb.BonAppetitCommand,
)
