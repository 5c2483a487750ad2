"""Menu Masters: setup, the automatic steps of a round, and scoring.

After a pawn is placed the next chef places (or Step 2 begins); after a purchase turn
ends the next one starts (a chef who cannot buy may leave by itself, MM-I3); after the
last line the round is cleaned up (owners and coin collectors collect, stores restock,
the First Chef token passes) and the game ends (MM-I6, MM-I7) or the next round begins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from feastlog.replay.games.engine import Fact, Outcome
from feastlog.replay.games.menu_masters.menus import blocked, menu_still_possible, nothing_to_do
from feastlog.replay.games.menu_masters.pack import DECKS, Pack
from feastlog.replay.games.menu_masters.spec import (
    BANK_PER_CHEF,
    BOX_COINS,
    COMMUNITY_MENUS,
    DECK_LABELS,
    FIRST_SEAT_LABEL,
    MENU_LABEL,
    PAWNS,
    SECRET_MENUS,
    START_COINS,
    SUPERMARKET_CHEFS,
    WINDOW,
)
from feastlog.replay.games.menu_masters.state import (
    OVER,
    PLACE,
    PURCHASE,
    Chef,
    State,
    StateV2,
    StateV3,
    StoreBoard,
    Turn,
    can_place,
    evolve,
    store_name,
    with_chef,
    with_store,
)
from feastlog.replay.record.rng import Rng

Result = tuple[State, list[Fact]]


def setup(
    seats: Sequence[str],
    options: Mapping[str, str],
    pack: Pack,
    rng: Rng,
    ruleset: str,
) -> tuple[State, list[Fact]]:
    """Stores, decks, windows, coins, First Chef and Menus, as the rulebook's Setup says."""
    n = len(seats)
    limit = 0 if options["round_limit"] == "off" else int(options["round_limit"])
    decks = []
    for deck, label in zip(DECKS, DECK_LABELS, strict=True):
        shuffled, rng = rng.shuffle(label, [c.id for c in pack.cards if c.deck == deck])
        decks.append(shuffled)
    stores = [StoreBoard(d[WINDOW:], d[:WINDOW], (), None, 0) for d in decks]
    if n >= SUPERMARKET_CHEFS:
        window = tuple(s.deck[0] for s in stores)
        stores = [evolve(s, deck=s.deck[1:]) for s in stores]
        stores.append(StoreBoard((), window, (), None, 0))
    if options["first_seat"] == "random":
        first, rng = rng.uniform(FIRST_SEAT_LABEL, n)
    else:
        first = int(options["first_seat"])
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
    if ruleset == "1":
        state = State(*fields)
    elif ruleset == "2":
        state = StateV2(*fields, ruleset=2)
    else:
        state = StateV3(*fields, ruleset=int(ruleset))
    facts: list[Fact] = [
        {
            "type": "setup",
            "chefs": n,
            "first_chef": first,
            "windows": {store_name(i): list(s.window) for i, s in enumerate(stores)},
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


def next_placer(state: State, last: int, facts: list[Fact]) -> Result:
    """MM-PLACE-ORDER: the next chef clockwise with pawns left; none left: Step 2."""
    n = len(state.chefs)
    seat = last
    while any(c.pawns for c in state.chefs):
        seat = (seat + 1) % n
        if not state.chefs[seat].pawns:
            continue
        if can_place(state, seat):
            return evolve(state, placing=seat), facts
        left = state.chefs[seat].pawns
        facts.append({"type": "pawns_unplaced", "seat": seat, "count": left})
        state = with_chef(state, seat, pawns=0)
    state = evolve(state, placing=None, step=PURCHASE)
    lines = {store_name(i): list(s.line) for i, s in enumerate(state.stores)}
    owners = {store_name(i): s.owner for i, s in enumerate(state.stores)}
    facts.append({"type": "purchase_started", "lines": lines, "owners": owners})
    return advance(state, facts)


def advance(state: State, facts: list[Fact]) -> Result:
    """MM-PURCHASE-ORDER, MM-I3: start the next purchase turn, or clean up.

    Ruleset 1 removes a chef who cannot buy without a turn.  From ruleset 2 that chef has
    the turn (to complete Menus, then leave), which passes by itself when nothing is
    possible in it (judged from public information, see ``menu_masters_possible``).
    """
    while state.turn is None:
        index = next((i for i, s in enumerate(state.stores) if s.line), None)
        if index is None:
            return _clean_up(state, facts)
        store = state.stores[index]
        top, cost = store.line[0], len(store.line)
        why = blocked(state, index, top)
        if why == "sold_out" and state.version == 1:
            facts.append(sold_out(index, store.line))
            state = with_store(state, index, line=())
        elif why and (state.version == 1 or nothing_to_do(state, top)):
            state, fact = leave(state, index, why)
            facts.append(fact)
        else:
            state = evolve(state, turn=Turn(top, index, False))
            fact = {"type": "turn_started", "seat": top, "store": store_name(index), "cost": cost}
            facts.append(fact | ({"cannot_buy": why} if why else {}))
    return state, facts


def leave(state: State, index: int, why: str) -> tuple[State, Fact]:
    """The chef at the top of a line who cannot buy leaves it without a turn to play."""
    store = state.stores[index]
    top, cost = store.line[0], len(store.line)
    state = with_store(state, index, line=store.line[1:])
    fact: Fact = {"type": "left_line", "seat": top, "store": store_name(index), "reason": why}
    if why == "cannot_pay":
        fact |= {"cost": cost, "coins": state.chefs[top].coins}
    if state.version > 1:
        fact["nothing_to_do"] = True
    return state, fact


def sold_out(index: int, line: tuple[int, ...]) -> Fact:
    """MM-SOLD-OUT: the store is empty and these chefs leave its line."""
    return {"type": "sold_out", "store": store_name(index), "left": list(line)}


def _clean_up(state: State, facts: list[Fact]) -> Result:
    """Step 3: owners and coin collectors collect, restock, pass the token; maybe end."""
    n = len(state.chefs)
    facts.append({"type": "clean_up", "round": state.round})
    for index, store in enumerate(state.stores):
        name = store_name(index)
        if store.owner is not None:
            chef = state.chefs[store.owner]
            state = with_chef(state, store.owner, coins=chef.coins + store.pot)
            facts.append(
                {"type": "owner_collected", "seat": store.owner, "store": name, "coins": store.pot}
            )
        elif store.pot and n == 2:
            facts.append({"type": "coins_stay", "store": name, "coins": store.pot})
            continue
        elif store.pot:
            state = evolve(state, bank=state.bank + store.pot)
            facts.append({"type": "coins_to_bank", "store": name, "coins": store.pot})
        state = with_store(state, index, pot=0, owner=None)
    for seat, chef in enumerate(state.chefs):
        if chef.coin_waiting:
            state = with_chef(state, seat, coins=chef.coins + 1, coin_waiting=False)
            facts.append({"type": "bank_coin_collected", "seat": seat})
    state = _restock(state, facts)
    first = (state.first_chef + 1) % n
    state = evolve(state, first_chef=first)
    facts.append({"type": "first_chef_passed", "seat": first})
    facts.append(
        {"type": "coins", "round": state.round, "coins": [c.coins for c in state.chefs]}
        | {
            "bank": state.bank,
            "store_boards": {store_name(i): s.pot for i, s in enumerate(state.stores)},
        }
    )
    state, stalled = _stall(state)
    end = _end_reason(state) or ("stalled" if stalled else "")
    if end:
        return _game_over(evolve(state, end=end), facts)
    chefs = tuple(evolve(c, pawns=PAWNS) for c in state.chefs)
    state = evolve(state, round=state.round + 1, step=PLACE, placing=first, chefs=chefs)
    facts.append({"type": "round_started", "round": state.round, "first_chef": first})
    return state, facts


def _restock(state: State, facts: list[Fact]) -> State:
    """MM-CLEANUP-RESTOCK, MM-I9: windows back to 3 from their decks; Supermarket 1 each."""
    for index in range(len(DECKS)):
        store = state.stores[index]
        drawn = store.deck[: WINDOW - len(store.window)]
        if drawn:
            state = with_store(
                state, index, window=(*store.window, *drawn), deck=store.deck[len(drawn) :]
            )
            facts.append({"type": "restocked", "store": store_name(index), "cards": list(drawn)})
    if len(state.stores) > len(DECKS):
        market = len(DECKS)
        have = {state.pack.card(c).deck for c in state.stores[market].window}
        added: list[str] = []
        for index, deck in enumerate(DECKS):
            source = state.stores[index].deck
            if deck not in have and source:
                added.append(source[0])
                state = with_store(state, index, deck=source[1:])
        if added:
            window = (*state.stores[market].window, *added)
            state = with_store(state, market, window=window)
            facts.append({"type": "restocked", "store": store_name(market), "cards": added})
    return state


def _stall(state: State) -> tuple[State, bool]:
    """MM-I7 (ruleset 3): whether a whole round with every store empty has passed with no
    Menu completed, and the state remembering this clean-up for the next."""
    if not isinstance(state, StateV3):
        return state, False
    empty = not any(s.window or s.deck for s in state.stores)
    completed = sum(len(c.completed) for c in state.chefs) if empty else -1
    stalled = empty and state.completed_when_empty == completed
    return evolve(state, completed_when_empty=completed), stalled


def _end_reason(state: State) -> str:
    """MM-I6, MM-I7: why the game ends after this clean-up, or "" to play on."""
    if state.third_menu_by is not None:
        return "third_menu"
    if state.version > 1:
        if not menu_still_possible(state):
            return "no_menu_possible"
        return "round_limit" if state.round_limit and state.round >= state.round_limit else ""
    if not (state.menu_deck or state.community or any(c.menus for c in state.chefs)):
        return "no_menus_left"
    if not any(s.window or s.deck for s in state.stores):
        return "no_ingredients_left"
    if state.round >= state.round_limit:
        return "round_limit"
    return ""


def outcome(state: State) -> Outcome:
    """MM-SCORE, MM-TIE: stars per chef, winners by stars then coins, ties share."""
    points = tuple(c.stars() for c in state.chefs)
    coins = tuple(c.coins for c in state.chefs)
    best = max(zip(points, coins, strict=True))
    winners = tuple(s for s in range(len(points)) if (points[s], coins[s]) == best)
    return Outcome(points, winners, coins)


def _game_over(state: State, facts: list[Fact]) -> Result:
    """The end: score, and a game_over fact with the whole scoring table."""
    result = outcome(state)
    table = [
        {"seat": s, "stars": c.stars(), "coins": c.coins}
        | {"menus": [{"menu": d.menu, "stars": d.stars} for d in c.completed]}
        for s, c in enumerate(state.chefs)
    ]
    facts.append(
        {"type": "game_over", "reason": state.end, "points": list(result.points)}
        | {"winners": list(result.winners), "coins": list(result.tiebreak), "table": table}
    )
    return evolve(state, step=OVER, placing=None, turn=None), facts


def is_over(state: State) -> bool:
    """Whether the game has ended."""
    return bool(state.step == OVER)
