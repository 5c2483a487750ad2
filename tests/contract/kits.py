"""What the contract tests need of each game beyond its engine: its kit.

A kit holds, for a game kind, how many seats its seeded games have, one refused command
(or setup) for every rule of the catalogue that can refuse (the rules that never refuse
are marked ``refuses=False``), a generator of well-formed commands to try at any
position (any seat, any card, colour, store or Menu of the game), and where the game's
own scenario tests are (they cite every rule id).  A game registered
without a kit fails the contract tests: registering a game means bringing its kit.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from google.protobuf.message import Message

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.record.rng import Rng
from feastlog.v1 import bon_appetit_pb2 as ba
from feastlog.v1 import menu_masters_pb2 as mm
from feastlog.v1 import picky_eaters_pb2 as pe
from tests.replay import test_bon_appetit_rules as bar
from tests.replay import test_menu_masters_support as mms
from tests.replay import test_picky_eaters_helpers as peh

Thunk = Callable[[], object]


def _ba(state: Any, seat: int, command: Message) -> Thunk:
    return lambda: fold.play(games.engine("bon-appetit"), state, seat, command)


def _mm(state: Any, seat: int, command: Message) -> Thunk:
    return lambda: fold.play(games.engine("menu-masters"), state, seat, command)


def _pe(state: Any, seat: int, command: Message) -> Thunk:
    return lambda: fold.play(games.engine("picky-eaters"), state, seat, command)


def _ba_over() -> Any:
    state = bar.position(["b", "g", "y"], menu=(), deck=(), round_no=12)
    return bar.play(state, (0, bar.bid("")), (1, bar.bid("")), (2, bar.bid("")))[0]


def _ba_refusals() -> dict[str, Thunk]:
    setup = games.engine("bon-appetit").setup
    tie = bar.play(bar.position(["bgy", "bgg", "r"]), (0, bar.bid("b")), (1, bar.bid("b")))[0]
    tie = bar.play(tie, (2, bar.bid("")))[0]
    return {
        "BA-SEATS": lambda: setup(("Ann",), {}, bar.PACK, Rng(bar.SEED), "1"),
        "BA-OPTIONS": lambda: setup(
            bar.NAMES[:3], {"max_bid": "five"}, bar.PACK, Rng(bar.SEED), "1"
        ),
        "BA-PHASES": _ba(tie, 0, bar.bid("g")),
        "BA-TURN": _ba(tie, 2, bar.tie("r")),
        "BA-BID-SIZE": _ba(bar.position(["bbggr", "r", "y"]), 0, bar.bid("bbgg")),
        "BA-BID-COLOURS": _ba(bar.position(["bgry", "b"]), 0, bar.bid("bgry")),
        "BA-BID-OWN": _ba(bar.position(["b", "g", "y"]), 1, bar.bid("y")),
        "BA-END": _ba(_ba_over(), 0, bar.bid("")),
    }


def _mm_turn(basket: list[str], coins: int = 6) -> Any:
    """Ann at the top of the Produce Stand line with ``basket`` and Tomato Bruschetta."""
    state = mms.give(mms.new_game(3), 0, basket=basket, menus=["menu-05"], coins=coins)
    state = mms.window(state, mms.PRODUCE, ["produce-01", "produce-09", "produce-15"])
    return mms.purchasing(state, {mms.PRODUCE: [0, 1]})[0]


def _mm_refusals() -> dict[str, Thunk]:
    engine = games.engine("menu-masters")
    m = mms
    turn = _mm_turn(["produce-08", "bakery-01"])
    bought = m.run(turn, (0, m.buy("produce-01")))[0]
    six = ["produce-02", "produce-03", "produce-16", "butcher-15", "bakery-22", "bakery-23"]
    seventh = m.run(_mm_turn(six), (0, m.buy("produce-01")))[0]
    broke = _mm_turn(["produce-08", "bakery-01"], coins=0)
    sold_out = m.purchasing(
        m.window(m.give(m.new_game(3), 0, basket=["produce-08", "bakery-01"]), m.PRODUCE, []),
        {m.PRODUCE: [0]},
    )[0]
    owned = m.run(m.new_game(3), (0, m.own(m.PRODUCE)))[0]
    queued = m.run(owned, (1, m.line(m.BAKERY)), (2, m.line(m.BUTCHER)))[0]
    coin = m.run(m.new_game(3), (0, m.coin()), (1, m.line(m.BAKERY)), (2, m.line(m.BAKERY)))[0]
    return {
        "MM-I1": lambda: engine.setup(tuple("ABCDEFG"), {}, m.PACK, Rng(bytes(32)), "2"),
        "MM-OPTIONS": lambda: engine.setup(
            tuple("ABC"), {"round_limit": "0"}, m.PACK, Rng(bytes(32)), "2"
        ),
        "MM-GAME-OVER": _mm(replace(turn, step="over", end="third_menu"), 0, m.leave()),
        "MM-TURN-ORDER": _mm(turn, 1, m.leave()),
        "MM-STEP": _mm(turn, 0, m.line(m.BAKERY)),
        "MM-I2": _mm(queued, 0, m.line(m.PRODUCE)),
        "MM-PLACE-OWN": _mm(owned, 1, m.own(m.PRODUCE)),
        "MM-PLACE-COIN": _mm(coin, 0, m.coin()),
        "MM-PURCHASE-ONE": _mm(turn, 0, m.buy("bakery-02")),
        "MM-PURCHASE-COST": _mm(broke, 0, m.buy("produce-01")),
        "MM-SOLD-OUT": _mm(sold_out, 0, m.buy("produce-01")),
        "MM-LEAVE-LINE": _mm(bought, 0, m.leave()),
        "MM-I4": _mm(turn, 0, m.finish()),
        "MM-BASKET-SIZE": _mm(seventh, 0, m.finish()),
        "MM-DISCARD": _mm(turn, 0, m.discard("produce-08")),
        "MM-MENU-SOURCE": _mm(
            m.give(turn, 1, menus=["menu-01"]),  # Bob's secret Menu, not Ann's
            0,
            m.complete(m.completion("menu-01", salmon="produce-08", bread="bakery-01")),
        ),
        "MM-MENU-INGREDIENTS": _mm(
            turn, 0, m.complete(m.completion("menu-05", tomato="produce-08"))
        ),
        "MM-I5": _mm(
            turn, 0, m.complete(m.completion("menu-05", tomato="bakery-01", bread="produce-08"))
        ),
        "MM-POWER-FOOD": _mm(
            turn,
            0,
            m.complete(
                m.completion(
                    "menu-05", tomato=("tomato", "produce-08", "produce-08"), bread="bakery-01"
                )
            ),
        ),
    }


MOUSSAKA = [peh.ing("eggplant"), peh.ing("beef"), peh.ing("tomato")]
FIVE = ["recipe-pizza", "recipe-sushi", "recipe-dal", "recipe-naan", "recipe-pho"]
SILVER, HOT, HERBS = "item-fancy-silverware-1", "item-hot-plate-1", "item-sprinkle-of-herbs-1"
SEASONING, SEASONING2 = "item-extra-seasoning-1", "item-extra-seasoning-2"


def _pe_refusals() -> dict[str, Thunk]:
    p = peh
    setup = games.engine("picky-eaters").setup
    cook = p.position(hands=[["recipe-moussaka", *MOUSSAKA, SEASONING]], market=[p.ing("corn")])
    full = p.position(hands=[["recipe-moussaka", *MOUSSAKA, SILVER]], recipes={0: FIVE})
    over = p.position(phase="over", round_=5)
    dealt = p.position(hands=[p.filler(11)], phase="discard-down")
    eleven = p.position(hands=[p.filler(11)])
    spare = p.filler(6)
    return {
        "PE-I1": lambda: setup(["Solo"], {}, p.PACK, Rng(bytes(32)), "2"),
        "PE-OPTIONS": lambda: setup(
            ["Ann", "Bob"], {"small_table_variant": "maybe"}, p.PACK, Rng(bytes(32)), "2"
        ),
        "PE-GAME-END": _pe(over, 0, p.pass_()),
        "PE-PASS": _pe(p.position(passed=[1], turn=0), 1, p.pass_()),
        "PE-TURN-ORDER": _pe(cook, 1, p.pass_()),
        "PE-HAND-LIMIT-DEAL": _pe(dealt, 0, p.pass_()),
        "PE-HAND-LIMIT": _pe(eleven, 0, p.pass_()),
        "PE-HAND-CARDS": _pe(cook, 0, p.draw(p.ing("rice"), MOUSSAKA[0])),
        "PE-TAKE-MARKET": _pe(cook, 0, p.take(p.ing("rice"))),
        "PE-MARKET-NO-REFILL": _pe(p.position(), 0, p.take(p.ing("rice"))),
        "PE-PREPARE-INGREDIENTS": _pe(cook, 0, p.prepare("recipe-moussaka", MOUSSAKA[:2])),
        "PE-SUBSTITUTE": _pe(
            p.position(hands=[["recipe-moussaka", *MOUSSAKA[:2], *spare[:2]]]),
            0,
            p.prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", spare[:2])]),
        ),
        "PE-SUBSTITUTE-ONCE": _pe(
            p.position(hands=[["recipe-moussaka", MOUSSAKA[0], *spare]]),
            0,
            p.prepare(
                "recipe-moussaka", [MOUSSAKA[0]], [("beef", spare[:3]), ("tomato", spare[3:])]
            ),
        ),
        "PE-I9": _pe(
            cook,
            0,
            p.prepare("recipe-moussaka", MOUSSAKA[:2], [("tomato", [MOUSSAKA[0], SEASONING])]),
        ),
        "PE-REPLACE": _pe(cook, 0, p.prepare("recipe-moussaka", MOUSSAKA, replaces="recipe-pizza")),
        "PE-REPLACE-HOT-PLATE": _pe(
            p.position(
                hands=[["recipe-moussaka", *MOUSSAKA]], recipes={0: [("recipe-pizza", [HOT])]}
            ),
            0,
            p.prepare("recipe-moussaka", MOUSSAKA, replaces="recipe-pizza"),
        ),
        "PE-SLOTS": _pe(full, 0, p.prepare("recipe-moussaka", MOUSSAKA)),
        "PE-ITEM-PLAY": _pe(cook, 0, p.item(MOUSSAKA[0], "recipe-pizza")),
        "PE-ITEM-SILVERWARE": _pe(
            p.position(hands=[[SILVER]], recipes={0: ["recipe-pizza"]}),
            0,
            p.item(SILVER, "recipe-pizza"),
        ),
        "PE-ITEM-EXTRA-SEASONING": _pe(
            p.position(hands=[[SEASONING]], recipes={0: ["recipe-pizza"]}),
            0,
            p.item(SEASONING, "recipe-pizza"),
        ),
        "PE-ITEM-HERBS": _pe(
            p.position(hands=[[HERBS]], recipes={1: ["recipe-sushi"]}),
            0,
            p.item(HERBS, "recipe-sushi"),
        ),
        "PE-I2": _pe(
            p.position(hands=[[HOT]], recipes={1: ["recipe-sushi"]}), 0, p.item(HOT, "recipe-sushi")
        ),
        "PE-ITEM-UNIQUE": _pe(
            p.position(hands=[[SEASONING2]], recipes={1: [("recipe-sushi", [SEASONING])]}),
            0,
            p.item(SEASONING2, "recipe-sushi"),
        ),
        "PE-DISCARD-DRAW": _pe(cook, 0, p.draw(MOUSSAKA[0])),
    }


# Well-formed commands tried per seat and position
MUTATIONS = 12
GEMS = (
    ba.BON_APPETIT_GEM_BLUE,
    ba.BON_APPETIT_GEM_GREEN,
    ba.BON_APPETIT_GEM_RED,
    ba.BON_APPETIT_GEM_YELLOW,
)


def _ba_commands(table: fold.Table, legal: list[Any], rng: random.Random) -> Iterator[Message]:
    """Bids and tie-break bids of 0 to 6 gems of any colours, and legal ones changed a little."""
    for _ in range(MUTATIONS):
        gems = [rng.choice(GEMS) for _ in range(rng.randint(0, 6))]
        if rng.random() < 0.5:
            yield ba.BonAppetitCommand(bid=ba.BonAppetitBid(gems=gems))
        else:
            yield ba.BonAppetitCommand(tie_break_bid=ba.BonAppetitTieBreakBid(gems=gems))
    for command in rng.sample(legal, min(3, len(legal))):
        changed = ba.BonAppetitCommand()
        changed.CopyFrom(command)
        getattr(changed, changed.WhichOneof("action") or "bid").gems.append(rng.choice(GEMS))
        yield changed


def _mm_commands(table: fold.Table, legal: list[Any], rng: random.Random) -> Iterator[Message]:
    """Every placement, any card bought or discarded, Menus completed any which way."""
    pack = table.game.pack
    cards = [c.id for c in pack.cards]
    menus = [m.id for m in pack.menus]
    ingredients = sorted(pack.ingredients())
    for store in (
        mm.MENU_MASTERS_STORE_PRODUCE_STAND,
        mm.MENU_MASTERS_STORE_BUTCHER_SHOP,
        mm.MENU_MASTERS_STORE_BAKERY,
    ):
        for placement in (mm.MENU_MASTERS_PLACEMENT_LINE, mm.MENU_MASTERS_PLACEMENT_OWN):
            yield mm.MenuMastersCommand(
                place_pawn=mm.MenuMastersPlacePawn(store=store, placement=placement)
            )
    yield mm.MenuMastersCommand(
        place_pawn=mm.MenuMastersPlacePawn(placement=mm.MENU_MASTERS_PLACEMENT_COLLECT_COIN)
    )
    yield mm.MenuMastersCommand(
        place_pawn=mm.MenuMastersPlacePawn(
            store=mm.MENU_MASTERS_STORE_SUPERMARKET, placement=mm.MENU_MASTERS_PLACEMENT_LINE
        )
    )
    yield mm.MenuMastersCommand(leave_line=mm.MenuMastersLeaveLine())
    yield mm.MenuMastersCommand(finish_turn=mm.MenuMastersFinishPurchaseTurn())
    for _ in range(MUTATIONS // 3):
        yield mm.MenuMastersCommand(
            purchase=mm.MenuMastersPurchaseIngredient(card_id=rng.choice(cards))
        )
        yield mm.MenuMastersCommand(
            discard=mm.MenuMastersDiscardIngredient(card_id=rng.choice(cards))
        )
    basket = [c for chef in table.game.chefs for c in chef.basket] or cards
    for _ in range(MUTATIONS):
        fulfilments = []
        for _ in range(rng.randint(1, 4)):
            ingredient = rng.choice(ingredients)
            if rng.random() < 0.7:
                way = mm.MenuMastersFulfilment(
                    ingredient=ingredient, card_id=rng.choice(basket + cards[:3])
                )
            else:
                picked = [rng.choice(basket + cards[:3]) for _ in range(rng.randint(1, 3))]
                power = mm.MenuMastersPowerFood(ingredient=rng.choice(ingredients), card_ids=picked)
                way = mm.MenuMastersFulfilment(ingredient=ingredient, power_food=power)
            fulfilments.append(way)
        completion = mm.MenuMastersMenuCompletion(
            menu_id=rng.choice(menus), fulfilments=fulfilments
        )
        yield mm.MenuMastersCommand(complete_menus=mm.MenuMastersCompleteMenus(menus=[completion]))
    for command in legal:
        if command.WhichOneof("action") == "complete_menus":
            changed = mm.MenuMastersCommand()
            changed.CopyFrom(command)
            way = rng.choice(changed.complete_menus.menus[0].fulfilments)
            if way.WhichOneof("by") == "card_id":
                way.card_id = rng.choice(cards)
            else:
                way.ingredient = rng.choice(ingredients)
            yield changed
            yield mm.MenuMastersCommand(
                complete_menus=mm.MenuMastersCompleteMenus(
                    menus=[*command.complete_menus.menus] * 2
                )
            )
            break


def _pe_commands(table: fold.Table, legal: list[Any], rng: random.Random) -> Iterator[Message]:
    """Any Food cards in any action, cards named twice, legal preparations changed a little."""
    state = table.game
    food = list(state.pack.food_cards)
    names = [i.name for i in state.pack.ingredients]
    hands = [c for p in state.players for c in p.hand] or food

    def some(count: int) -> list[str]:
        return [rng.choice(hands if rng.random() < 0.7 else food) for _ in range(count)]

    yield pe.PickyEatersCommand(pass_round=pe.PickyEatersPass())
    for _ in range(MUTATIONS // 2):
        yield pe.PickyEatersCommand(take_from_market=pe.PickyEatersTakeFromMarket(card=some(1)[0]))
        yield pe.PickyEatersCommand(
            play_item=pe.PickyEatersPlayItem(item=some(1)[0], recipe=rng.choice(["", *food]))
        )
        yield pe.PickyEatersCommand(
            discard_to_draw=pe.PickyEatersDiscardToDraw(cards=some(rng.randint(0, 3)))
        )
        yield pe.PickyEatersCommand(
            discard_down=pe.PickyEatersDiscardDown(cards=some(rng.randint(0, 3)))
        )
        subs = [
            pe.PickyEatersSubstitution(ingredient=rng.choice(names), cards=some(3))
            for _ in range(rng.randint(0, 2))
        ]
        yield pe.PickyEatersCommand(
            prepare_recipe=pe.PickyEatersPrepareRecipe(
                recipe=some(1)[0],
                ingredients=some(rng.randint(0, 4)),
                substitutions=subs,
                replaces=rng.choice(["", *some(1)]),
            )
        )
    preparations = [c for c in legal if c.WhichOneof("action") == "prepare_recipe"]
    for command in rng.sample(preparations, min(4, len(preparations))):
        changed = pe.PickyEatersCommand()
        changed.CopyFrom(command)
        prep = changed.prepare_recipe
        if prep.ingredients and rng.random() < 0.5:
            prep.ingredients[rng.randrange(len(prep.ingredients))] = rng.choice(food)
        elif prep.substitutions:
            prep.substitutions[0].cards[0] = rng.choice([prep.recipe, *prep.ingredients])
        else:
            prep.replaces = rng.choice(food)
        yield changed


Commands = Callable[[fold.Table, list[Any], random.Random], Iterator[Message]]


@dataclass(frozen=True)
class Kit:
    """A game's kit: seats of its seeded games, a refusal per refusing rule, commands to try."""

    seats: int
    refusals: Callable[[], Mapping[str, Thunk]]
    commands: Commands
    tests: str  # the game's test files, a glob under tests/: every rule id is cited there


KITS: dict[str, Kit] = {
    "bon-appetit": Kit(3, _ba_refusals, _ba_commands, "test_bon_appetit_*.py"),
    "menu-masters": Kit(4, _mm_refusals, _mm_commands, "test_menu_masters_*.py"),
    "picky-eaters": Kit(3, _pe_refusals, _pe_commands, "test_picky_eaters_*.py"),
}


def register(kind: str, kit: Kit) -> None:
    """The kit of a game registered beside the shipped ones (the tests' fourth game)."""
    KITS[kind] = kit
